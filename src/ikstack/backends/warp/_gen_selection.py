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
def select_nearest(Q: wp.array2d(dtype=wp.float64), D: wp.array(dtype=wp.float64), OK: wp.array(dtype=wp.int32), T: wp.mat44d, scratch: Polish, scratch_row: int, chain: CHAIN_T.type, ptol: wp.float64, rtol: wp.float64, piters: int, seed: wp.array(dtype=wp.float64), sel: SELECT_T.type, LIM: wp.array(dtype=wp.int32), PL: wp.array(dtype=wp.int32)):
    """``(k, perr, rerr)``: the valid slot nearest the seed and its FK errors, or
    ``(NONE, 0, 0)``.

    ``Q`` (K, dof): the candidates, moved to their representatives; ``D``: their distances to
    the seed; ``OK`` (K,): whether each slot is open (exact, within the limits and the step
    bound, its FK not yet checked); ``T`` the target, ``scratch`` (4, 4) for the FK; ``gate =
    (chain, (ptol, rtol))``: the chain as :func:`._select.fk_gate` takes it and the FK gate's
    tolerances. ``polish``: None (decided at compile time) or ``(piters, seed, sel, LIM, PL)``,
    the polish of near mode (see :func:`_finalize_pl`).

    The loop calls nothing that takes an array but the FK gate (the strategy's steps are
    inlined and pass numbers): an array argument costs reference counts on every call, which a
    single-target solve notices.

    On the device (generated from ``ikstack.ik.analytic._selection.select_nearest``): ``sph``
    and ``tp`` are None (compiled out); ``scratch`` is followed by the thread's row
    ``scratch_row``; ``gate`` is passed as ``chain``, ``ptol`` and ``rtol``; ``polish`` is
    always passed, as ``piters``, ``seed``, ``sel``, ``LIM`` and ``PL``.
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
        if piters > 0:
            if not (PL[best] != 0):
                polish_slot(Q, best, T, chain, piters, sel.max_dq, ptol, rtol, scratch, scratch_row)
                PL[best] = 1
                lim, d, step = _limits_row(Q[best], seed, sel.lo, sel.hi, sel.revolute, sel.W)
                D[best] = d
                LIM[best] = wp.where(lim, 1, 0)
                OK[best] = wp.where(lim and step <= sel.step, 1, 0)
                continue
        pe, re = fk_gate(chain, Q, best, T, scratch, scratch_row)
        if pe <= ptol and re <= rtol:
            return best, pe, re
        OK[best] = 0


@wp.func
def _finalize_pl(Q: wp.array2d(dtype=wp.float64), V: wp.array(dtype=wp.int32), seed: wp.array(dtype=wp.float64), T: wp.mat44d, chain: CHAIN_T.type, sel: SELECT_T.type, lazy: bool, piters: int, OK: wp.array(dtype=wp.int32), FK: wp.array(dtype=wp.int32), LIM: wp.array(dtype=wp.int32), D: wp.array(dtype=wp.float64), Tbuf: Polish, Tbuf_row: int, polished: wp.array(dtype=wp.int32)):
    """The selection of :func:`lazy_one` (``lazy``) or of a full pass, with ``polished`` (K,):
    slots already polished by an earlier pass (in) and by this one (out); no slot is polished
    twice, so no candidate receives more than ``piters`` corrections however many passes gate
    it. ``piters`` None is no polish, decided at compile time: a caller that never polishes
    does not compile the polish (the Newton step, the Jacobian, a linear solve). Returns the
    selected slot: the valid slot nearest the seed (:func:`select_nearest`'s, or after a full
    pass :func:`nearest_open` of the flags), or ``NONE``.

    On the device (generated from ``ikstack.ik.analytic._selection._finalize_pl``): ``piters``
    is always passed; ``work`` is passed as ``OK``, ``FK``, ``LIM``, ``D``, ``Tbuf`` and
    ``Tbuf_row``."""
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
        LIM[k] = wp.where(lim, 1, 0)
        D[k] = d
        OK[k] = wp.where((V[k] != 0) and lim and step <= max_step, 1, 0)
        FK[k] = 0
    if lazy:
        best, _u1, _u2 = select_nearest(Q, D, OK, T, Tbuf, Tbuf_row, chain, ptol, rtol, piters, seed, sel, LIM, polished)
        if best >= 0:
            FK[best] = 1
            for k in range(K):
                OK[k] = wp.where(k == best, 1, 0)
            _project(Q, LIM, lo, hi)
            return best
    for k in range(K):
        step = F(0.0)
        if (V[k] != 0):
            if piters > 0:
                if not (polished[k] != 0):
                    polish_slot(Q, k, T, chain, piters, max_dq, ptol, rtol, Tbuf, Tbuf_row)
                    polished[k] = 1
                    lim, d, step = _limits_row(Q[k], seed, lo, hi, revolute, W)
                    LIM[k] = wp.where(lim, 1, 0)
                    D[k] = d
        for j in range(Q.shape[1]):
            step = wp.max(step, wp.abs(Q[k, j] - seed[j]))
        FK[k] = 0
        if (V[k] != 0):
            pe, re = fk_gate(chain, Q, k, T, Tbuf, Tbuf_row)
            FK[k] = wp.where(pe <= ptol and re <= rtol, 1, 0)
        OK[k] = wp.where((FK[k] != 0) and (LIM[k] != 0) and step <= max_step, 1, 0)
    _project(Q, LIM, lo, hi)
    return nearest_open(OK, D, K)
