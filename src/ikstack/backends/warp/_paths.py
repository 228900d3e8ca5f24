# mypy: ignore-errors
"""Continuous paths on the device: one thread a path loops over its frames.

The loops are the CPU's, generated from :mod:`ikstack.ik.analytic._path` (``_gen_path``):
per frame the family's candidate slots seeded by the previous selection (held in ``w.S[p]``),
the frame's selection step, then the seed moves to the selection or holds. The device's own
steps (:mod:`._path_steps`) select with the coupled-joint constraints and the near-mode
polish (:func:`._selection.gate_row`) and certify and write each frame
(:func:`._selection.finish_row`), without a host round trip: a whole path (or a batch of
paths) is one launch. A locked joint's grid values that cannot beat the previous lock
value's selection are skipped as on the CPU, unless constraints or the polish decide the
selection (then every value is solved).
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._families import Family6, Locked
from ikstack.backends.warp._gen_path import path6, path_locked, path_srs
from ikstack.backends.warp._path_steps import path_data
from ikstack.backends.warp._polish import Polish
from ikstack.backends.warp._selection import (
    Chain,
    Constraints,
    Gate,
    Select,
    Slots,
    Targets,
    Written,
)
from ikstack.backends.warp._srs import SRSData, Swivels


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
    d = path_data(tg, ch, con, gate, sel, w, out, pol)
    d.fam = fam
    path6(w.S[p], w.Q[p], w.V[p], d, p, d.nf)


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
    d = path_data(tg, ch, con, gate, sel, w, out, pol)
    d.fam = fam
    d.lk = lk
    li = w.S.shape[1] - 1
    if lk.lock_first != 0:
        li = 0
    # the grid is pruned where the selection is the nearest valid candidate alone
    prune = pol.iters == 0 and con.qidx.shape[0] + con.A.shape[0] == 0
    path_locked(lk.grid, li, sel.W[li], prune, w.S[p], w.Q[p], w.V[p], w.D[p], d, p, d.nf)


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
    d = path_data(tg, ch, con, gate, sel, w, out, pol)
    d.arm = arm
    d.sw = sw
    path_srs(w.S[p], w.Q[p], w.V[p], d, p, d.nf)
