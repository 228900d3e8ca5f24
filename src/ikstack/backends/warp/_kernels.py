# mypy: ignore-errors
"""Warp kernel definitions (Warp's DSL: its type annotations are runtime objects).

Built on first use, so importing ikstack never imports Warp.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ikstack.backends.warp.runtime import warp


@lru_cache(maxsize=1)
def kinematics_kernels() -> dict[str, Any]:
    wp = warp()

    @wp.func
    def chain_pose(q: wp.array2d(dtype=wp.float64), k: int, Rs: wp.array(dtype=wp.mat33d),
                   ps: wp.array(dtype=wp.vec3d), kinds: wp.array(dtype=wp.int32),
                   zs: wp.array2d(dtype=wp.vec3d), os: wp.array2d(dtype=wp.vec3d),
                   record: int):
        R = wp.identity(n=3, dtype=wp.float64)
        p = wp.vec3d(wp.float64(0.0), wp.float64(0.0), wp.float64(0.0))
        for i in range(Rs.shape[0]):
            p = p + R * ps[i]
            R = R * Rs[i]
            qi = q[k, i]
            c0 = wp.vec3d(R[0, 0], R[1, 0], R[2, 0])
            c1 = wp.vec3d(R[0, 1], R[1, 1], R[2, 1])
            c2 = wp.vec3d(R[0, 2], R[1, 2], R[2, 2])
            if record != 0:
                zs[k, i] = c2
                os[k, i] = p
            if kinds[i] == 0:
                c = wp.cos(qi)
                s = wp.sin(qi)
                n0 = c * c0 + s * c1
                n1 = -s * c0 + c * c1
                R = wp.matrix_from_cols(n0, n1, c2)
            else:
                p = p + c2 * qi
        return R, p

    @wp.func
    def jacobian_columns(k: int, n: int, kinds: wp.array(dtype=wp.int32),
                         zs: wp.array2d(dtype=wp.vec3d), os: wp.array2d(dtype=wp.vec3d),
                         pe: wp.vec3d, J: wp.array3d(dtype=wp.float64)):
        """Geometric Jacobian columns at the TCP ``pe`` from recorded joint axes and origins."""
        for i in range(n):
            z = zs[k, i]
            if kinds[i] == 0:
                v = wp.cross(z, pe - os[k, i])
                J[k, 0, i] = v[0]
                J[k, 1, i] = v[1]
                J[k, 2, i] = v[2]
                J[k, 3, i] = z[0]
                J[k, 4, i] = z[1]
                J[k, 5, i] = z[2]
            else:
                J[k, 0, i] = z[0]
                J[k, 1, i] = z[1]
                J[k, 2, i] = z[2]
                J[k, 3, i] = wp.float64(0.0)
                J[k, 4, i] = wp.float64(0.0)
                J[k, 5, i] = wp.float64(0.0)

    @wp.kernel
    def fk_kernel(q: wp.array2d(dtype=wp.float64), Rs: wp.array(dtype=wp.mat33d),
                  ps: wp.array(dtype=wp.vec3d), kinds: wp.array(dtype=wp.int32),
                  R_end: wp.mat33d, p_end: wp.vec3d, zs: wp.array2d(dtype=wp.vec3d),
                  os: wp.array2d(dtype=wp.vec3d), out: wp.array(dtype=wp.mat44d)):
        k = wp.tid()
        R, p = chain_pose(q, k, Rs, ps, kinds, zs, os, 0)
        pe = p + R * p_end
        Re = R * R_end
        out[k] = wp.mat44d(Re[0, 0], Re[0, 1], Re[0, 2], pe[0],
                           Re[1, 0], Re[1, 1], Re[1, 2], pe[1],
                           Re[2, 0], Re[2, 1], Re[2, 2], pe[2],
                           wp.float64(0.0), wp.float64(0.0), wp.float64(0.0), wp.float64(1.0))

    @wp.kernel
    def jac_kernel(q: wp.array2d(dtype=wp.float64), Rs: wp.array(dtype=wp.mat33d),
                   ps: wp.array(dtype=wp.vec3d), kinds: wp.array(dtype=wp.int32),
                   R_end: wp.mat33d, p_end: wp.vec3d, zs: wp.array2d(dtype=wp.vec3d),
                   os: wp.array2d(dtype=wp.vec3d), out: wp.array(dtype=wp.mat44d),
                   J: wp.array3d(dtype=wp.float64)):
        k = wp.tid()
        R, p = chain_pose(q, k, Rs, ps, kinds, zs, os, 1)
        pe = p + R * p_end
        Re = R * R_end
        out[k] = wp.mat44d(Re[0, 0], Re[0, 1], Re[0, 2], pe[0],
                           Re[1, 0], Re[1, 1], Re[1, 2], pe[1],
                           Re[2, 0], Re[2, 1], Re[2, 2], pe[2],
                           wp.float64(0.0), wp.float64(0.0), wp.float64(0.0), wp.float64(1.0))
        jacobian_columns(k, Rs.shape[0], kinds, zs, os, pe, J)

    return {"fk": fk_kernel, "jac": jac_kernel, "pose": chain_pose,
            "jacobian_columns": jacobian_columns}


@lru_cache(maxsize=1)
def numerical_kernels() -> dict[str, Any]:
    """Batched Levenberg-Marquardt IK (Sugihara's damping) with restarts, one thread a target."""
    wp = warp()
    shared = kinematics_kernels()
    fk_pose = shared["pose"]
    jacobian_columns = shared["jacobian_columns"]

    @wp.func
    def pose_error(Tt: wp.mat44d, R: wp.mat33d, p: wp.vec3d, e: wp.array2d(dtype=wp.float64),
                   k: int):
        dp = wp.vec3d(Tt[0, 3], Tt[1, 3], Tt[2, 3]) - p
        Rt = wp.mat33d(Tt[0, 0], Tt[0, 1], Tt[0, 2], Tt[1, 0], Tt[1, 1], Tt[1, 2],
                       Tt[2, 0], Tt[2, 1], Tt[2, 2])
        Rd = Rt * wp.transpose(R)
        qd = wp.quat_from_matrix(Rd)
        w = qd[3]
        v = wp.vec3d(qd[0], qd[1], qd[2])
        if w < wp.float64(0.0):
            w = -w
            v = -v
        nv = wp.length(v)
        fac = wp.float64(2.0)
        if nv > wp.float64(1e-12):
            fac = wp.float64(2.0) * wp.atan2(nv, w) / nv
        else:
            fac = wp.float64(2.0) / w
        r = v * fac
        e[k, 0] = dp[0]
        e[k, 1] = dp[1]
        e[k, 2] = dp[2]
        e[k, 3] = r[0]
        e[k, 4] = r[1]
        e[k, 5] = r[2]
        return wp.length(dp), wp.length(r)

    @wp.kernel
    def lm_kernel(T_target: wp.array(dtype=wp.mat44d), seed: wp.array2d(dtype=wp.float64),
                  lower: wp.array(dtype=wp.float64), upper: wp.array(dtype=wp.float64),
                  Rs: wp.array(dtype=wp.mat33d), ps: wp.array(dtype=wp.vec3d),
                  kinds: wp.array(dtype=wp.int32), R_end: wp.mat33d, p_end: wp.vec3d,
                  max_iterations: int, max_restarts: int, pos_tol: wp.float64,
                  rot_tol: wp.float64, damping: wp.float64, rng_seed: int,
                  q: wp.array2d(dtype=wp.float64), zs: wp.array2d(dtype=wp.vec3d),
                  os: wp.array2d(dtype=wp.vec3d), J: wp.array3d(dtype=wp.float64),
                  A: wp.array3d(dtype=wp.float64), e: wp.array2d(dtype=wp.float64),
                  g: wp.array2d(dtype=wp.float64), q_out: wp.array2d(dtype=wp.float64),
                  iters_out: wp.array(dtype=wp.int32), restarts_out: wp.array(dtype=wp.int32),
                  ok_out: wp.array(dtype=wp.int32)):
        k = wp.tid()
        n = Rs.shape[0]
        Tt = T_target[k]
        state = wp.rand_init(rng_seed, k)
        total = int(0)
        done = int(0)
        used_restarts = int(0)
        for attempt in range(max_restarts + 1):
            if done == 0:
                used_restarts = attempt
                for i in range(n):
                    if attempt == 0:
                        q[k, i] = seed[k, i]
                    else:
                        lo = lower[i]
                        hi = upper[i]
                        u = wp.float64(wp.randf(state))
                        q[k, i] = lo + (hi - lo) * u
                for it in range(max_iterations):
                    if done == 0:
                        total += 1
                        R, p = fk_pose(q, k, Rs, ps, kinds, zs, os, 1)
                        pe = p + R * p_end
                        Re = R * R_end
                        perr, rerr = pose_error(Tt, Re, pe, e, k)
                        if perr <= pos_tol and rerr <= rot_tol:
                            done = 1
                        else:
                            jacobian_columns(k, n, kinds, zs, os, pe, J)
                            E = wp.float64(0.0)
                            for r in range(6):
                                E += wp.float64(0.5) * e[k, r] * e[k, r]
                            lam = E + damping
                            for i in range(n):
                                s = wp.float64(0.0)
                                for r in range(6):
                                    s += J[k, r, i] * e[k, r]
                                g[k, i] = s
                                for j in range(n):
                                    a = wp.float64(0.0)
                                    for r in range(6):
                                        a += J[k, r, i] * J[k, r, j]
                                    A[k, i, j] = a
                                A[k, i, i] = A[k, i, i] + lam
                            # Cholesky A = L L^T in place (lower), then solve for dq into g
                            for i in range(n):
                                for j in range(i + 1):
                                    s = A[k, i, j]
                                    for m in range(j):
                                        s -= A[k, i, m] * A[k, j, m]
                                    if i == j:
                                        A[k, i, i] = wp.sqrt(wp.max(s, wp.float64(1e-300)))
                                    else:
                                        A[k, i, j] = s / A[k, j, j]
                            for i in range(n):
                                s = g[k, i]
                                for m in range(i):
                                    s -= A[k, i, m] * g[k, m]
                                g[k, i] = s / A[k, i, i]
                            for ii in range(n):
                                i = n - 1 - ii
                                s = g[k, i]
                                for m in range(i + 1, n):
                                    s -= A[k, m, i] * g[k, m]
                                g[k, i] = s / A[k, i, i]
                            for i in range(n):
                                qn = q[k, i] + g[k, i]
                                q[k, i] = wp.min(wp.max(qn, lower[i]), upper[i])
        for i in range(n):
            q_out[k, i] = q[k, i]
        iters_out[k] = total
        restarts_out[k] = used_restarts
        ok_out[k] = done

    return {"lm": lm_kernel}
