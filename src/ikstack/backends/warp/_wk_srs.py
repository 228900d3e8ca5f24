# mypy: ignore-errors
"""Warp float64 port of the SRS 7R swivel family (:mod:`ikstack.ik.analytic._srs`).

Two kernels: one thread a target lists its swivel angles (the seed's, the uniform grid, and
one inside every arc between Shimizu's closed-form joint-limit crossings); then one thread a
(target, swivel) pair writes that swivel's 8 candidate slots, so a GPU runs all samples of
all targets in parallel. Slot order equals the CPU path's.
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._gen_families6 import decompose3
from ikstack.backends.warp._gen_sp import sp3
from ikstack.backends.warp._gen_vec import (
    add,
    any_perp,
    cross,
    dot,
    mm,
    mT,
    mv,
    neg,
    norm,
    rot,
    rotm,
    scale,
    sub,
    wrap,
)
from ikstack.backends.warp._prims import TWO_PI, F

MAX_ARCS = 48


@wp.func
def _frame(what: wp.vec3d):
    ref = wp.vec3d(F(1.0), F(0.0), F(0.0))
    if wp.abs(what[2]) < F(0.99):
        ref = wp.vec3d(F(0.0), F(0.0), F(1.0))
    e1 = sub(ref, scale(what, dot(ref, what)))
    e1 = scale(e1, F(1.0) / norm(e1))
    return e1, cross(what, e1)


@wp.func
def _wrist_dir(Rt: wp.mat33d, pt: wp.vec3d, Sp: wp.vec3d, p7T: wp.vec3d, R7T: wp.mat33d):
    R07 = mm(Rt, mT(R7T))
    w = sub(sub(pt, mv(R07, p7T)), Sp)
    dw = norm(w)
    what = wp.vec3d(F(0.0), F(0.0), F(1.0))
    if dw > F(1e-12):
        what = scale(w, F(1.0) / dw)
    return R07, dw, what


@wp.func
def _elbow_frame(q3: wp.float64, h3: wp.vec3d, pS3: wp.vec3d, p3W: wp.vec3d, what: wp.vec3d,
                 e1: wp.vec3d, e2: wp.vec3d):
    v = add(pS3, rot(h3, q3, p3W))
    nv = norm(v)
    vhat = what
    if nv > F(1e-12):
        vhat = scale(v, F(1.0) / nv)
    ax = cross(vhat, what)
    sn = norm(ax)
    cs = dot(vhat, what)
    R0 = wp.mat33d(F(1.0), F(0.0), F(0.0), F(0.0), F(1.0), F(0.0), F(0.0), F(0.0), F(1.0))
    if sn > F(1e-12):
        R0 = rotm(scale(ax, F(1.0) / sn), wp.atan2(sn, cs))
    elif cs <= F(0.0):
        R0 = rotm(any_perp(vhat), F(3.141592653589793))
    e0 = mv(R0, pS3)
    return R0, wp.atan2(dot(e0, e2), dot(e0, e1))


@wp.func
def _target(T: wp.mat44d):
    Rt = wp.mat33d(T[0, 0], T[0, 1], T[0, 2], T[1, 0], T[1, 1], T[1, 2],
                   T[2, 0], T[2, 1], T[2, 2])
    return Rt, wp.vec3d(T[0, 3], T[1, 3], T[2, 3])


@wp.func
def _swivel_roots(what: wp.vec3d, R0: wp.mat33d, psi0: wp.float64, x: wp.vec3d, y: wp.vec3d,
                  target: wp.float64, out: wp.array2d(dtype=wp.float64), i: int, cnt: int):
    z = mv(R0, y)
    xw = dot(x, what)
    wz = dot(what, z)
    c0 = xw * wz
    sn = dot(x, cross(what, z))
    cs = dot(x, z) - xw * wz
    amp2 = sn * sn + cs * cs
    b = target - c0
    if amp2 < F(1e-24) or b * b > amp2:
        return cnt
    r = wp.sqrt(amp2 - b * b)
    sign = F(1.0)
    for _ in range(2):
        phi = wp.atan2(sn * b + sign * cs * r, cs * b - sign * sn * r)
        if cnt < out.shape[1]:
            out[i, cnt] = wrap(phi + psi0)
            cnt += 1
        sign = F(-1.0)
    return cnt


@wp.func
def srs_swivels(i: int, Ti: wp.mat44d, S: wp.array2d(dtype=wp.float64),
                H: wp.array(dtype=wp.vec3d), Sp: wp.vec3d, pS3: wp.vec3d, p3W: wp.vec3d,
                p7T: wp.vec3d, R7T: wp.mat33d, grid: wp.array(dtype=wp.float64),
                lo: wp.array(dtype=wp.float64), hi: wp.array(dtype=wp.float64),
                arcs: int, bounds: wp.array2d(dtype=wp.float64),
                psis: wp.array2d(dtype=wp.float64), used: wp.array(dtype=wp.int32)):
    """Swivel angles of row ``i`` (target ``Ti``, seed ``S[i]``): the seed's, the grid, then
    the arc midpoints."""
    Rt, pt = _target(Ti)
    R07, dw, what = _wrist_dir(Rt, pt, Sp, p7T, R7T)
    e1, e2 = _frame(what)
    # the seed's swivel
    R03s = mm(mm(rotm(H[0], S[i, 0]), rotm(H[1], S[i, 1])), rotm(H[2], S[i, 2]))
    es = mv(R03s, pS3)
    psis[i, 0] = wp.atan2(dot(es, e2), dot(es, e1))
    ns = grid.shape[0] + 1
    for s in range(grid.shape[0]):
        psis[i, s + 1] = grid[s]
    cnt = int(0)  # noqa: UP018 (a mutable Warp loop variable)
    if arcs != 0:
        h3 = H[3]
        m, ls, el0, el1 = sp3(p3W, neg(pS3), h3, dw)
        for j in range(m):
            q3 = el0
            if j != 0:
                q3 = el1
            R0, psi0 = _elbow_frame(q3, h3, pS3, p3W, what, e1, e2)
            R3e = rotm(h3, q3)
            for side in range(2):
                for jx in range(6):
                    jj = jx
                    if jx >= 3:
                        jj = jx + 1
                    L = hi[jj]
                    if side == 0:
                        L = lo[jj]
                    if wp.isfinite(L):
                        k = jj - 4
                        a = H[4]
                        b = H[5]
                        c = H[6]
                        if jj < 3:
                            a = H[0]
                            b = H[1]
                            c = H[2]
                            k = jj
                        x = a
                        y = rot(c, -L, b)
                        t = dot(a, b)
                        if k == 0:
                            x = rot(a, L, b)
                            y = c
                            t = dot(b, c)
                        elif k == 1:
                            x = a
                            y = c
                            t = dot(a, rot(b, L, c))
                        if jj > 3:
                            x2 = mv(R07, y)
                            y = mv(R3e, x)
                            x = x2
                        cnt = _swivel_roots(what, R0, psi0, x, y, t, bounds, i, cnt)
        # sort the crossings (insertion sort), then one swivel inside every arc
        for a1 in range(1, cnt):
            v = bounds[i, a1]
            b1 = a1 - 1
            while b1 >= 0 and bounds[i, b1] > v:
                bounds[i, b1 + 1] = bounds[i, b1]
                b1 -= 1
            bounds[i, b1 + 1] = v
        for a2 in range(cnt):
            nxt = bounds[i, 0] + TWO_PI
            if a2 + 1 < cnt:
                nxt = bounds[i, a2 + 1]
            psis[i, ns + a2] = wrap(F(0.5) * (bounds[i, a2] + nxt))
    used[i] = ns + cnt


@wp.func
def srs_slots(i: int, s: int, Ti: wp.mat44d, S: wp.array2d(dtype=wp.float64),
              H: wp.array(dtype=wp.vec3d), Sp: wp.vec3d, pS3: wp.vec3d, p3W: wp.vec3d,
              p7T: wp.vec3d, R7T: wp.mat33d, psis: wp.array2d(dtype=wp.float64),
              used: wp.array(dtype=wp.int32), Q: wp.array3d(dtype=wp.float64),
              V: wp.array2d(dtype=wp.int32)):
    """The 8 candidate slots of swivel ``s`` of row ``i`` (unused swivels keep the seed)."""
    for k in range(8):
        V[i, s * 8 + k] = 0
        for j in range(7):
            Q[i, s * 8 + k, j] = S[i, j]
    if s < used[i]:
        Rt, pt = _target(Ti)
        R07, dw, what = _wrist_dir(Rt, pt, Sp, p7T, R7T)
        e1, e2 = _frame(what)
        h3 = H[3]
        m, ls, el0, el1 = sp3(p3W, neg(pS3), h3, dw)
        for j in range(m):
            q3 = el0
            if j != 0:
                q3 = el1
            R0, psi0 = _elbow_frame(q3, h3, pS3, p3W, what, e1, e2)
            R3e = rotm(h3, q3)
            R03 = mm(rotm(what, psis[i, s] - psi0), R0)
            na, X, Y, Z = decompose3(R03, H[0], H[1], H[2], S[i, 0])
            R47 = mm(mT(mm(R03, R3e)), R07)
            nb, X2, Y2, Z2 = decompose3(R47, H[4], H[5], H[6], S[i, 4])
            for a in range(na):
                for b in range(nb):
                    slot = s * 8 + j * 4 + a * 2 + b
                    Q[i, slot, 0] = X[a]
                    Q[i, slot, 1] = Y[a]
                    Q[i, slot, 2] = Z[a]
                    Q[i, slot, 3] = q3
                    Q[i, slot, 4] = X2[b]
                    Q[i, slot, 5] = Y2[b]
                    Q[i, slot, 6] = Z2[b]
                    V[i, slot] = 1
                    if ls:
                        V[i, slot] = 0


@wp.kernel
def srs_swivels_kernel(T: wp.array(dtype=wp.mat44d), S: wp.array2d(dtype=wp.float64),
                       H: wp.array(dtype=wp.vec3d), Sp: wp.vec3d, pS3: wp.vec3d, p3W: wp.vec3d,
                       p7T: wp.vec3d, R7T: wp.mat33d, grid: wp.array(dtype=wp.float64),
                       lo: wp.array(dtype=wp.float64), hi: wp.array(dtype=wp.float64),
                       arcs: int, bounds: wp.array2d(dtype=wp.float64),
                       psis: wp.array2d(dtype=wp.float64), used: wp.array(dtype=wp.int32)):
    """:func:`srs_swivels` of target ``i``, one thread a target."""
    i = wp.tid()
    srs_swivels(i, T[i], S, H, Sp, pS3, p3W, p7T, R7T, grid, lo, hi, arcs, bounds, psis, used)


@wp.kernel
def srs_kernel(T: wp.array(dtype=wp.mat44d), S: wp.array2d(dtype=wp.float64),
               H: wp.array(dtype=wp.vec3d), Sp: wp.vec3d, pS3: wp.vec3d, p3W: wp.vec3d,
               p7T: wp.vec3d, R7T: wp.mat33d, psis: wp.array2d(dtype=wp.float64),
               used: wp.array(dtype=wp.int32), Q: wp.array3d(dtype=wp.float64),
               V: wp.array2d(dtype=wp.int32)):
    """:func:`srs_slots` of swivel ``s`` of target ``i``, one thread a pair."""
    i, s = wp.tid()
    srs_slots(i, s, T[i], S, H, Sp, pS3, p3W, p7T, R7T, psis, used, Q, V)
