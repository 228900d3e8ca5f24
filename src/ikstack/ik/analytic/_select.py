"""Compiled post-processing shared by every family: periodic representatives, limits, the FK
pre-gate, the step bound, seed distances, and the bounded Newton polish of near mode.

The FK pre-gate here only ranks candidates; every returned success is certified again by
:func:`ikstack.ik.certify` at the public boundary.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from ikstack._records import B, F, Record
from ikstack.ik._gate import fk_error_one, pose_residual
from ikstack.kinematics._kernels import fk_one, fk_revolute6_tuples, jac_one

TWO_PI = 2.0 * math.pi
#: candidates this close outside a limit [rad] are projected onto it (representation round-off)
LIMIT_SNAP = 1e-6
#: a value this far below 2 pi divided by 2 pi is under 1 whatever the rounding
_ONE_TURN_INSIDE = 6.28

#: the selection's settings (:func:`finalize`, :func:`lazy_one`, :func:`._nearest6.nearest6`)
SELECT = Record(
    "SelectData",
    __name__,
    [
        ("lo", F, ("dof",)),  # the limits a candidate must meet (kinematic margin applied)
        ("hi", F, ("dof",)),
        ("W", F, ("dof",)),  # joint weights of the distance to the seed
        ("revolute", B, ("dof",)),
        ("step", F, ()),  # max_joint_step [rad or m], inf for none
        ("max_dq", F, ()),  # the polish's largest step
        ("tol_p", F, ()),  # the FK gate's tolerances [m], [rad]
        ("tol_r", F, ()),
    ],
)
SelectData = SELECT.type


@njit(cache=True)
def pose_err(T, Tt):  # pragma: no cover - compiled
    """Position [m] and geodesic rotation [rad] errors of ``T`` against ``Tt``, with half the
    axial vector ``(v0, v1, v2)`` (``sin(angle) * axis``) and its norm ``s``."""
    pe, c, vx, vy, vz = pose_residual(T, Tt)
    v0 = 0.5 * vx
    v1 = 0.5 * vy
    v2 = 0.5 * vz
    s = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
    return pe, math.atan2(s, c), v0, v1, v2, s


@njit(cache=True)
def representative(q, seed, lo, hi):  # pragma: no cover - compiled
    """The ``q + 2 pi k`` nearest ``seed`` within ``[lo, hi]`` (nearest the range if none)."""
    d = q - seed
    t = d + math.pi
    # the whole-turn count: 0 without the division when t is well inside [0, 2 pi) (the
    # common case; the same number as the floor of the quotient there)
    turns = 0.0 if (t >= 0.0 and t <= _ONE_TURN_INSIDE) else math.floor(t / TWO_PI)
    base = seed + d - TWO_PI * turns
    if base >= lo - LIMIT_SNAP and base <= hi + LIMIT_SNAP:
        return base
    # the nearest in-range turn on the side of the range, else the value nearest the range
    if base < lo:
        c = base + TWO_PI * math.ceil((lo - LIMIT_SNAP - base) / TWO_PI)
        if c <= hi + LIMIT_SNAP:
            return c
        return base if lo - base <= c - hi else c
    c = base - TWO_PI * math.ceil((base - hi - LIMIT_SNAP) / TWO_PI)
    if c >= lo - LIMIT_SNAP:
        return c
    return base if base - hi <= lo - c else c


@njit(cache=True, inline="always")
def joint_rep(x, seed, lo, hi, revolute):  # pragma: no cover - compiled
    """One joint's value moved to its representative (revolute) and snapped onto a limit it
    misses by round-off: ``(value, within limits)``."""
    lim = True
    if revolute:
        x = representative(x, seed, lo, hi)
    if x < lo:
        if x >= lo - LIMIT_SNAP:
            x = lo
        else:
            lim = False
    if x > hi:
        if x <= hi + LIMIT_SNAP:
            x = hi
        else:
            lim = False
    return x, lim


@njit(cache=True)
def _limits_row(q, seed, lo, hi, revolute, W):  # pragma: no cover - compiled
    """Move ``q`` to its representatives in place; ``(within limits, distance, max step)``."""
    lim = True
    d = 0.0
    step = 0.0
    for j in range(q.shape[0]):
        x, ok = joint_rep(q[j], seed[j], lo[j], hi[j], revolute[j])
        lim = lim and ok
        q[j] = x
        dd = x - seed[j]
        d += W[j] * dd * dd
        step = max(step, abs(dd))
    return lim, d, step


#: :func:`select_nearest`'s answers besides a slot: no candidate passed, and the branch to
#: expand next (branch ``i`` is ``EXPAND - i``)
NONE, EXPAND = -1, -2
#: a slot is certainly nearer than a branch's candidates below this fraction of the branch's
#: bound (a bound sums some of the distance's terms in the same order; round-off is far smaller)
BOUND_MARGIN = 1.0 - 1e-9


def fk_gate(chain, q, T, Tbuf):  # pragma: no cover - compiled (see _fk_gate_impl)
    """``(perr, rerr)`` of the FK of ``q`` against ``T`` (``Tbuf`` (4, 4) scratch): ``chain``
    a :data:`ikstack.ik._data.CHAIN` record (:func:`fk_one`, :func:`pose_err`) or, for a
    revolute 6R chain, the tuple ``(Rs, ps, R_end, p_end)`` of 9- and 3-tuples
    (:func:`fk_revolute6_tuples`, :func:`ikstack.ik._gate.fk_error_one`: the same numbers
    faster). Compiled code only; the chain's type picks the code at compile time."""
    raise NotImplementedError


@overload(fk_gate, jit_options={"cache": True})
def _fk_gate_impl(chain, q, T, Tbuf):  # pragma: no cover - compiled
    if isinstance(chain, types.BaseNamedTuple):

        def fk_record(chain, q, T, Tbuf):
            fk_one(q, chain.Rs, chain.ps, chain.kinds, chain.R_end, chain.p_end, Tbuf)
            pe, re, _, _, _, _ = pose_err(Tbuf, T)
            return pe, re

        return fk_record

    def fk_tuples(chain, q, T, Tbuf):
        Rs, ps, R_end, p_end = chain
        fk_revolute6_tuples((q[0], q[1], q[2], q[3], q[4], q[5]), Rs, ps, R_end, p_end, Tbuf)
        return fk_error_one(Tbuf, T)

    return fk_tuples


@njit(cache=True)
def select_nearest(slots, seed, T, chain, sel, piters, branches):  # pragma: no cover - compiled
    """The selection loop: the valid slot nearest the seed, or the branch to expand first.

    ``slots = (Q, D, OK, LIM, PL, Tbuf)``: the candidates (K, dof), moved to their
    representatives, their distances to the seed, whether each is still open (exact, within the
    limits and the step bound, its FK not yet checked), within the limits, polished (the
    polish's flags, see :func:`_finalize_pl`), and (4, 4) scratch. ``T`` the target, ``chain``
    as :func:`fk_gate` takes it, ``sel`` a :data:`SELECT` record, ``piters`` None (no polish,
    decided at compile time) or the polish's corrections per candidate.

    Strategies: ``branches`` None is the full enumeration (every candidate is in a slot);
    ``(LB, OPEN, n)`` is branch-and-bound: ``n`` branches not in the slots yet, each with a
    lower bound ``LB[i]`` on its candidates' distances, expanded (by the caller) while ``OPEN``.

    Open slots are taken nearest first (ties: the lower slot), a branch whenever its bound
    could beat the nearest open slot (ties: the lower branch); a slot is polished once (then
    competes again at its new distance), then FK-gated: it is selected when it passes, closed
    when not. Returns ``(k, perr, rerr)``: the selected slot and its FK errors, :data:`NONE`
    when no slot passes and no branch is open, or ``EXPAND - i`` for branch ``i`` (the caller
    fills its slots and closes it, then calls again). Since candidates leave in distance order
    the answer does not depend on the strategy: branch-and-bound selects the full
    enumeration's slot with the same errors, having computed fewer candidates."""
    Q, D, OK, LIM, PL, Tbuf = slots
    ptol, rtol = sel.tol_p, sel.tol_r
    K = Q.shape[0]
    while True:
        best = -1
        for k in range(K):
            if OK[k] and (best < 0 or D[k] < D[best]):
                best = k
        if branches is not None:
            LB, OPEN, n = branches
            nxt = -1
            for i in range(n):
                if OPEN[i] and (nxt < 0 or LB[i] < LB[nxt]):
                    nxt = i
            if nxt >= 0 and (best < 0 or not D[best] < LB[nxt] * BOUND_MARGIN):
                return EXPAND - nxt, 0.0, 0.0
        if best < 0:
            return NONE, 0.0, 0.0
        if piters is not None and piters > 0 and not PL[best]:
            # polish, then let the polished candidate compete again at its new distance
            polish_one(Q[best], T, chain, piters, sel.max_dq, ptol, rtol)
            PL[best] = True
            lim, D[best], step = _limits_row(Q[best], seed, sel.lo, sel.hi, sel.revolute, sel.W)
            LIM[best] = lim
            OK[best] = lim and step <= sel.step
            continue
        pe, re = fk_gate(chain, Q[best], T, Tbuf)
        if pe <= ptol and re <= rtol:
            return best, pe, re
        OK[best] = False


@njit(cache=True)
def _finalize_one(Q, V, seed, T, chain, sel, lazy, piters, work):  # pragma: no cover - compiled
    """:func:`finalize` of one target's candidates ``Q (K, dof)`` against ``T``, seeded by
    ``seed``: ``chain`` a :data:`ikstack.ik._data.CHAIN` record, ``sel`` a
    :data:`SELECT` record, ``work`` the flags and scratch
    ``(OK, FK, LIM, D, Tbuf)``."""
    _finalize_pl(
        Q, V, seed, T, chain, sel, lazy, piters, work, np.zeros(Q.shape[0], dtype=np.bool_)
    )


@njit(cache=True)
def _finalize_pl(
    Q, V, seed, T, chain, sel, lazy, piters, work, polished
):  # pragma: no cover - compiled
    """:func:`_finalize_one` with ``polished`` (K,): slots already polished by an earlier pass
    (in) and by this one (out); no slot is polished twice, so no candidate receives more than
    ``piters`` corrections however many passes gate it. ``piters`` None is no polish, decided
    at compile time: a caller that never polishes does not compile the polish (the Newton
    step, the Jacobian, a linear solve)."""
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
        best, _, _ = select_nearest(
            (Q, D, OK, LIM, polished, Tbuf), seed, T, chain, sel, piters, None
        )
        if best >= 0:
            FK[best] = True
            for k in range(K):
                OK[k] = k == best
            _project(Q, LIM, lo, hi)
            return
    # full pass: every candidate (return_all, or a failed target whose status needs the flags)
    for k in range(K):
        step = 0.0
        if V[k] and piters is not None and piters > 0 and not polished[k]:
            polish_one(Q[k], T, chain, piters, max_dq, ptol, rtol)
            polished[k] = True
            LIM[k], D[k], step = _limits_row(Q[k], seed, lo, hi, revolute, W)
        for j in range(Q.shape[1]):
            step = max(step, abs(Q[k, j] - seed[j]))
        FK[k] = False
        if V[k]:
            pe, re = fk_gate(chain, Q[k], T, Tbuf)
            FK[k] = pe <= ptol and re <= rtol
        OK[k] = FK[k] and LIM[k] and step <= max_step
    _project(Q, LIM, lo, hi)


def finalize(Q, V, S, T, chain, sel, lazy, piters, flags, parallel):
    """Representatives, limits, FK gate and distances for candidates ``Q`` (N, K, dof) against
    targets ``T`` (N, 4, 4) from seeds ``S`` (N, dof): ``chain`` a :data:`ikstack.ik._data.CHAIN`
    record, ``sel`` a :data:`SELECT` record, ``flags`` the outputs
    ``(OK, FK, LIM, D, PL)`` (each (N, K)).

    With ``lazy`` only the nearest candidate passing every gate is marked ``OK`` (candidates
    are FK-checked in order of distance until one passes). With ``piters > 0`` (near mode)
    each candidate is first polished on the true model by at most ``piters`` bounded monotone
    Newton corrections (:func:`polish_one`); ``PL`` (N, K) marks the slots polished so far
    (read and updated: a later pass over the same slots never polishes them again). On all
    cores when ``parallel`` (a serial call never touches numba's thread pool).
    """
    kern = finalize_parallel if parallel else finalize_serial
    kern(Q, V, S, T, chain, sel, lazy, no_polish(piters), flags)


def no_polish(piters: int) -> int | None:
    """``piters`` as the compiled gate takes it: None for no polish (then the polish is not
    compiled at all; see :func:`_finalize_pl`)."""
    return piters if piters > 0 else None


@njit(cache=True)
def finalize_serial(Q, V, S, T, chain, sel, lazy, piters, flags):  # pragma: no cover - compiled
    """:func:`finalize` on the calling thread."""
    OK, FK, LIM, D, PL = flags
    Tbuf = np.empty((4, 4))
    for i in range(Q.shape[0]):
        _finalize_pl(
            Q[i],
            V[i],
            S[i],
            T[i],
            chain,
            sel,
            lazy,
            piters,
            (OK[i], FK[i], LIM[i], D[i], Tbuf),
            PL[i],
        )


@njit(cache=True, parallel=True)
def finalize_parallel(Q, V, S, T, chain, sel, lazy, piters, flags):  # pragma: no cover - compiled
    """:func:`finalize` on all cores."""
    OK, FK, LIM, D, PL = flags
    for i in prange(Q.shape[0]):
        Tbuf = np.empty((4, 4))
        _finalize_pl(
            Q[i],
            V[i],
            S[i],
            T[i],
            chain,
            sel,
            lazy,
            piters,
            (OK[i], FK[i], LIM[i], D[i], Tbuf),
            PL[i],
        )


@njit(cache=True)
def _project(Q, LIM, lo, hi):  # pragma: no cover - compiled
    """Candidates outside the limits are projected onto them (finite, limit-projected slots)."""
    for k in range(Q.shape[0]):
        if not LIM[k]:
            for j in range(Q.shape[1]):
                Q[k, j] = min(max(Q[k, j], lo[j]), hi[j])


@njit(cache=True)
def _err6(Tq, Tt, e):  # pragma: no cover - compiled
    pe, re, v0, v1, v2, s = pose_err(Tq, Tt)
    e[0] = Tt[0, 3] - Tq[0, 3]
    e[1] = Tt[1, 3] - Tq[1, 3]
    e[2] = Tt[2, 3] - Tq[2, 3]
    f = re / s if s > 1e-12 else 1.0
    e[3] = v0 * f
    e[4] = v1 * f
    e[5] = v2 * f
    return pe + re


@njit(cache=True)
def polish_one(q, Tt, chain, iters, max_dq, ptol, rtol):  # pragma: no cover - compiled
    """At most ``iters`` monotone Gauss-Newton corrections of ``q`` in place (``chain`` a
    :data:`ikstack.ik._data.CHAIN` record); returns the count.

    Each step solves ``J dq = e`` (damped least squares), scales ``dq`` so no joint moves more
    than ``max_dq`` [rad], and is accepted only if it lowers ``|e_p| + |e_r|`` (halving up to
    four times); otherwise the polish stops.
    """
    Rs, ps, kinds, R_end, p_end = chain.Rs, chain.ps, chain.kinds, chain.R_end, chain.p_end
    dof = q.shape[0]
    J = np.empty((6, dof))
    Tq = np.empty((4, 4))
    e = np.empty(6)
    e2 = np.empty(6)
    trial = np.empty(dof)
    jac_one(q, Rs, ps, kinds, R_end, p_end, J, Tq)
    cost = _err6(Tq, Tt, e)
    used = 0
    for _ in range(iters):
        pe = math.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
        re = math.sqrt(e[3] * e[3] + e[4] * e[4] + e[5] * e[5])
        if pe <= 0.01 * ptol and re <= 0.01 * rtol:
            break
        A = J.T @ J
        lam = 1e-12 * (np.trace(A) + 1e-300)
        for j in range(dof):
            A[j, j] += lam
        dq = np.linalg.solve(A, J.T @ e)
        big = np.max(np.abs(dq))
        if big > max_dq:
            dq = dq * (max_dq / big)
        alpha = 1.0
        accepted = False
        for _h in range(5):
            for j in range(dof):
                trial[j] = q[j] + alpha * dq[j]
            fk_one(trial, Rs, ps, kinds, R_end, p_end, Tq)
            c2 = _err6(Tq, Tt, e2)
            if c2 < cost:
                accepted = True
                break
            alpha *= 0.5
        if not accepted:
            break
        q[:] = trial
        cost = c2
        used += 1
        jac_one(q, Rs, ps, kinds, R_end, p_end, J, Tq)
        _err6(Tq, Tt, e)
    return used


@njit(cache=True)
def lazy_one(Q, V, seed, T, chain, sel, piters, work):  # pragma: no cover - compiled
    """:func:`finalize` (lazy) of one target's candidates ``Q (K, dof)`` (see
    :func:`_finalize_one`); returns the index of the selected candidate (the valid one nearest
    the seed), or -1 if none passed."""
    OK, D = work[0], work[3]
    _finalize_one(Q, V, seed, T, chain, sel, True, piters, work)
    best = -1
    for k in range(Q.shape[0]):
        if OK[k] and (best < 0 or D[k] < D[best]):
            best = k
    return best
