# mypy: ignore-errors
"""The device's own steps of the generated path loops (``_gen_path``, from
:mod:`ikstack.ik.analytic._path`): where a frame's target and the family's data are read, the
frame's selection step and what a frame writes, each written here once for the device with
the CPU hook's arguments (the translator's hooks).

The loops' device context (``dev(PathData)``) is one launch's data and the path's index
``p`` (its row): the path's frames are rows ``p nf .. p nf + nf - 1`` of the targets, its seed
``w.S[p]``, its slots ``w.Q[p]``. The frame's selection step is the device's selection of a
target (:func:`._selection.gate_row`: the coupled-joint constraints and the near-mode polish
too) and the frame's end certifies and writes the selection (:func:`._selection.finish_row`),
so the seed moves only to a certified selection; a frame whose constraints the device cannot
decide writes ``UNDECIDED`` (the host solves the path again from there).
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._families import Family6, Locked, _rt, _solve6, lock_value_slots
from ikstack.backends.warp._gen_selection import _finalize_pl
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

__all__ = [
    "PathData",
    "finish_frame",
    "gate_frame",
    "gate_window",
    "path_data",
    "slots6",
    "slots_lock",
    "slots_srs",
]


@wp.struct
class PathData:
    """One launch of paths: the family's data (the one of ``fam``, ``lk``, ``arm`` and ``sw``
    its kernel reads), the frames, the chain and the selection's settings, the slots, the
    outputs and the polish; ``nf`` frames a path."""

    fam: Family6
    lk: Locked
    arm: SRSData
    sw: Swivels
    tg: Targets
    ch: Chain
    con: Constraints
    gate: Gate
    sel: Select
    w: Slots
    out: Written
    pol: Polish
    nf: int


@wp.func
def path_data(
    tg: Targets,
    ch: Chain,
    con: Constraints,
    gate: Gate,
    sel: Select,
    w: Slots,
    out: Written,
    pol: Polish,
):
    """The :class:`PathData` of a launch (the family's fields are set by the kernel)."""
    d = PathData()
    d.tg = tg
    d.ch = ch
    d.con = con
    d.gate = gate
    d.sel = sel
    d.w = w
    d.out = out
    d.pol = pol
    d.nf = tg.T.shape[0] // w.S.shape[0]
    return d


@wp.func
def slots6(
    ctx: PathData,
    ctx_row: int,
    i: int,
    prev: wp.array(dtype=wp.float64),
    Q: wp.array2d(dtype=wp.float64),
    V: wp.array(dtype=wp.int32),
):
    """The 8 slots of frame ``i`` of path ``ctx_row`` (a 6R family) seeded by ``prev``."""
    Rt, pt = _rt(ctx.tg.T[ctx_row * ctx.nf + i])
    _solve6(ctx_row, 0, 0, ctx.fam, Rt, pt, ctx.w.S, ctx.w.Q, ctx.w.V)


@wp.func
def slots_srs(
    ctx: PathData,
    ctx_row: int,
    i: int,
    prev: wp.array(dtype=wp.float64),
    Q: wp.array2d(dtype=wp.float64),
    V: wp.array(dtype=wp.int32),
):
    """The slots of frame ``i`` of path ``ctx_row`` (an SRS arm): the previous selection's
    swivel, the grid, the arcs; unused swivels keep the seed, masked."""
    Ti = ctx.tg.T[ctx_row * ctx.nf + i]
    row_swivels(ctx_row, Ti, ctx.w.S, ctx.arm, ctx.sw)
    for s in range(Q.shape[0] // 8):
        row_slots(ctx_row, s, Ti, ctx.w.S, ctx.arm, ctx.sw, ctx.w.Q, ctx.w.V)


@wp.func
def slots_lock(
    ctx: PathData,
    ctx_row: int,
    i: int,
    vals: wp.array(dtype=wp.float64),
    s0: int,
    s1: int,
    slot: int,
    prev: wp.array(dtype=wp.float64),
    Q: wp.array2d(dtype=wp.float64),
    V: wp.array(dtype=wp.int32),
):
    """The lock values ``vals[s0:s1]`` of frame ``i`` of path ``ctx_row`` into 8 slots each
    from slot ``8 slot``."""
    Ti = ctx.tg.T[ctx_row * ctx.nf + i]
    for s in range(s0, s1):
        v = vals[s]
        lock_value_slots(ctx_row, slot + s - s0, v, Ti, ctx.fam, ctx.lk, ctx.w.S, ctx.w.Q, ctx.w.V)


@wp.func
def gate_window(
    Q: wp.array2d(dtype=wp.float64),
    V: wp.array(dtype=wp.int32),
    prev: wp.array(dtype=wp.float64),
    ctx: PathData,
    ctx_row: int,
    i: int,
    k0: int,
    k1: int,
):
    """The selected slot among slots ``k0 .. k1 - 1`` (the generated selection on views of
    them: the other slots are not touched), or -1. Only without constraints and polish (the
    loop's ``prune``): the polish's scratch is not used, its FK errors go to the row's first
    ``k1 - k0`` columns (read by ``return_all`` only)."""
    p = ctx_row
    w = ctx.w
    best = _finalize_pl(
        Q[k0:k1],
        V[k0:k1],
        prev,
        ctx.tg.T[p * ctx.nf + i],
        ctx.ch,
        ctx.sel,
        True,
        0,
        w.OK[p][k0:k1],
        w.FK[p][k0:k1],
        w.LIM[p][k0:k1],
        w.D[p][k0:k1],
        ctx.pol,
        p,
        w.CON[p][k0:k1],
    )
    if best >= 0:
        best = best + k0
    return best


@wp.func
def gate_frame(
    Q: wp.array2d(dtype=wp.float64),
    V: wp.array(dtype=wp.int32),
    prev: wp.array(dtype=wp.float64),
    ctx: PathData,
    ctx_row: int,
    i: int,
):
    """``(slot or -1, status)``: the device's selection of frame ``i`` of path ``ctx_row``
    among all its slots, constraints and polish included (:func:`gate_row`)."""
    p = ctx_row
    if ctx.pol.iters > 0:
        for k in range(Q.shape[0]):
            ctx.pol.PL[p, k] = 0
    return gate_row(
        p, ctx.tg.T[p * ctx.nf + i], ctx.ch, ctx.con, ctx.gate, ctx.sel, 1, ctx.w, ctx.pol
    )


@wp.func
def finish_frame(
    Q: wp.array2d(dtype=wp.float64),
    prev: wp.array(dtype=wp.float64),
    ctx: PathData,
    ctx_row: int,
    i: int,
    best: int,
    code: int,
):
    """Certify frame ``i``'s selection against the frame as given (``tg.T`` holds its nearest
    rotation; the rotation tolerance widened by the distance between them) and write it, or
    the held pose with a status (:func:`finish_row`); returns the slot the seed moves to:
    ``best`` if certified, else -1."""
    p = ctx_row
    r = p * ctx.nf + i
    tg = ctx.tg
    st = finish_row(p, best, code, tg.Tg[r], tg.rtc[r], ctx.ch, ctx.gate, ctx.w, ctx.out, r)
    if code == UNDECIDED:
        st = UNDECIDED  # the host solves the path again from this frame
    moved = int(-1)  # noqa: UP018 (a mutable Warp variable)
    if st == SUCCESS:
        moved = best
    return moved
