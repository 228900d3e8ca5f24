# mypy: ignore-errors
"""Warp kernels of the SRS 7R swivel family (:mod:`ikstack.ik.analytic._srs`).

Two kernels: one thread a target lists its swivel angles (the seed's, the uniform grid, and
one inside every arc between Shimizu's closed-form joint-limit crossings); then one thread a
(target, swivel) pair writes that swivel's 8 candidate slots, so a GPU runs all samples of
all targets in parallel. Slot order equals the CPU path's: both run the functions generated
from the CPU source (``srs_swivels``, ``srs_slots``, ``fill_slots``); only the threads (a row's
swivels, a row's swivel) and the scratch are written here.
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._gen_srs import fill_slots, srs_slots, srs_swivels
from ikstack.backends.warp._structs import SRS_DATA_T
from ikstack.ik.analytic._srs import MAX_ARCS

__all__ = [
    "MAX_ARCS",
    "SRSData",
    "Swivels",
    "row_slots",
    "row_swivels",
    "srs_kernel",
    "srs_swivels_kernel",
]

#: the arm's data (the record's fields)
SRSData = SRS_DATA_T.type


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
def row_swivels(
    i: int,
    Ti: wp.mat44d,
    S: wp.array2d(dtype=wp.float64),
    arm: SRSData,
    sw: Swivels,
):
    """Swivel angles of row ``i`` (target ``Ti``, seed ``S[i]``): the seed's, the grid, then
    the arc midpoints."""
    Rt, pt = _target(Ti)
    sw.used[i] = srs_swivels(Rt, pt, arm, S[i], sw.bounds[i], sw.psis[i])


@wp.func
def row_slots(
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
    if s < sw.used[i]:
        Rt, pt = _target(Ti)
        srs_slots(Rt, pt, arm, sw.psis[i], s, s + 1, S[i], Q[i], V[i])
    else:
        fill_slots(S[i], Q[i], V[i], 8 * s, 8 * s + 8)


@wp.kernel
def srs_swivels_kernel(
    T: wp.array(dtype=wp.mat44d), S: wp.array2d(dtype=wp.float64), arm: SRSData, sw: Swivels
):
    """:func:`row_swivels` of target ``i``, one thread a target."""
    i = wp.tid()
    row_swivels(i, T[i], S, arm, sw)


@wp.kernel
def srs_kernel(
    T: wp.array(dtype=wp.mat44d),
    S: wp.array2d(dtype=wp.float64),
    arm: SRSData,
    sw: Swivels,
    Q: wp.array3d(dtype=wp.float64),
    V: wp.array2d(dtype=wp.int32),
):
    """:func:`row_slots` of swivel ``s`` of target ``i``, one thread a pair."""
    i, s = wp.tid()
    row_slots(i, s, T[i], S, arm, sw, Q, V)
