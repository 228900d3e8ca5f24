"""The selection: one loop picks the valid candidate nearest the seed, for every path.

:func:`select_nearest` takes open candidates nearest first (ties: the lower slot), polishes a
candidate once in near mode, then FK-gates it; the first to pass is the selection. Its
strategies differ only in where candidates come from: the full enumeration has every
candidate in a slot already (:func:`finalize`, :func:`lazy_one`: the general path, paths,
the single-target path of the other families), branch-and-bound (6R families: the
single-target and batch kernels of :mod:`._single_target`) fills the slots one branch at a
time (:mod:`._branches6`), nearest lower bound first, and only while a branch could still hold
a nearer candidate than the nearest open one, so it selects the full enumeration's slot, with
the same FK errors, bit for bit, having computed fewer candidates.

Representatives, limits, the FK gate and the polish themselves are :mod:`._select`'s.

The full enumeration is one source for both devices: :func:`select_nearest` (the strategies
None), :func:`_finalize_pl` and :func:`nearest_open` are written in the kernels' portable
subset, and the Warp backend's selection is generated from them
(``backends/warp/_gen_selection.py``); the FK gate and the polish of a slot are the device's
own steps there (hooks: :func:`fk_gate`, :func:`polish_slot`), since they read the device's
data layout.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ikstack._records import Flat
from ikstack.ik._data import CHAIN  # noqa: F401 (a record type of the device translation)
from ikstack.ik.analytic._branches6 import (
    BRANCH,
    BRANCHES,
    CANDIDATES,
    CLOSED,
    PARTIAL,
    STATE,
    branch_at,
    expand_parallel,
    expand_spherical,
    gate_at,
    load_branch,
    refine_parallel,
    start_parallel,
    start_spherical,
    store_branch,
)
from ikstack.ik.analytic._families6 import K6
from ikstack.ik.analytic._polish import polish_one
from ikstack.ik.analytic._select import (  # noqa: F401 (SELECT: as CHAIN)
    SELECT,
    _limits_row,
    _project,
    fk_gate,
    no_polish,
)

#: :func:`select_nearest`'s answer when no candidate passes
NONE = -1
#: a slot is certainly nearer than a branch's candidates below this fraction of the branch's
#: bound (a bound sums some of the distance's terms in the same order; round-off is far smaller)
BOUND_MARGIN = 1.0 - 1e-9
#: the distances ``D`` of branch-and-bound (:func:`select_nearest`): the slots' distances, the
#: branches' bounds, then the branches themselves (:data:`._branches6.BRANCH6`, one after the
#: other)
SCRATCH6 = Flat("scratch6", (("dist", K6), ("bound", BRANCHES), ("branches", BRANCHES * BRANCH)))
_BOUND, _BRANCHES, SCRATCH6_SIZE = SCRATCH6.at["bound"], SCRATCH6.at["branches"], SCRATCH6.size


@njit(cache=True, inline="always")
def nearest_open(OK, D, K):  # pragma: no cover - compiled
    """The open slot (``OK``) of the ``K`` nearest the seed (``D``: distances), the lower slot
    of equal distances; -1 when none is open."""
    best = -1
    for k in range(K):
        if OK[k] and (best < 0 or D[k] < D[best]):
            best = k
    return best


@njit(cache=True, inline="always")
def polish_slot(Q, k, T, chain, piters, max_dq, ptol, rtol, scratch):  # pragma: no cover
    """At most ``piters`` bounded corrections of slot ``Q[k]`` towards ``T``
    (:func:`polish_one`; ``scratch``: the device's, unused here)."""
    polish_one(Q[k], T, chain, piters, max_dq, ptol, rtol)


@njit(cache=True)
def select_nearest(Q, D, OK, T, scratch, gate, polish, sph, tp):  # pragma: no cover - compiled
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
    the slots (``Q`` (:data:`K6`, 6); ``D`` (:data:`SCRATCH6_SIZE`,), laid out by
    :data:`SCRATCH6`: the slots' distances, the branches' bounds, then the branches) start
    empty and branch ``i``'s candidates fill slots ``2 i`` and ``2 i + 1`` (the full
    enumeration's order) when the loop asks for them.

    The loop calls nothing that takes an array but the FK gate (the strategy's steps are
    inlined and pass numbers): an array argument costs reference counts on every call, which a
    single-target solve notices.
    """
    chain, (ptol, rtol) = gate
    K = Q.shape[0]
    n = 0
    if sph is not None or tp is not None:
        K = K6  # a constant: the scans over the slots unroll
    if sph is not None:
        var, H, P, data = sph
        n, raw, fam = start_spherical(var, H, P, data, T)
    if tp is not None:
        var, sgn, H, P, data = tp
        n, raw, fam = start_parallel(var, sgn, H, P, data, T)
    if sph is not None or tp is not None:
        for k in range(K):
            OK[k] = False
        for i in range(BRANCHES):
            D[_BOUND + i] = CLOSED
        # the loop reads and writes branches in place (no tuple indexed by i), in D after the
        # bounds (a scratch array of their own would cost reference counts on every call);
        # load_branch and store_branch are straight-line reads and writes of D, whose
        # reference counts the compiler drops (no atomic operation more in the kernel's code)
        for i in range(n):
            D[_BOUND + i], b = branch_at(raw, i)
            store_branch(D, _BRANCHES + i * BRANCH, b)
    while True:
        best = nearest_open(OK, D, K)
        if sph is not None or tp is not None:
            # a branch first when its bound could beat the nearest open slot
            nxt = -1
            for i in range(_BOUND, _BOUND + n):
                if D[i] >= 0.0 and (nxt < 0 or D[i] < D[nxt]):
                    nxt = i
            if nxt >= 0 and (best < 0 or not D[best] < D[nxt] * BOUND_MARGIN):
                i = nxt - _BOUND
                o = _BRANCHES + i * BRANCH
                b = load_branch(D, o)
                if tp is not None:
                    if b[STATE] == PARTIAL:  # a tighter bound first
                        b, D[nxt], fam = refine_parallel(fam, b, D[nxt])
                        store_branch(D, o, b)
                        continue
                    m, cands, g = expand_parallel(fam, b)
                if sph is not None:
                    m, cands, g = expand_spherical(fam, b)
                D[nxt] = CLOSED
                # written here, not by a helper: an inlined helper's array arguments cost
                # reference counts on every expansion; one gate's code for both candidates
                for j in range(m):
                    k = CANDIDATES * i + j
                    row, D[k], OK[k] = gate_at(cands[0] if j == 0 else cands[1], g)
                    Q[k, 0], Q[k, 1], Q[k, 2], Q[k, 3], Q[k, 4], Q[k, 5] = row
                continue
        if best < 0:
            return NONE, 0.0, 0.0
        if polish is not None:
            piters, seed, sel, LIM, PL = polish
            # (nested: the device reads PL only where it polishes)
            if piters > 0:
                if not PL[best]:
                    # polish, then let the polished candidate compete again at its new distance
                    polish_slot(Q, best, T, chain, piters, sel.max_dq, ptol, rtol, scratch)
                    PL[best] = True
                    lim, d, step = _limits_row(Q[best], seed, sel.lo, sel.hi, sel.revolute, sel.W)
                    D[best] = d
                    LIM[best] = lim
                    OK[best] = lim and step <= sel.step
                    continue
        pe, re = fk_gate(chain, Q, best, T, scratch)
        if pe <= ptol and re <= rtol:
            return best, pe, re
        OK[best] = False


@njit(cache=True)
def _finalize_pl(
    Q, V, seed, T, chain, sel, lazy, piters, work, polished
):  # pragma: no cover - compiled
    """The selection of :func:`lazy_one` (``lazy``) or of a full pass, with ``polished`` (K,):
    slots already polished by an earlier pass (in) and by this one (out); no slot is polished
    twice, so no candidate receives more than ``piters`` corrections however many passes gate
    it. ``piters`` None is no polish, decided at compile time: a caller that never polishes
    does not compile the polish (the Newton step, the Jacobian, a linear solve). Returns the
    selected slot: the valid slot nearest the seed (:func:`select_nearest`'s, or after a full
    pass :func:`nearest_open` of the flags), or ``NONE``."""
    # fields once, outside the loops (a record's field read in a loop costs a reference count)
    OK, FK, LIM, D, Tbuf = work
    lo, hi, revolute, W, max_step = sel.lo, sel.hi, sel.revolute, sel.W, sel.step
    ptol, rtol, max_dq = sel.tol_p, sel.tol_r, sel.max_dq
    K = Q.shape[0]
    for k in range(K):
        for j in range(Q.shape[1]):
            if not np.isfinite(Q[k, j]):
                Q[k, j] = seed[j]
                V[k] = False
        lim, d, step = _limits_row(Q[k], seed, lo, hi, revolute, W)
        LIM[k] = lim
        D[k] = d
        OK[k] = V[k] and lim and step <= max_step  # FK still to check
        FK[k] = False
    if lazy:
        # only the nearest candidate that passes every gate matters (every candidate is already
        # in a slot: no branches to expand)
        if piters is None:
            best, _, _ = select_nearest(Q, D, OK, T, Tbuf, (chain, (ptol, rtol)), None, None, None)
        else:
            best, _, _ = select_nearest(
                Q,
                D,
                OK,
                T,
                Tbuf,
                (chain, (ptol, rtol)),
                (piters, seed, sel, LIM, polished),
                None,
                None,
            )
        if best >= 0:
            FK[best] = True
            for k in range(K):
                OK[k] = k == best
            _project(Q, LIM, lo, hi)
            return best
    # full pass: every candidate (return_all, or a failed target whose status needs the flags)
    for k in range(K):
        step = 0.0
        if V[k] and piters is not None:
            if piters > 0:  # (nested: the device reads polished only where it polishes)
                if not polished[k]:
                    polish_slot(Q, k, T, chain, piters, max_dq, ptol, rtol, Tbuf)
                    polished[k] = True
                    lim, d, step = _limits_row(Q[k], seed, lo, hi, revolute, W)
                    LIM[k] = lim
                    D[k] = d
        for j in range(Q.shape[1]):
            step = max(step, abs(Q[k, j] - seed[j]))
        FK[k] = False
        if V[k]:
            pe, re = fk_gate(chain, Q, k, T, Tbuf)
            FK[k] = pe <= ptol and re <= rtol
        OK[k] = FK[k] and LIM[k] and step <= max_step
    _project(Q, LIM, lo, hi)
    return nearest_open(OK, D, K)


def finalize(Q, V, S, T, chain, sel, lazy, piters, flags, parallel):
    """Representatives, limits, FK gate and distances for candidates ``Q`` (N, K, dof) against
    targets ``T`` (N, 4, 4) from seeds ``S`` (N, dof): ``chain`` a :data:`ikstack.ik._data.CHAIN`
    record, ``sel`` a :data:`SELECT` record, ``flags`` the outputs
    ``(OK, FK, LIM, D, PL, SEL)`` (each (N, K) but ``SEL`` (N,): each target's selected slot,
    the valid slot nearest its seed, or ``NONE``).

    With ``lazy`` only the nearest candidate passing every gate is marked ``OK`` (candidates
    are FK-checked in order of distance until one passes). With ``piters > 0`` (near mode)
    each candidate is first polished on the true model by at most ``piters`` bounded monotone
    Newton corrections (:func:`polish_one`); ``PL`` (N, K) marks the slots polished so far
    (read and updated: a later pass over the same slots never polishes them again). On all
    cores when ``parallel`` (a serial call never touches numba's thread pool).
    """
    kern = finalize_parallel if parallel else finalize_serial
    kern(Q, V, S, T, chain, sel, lazy, no_polish(piters), flags)


@njit(cache=True, inline="always")
def _finalize_rows(rows, Q, V, S, T, chain, sel, mode, flags):  # pragma: no cover - compiled
    """:func:`_finalize_pl` of rows ``rows = (lo, hi)``, ``lo .. hi - 1``, with ``mode =
    (lazy, piters)`` (:func:`finalize`'s; one FK scratch for the range)."""
    lo, hi = rows
    lazy, piters = mode
    OK, FK, LIM, D, PL, SEL = flags
    Tbuf = np.empty((4, 4))
    for i in range(lo, hi):
        work = (OK[i], FK[i], LIM[i], D[i], Tbuf)
        SEL[i] = _finalize_pl(Q[i], V[i], S[i], T[i], chain, sel, lazy, piters, work, PL[i])


@njit(cache=True)
def finalize_serial(Q, V, S, T, chain, sel, lazy, piters, flags):  # pragma: no cover - compiled
    """:func:`finalize` on the calling thread."""
    _finalize_rows((0, Q.shape[0]), Q, V, S, T, chain, sel, (lazy, piters), flags)


@njit(cache=True, parallel=True)
def finalize_parallel(Q, V, S, T, chain, sel, lazy, piters, flags):  # pragma: no cover - compiled
    """:func:`finalize` on all cores (numba splits the rows between threads)."""
    for i in prange(Q.shape[0]):
        _finalize_rows((i, i + 1), Q, V, S, T, chain, sel, (lazy, piters), flags)


@njit(cache=True)
def lazy_one(Q, V, seed, T, chain, sel, piters, work):  # pragma: no cover - compiled
    """:func:`finalize` (lazy) of one target's candidates ``Q (K, dof)`` against ``T``, seeded
    by ``seed``: ``chain`` a :data:`ikstack.ik._data.CHAIN` record, ``sel`` a :data:`SELECT`
    record, ``work`` the flags and scratch ``(OK, FK, LIM, D, Tbuf)``; returns the index of
    the selected candidate (the valid one nearest the seed), or -1 if none passed (see
    :func:`_finalize_pl`)."""
    polished = np.zeros(Q.shape[0], dtype=np.bool_)
    return _finalize_pl(Q, V, seed, T, chain, sel, True, piters, work, polished)


@njit(cache=True)
def reselect(OK, D, SEL):  # pragma: no cover - compiled
    """Rows whose selected slot ``SEL`` (N,) is no longer valid in ``OK`` (N, K) (a later
    stage closed it, e.g. a coupled-joint constraint, or opened slots of a row without one),
    selected again among their valid slots (:func:`nearest_open`); the other rows keep theirs.
    Every row's selection then is its valid slot nearest the seed (``D`` (N, K)), or ``NONE``."""
    K = OK.shape[1]
    for i in range(OK.shape[0]):
        s = SEL[i]
        if s < 0 or not OK[i, s]:
            SEL[i] = nearest_open(OK[i], D[i], K)
