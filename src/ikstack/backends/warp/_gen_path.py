# mypy: ignore-errors
# ruff: noqa
"""GENERATED from ``src/ikstack/ik/analytic/_path.py`` by :mod:`ikstack.backends.warp._translate`:
do not edit; edit the CPU source and run ``python -m ikstack.backends.warp._translate``
(a test fails when this file and its source disagree)."""

import warp as wp

from ikstack.backends.warp._prims import *  # noqa: F403
from ikstack.backends.warp._path_steps import PathData, finish_frame, gate_frame, gate_window, slots6, slots_lock, slots_srs

FOUND = wp.constant(0)
K6 = wp.constant(8)
LOCK_MARGIN = wp.constant(F(1e-05))
TWO_PI = wp.constant(F(6.283185307179586))


@wp.func
def advance(prev: wp.array(dtype=wp.float64), Q: wp.array2d(dtype=wp.float64), best: int):
    """The seed ``prev`` moves to slot ``best`` of ``Q``; it holds when ``best`` < 0."""
    if best >= 0:
        for j in range(prev.shape[0]):
            prev[j] = Q[best, j]


@wp.func
def path6(prev: wp.array(dtype=wp.float64), Q: wp.array2d(dtype=wp.float64), V: wp.array(dtype=wp.int32), ctx: PathData, ctx_row: int, n: int):
    """A 6R family along ``n`` frames from the seed ``prev`` (dof,), updated in place:
    ``Q`` (K, dof), ``V`` (K,) the frame's candidate slots.

    On the device (generated from ``ikstack.ik.analytic._path.path6``): ``ctx`` is followed by
    the thread's row ``ctx_row``."""
    for i in range(n):
        slots6(ctx, ctx_row, i, prev, Q, V)
        best, code = gate_frame(Q, V, prev, ctx, ctx_row, i)
        best = finish_frame(Q, prev, ctx, ctx_row, i, best, code)
        advance(prev, Q, best)


@wp.func
def path_srs(prev: wp.array(dtype=wp.float64), Q: wp.array2d(dtype=wp.float64), V: wp.array(dtype=wp.int32), ctx: PathData, ctx_row: int, n: int):
    """A 7R spherical-shoulder / spherical-wrist arm (the previous selection's swivel first,
    then the grid and the arcs); as :func:`path6`.

    On the device (generated from ``ikstack.ik.analytic._path.path_srs``): ``ctx`` is followed
    by the thread's row ``ctx_row``."""
    for i in range(n):
        slots_srs(ctx, ctx_row, i, prev, Q, V)
        best, code = gate_frame(Q, V, prev, ctx, ctx_row, i)
        best = finish_frame(Q, prev, ctx, ctx_row, i, best, code)
        advance(prev, Q, best)


@wp.func
def may_win(v: wp.float64, pl: wp.float64, wl: wp.float64, dstar: wp.float64):
    """Whether a candidate with the locked joint (weight ``wl``) at ``v`` may be nearer than
    ``dstar`` to a seed whose locked joint is at ``pl``: its lock-joint distance alone (modulo
    a turn, less a round-off margin) is not above ``dstar``."""
    d = wp.abs(v - pl)
    d = wp.abs(d - TWO_PI * wp.floor(d / TWO_PI + F(0.5)))
    d = wp.max(d - LOCK_MARGIN, F(0.0))
    return wl * d * d <= dstar


@wp.func
def path_locked(grid: wp.array(dtype=wp.float64), li: int, wl: wp.float64, prune: bool, prev: wp.array(dtype=wp.float64), Q: wp.array2d(dtype=wp.float64), V: wp.array(dtype=wp.int32), D: wp.array(dtype=wp.float64), ctx: PathData, ctx_row: int, n: int):
    """A 7R arm with an end joint (column ``li``, weight ``wl``) locked at the previous
    selection's value, then at the values ``grid``; as :func:`path6`, ``D`` (K,) the slots'
    distances (the selection's, read here).

    With ``prune`` (the selection step is the nearest valid candidate alone: no constraints,
    no polish) and ``wl > 0`` the previous selection's lock value is solved first (slots 0 ..
    7); a grid value whose lock-joint distance alone, ``wl d^2`` (a lower bound of its
    candidates' weighted distance), is not below that selection's distance cannot win and is
    skipped (:func:`may_win`), the others fill the next slots in grid order (a run of
    neighbours a call) and a nearer valid candidate among them replaces it. The selection
    equals the one over all ``K`` slots (ties go to the earlier slot in both). Otherwise, or
    when no candidate at the previous lock value is valid, every value is solved (slot
    ``8 (s + 1)`` for ``grid[s]``) and selected at once.

    On the device (generated from ``ikstack.ik.analytic._path.path_locked``): ``ctx`` is
    followed by the thread's row ``ctx_row``.
    """
    dstar = F(0.0)
    m = int(0)
    run = int(0)
    b2 = int(0)
    ns = grid.shape[0]
    for i in range(n):
        pl = prev[li]
        best = int(-1)
        code = FOUND
        if prune and wl > F(0.0):
            slots_lock(ctx, ctx_row, i, prev, li, li + 1, 0, prev, Q, V)
            best = gate_window(Q, V, prev, ctx, ctx_row, i, 0, K6)
            if best >= 0:
                dstar = D[best]
                m = int(1)
                run = int(-1)
                for s in range(ns):
                    if may_win(grid[s], pl, wl, dstar):
                        if run < 0:
                            run = s
                    elif run >= 0:
                        slots_lock(ctx, ctx_row, i, grid, run, s, m, prev, Q, V)
                        m = m + (s - run)
                        run = int(-1)
                if run >= 0:
                    slots_lock(ctx, ctx_row, i, grid, run, ns, m, prev, Q, V)
                    m = m + (ns - run)
                if m > 1:
                    b2 = gate_window(Q, V, prev, ctx, ctx_row, i, K6, K6 * m)
                    if b2 >= 0 and D[b2] < dstar:
                        best = b2
        if best < 0:
            slots_lock(ctx, ctx_row, i, prev, li, li + 1, 0, prev, Q, V)
            slots_lock(ctx, ctx_row, i, grid, 0, ns, 1, prev, Q, V)
            best, code = gate_frame(Q, V, prev, ctx, ctx_row, i)
        best = finish_frame(Q, prev, ctx, ctx_row, i, best, code)
        advance(prev, Q, best)
