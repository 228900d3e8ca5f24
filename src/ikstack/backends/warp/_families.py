# mypy: ignore-errors
"""Warp kernels of the 6R families (spherical wrist in every position variant, three parallel
axes; either read forwards or backwards; and 7R arms with an end joint locked at sampled
values). One thread per target (a 7R lock: per target and lock value) writes its 8 candidate
slots. Everything but the launch and the family dispatch is generated from the CPU source
(:mod:`ikstack.ik.analytic._families6`, :mod:`ikstack.ik.analytic._locked6`): the maths, the
seed's slots, the reversed chain's joint order, the locked joint's target and slots.
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._gen_families6 import spherical_wrist, three_parallel
from ikstack.backends.warp._gen_locked6 import lock_slots, lock_target
from ikstack.backends.warp._structs import FAMILY6_T, LOCKED_T
from ikstack.ik.analytic._families6 import K6 as _K6
from ikstack.ik.analytic._families6 import SPHERICAL as _SPHERICAL

SPHERICAL = wp.constant(_SPHERICAL)
K6 = wp.constant(_K6)
#: a 6R family's data and an end joint's lock (the CPU records' fields)
Family6 = FAMILY6_T.type
Locked = LOCKED_T.type


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
    """Slots ``base .. base + 7`` of target ``i``, joints ``off .. off + 5``: the CPU
    ``solve6``, whose family numba picks at compile time and this function by ``fam.fid``."""
    rev = fam.reverse != 0
    if fam.fid == SPHERICAL:
        spherical_wrist(fam.var, Rt, pt, fam.H, fam.P, fam.R6T, S[i], Q[i], V[i], base, off, rev)
    else:
        three_parallel(
            fam.var, Rt, pt, fam.H, fam.P, fam.R6T, fam.sgn, S[i], Q[i], V[i], base, off, rev
        )


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
def lock_value_slots(
    i: int,
    slot: int,
    v: wp.float64,
    Ti: wp.mat44d,
    fam: Family6,
    lk: Locked,
    S: wp.array2d(dtype=wp.float64),
    Q: wp.array3d(dtype=wp.float64),
    V: wp.array2d(dtype=wp.int32),
):
    """The locked joint at ``v``: slots ``8 slot .. 8 slot + 7`` of row ``i`` (target ``Ti``,
    seed ``S[i]``; the CPU ``locked_one``'s loop body)."""
    first = lk.lock_first != 0
    idx = S.shape[1] - 1
    off = 0
    if first:
        idx = 0
        off = 1
    Rt, pt = _rt(Ti)
    R2, p2 = lock_target(first, lk.lh, lk.lr, lk.M_R, lk.M_p, Rt, pt, v)
    _solve6(i, K6 * slot, off, fam, R2, p2, S, Q, V)
    lock_slots(Q[i], K6 * slot, idx, v)


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
    v = S[i, S.shape[1] - 1]
    if lk.lock_first != 0:
        v = S[i, 0]
    if s > 0:
        v = lk.grid[s - 1]
    lock_value_slots(i, s, v, Ti, fam, lk, S, Q, V)


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
