# mypy: ignore-errors
"""Pieces of the Warp numerical-IK loop (:mod:`._lm`), each the Warp twin of a CPU kernel.

:func:`uniform` is splitmix64 (``ikstack.ik.numerical._kernels._uniform``) in wrapping 64-bit
unsigned arithmetic, :func:`target_key` the per-target restart seed, :func:`jac_into` the
kinematics layer's ``_jac_into`` (FK and Jacobian, its per-joint pieces generated from the CPU
source: ``_gen_kinematics``),
:func:`pose_error`, :func:`cholesky` / :func:`cholesky_solve` and :func:`is_singular` those
of the CPU path (the constraint check is generated from the CPU source: ``_gen_gate``). Row
``k`` of caller-owned arrays is one target's scratch.
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._gen_kinematics import joint_column, joint_step, tool_pose
from ikstack.backends.warp._prims import F

SINGULAR_RATIO = wp.constant(wp.float64(1e-7))
INF = wp.constant(wp.float64(float("inf")))
MOD = wp.constant(wp.int64(2147483647))


# ----------------------------------------------------------------------------- restarts
@wp.func
def uniform(state: wp.uint64):
    """splitmix64 (``ikstack.ik.numerical._kernels._uniform``): the next state and a uniform
    draw in [0, 1) (53 bits), in wrapping 64-bit unsigned arithmetic."""
    state = state + wp.uint64(0x9E3779B97F4A7C15)
    z = state
    z = (z ^ (z >> wp.uint64(30))) * wp.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> wp.uint64(27))) * wp.uint64(0x94D049BB133111EB)
    z = z ^ (z >> wp.uint64(31))
    return state, wp.float64(z >> wp.uint64(11)) * F(1.0 / 9007199254740992.0)


@wp.func
def target_key(key: wp.int64, Tt: wp.mat44d):
    """:func:`ikstack.ik.numerical._kernels._target_key` (Python's non-negative modulo)."""
    h = ((key % MOD) + MOD) % MOD
    for r in range(3):
        for c in range(4):
            v = wp.int64(wp.floor(Tt[r, c] * F(1e6)))
            m = ((v % MOD) + MOD) % MOD
            h = (h * wp.int64(1000003) + m) % MOD
    return h


# ----------------------------------------------------------------------------- pieces
@wp.func
def pose_error(Tt: wp.mat44d, R: wp.mat33d, p: wp.vec3d, e: wp.array2d(dtype=wp.float64), k: int):
    """``e = [p_t - p, rotvec(R_t R^T)]`` through Shepperd's quaternion, as on the CPU."""
    e[k, 0] = Tt[0, 3] - p[0]
    e[k, 1] = Tt[1, 3] - p[1]
    e[k, 2] = Tt[2, 3] - p[2]
    m00 = Tt[0, 0] * R[0, 0] + Tt[0, 1] * R[0, 1] + Tt[0, 2] * R[0, 2]
    m01 = Tt[0, 0] * R[1, 0] + Tt[0, 1] * R[1, 1] + Tt[0, 2] * R[1, 2]
    m02 = Tt[0, 0] * R[2, 0] + Tt[0, 1] * R[2, 1] + Tt[0, 2] * R[2, 2]
    m10 = Tt[1, 0] * R[0, 0] + Tt[1, 1] * R[0, 1] + Tt[1, 2] * R[0, 2]
    m11 = Tt[1, 0] * R[1, 0] + Tt[1, 1] * R[1, 1] + Tt[1, 2] * R[1, 2]
    m12 = Tt[1, 0] * R[2, 0] + Tt[1, 1] * R[2, 1] + Tt[1, 2] * R[2, 2]
    m20 = Tt[2, 0] * R[0, 0] + Tt[2, 1] * R[0, 1] + Tt[2, 2] * R[0, 2]
    m21 = Tt[2, 0] * R[1, 0] + Tt[2, 1] * R[1, 1] + Tt[2, 2] * R[1, 2]
    m22 = Tt[2, 0] * R[2, 0] + Tt[2, 1] * R[2, 1] + Tt[2, 2] * R[2, 2]
    tr = m00 + m11 + m22
    w = F(0.0)
    x = F(0.0)
    y = F(0.0)
    z = F(0.0)
    if tr >= m00 and tr >= m11 and tr >= m22:
        s = wp.sqrt(wp.max(F(1.0) + tr, F(0.0))) * F(2.0)
        w = F(0.25) * s
        x = (m21 - m12) / s
        y = (m02 - m20) / s
        z = (m10 - m01) / s
    elif m00 >= m11 and m00 >= m22:
        s = wp.sqrt(wp.max(F(1.0) + m00 - m11 - m22, F(0.0))) * F(2.0)
        w = (m21 - m12) / s
        x = F(0.25) * s
        y = (m01 + m10) / s
        z = (m02 + m20) / s
    elif m11 >= m22:
        s = wp.sqrt(wp.max(F(1.0) + m11 - m00 - m22, F(0.0))) * F(2.0)
        w = (m02 - m20) / s
        x = (m01 + m10) / s
        y = F(0.25) * s
        z = (m12 + m21) / s
    else:
        s = wp.sqrt(wp.max(F(1.0) + m22 - m00 - m11, F(0.0))) * F(2.0)
        w = (m10 - m01) / s
        x = (m02 + m20) / s
        y = (m12 + m21) / s
        z = F(0.25) * s
    if w < F(0.0):
        w = -w
        x = -x
        y = -y
        z = -z
    nv = wp.sqrt(x * x + y * y + z * z)
    f = F(0.0)
    if nv < F(1e-12):
        f = F(2.0) / w
    else:
        f = F(2.0) * wp.atan2(nv, w) / nv
    e[k, 3] = x * f
    e[k, 4] = y * f
    e[k, 5] = z * f


@wp.func
def is_singular(
    J: wp.array3d(dtype=wp.float64),
    w: wp.array(dtype=wp.float64),
    k: int,
    n: int,
    Jw: wp.array3d(dtype=wp.float64),
    G: wp.array3d(dtype=wp.float64),
    L: wp.array3d(dtype=wp.float64),
):
    """Whether the active rows of ``W^(1/2) J`` lose rank (as ``_is_singular``)."""
    rows = int(0)  # noqa: UP018 (a mutable Warp variable)
    for r in range(6):
        if w[r] > F(0.0):
            rows += 1
    out = int(0)  # noqa: UP018 (a mutable Warp variable)
    if rows > 0:
        a = int(0)  # noqa: UP018 (a mutable Warp variable)
        for r in range(6):
            if w[r] > F(0.0):
                sw = wp.sqrt(w[r])
                for c in range(n):
                    Jw[k, a, c] = sw * J[k, r, c]
                a += 1
        m = wp.min(rows, n)
        for a2 in range(m):
            for b in range(a2 + 1):
                s = F(0.0)
                if rows <= n:
                    for c in range(n):
                        s += Jw[k, a2, c] * Jw[k, b, c]
                else:
                    for c in range(rows):
                        s += Jw[k, c, a2] * Jw[k, c, b]
                G[k, a2, b] = s
                G[k, b, a2] = s
        lo_piv = INF
        hi_piv = F(0.0)
        done = int(0)  # noqa: UP018 (a mutable Warp variable)
        for i in range(m):
            for j in range(i + 1):
                if done == 0:
                    s = G[k, i, j]
                    for t in range(j):
                        s -= L[k, i, t] * L[k, j, t]
                    if i == j:
                        if not s > F(0.0):
                            out = int(1)  # noqa: UP018 (a mutable Warp variable)
                            done = int(1)  # noqa: UP018 (a mutable Warp variable)
                        else:
                            L[k, i, i] = wp.sqrt(s)
                            lo_piv = wp.min(lo_piv, L[k, i, i])
                            hi_piv = wp.max(hi_piv, L[k, i, i])
                    else:
                        L[k, i, j] = s / L[k, j, j]
        if done == 0 and lo_piv < SINGULAR_RATIO * hi_piv:
            out = int(1)  # noqa: UP018 (a mutable Warp variable)
    return out


# ----------------------------------------------------------------------------- the solve
@wp.func
def _clip(x: wp.float64, lo: wp.float64, hi: wp.float64):
    return wp.min(wp.max(x, lo), hi)


@wp.func
def cholesky(L: wp.array3d(dtype=wp.float64), k: int, n: int):
    """:func:`ikstack.spatial._dense.cholesky_inplace` on row ``k``'s leading ``n x n`` block
    (lower triangle read and overwritten); 0 when not positive definite."""
    ok = int(1)  # noqa: UP018 (a mutable Warp variable)
    for j in range(n):
        if ok != 0:
            d = L[k, j, j]
            for t in range(j):
                d -= L[k, j, t] * L[k, j, t]
            if not d > F(1e-300):
                ok = int(0)  # noqa: UP018 (a mutable Warp variable)
            else:
                d = wp.sqrt(d)
                L[k, j, j] = d
                for i in range(j + 1, n):
                    s = L[k, i, j]
                    for t in range(j):
                        s -= L[k, i, t] * L[k, j, t]
                    L[k, i, j] = s / d
    return ok


@wp.func
def cholesky_solve(
    L: wp.array3d(dtype=wp.float64), k: int, n: int, b: wp.array2d(dtype=wp.float64)
):
    """:func:`ikstack.spatial._dense.cholesky_solve_inplace`: ``L L^T x = b`` in place."""
    for i in range(n):
        s = b[k, i]
        for t in range(i):
            s -= L[k, i, t] * b[k, t]
        b[k, i] = s / L[k, i, i]
    for ii in range(n):
        i = n - 1 - ii
        s = b[k, i]
        for t in range(i + 1, n):
            s -= L[k, t, i] * b[k, t]
        b[k, i] = s / L[k, i, i]


# ----------------------------------------------------------------------------- FK + Jacobian
@wp.func
def jac_into(
    q: wp.array2d(dtype=wp.float64),
    k: int,
    n: int,
    Rs: wp.array(dtype=wp.mat33d),
    ps: wp.array(dtype=wp.vec3d),
    kinds: wp.array(dtype=wp.int32),
    R_end: wp.mat33d,
    p_end: wp.vec3d,
    J: wp.array3d(dtype=wp.float64),
):
    """``ikstack.kinematics._kernels._jac_into`` at ``q[k]``: the base-frame Jacobian into
    ``J[k]`` and the TCP pose returned as ``(R, p)`` (joint axes and origins wait in ``J``).
    Each joint's step, the TCP and each column are generated from the CPU source."""
    R = wp.identity(n=3, dtype=wp.float64)
    p = wp.vec3d(F(0.0), F(0.0), F(0.0))
    for i in range(n):
        R, p = joint_step(R, p, Rs[i], ps[i], kinds[i], q[k, i])
        for r in range(3):
            J[k, 3 + r, i] = R[r, 2]
            J[k, r, i] = p[r]
    Re, t = tool_pose(R, p, R_end, p_end)
    for i in range(n):
        z = wp.vec3d(J[k, 3, i], J[k, 4, i], J[k, 5, i])
        o = wp.vec3d(J[k, 0, i], J[k, 1, i], J[k, 2, i])
        lin, ang = joint_column(kinds[i], z, o, t)
        for r in range(3):
            J[k, r, i] = lin[r]
            J[k, 3 + r, i] = ang[r]
    return Re, t
