# mypy: ignore-errors
"""Continuous paths on the device: one thread a path loops over its frames.

Per frame the family's candidate functions write the frame's slots seeded by the previous
selection (held in ``S[p]``), :func:`select_target` gates them lazily as
:meth:`AnalyticIK.solve` does, and :func:`finish_row` certifies the selection, writes it (or
holds the previous pose, with a status) and its errors. The selection then seeds the next
frame, without a host round trip: a whole path (or a batch of paths) is one launch.
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._families import Family6, Locked, _rt, _solve6, locked_slots
from ikstack.backends.warp._polish import Polish
from ikstack.backends.warp._selection import (
    SUCCESS,
    UNDECIDED,
    Chain,
    Constraints,
    Gate,
    Select,
    Slots,
    Targets,
    Written,
    finish_row,
    gate_row,
)
from ikstack.backends.warp._srs import SRSData, Swivels, row_slots, row_swivels


@wp.func
def _frame_done(
    p: int,
    r: int,
    tg: Targets,
    ch: Chain,
    con: Constraints,
    gate: Gate,
    sel: Select,
    w: Slots,
    out: Written,
    pol: Polish,
):
    """Select the frame in row ``r`` of ``tg`` for path ``p`` and move the seed ``w.S[p]``
    to a certified selection."""
    if pol.iters > 0:
        for k in range(w.Q.shape[1]):
            pol.PL[p, k] = 0
    best, code = gate_row(p, tg.T[r], ch, con, gate, sel, 1, w, pol)
    # certified against the frame as given (``tg.T`` holds its nearest rotation), the
    # rotation tolerance widened by the distance between them
    st = finish_row(p, best, code, tg.Tg[r], tg.rtc[r], ch, gate, w, out, r)
    if code == UNDECIDED:
        st = UNDECIDED  # the host solves the path again from this frame
    if st == SUCCESS:
        for j in range(w.S.shape[1]):
            w.S[p, j] = out.q[r, j]


@wp.kernel
def path6_kernel(
    fam: Family6,
    tg: Targets,
    ch: Chain,
    con: Constraints,
    gate: Gate,
    sel: Select,
    w: Slots,
    out: Written,
    pol: Polish,
):
    """A 6R family along the frames of path ``p`` (rows ``p F .. p F + F - 1`` of ``tg``)."""
    p = wp.tid()
    nf = tg.T.shape[0] // w.S.shape[0]
    for f in range(nf):
        r = p * nf + f
        Rt, pt = _rt(tg.T[r])
        _solve6(p, 0, 0, fam, Rt, pt, w.S, w.Q, w.V)
        _frame_done(p, r, tg, ch, con, gate, sel, w, out, pol)


@wp.kernel
def path_locked_kernel(
    fam: Family6,
    lk: Locked,
    tg: Targets,
    ch: Chain,
    con: Constraints,
    gate: Gate,
    sel: Select,
    w: Slots,
    out: Written,
    pol: Polish,
):
    """A 7R arm with an end joint locked (the previous selection's value, then the grid)."""
    p = wp.tid()
    nf = tg.T.shape[0] // w.S.shape[0]
    for f in range(nf):
        r = p * nf + f
        for s in range(w.Q.shape[1] // 8):
            locked_slots(p, s, tg.T[r], fam, lk, w.S, w.Q, w.V)
        _frame_done(p, r, tg, ch, con, gate, sel, w, out, pol)


@wp.kernel
def path_srs_kernel(
    arm: SRSData,
    sw: Swivels,
    tg: Targets,
    ch: Chain,
    con: Constraints,
    gate: Gate,
    sel: Select,
    w: Slots,
    out: Written,
    pol: Polish,
):
    """A 7R SRS arm (the previous selection's swivel first, then the grid and the arcs)."""
    p = wp.tid()
    nf = tg.T.shape[0] // w.S.shape[0]
    for f in range(nf):
        r = p * nf + f
        row_swivels(p, tg.T[r], w.S, arm, sw)
        for s in range(w.Q.shape[1] // 8):
            row_slots(p, s, tg.T[r], w.S, arm, sw, w.Q, w.V)
        _frame_done(p, r, tg, ch, con, gate, sel, w, out, pol)
