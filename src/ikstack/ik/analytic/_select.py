"""Compiled post-processing shared by every family: periodic representatives, limits, the FK
pre-gate, the step bound, seed distances (the selection loop over them: :mod:`._selection`;
the bounded Newton polish of near mode: :mod:`._polish`).

The FK pre-gate here only ranks candidates; every returned success is certified again by
:func:`ikstack.ik.certify` at the public boundary.
"""

from __future__ import annotations

import math

from numba import njit, types
from numba.extending import overload

from ikstack._records import B, F, Record
from ikstack.ik._gate import fk_error_one
from ikstack.kinematics._kernels import fk_one, fk_revolute6_tuples

TWO_PI = 2.0 * math.pi
#: candidates this close outside a limit [rad] are projected onto it (representation round-off)
LIMIT_SNAP = 1e-6
#: a value this far below 2 pi divided by 2 pi is under 1 whatever the rounding
_ONE_TURN_INSIDE = 6.28

#: the selection's settings (:mod:`._selection`)
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


def fk_gate(chain, Q, k, T, Tbuf):  # pragma: no cover - compiled (see _fk_gate_impl)
    """``(perr, rerr)`` of the FK of ``Q[k]`` against ``T`` (``Tbuf`` (4, 4) scratch): ``chain``
    a :data:`ikstack.ik._data.CHAIN` record (:func:`fk_one`) or, for a revolute 6R chain, the
    tuple ``(Rs, ps, R_end, p_end)`` of 9- and 3-tuples (:func:`fk_revolute6_tuples`: the same
    numbers faster); the errors are :func:`ikstack.ik._gate.fk_error_one`'s either way.
    Compiled code only; the chain's type picks the code at compile time."""
    raise NotImplementedError


@overload(fk_gate, inline="always")  # inlined into its callers (which are cached)
def _fk_gate_impl(chain, Q, k, T, Tbuf):  # pragma: no cover - compiled
    if isinstance(chain, types.BaseNamedTuple):

        def fk_record(chain, Q, k, T, Tbuf):
            fk_one(Q[k], chain.Rs, chain.ps, chain.kinds, chain.R_end, chain.p_end, Tbuf)
            return fk_error_one(Tbuf, T)

        return fk_record

    def fk_tuples(chain, Q, k, T, Tbuf):  # no view of the row: no reference count
        Rs, ps, R_end, p_end = chain
        q = (Q[k, 0], Q[k, 1], Q[k, 2], Q[k, 3], Q[k, 4], Q[k, 5])
        fk_revolute6_tuples(q, Rs, ps, R_end, p_end, Tbuf)
        return fk_error_one(Tbuf, T)

    return fk_tuples


def no_polish(piters: int) -> int | None:
    """``piters`` as the compiled gate takes it: None for no polish (then the polish is not
    compiled at all; see :func:`._selection._finalize_pl`)."""
    return piters if piters > 0 else None


@njit(cache=True)
def _project(Q, LIM, lo, hi):  # pragma: no cover - compiled
    """Candidates outside the limits are projected onto them (finite, limit-projected slots)."""
    for k in range(Q.shape[0]):
        if not LIM[k]:
            for j in range(Q.shape[1]):
                Q[k, j] = min(max(Q[k, j], lo[j]), hi[j])
