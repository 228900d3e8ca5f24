# mypy: ignore-errors
# ruff: noqa
"""GENERATED from ``src/ikstack/ik/analytic/_locked6.py`` by :mod:`ikstack.backends.warp._translate`:
do not edit; edit the CPU source and run ``python -m ikstack.backends.warp._translate``
(a test fails when this file and its source disagree)."""

import warp as wp

from ikstack.backends.warp._prims import *  # noqa: F403
from ikstack.backends.warp._gen_tuple_math import add, mT, mm, mtv, mv, rotm, sub

K6 = wp.constant(8)


@wp.func
def lock_target(first: bool, h: wp.vec3d, r: wp.vec3d, M_R: wp.mat33d, M_p: wp.vec3d, Rt: wp.mat33d, pt: wp.vec3d, v: wp.float64):
    """The 6R family's target ``(R, p)`` of target ``(Rt, pt)`` with the locked joint (axis
    ``h`` through ``r``; ``first``: joint 1, else the last, whose fixed transform to the tool
    is ``(M_R, M_p)``) at ``v``: ``exp(-xi_1 v) T``, or ``T M^-1 exp(-xi_7 v) M``."""
    E = rotm(h, -v)
    Ep = sub(r, mv(E, r))
    if first:
        return mm(E, Rt), add(mv(E, pt), Ep)
    G_R = mm(mm(mT(M_R), E), M_R)
    G_p = mtv(M_R, sub(add(mv(E, M_p), Ep), M_p))
    return mm(Rt, G_R), add(mv(Rt, G_p), pt)


@wp.func
def lock_slots(Q: wp.array2d(dtype=wp.float64), base: int, idx: int, v: wp.float64):
    """The locked joint (column ``idx``) of slots ``base .. base + 7`` is ``v``."""
    for k in range(K6):
        Q[base + k, idx] = v
