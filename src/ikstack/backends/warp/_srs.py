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
from ikstack.backends.warp._gen_srs import _elbow_frame, _frame, _swivel_roots, _wrist_dir
from ikstack.backends.warp._gen_tuple_math import (
    dot,
    mm,
    mT,
    mv,
    neg,
    rot,
    rotm,
    wrap,
)
from ikstack.backends.warp._prims import TWO_PI, F
from ikstack.backends.warp._structs import SRS_T

MAX_ARCS = 48

#: the arm's data (the record's fields)
SRSData = SRS_T.type


@wp.struct
class Swivels:
    """Per-target swivel scratch: ``bounds`` (rows, MAX_ARCS) the joint-limit crossings,
    ``psis`` (rows, swivels) the swivel angles, ``used`` (rows,) how many are set."""

    bounds: wp.array2d(dtype=wp.float64)
    psis: wp.array2d(dtype=wp.float64)
    used: wp.array(dtype=wp.int32)


@wp.func
def _target(T: wp.mat44d):
    Rt = wp.mat33d(T[0, 0], T[0, 1], T[0, 2], T[1, 0], T[1, 1], T[1, 2], T[2, 0], T[2, 1], T[2, 2])
    return Rt, wp.vec3d(T[0, 3], T[1, 3], T[2, 3])


@wp.func
def srs_swivels(
    i: int,
    Ti: wp.mat44d,
    S: wp.array2d(dtype=wp.float64),
    arm: SRSData,
    sw: Swivels,
):
    """Swivel angles of row ``i`` (target ``Ti``, seed ``S[i]``): the seed's, the grid, then
    the arc midpoints."""
    H = arm.H
    Sp = arm.S
    pS3 = arm.pS3
    p3W = arm.p3W
    p7T = arm.p7T
    R7T = arm.R7T
    grid = arm.grid
    lo = arm.lo
    hi = arm.hi
    arcs = arm.arcs
    bounds = sw.bounds
    psis = sw.psis
    used = sw.used
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
                        cnt = _swivel_roots(what, R0, psi0, x, y, t, bounds[i], cnt)
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
def srs_slots(
    i: int,
    s: int,
    Ti: wp.mat44d,
    S: wp.array2d(dtype=wp.float64),
    arm: SRSData,
    sw: Swivels,
    Q: wp.array3d(dtype=wp.float64),
    V: wp.array2d(dtype=wp.int32),
):
    """The 8 candidate slots of swivel ``s`` of row ``i`` (unused swivels keep the seed)."""
    H = arm.H
    pS3 = arm.pS3
    p3W = arm.p3W
    psis = sw.psis
    for k in range(8):
        V[i, s * 8 + k] = 0
        for j in range(7):
            Q[i, s * 8 + k, j] = S[i, j]
    if s < sw.used[i]:
        Rt, pt = _target(Ti)
        R07, dw, what = _wrist_dir(Rt, pt, arm.S, arm.p7T, arm.R7T)
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
def srs_swivels_kernel(
    T: wp.array(dtype=wp.mat44d), S: wp.array2d(dtype=wp.float64), arm: SRSData, sw: Swivels
):
    """:func:`srs_swivels` of target ``i``, one thread a target."""
    i = wp.tid()
    srs_swivels(i, T[i], S, arm, sw)


@wp.kernel
def srs_kernel(
    T: wp.array(dtype=wp.mat44d),
    S: wp.array2d(dtype=wp.float64),
    arm: SRSData,
    sw: Swivels,
    Q: wp.array3d(dtype=wp.float64),
    V: wp.array2d(dtype=wp.int32),
):
    """:func:`srs_slots` of swivel ``s`` of target ``i``, one thread a pair."""
    i, s = wp.tid()
    srs_slots(i, s, T[i], S, arm, sw, Q, V)
