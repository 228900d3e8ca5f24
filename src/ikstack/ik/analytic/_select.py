"""Compiled post-processing shared by every family: periodic representatives, limits, the FK
pre-gate, the step bound, seed distances; the bounded Newton polish of near mode is
:mod:`ikstack.ik.analytic._polish`.

The FK pre-gate here only ranks candidates; every returned success is certified again by
:func:`ikstack.ik.certify` at the public boundary.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ikstack._records import B, F, Record
from ikstack.ik._gate import pose_residual
from ikstack.ik.analytic._polish import polish_one
from ikstack.kinematics._kernels import fk_one

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


@njit(cache=True)
def _fk_ok(q, T, Rs, ps, kinds, R_end, p_end, ptol, rtol, Tbuf):  # pragma: no cover - compiled
    fk_one(q, Rs, ps, kinds, R_end, p_end, Tbuf)
    pe, re, _, _, _, _ = pose_err(Tbuf, T)
    return pe <= ptol and re <= rtol


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
    Rs, ps, kinds, R_end, p_end = chain.Rs, chain.ps, chain.kinds, chain.R_end, chain.p_end
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
        # only the nearest candidate that passes every gate matters: check in distance order
        while True:
            best = -1
            for k in range(K):
                if OK[k] and not FK[k] and (best < 0 or D[k] < D[best]):
                    best = k
            if best < 0:
                break
            if piters is not None and piters > 0 and not polished[best]:
                # polish, then let the polished candidate compete again at its new distance
                polish_one(Q[best], T, chain, piters, max_dq, ptol, rtol)
                polished[best] = True
                lim, D[best], step = _limits_row(Q[best], seed, lo, hi, revolute, W)
                LIM[best] = lim
                OK[best] = lim and step <= max_step
                continue
            if _fk_ok(Q[best], T, Rs, ps, kinds, R_end, p_end, ptol, rtol, Tbuf):
                FK[best] = True
                for k in range(K):
                    OK[k] = k == best
                _project(Q, LIM, lo, hi)
                return
            OK[best] = False
    # full pass: every candidate (return_all, or a failed target whose status needs the flags)
    for k in range(K):
        step = 0.0
        if V[k] and piters is not None and piters > 0 and not polished[k]:
            polish_one(Q[k], T, chain, piters, max_dq, ptol, rtol)
            polished[k] = True
            LIM[k], D[k], step = _limits_row(Q[k], seed, lo, hi, revolute, W)
        for j in range(Q.shape[1]):
            step = max(step, abs(Q[k, j] - seed[j]))
        FK[k] = V[k] and _fk_ok(Q[k], T, Rs, ps, kinds, R_end, p_end, ptol, rtol, Tbuf)
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
