# mypy: ignore-errors
# ruff: noqa
"""GENERATED from ``src/ikstack/ik/analytic/_selection.py`` by :mod:`ikstack.backends.warp._translate`:
do not edit; edit the CPU source and run ``python -m ikstack.backends.warp._translate``
(a test fails when this file and its source disagree)."""

import warp as wp

from ikstack.backends.warp._prims import *  # noqa: F403
from ikstack.backends.warp._gen_select import _limits_row, _project
from ikstack.backends.warp._slot_steps import Polish, fk_gate, polish_slot
from ikstack.backends.warp._structs import CHAIN_T, SELECT_T

NONE = wp.constant(-1)


@wp.func
def nearest_open(OK: wp.array(dtype=wp.int32), D: wp.array(dtype=wp.float64), K: int):
    """The open slot (``OK``) of the ``K`` nearest the seed (``D``: distances), the lower slot
    of equal distances; -1 when none is open."""
    best = int(-1)
    for k in range(K):
        if (OK[k] != 0) and (best < 0 or D[k] < D[best]):
            best = k
    return best


@wp.func
def select_nearest(Q: wp.array2d(dtype=wp.float64), D: wp.array(dtype=wp.float64), OK: wp.array(dtype=wp.int32), T: wp.mat44d, scratch: Polish, scratch_row: int, gate_0: CHAIN_T.type, gate_1_0: wp.float64, gate_1_1: wp.float64, polish_0: int, polish_1: wp.array(dtype=wp.float64), polish_2: SELECT_T.type, polish_3: wp.array(dtype=wp.int32), polish_4: wp.array(dtype=wp.int32)):
    """``(k, perr, rerr)``: the valid slot nearest the seed and its FK errors, or
    ``(NONE, 0, 0)``.

    ``Q`` (K, dof): the candidates, moved to their representatives; ``D``: their distances to
    the seed; ``OK`` (K,): whether each slot is open (exact, within the limits and the step
    bound, its FK not yet checked); ``T`` the target, ``scratch`` (4, 4) for the FK; ``gate =
    (chain, (ptol, rtol))``: the chain as :func:`._select.fk_gate` takes it and the FK gate's
    tolerances. ``polish``: None (decided at compile time) or ``(piters, seed, sel, LIM, PL)``,
    the polish of near mode (see :func:`_finalize_pl`).

    The strategy: ``sph`` and ``tp`` None is the full enumeration (every candidate in a slot);
    branch-and-bound for a spherical wrist is ``sph = (var, H, P, data)``
    (:func:`._branches6.start_spherical`), for a three-parallel arm ``tp = (var, sgn, H, P,
    data)`` (:func:`._branches6.start_parallel`), the other None (decided at compile time):
    the slots (``Q`` (8, 6), ``D`` (12 + 4 :data:`._branches6.BRANCH`,): the slots' distances,
    the branches' bounds, then the branches themselves, :data:`._branches6.BRANCH` numbers
    each) start empty and branch ``i``'s candidates fill slots ``2 i`` and ``2 i + 1`` (the
    full enumeration's order) when the loop asks for them.

    The loop calls nothing that takes an array but the FK gate (the strategy's steps are
    inlined and pass numbers): an array argument costs reference counts on every call, which a
    single-target solve notices.
    """
    lim = bool(False)
    d = F(0.0)
    step = F(0.0)
    K = Q.shape[0]
    n = int(0)
    while True:
        best = nearest_open(OK, D, K)
        if best < 0:
            return NONE, F(0.0), F(0.0)
        if polish_0 > 0:
            if not (polish_4[best] != 0):
                polish_slot(Q, best, T, gate_0, polish_0, polish_2.max_dq, gate_1_0, gate_1_1, scratch, scratch_row)
                polish_4[best] = 1
                lim, d, step = _limits_row(Q[best], polish_1, polish_2.lo, polish_2.hi, polish_2.revolute, polish_2.W)
                D[best] = d
                polish_3[best] = wp.where(lim, 1, 0)
                OK[best] = wp.where(lim and step <= polish_2.step, 1, 0)
                continue
        pe, re = fk_gate(gate_0, Q, best, T, scratch, scratch_row)
        if pe <= gate_1_0 and re <= gate_1_1:
            return best, pe, re
        OK[best] = 0


@wp.func
def _finalize_pl(Q: wp.array2d(dtype=wp.float64), V: wp.array(dtype=wp.int32), seed: wp.array(dtype=wp.float64), T: wp.mat44d, chain: CHAIN_T.type, sel: SELECT_T.type, lazy: bool, piters: int, work_0: wp.array(dtype=wp.int32), work_1: wp.array(dtype=wp.int32), work_2: wp.array(dtype=wp.int32), work_3: wp.array(dtype=wp.float64), work_4: Polish, work_4_row: int, polished: wp.array(dtype=wp.int32)):
    """:func:`_finalize_one` with ``polished`` (K,): slots already polished by an earlier pass
    (in) and by this one (out); no slot is polished twice, so no candidate receives more than
    ``piters`` corrections however many passes gate it. ``piters`` None is no polish, decided
    at compile time: a caller that never polishes does not compile the polish (the Newton
    step, the Jacobian, a linear solve). Returns the selected slot: the valid slot nearest the
    seed (:func:`select_nearest`'s, or after a full pass :func:`nearest_open` of the flags), or
    ``NONE``."""
    best = int(0)
    _u1 = F(0.0)
    _u2 = F(0.0)
    pe = F(0.0)
    re = F(0.0)
    lo = sel.lo
    hi = sel.hi
    revolute = sel.revolute
    W = sel.W
    max_step = sel.step
    ptol = sel.tol_p
    rtol = sel.tol_r
    max_dq = sel.max_dq
    K = Q.shape[0]
    for k in range(K):
        for j in range(Q.shape[1]):
            if not wp.isfinite(Q[k, j]):
                Q[k, j] = seed[j]
                V[k] = 0
        lim, d, step = _limits_row(Q[k], seed, lo, hi, revolute, W)
        work_2[k] = wp.where(lim, 1, 0)
        work_3[k] = d
        work_0[k] = wp.where((V[k] != 0) and lim and step <= max_step, 1, 0)
        work_1[k] = 0
    if lazy:
        best, _u1, _u2 = select_nearest(Q, work_3, work_0, T, work_4, work_4_row, chain, ptol, rtol, piters, seed, sel, work_2, polished)
        if best >= 0:
            work_1[best] = 1
            for k in range(K):
                work_0[k] = wp.where(k == best, 1, 0)
            _project(Q, work_2, lo, hi)
            return best
    for k in range(K):
        step = F(0.0)
        if (V[k] != 0):
            if piters > 0:
                if not (polished[k] != 0):
                    polish_slot(Q, k, T, chain, piters, max_dq, ptol, rtol, work_4, work_4_row)
                    polished[k] = 1
                    lim, d, step = _limits_row(Q[k], seed, lo, hi, revolute, W)
                    work_2[k] = wp.where(lim, 1, 0)
                    work_3[k] = d
        for j in range(Q.shape[1]):
            step = wp.max(step, wp.abs(Q[k, j] - seed[j]))
        work_1[k] = 0
        if (V[k] != 0):
            pe, re = fk_gate(chain, Q, k, T, work_4, work_4_row)
            work_1[k] = wp.where(pe <= ptol and re <= rtol, 1, 0)
        work_0[k] = wp.where((work_1[k] != 0) and (work_2[k] != 0) and step <= max_step, 1, 0)
    _project(Q, work_2, lo, hi)
    return nearest_open(work_0, work_3, K)
