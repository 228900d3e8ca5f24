# mypy: ignore-errors
# ruff: noqa
"""GENERATED from ``src/ikstack/ik/analytic/_srs.py`` by :mod:`ikstack.backends.warp._translate`:
do not edit; edit the CPU source and run ``python -m ikstack.backends.warp._translate``
(a test fails when this file and its source disagree)."""

import warp as wp

from ikstack.backends.warp._prims import *  # noqa: F403
from ikstack.backends.warp._gen_families6 import decompose3
from ikstack.backends.warp._gen_sp import sp3
from ikstack.backends.warp._gen_tuple_math import add, any_perp, cross, dot, mT, mm, mv, neg, norm, rot, rotm, scale, sub, wrap
from ikstack.backends.warp._structs import SRS_DATA_T

TANGENT = wp.constant(F(1e-05))


@wp.func
def _frame(what: wp.vec3d):
    ref = wp.vec3d()
    if wp.abs(what[2]) < F(0.99):
        ref = wp.vec3d(F(0.0), F(0.0), F(1.0))
    else:
        ref = wp.vec3d(F(1.0), F(0.0), F(0.0))
    e1 = sub(ref, scale(what, dot(ref, what)))
    e1 = scale(e1, F(1.0) / norm(e1))
    return e1, cross(what, e1)


@wp.func
def _wrist_dir(Rt: wp.mat33d, pt: wp.vec3d, Sp: wp.vec3d, p7T: wp.vec3d, R7T: wp.mat33d):
    R07 = mm(Rt, mT(R7T))
    w = sub(sub(pt, mv(R07, p7T)), Sp)
    dw = norm(w)
    what = wp.where(dw > F(1e-12), scale(w, F(1.0) / dw), wp.vec3d(F(0.0), F(0.0), F(1.0)))
    return R07, dw, what


@wp.func
def _target_frame(Rt: wp.mat33d, pt: wp.vec3d, arm: SRS_DATA_T.type):
    """``(R07, |W - S|, unit S-W, e1, e2)`` of target ``(Rt, pt)``: the wrist's rotation, the
    shoulder-wrist distance and direction, and the swivel's zero and quarter-turn directions
    normal to it (:func:`_frame`)."""
    R07, dw, what = _wrist_dir(Rt, pt, arm.S, arm.p7T, arm.R7T)
    e1, e2 = _frame(what)
    return R07, dw, what, e1, e2


@wp.func
def seed_swivel(Rt: wp.mat33d, pt: wp.vec3d, arm: SRS_DATA_T.type, seed: wp.array(dtype=wp.float64)):
    """The swivel angle of the seed's elbow reference point about the target's S-W line."""
    H = arm.H
    pS3 = arm.pS3
    _u1, _u2, what, e1, e2 = _target_frame(Rt, pt, arm)
    R03 = mm(mm(rotm(H[0], seed[0]), rotm(H[1], seed[1])), rotm(H[2], seed[2]))
    e = mv(R03, pS3)
    return wp.atan2(dot(e, e2), dot(e, e1))


@wp.func
def _elbow_frame(q3: wp.float64, h3: wp.vec3d, pS3: wp.vec3d, p3W: wp.vec3d, what: wp.vec3d, e1: wp.vec3d, e2: wp.vec3d):
    """``(R0, psi0)``: the shoulder rotation at swivel ``psi0`` for elbow angle ``q3``."""
    R0 = wp.mat33d()
    v = add(pS3, rot(h3, q3, p3W))
    nv = norm(v)
    vhat = wp.where(nv > F(1e-12), scale(v, F(1.0) / nv), what)
    ax = cross(vhat, what)
    sn = norm(ax)
    cs = dot(vhat, what)
    if sn > F(1e-12):
        R0 = rotm(scale(ax, F(1.0) / sn), wp.atan2(sn, cs))
    elif cs > F(0.0):
        R0 = wp.mat33d(F(1.0), F(0.0), F(0.0), F(0.0), F(1.0), F(0.0), F(0.0), F(0.0), F(1.0))
    else:
        R0 = rotm(any_perp(vhat), F(3.141592653589793))
    e0 = mv(R0, pS3)
    return R0, wp.atan2(dot(e0, e2), dot(e0, e1))


@wp.func
def fill_slots(seed: wp.array(dtype=wp.float64), Q: wp.array2d(dtype=wp.float64), V: wp.array(dtype=wp.int32), k0: int, k1: int):
    """Slots ``k0 .. k1 - 1`` hold the seed (7,), masked."""
    for k in range(k0, k1):
        V[k] = 0
        for j in range(7):
            Q[k, j] = seed[j]


@wp.func
def srs_slots(Rt: wp.mat33d, pt: wp.vec3d, arm: SRS_DATA_T.type, psis: wp.array(dtype=wp.float64), s0: int, s1: int, seed: wp.array(dtype=wp.float64), Q: wp.array2d(dtype=wp.float64), V: wp.array(dtype=wp.int32)):
    """The candidates of swivels ``psis[s0 .. s1 - 1]``: 8 slots each from slot ``8 s0`` of
    ``Q`` (.., 7) and masks ``V``; those of a missing branch keep the seed, masked."""
    fill_slots(seed, Q, V, 8 * s0, 8 * s1)
    H = arm.H
    pS3 = arm.pS3
    p3W = arm.p3W
    R07, dw, what, e1, e2 = _target_frame(Rt, pt, arm)
    h0 = H[0]
    h1 = H[1]
    h2 = H[2]
    h3 = H[3]
    h4 = H[4]
    h5 = H[5]
    h6 = H[6]
    m, ls, el0, el1 = sp3(p3W, neg(pS3), h3, dw)
    exact = (not ls) or wp.abs(norm(add(pS3, rot(h3, el0, p3W))) - dw) <= TANGENT
    for j in range(m):
        q3 = wp.where(j == 0, el0, el1)
        R0, psi0 = _elbow_frame(q3, h3, pS3, p3W, what, e1, e2)
        R3e = rotm(h3, q3)
        for s in range(s0, s1):
            R03 = mm(rotm(what, psis[s] - psi0), R0)
            na, X, Y, Z = decompose3(R03, h0, h1, h2, seed[0])
            R47 = mm(mT(mm(R03, R3e)), R07)
            nb, X2, Y2, Z2 = decompose3(R47, h4, h5, h6, seed[4])
            for a in range(na):
                for b in range(nb):
                    slot = s * 8 + j * 4 + a * 2 + b
                    Q[slot, 0] = X[a]
                    Q[slot, 1] = Y[a]
                    Q[slot, 2] = Z[a]
                    Q[slot, 3] = q3
                    Q[slot, 4] = X2[b]
                    Q[slot, 5] = Y2[b]
                    Q[slot, 6] = Z2[b]
                    V[slot] = wp.where(exact, 1, 0)


@wp.func
def _swivel_roots(what: wp.vec3d, R0: wp.mat33d, psi0: wp.float64, x: wp.vec3d, y: wp.vec3d, target: wp.float64, out: wp.array(dtype=wp.float64), cnt: int):
    """Append to ``out`` the swivels where ``x . R(what, psi - psi0) R0 y = target`` (<= 2)."""
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
    for _k1 in range(2):
        sign = wp.where(_k1 == 0, F(1.0), F(-1.0))
        phi = wp.atan2(sn * b + sign * cs * r, cs * b - sign * sn * r)
        if cnt < out.shape[0]:
            out[cnt] = wrap(phi + psi0)
            cnt = cnt + 1
    return cnt


@wp.func
def arc_midpoints(Rt: wp.mat33d, pt: wp.vec3d, arm: SRS_DATA_T.type, bounds: wp.array(dtype=wp.float64), out: wp.array(dtype=wp.float64), at: int):
    """Swivel angles inside every arc between consecutive joint-limit crossings.

    Along the swivel circle a joint reaches a limit value ``L`` where a linear equation in
    ``(sin psi, cos psi)`` holds (Shimizu et al. 2008: each joint is a closed-form function of
    the swivel): for joint 1 ``h2 . R(h1, -L) R03 h3 = h2 . h3``, for joint 2
    ``h1 . R03 h3 = h1 . R(h2, L) h3``, for joint 3 ``h1 . R03 R(h3, -L) h2 = h1 . h2``, and
    likewise for the wrist with ``R47 = R(h4, q4)^T R03^T R07``. Between consecutive crossings
    no joint of any branch enters or leaves its limits, so one swivel per arc (its midpoint)
    finds every in-limit branch that sampling could miss. Writes the midpoints into ``out``
    from index ``at`` and returns their count (``arm``'s ``lo`` and ``hi`` the limits;
    ``bounds`` (:data:`MAX_ARCS`,) scratch for the crossings).
    """
    x = wp.vec3d()
    y = wp.vec3d()
    t = F(0.0)
    H = arm.H
    pS3 = arm.pS3
    p3W = arm.p3W
    lo = arm.lo
    hi = arm.hi
    R07, dw, what, e1, e2 = _target_frame(Rt, pt, arm)
    h3 = H[3]
    m, ls, el0, el1 = sp3(p3W, neg(pS3), h3, dw)
    cnt = int(0)
    for j in range(m):
        q3 = wp.where(j == 0, el0, el1)
        R0, psi0 = _elbow_frame(q3, h3, pS3, p3W, what, e1, e2)
        R3e = rotm(h3, q3)
        for side in range(2):
            for _k1 in range(6):
                jj = wp.where(_k1 == 0, 0, wp.where(_k1 == 1, 1, wp.where(_k1 == 2, 2, wp.where(_k1 == 3, 4, wp.where(_k1 == 4, 5, 6)))))
                L = wp.where(side == 0, lo[jj], hi[jj])
                if not wp.isfinite(L):
                    continue
                g = wp.where(jj < 3, 0, 4)
                k = jj - g
                a = H[g]
                b = H[g + 1]
                c = H[g + 2]
                if k == 0:
                    x = rot(a, L, b)
                    y = c
                    t = dot(b, c)
                elif k == 1:
                    x = a
                    y = c
                    t = dot(a, rot(b, L, c))
                else:
                    x = a
                    y = rot(c, -L, b)
                    t = dot(a, b)
                if jj > 3:
                    x_new = mv(R07, y)
                    y_new = mv(R3e, x)
                    x = x_new
                    y = y_new
                cnt = _swivel_roots(what, R0, psi0, x, y, t, bounds, cnt)
    for i in range(1, cnt):
        v = bounds[i]
        k = i - 1
        while k >= 0 and bounds[k] > v:
            bounds[k + 1] = bounds[k]
            k = k - 1
        bounds[k + 1] = v
    for i in range(cnt):
        nxt = bounds[0] + F(6.283185307179586)
        if i + 1 < cnt:
            nxt = bounds[i + 1]
        out[at + i] = wrap(F(0.5) * (bounds[i] + nxt))
    return cnt


@wp.func
def srs_swivels(Rt: wp.mat33d, pt: wp.vec3d, arm: SRS_DATA_T.type, seed: wp.array(dtype=wp.float64), bounds: wp.array(dtype=wp.float64), psis: wp.array(dtype=wp.float64)):
    """The swivels of target ``(Rt, pt)`` into ``psis``: the seed's, the grid's, and
    (``arm.arcs``) one inside every joint-limit arc (``bounds``: :func:`arc_midpoints`'
    scratch); returns how many."""
    grid = arm.grid
    ns = grid.shape[0] + 1
    psis[0] = seed_swivel(Rt, pt, arm, seed)
    for s in range(grid.shape[0]):
        psis[1 + s] = grid[s]
    if (arm.arcs != 0):
        return ns + arc_midpoints(Rt, pt, arm, bounds, psis, ns)
    return ns
