"""Compiled continuous-path selection: one loop over frames, written once for both devices.

Per frame the family's candidates are written seeded by the previous selection, the frame's
selection step picks among them (:func:`._selection.lazy_one`, the code
:meth:`AnalyticIK.solve` runs: representatives within the limits, ``max_joint_step``, the FK
gate, the valid candidate nearest the previous selection under the weights), and the seed
moves to the selection or holds on a failed frame. A 7R arm with a locked end joint solves
the previous selection's lock value first and skips every grid value whose lock-joint
distance alone (a lower bound of its candidates' weighted distance) is not below that
selection's distance (:func:`path_locked`).

The loops (:func:`path6`, :func:`path_locked`, :func:`path_srs`, :func:`advance`) are written
in the kernels' portable subset; the Warp backend's path kernels run the same loops,
generated from this source (``backends/warp/_gen_path.py``). What differs by device is
in the hooks, each written once per device (on the device in ``backends/warp/_path_steps.py``):
where a frame's target and the family's data are read (:func:`slots6`, :func:`slots_srs`,
:func:`slots_lock`), the selection among a range of slots (:func:`gate_window`) and the
frame's selection step with its outcome (:func:`gate_frame`), and what a frame writes
(:func:`finish_frame`). On the CPU the frame writes the selection (or the held pose) and an
outcome code, and the host certifies the whole path afterwards (:func:`ikstack.ik.certify`);
the device also applies the coupled-joint constraints and the near-mode polish in its
selection step and certifies each frame there, so its seed moves only to a certified
selection.

The hooks' context ``ctx`` is, on the CPU, the tuple ``(fam, T, chain, sel, work, res)``:
the family's data, the targets (n, 4, 4), the :data:`ikstack.ik._data.CHAIN` and
:data:`._select.SELECT` records, the selection's flags and scratch ``(OK, FK, LIM, D, Tbuf)``
and the outputs ``(out (n, dof), code (n,))``. Every array is the caller's: the loops
allocate nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ikstack.ik._data import CHAIN
from ikstack.ik.analytic import _families6 as F6
from ikstack.ik.analytic import _locked6 as L6
from ikstack.ik.analytic import _srs
from ikstack.ik.analytic._families6 import K6
from ikstack.ik.analytic._select import SELECT, TWO_PI
from ikstack.ik.analytic._selection import lazy_one
from ikstack.ik.analytic.families import SRS, LockedJoint, SixR
from ikstack.spatial._tuple_math import m9

#: frame outcome codes written to ``code`` (the caller maps them to IKStatus values; ``FOUND``
#: is the device's success status too)
FOUND = 0
NO_FK = 1
NO_LIMITS = 2
NO_STEP = 3
#: a lock value's distance bound is lowered by this much [rad] (round-off of the candidates)
LOCK_MARGIN = 1e-5


# ----------------------------------------------------------------------------- the loops
@njit(cache=True, inline="always")
def advance(prev, Q, best):  # pragma: no cover - compiled
    """The seed ``prev`` moves to slot ``best`` of ``Q``; it holds when ``best`` < 0."""
    if best >= 0:
        for j in range(prev.shape[0]):
            prev[j] = Q[best, j]


@njit(cache=True)
def path6(prev, Q, V, ctx, n):  # pragma: no cover - compiled
    """A 6R family along ``n`` frames from the seed ``prev`` (dof,), updated in place:
    ``Q`` (K, dof), ``V`` (K,) the frame's candidate slots."""
    for i in range(n):
        slots6(ctx, i, prev, Q, V)
        best, code = gate_frame(Q, V, prev, ctx, i)
        best = finish_frame(Q, prev, ctx, i, best, code)
        advance(prev, Q, best)


@njit(cache=True)
def path_srs(prev, Q, V, ctx, n):  # pragma: no cover - compiled
    """A 7R spherical-shoulder / spherical-wrist arm (the previous selection's swivel first,
    then the grid and the arcs); as :func:`path6`."""
    for i in range(n):
        slots_srs(ctx, i, prev, Q, V)
        best, code = gate_frame(Q, V, prev, ctx, i)
        best = finish_frame(Q, prev, ctx, i, best, code)
        advance(prev, Q, best)


@njit(cache=True, inline="always")
def may_win(v, pl, wl, dstar):  # pragma: no cover - compiled
    """Whether a candidate with the locked joint (weight ``wl``) at ``v`` may be nearer than
    ``dstar`` to a seed whose locked joint is at ``pl``: its lock-joint distance alone (modulo
    a turn, less a round-off margin) is not above ``dstar``."""
    d = abs(v - pl)
    d = abs(d - TWO_PI * np.floor(d / TWO_PI + 0.5))  # distance modulo a turn
    d = max(d - LOCK_MARGIN, 0.0)
    return wl * d * d <= dstar


@njit(cache=True)
def path_locked(grid, li, wl, prune, prev, Q, V, D, ctx, n):  # pragma: no cover - compiled
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
    """
    ns = grid.shape[0]
    for i in range(n):
        pl = prev[li]
        best = -1
        code = FOUND
        if prune and wl > 0.0:
            slots_lock(ctx, i, prev, li, li + 1, 0, prev, Q, V)
            best = gate_window(Q, V, prev, ctx, i, 0, K6)
            if best >= 0:
                dstar = D[best]
                m = 1
                run = -1  # the first value of the current run of values that may win
                for s in range(ns):
                    if may_win(grid[s], pl, wl, dstar):
                        if run < 0:
                            run = s
                    elif run >= 0:
                        slots_lock(ctx, i, grid, run, s, m, prev, Q, V)
                        m += s - run
                        run = -1
                if run >= 0:
                    slots_lock(ctx, i, grid, run, ns, m, prev, Q, V)
                    m += ns - run
                if m > 1:
                    b2 = gate_window(Q, V, prev, ctx, i, K6, K6 * m)
                    if b2 >= 0 and D[b2] < dstar:
                        best = b2
        if best < 0:
            slots_lock(ctx, i, prev, li, li + 1, 0, prev, Q, V)
            slots_lock(ctx, i, grid, 0, ns, 1, prev, Q, V)
            best, code = gate_frame(Q, V, prev, ctx, i)
        best = finish_frame(Q, prev, ctx, i, best, code)
        advance(prev, Q, best)


# ----------------------------------------------------------------------------- CPU hooks
@njit(cache=True, inline="always")
def slots6(ctx, i, prev, Q, V):  # pragma: no cover - compiled
    """The 8 slots of frame ``i`` of a 6R family (``ctx[0] = (fid, var, sgn, rev, H, P,
    R6T)``, :func:`._families6.solve6`'s arguments) seeded by ``prev``."""
    fid, var, sgn, rev, H, P, R6T = ctx[0]
    Ti = ctx[1][i]
    pt = (Ti[0, 3], Ti[1, 3], Ti[2, 3])
    F6.solve6(fid, var, sgn, m9(Ti), pt, (H, P, m9(R6T)), prev, (Q, V, 0, 0, rev))


@njit(cache=True, inline="always")
def slots_srs(ctx, i, prev, Q, V):  # pragma: no cover - compiled
    """The slots of frame ``i`` of an SRS arm (``ctx[0] = (arm, bounds, psis)``: the arm's
    :data:`._srs.SRS_DATA` and the swivels' scratch): :func:`._srs.srs_target` with the
    caller's scratch."""
    arm, bounds, psis = ctx[0]
    Ti = ctx[1][i]
    Rt = m9(Ti)
    pt = (Ti[0, 3], Ti[1, 3], Ti[2, 3])
    used = _srs.srs_swivels(Rt, pt, arm, prev, bounds, psis)
    _srs.srs_slots(Rt, pt, arm, psis, 0, used, prev, Q, V)
    _srs.fill_slots(prev, Q, V, 8 * used, Q.shape[0])


@njit(cache=True, inline="always")
def slots_lock(ctx, i, vals, s0, s1, slot, prev, Q, V):  # pragma: no cover - compiled
    """The lock values ``vals[s0:s1]`` of frame ``i`` into 8 slots each from slot ``8 slot``
    (``ctx[0] = (fam6, lock)``, :func:`._locked6.locked_one`'s records)."""
    fam6, lock = ctx[0]
    k0 = K6 * slot
    k1 = k0 + K6 * (s1 - s0)
    L6.locked_one(fam6, lock, ctx[1][i], vals[s0:s1], prev, Q[k0:k1], V[k0:k1])


@njit(cache=True, inline="always")
def gate_window(Q, V, prev, ctx, i, k0, k1):  # pragma: no cover - compiled
    """The selected slot among slots ``k0 .. k1 - 1`` of frame ``i`` (:func:`lazy_one`), or
    -1; the other slots are not touched."""
    OK, FK, LIM, D, Tbuf = ctx[4]
    w = (OK[k0:k1], FK[k0:k1], LIM[k0:k1], D[k0:k1], Tbuf)
    best = lazy_one(Q[k0:k1], V[k0:k1], prev, ctx[1][i], ctx[2], ctx[3], None, w)
    return best + k0 if best >= 0 else best


@njit(cache=True, inline="always")
def gate_frame(Q, V, prev, ctx, i):  # pragma: no cover - compiled
    """``(slot, outcome)``: the selection among all slots of frame ``i`` (-1: none) and its
    outcome code, from the flags of the failed gates when none passed."""
    work = ctx[4]
    best = lazy_one(Q, V, prev, ctx[1][i], ctx[2], ctx[3], None, work)
    if best >= 0:
        return best, FOUND
    FK, LIM = work[1], work[2]
    fk_any = False
    fk_lim = False
    for k in range(Q.shape[0]):
        fk_any = fk_any or FK[k]
        fk_lim = fk_lim or (FK[k] and LIM[k])
    return best, NO_FK if not fk_any else (NO_LIMITS if not fk_lim else NO_STEP)


@njit(cache=True, inline="always")
def finish_frame(Q, prev, ctx, i, best, code):  # pragma: no cover - compiled
    """Frame ``i`` writes its selection (or the held pose ``prev``) and outcome ``code``;
    returns the slot the seed moves to (``best``: the host certifies afterwards)."""
    out, codes = ctx[5]
    codes[i] = code
    for j in range(prev.shape[0]):
        out[i, j] = Q[best, j] if best >= 0 else prev[j]
    return best


# ----------------------------------------------------------------------------- entry
def run(
    family: object, T: np.ndarray, seed: np.ndarray, gate: tuple[Any, ...]
) -> tuple[np.ndarray, np.ndarray] | None:
    """Selected path ``q`` (n, dof) and outcome codes (n,) of ``family`` along ``T``, or None
    when the family has no compiled path loop. ``gate`` is ``(lo, hi, revolute, Rs, ps, kinds,
    R_end, p_end, ptol, rtol, step, W)``."""
    if not isinstance(family, SixR | LockedJoint | SRS):
        return None
    n, dof = T.shape[0], seed.shape[0]
    out = np.empty((n, dof))
    code = np.empty(n, dtype=np.int64)
    lo, hi, revolute, Rs, ps, kinds, R_end, p_end, ptol, rtol, step, W = gate
    chain = CHAIN.make(Rs=Rs, ps=ps, kinds=kinds, R_end=R_end, p_end=p_end)
    sel = SELECT.make(
        lo=lo, hi=hi, W=W, revolute=revolute, step=step, max_dq=0.0, tol_p=ptol, tol_r=rtol
    )
    K = family.K if isinstance(family, LockedJoint | SRS) else K6
    Q = np.empty((K, dof))
    V = np.empty(K, dtype=np.bool_)
    D = np.empty(K)
    work = (
        np.empty(K, np.bool_),
        np.empty(K, np.bool_),
        np.empty(K, np.bool_),
        D,
        np.empty((4, 4)),
    )
    prev = seed.copy()
    if isinstance(family, SixR):
        f = family
        fam: Any = (f.kfid, f.kvar, f.ksgn, f.reverse, f.H, f.P, f.R6T)
        path6(prev, Q, V, (fam, T, chain, sel, work, (out, code)), n)
    elif isinstance(family, LockedJoint):
        li = family.lock_index
        ctx = (family.kernel, T, chain, sel, work, (out, code))
        path_locked(family.grid, li, float(W[li]), True, prev, Q, V, D, ctx, n)
    else:
        scratch = (family.data, np.empty(_srs.MAX_ARCS), np.empty(K // 8))
        path_srs(prev, Q, V, (scratch, T, chain, sel, work, (out, code)), n)
    return out, code
