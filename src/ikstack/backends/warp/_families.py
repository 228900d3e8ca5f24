# mypy: ignore-errors
"""Warp float64 ports of the 6R families (spherical wrist in every position variant, three
parallel axes; either read forwards or backwards; and 7R arms with an end joint locked at
sampled values), mirroring :mod:`ikstack.ik.analytic._families6` operation by operation. One
thread per target writes its 8 candidate slots. The three-axis decomposition, the wrist
position variants, the last-meet joints, the tangent checks and the singular-wrist
representative are generated from the CPU source (``_gen_families6``).
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._gen_families6 import (
    _free_joint1,
    _last_meet,
    _position3,
    tp_elbow,
    tp_exact,
    tp_joint1,
    tp_pair,
    tp_singular,
    wrist_members,
)
from ikstack.backends.warp._gen_sp import (
    sp6,
)
from ikstack.backends.warp._gen_tuple_math import (
    add,
    cross,
    mm,
    mT,
    mtv,
    mv,
    neg,
    norm,
    rot_cs,
    rotm,
    sub,
)
from ikstack.backends.warp._prims import F
from ikstack.backends.warp._structs import FAMILY6_T, LOCKED_T
from ikstack.ik.analytic._families6 import SINGULAR_WRIST as _SINGULAR_WRIST

#: a three-parallel wrist this close to singular takes :func:`tp_singular`'s representative
SINGULAR_WRIST = wp.constant(wp.float64(_SINGULAR_WRIST))
SPHERICAL = 0
THREE_PARALLEL = 1
GENERAL, TWO_PARALLEL, FIRST_MEET, SECOND_MEET = 0, 1, 2, 3
LAST_MEET = 1  #: three-parallel variant: axes 5 and 6 (1-based) meet
#: a 6R seed (the chain's order, or reversed for a reversed family)
vec6d = wp.types.vector(length=6, dtype=wp.float64)
#: a 6R family's data and an end joint's lock (the CPU records' fields)
Family6 = FAMILY6_T.type
Locked = LOCKED_T.type


@wp.func
def _put(
    Q: wp.array3d(dtype=wp.float64), i: int, slot: int, j: int, rev: int, off: int, v: wp.float64
):
    if rev != 0:
        Q[i, slot, off + 5 - j] = v
    else:
        Q[i, slot, off + j] = v


@wp.func
def _spherical(
    i: int,
    base: int,
    off: int,
    fam: Family6,
    Rt: wp.mat33d,
    pt: wp.vec3d,
    sd: vec6d,
    Q: wp.array3d(dtype=wp.float64),
    V: wp.array2d(dtype=wp.int32),
):
    """The CPU ``spherical_wrist`` (``sd``: the seed in the family's joint order)."""
    var = fam.var
    rev = fam.reverse
    H = fam.H
    P = fam.P
    R6T = fam.R6T
    R06 = mm(Rt, mT(R6T))
    pW = sub(pt, mv(R06, P[6]))
    n0, s0, s1, s2 = _position3(var, pW, H, P, sd[0])
    n, t0, t1, t2 = _free_joint1(n0, s0, s1, s2, pW, R06, H, P, sd[4])
    slot = int(0)  # noqa: UP018 (a mutable Warp loop variable)
    for a in range(n):
        R03 = mm(mm(rotm(H[0], t0[a]), rotm(H[1], t1[a])), rotm(H[2], t2[a]))
        R36 = mm(mT(R03), R06)
        m, X, Y, Z = wrist_members(R36, H[3], H[4], H[5], sd[3], sd[5])
        for b in range(m):
            if slot < 8:
                _put(Q, i, base + slot, 0, rev, off, t0[a])
                _put(Q, i, base + slot, 1, rev, off, t1[a])
                _put(Q, i, base + slot, 2, rev, off, t2[a])
                _put(Q, i, base + slot, 3, rev, off, X[b])
                _put(Q, i, base + slot, 4, rev, off, Y[b])
                _put(Q, i, base + slot, 5, rev, off, Z[b])
                V[i, base + slot] = 1
                slot += 1


@wp.func
def _three_parallel(
    i: int,
    base: int,
    off: int,
    fam: Family6,
    Rt: wp.mat33d,
    pt: wp.vec3d,
    s5: wp.float64,
    Q: wp.array3d(dtype=wp.float64),
    V: wp.array2d(dtype=wp.int32),
):
    """The CPU ``three_parallel``: ``tp_start`` here, then the generated ``tp_joint1``,
    ``tp_pair``, ``tp_elbow``, ``tp_singular`` and ``tp_exact`` per (joint 1, joint 5) pair."""
    var = fam.var
    rev = fam.reverse
    H = fam.H
    P = fam.P
    R6T = fam.R6T
    sgn = fam.sgn
    R06 = mm(Rt, mT(R6T))
    p16 = sub(sub(pt, mv(R06, P[6])), P[0])
    h0 = H[0]
    h1 = H[1]
    h4 = H[4]
    h5 = H[5]
    P1 = P[1]
    P2 = P[2]
    P3 = P[3]
    P4 = P[4]
    P5 = P[5]
    m0 = neg(h0)
    d1 = (
        h1[0] * (P1[0] + P2[0] + P3[0] + P4[0])
        + h1[1] * (P1[1] + P2[1] + P3[1] + P4[1])
        + h1[2] * (P1[2] + P2[2] + P3[2] + P4[2])
    )
    n = int(0)  # noqa: UP018
    a = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    b = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    ca = wp.vec4d(F(1.0), F(1.0), F(1.0), F(1.0))
    sa = wp.vec4d(F(1.0), F(1.0), F(1.0), F(1.0))
    cb = wp.vec4d(F(1.0), F(1.0), F(1.0), F(1.0))
    sb = wp.vec4d(F(1.0), F(1.0), F(1.0), F(1.0))
    if var == LAST_MEET:
        n, a, b, ca, sa, cb, sb = _last_meet(h0, h1, h4, h5, P5, d1, p16, R06)
    else:
        n, a, b = sp6(
            h1, h1, h1, h1, m0, h4, m0, h4, p16, neg(P5), mv(R06, h5), neg(h5), d1, F(0.0)
        )
        for r in range(n):
            ca[r] = wp.cos(a[r])
            sa[r] = wp.sin(a[r])
            cb[r] = wp.cos(b[r])
            sb[r] = wp.sin(b[r])
    slot = int(0)  # noqa: UP018 (a mutable Warp loop variable)
    for r in range(n):
        q0 = a[r]
        q4 = b[r]
        c4 = cb[r]
        s4 = sb[r]
        A, w0 = tp_joint1(h0, ca[r], sa[r], R06, p16, P1)
        q5, theta, d = tp_pair(h1, h4, h5, P4, P5, A, w0, c4, s4, s5)
        m, ls, phi1, phi2, phi3 = tp_elbow(h1, P2, P3, theta, d)
        if ls and norm(cross(rot_cs(h4, c4, s4, h5), h1)) < SINGULAR_WRIST:
            # a singular wrist whose elbow missed its reach at the seed's joint 6: the sum
            # theta moves to the nearest value with the elbow at mid reach (tp_pair_rep)
            q5, theta, d = tp_singular(h1, h4, h5, P2, P3, P4, P5, A, w0, c4, s4, theta)
            m, ls, phi1, phi2, phi3 = tp_elbow(h1, P2, P3, theta, d)
        for j in range(m):
            if slot < 8:
                _put(Q, i, base + slot, 0, rev, off, q0)
                _put(Q, i, base + slot, 1, rev, off, phi1[j] * sgn[1])
                _put(Q, i, base + slot, 2, rev, off, phi2[j] * sgn[2])
                _put(Q, i, base + slot, 3, rev, off, phi3[j] * sgn[3])
                _put(Q, i, base + slot, 4, rev, off, q4)
                _put(Q, i, base + slot, 5, rev, off, q5)
                V[i, base + slot] = wp.where(tp_exact(h1, P2, P3, ls, phi2[j], d), 1, 0)
                slot += 1


@wp.func
def _solve6(
    i: int,
    base: int,
    off: int,
    fam: Family6,
    Rt: wp.mat33d,
    pt: wp.vec3d,
    S: wp.array2d(dtype=wp.float64),
    Q: wp.array3d(dtype=wp.float64),
    V: wp.array2d(dtype=wp.int32),
):
    """Slots ``base .. base + 7`` of target ``i``, joints ``off .. off + 5``: the seed, then
    the family's candidates (``rev``: ``T^-1`` solved with the chain read backwards)."""
    for k in range(8):
        V[i, base + k] = 0
        for j in range(6):
            Q[i, base + k, off + j] = S[i, off + j]
    sd = vec6d(S[i, off], S[i, off + 1], S[i, off + 2], S[i, off + 3], S[i, off + 4], S[i, off + 5])
    if fam.reverse != 0:
        pt = neg(mtv(Rt, pt))
        Rt = mT(Rt)
        sd = vec6d(
            S[i, off + 5], S[i, off + 4], S[i, off + 3], S[i, off + 2], S[i, off + 1], S[i, off]
        )
    if fam.fid == SPHERICAL:
        _spherical(i, base, off, fam, Rt, pt, sd, Q, V)
    else:
        _three_parallel(i, base, off, fam, Rt, pt, sd[5], Q, V)


@wp.func
def _rt(Ti: wp.mat44d):
    Rt = wp.mat33d(
        Ti[0, 0], Ti[0, 1], Ti[0, 2], Ti[1, 0], Ti[1, 1], Ti[1, 2], Ti[2, 0], Ti[2, 1], Ti[2, 2]
    )
    return Rt, wp.vec3d(Ti[0, 3], Ti[1, 3], Ti[2, 3])


@wp.kernel
def sixr_kernel(
    fam: Family6,
    T: wp.array(dtype=wp.mat44d),
    S: wp.array2d(dtype=wp.float64),
    Q: wp.array3d(dtype=wp.float64),
    V: wp.array2d(dtype=wp.int32),
):
    """Candidates ``Q`` (N, 8, 6) and masks ``V`` (N, 8) of a 6R family, one thread a target."""
    i = wp.tid()
    Rt, pt = _rt(T[i])
    _solve6(i, 0, 0, fam, Rt, pt, S, Q, V)


@wp.func
def locked_slots(
    i: int,
    s: int,
    Ti: wp.mat44d,
    fam: Family6,
    lk: Locked,
    S: wp.array2d(dtype=wp.float64),
    Q: wp.array3d(dtype=wp.float64),
    V: wp.array2d(dtype=wp.int32),
):
    """7R with its first or last joint locked: sample ``s`` (0: the seed's own value, then
    ``grid[s - 1]``) of row ``i`` (target ``Ti``, seed ``S[i]``) fills slots ``8 s .. 8 s + 7``."""
    lh = lk.lh
    lr = lk.lr
    M_R = lk.M_R
    M_p = lk.M_p
    lock = 6
    off = 0
    if lk.lock_first != 0:
        lock = 0
        off = 1
    v = S[i, lock]
    if s > 0:
        v = lk.grid[s - 1]
    Rt, pt = _rt(Ti)
    E = rotm(lh, -v)
    Ep = sub(lr, mv(E, lr))
    R2 = mm(E, Rt)
    p2 = add(mv(E, pt), Ep)
    if lk.lock_first == 0:
        G_R = mm(mm(mT(M_R), E), M_R)
        G_p = mtv(M_R, sub(add(mv(E, M_p), Ep), M_p))
        R2 = mm(Rt, G_R)
        p2 = add(mv(Rt, G_p), pt)
    _solve6(i, 8 * s, off, fam, R2, p2, S, Q, V)
    for k in range(8):
        Q[i, 8 * s + k, lock] = v


@wp.kernel
def locked_kernel(
    fam: Family6,
    lk: Locked,
    T: wp.array(dtype=wp.mat44d),
    S: wp.array2d(dtype=wp.float64),
    Q: wp.array3d(dtype=wp.float64),
    V: wp.array2d(dtype=wp.int32),
):
    """:func:`locked_slots` of sample ``s`` of target ``i``, one thread a pair."""
    i, s = wp.tid()
    locked_slots(i, s, T[i], fam, lk, S, Q, V)
