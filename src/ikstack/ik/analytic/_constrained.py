"""Why a target failed, and the selection under coupled-joint constraints: one source for both
devices.

:func:`failure_code` is the status rule (no FK match, then none within the limits, then none
meeting the constraints, else the step bound), :func:`constrain_row` the constrained
selection of one target after its first gate: a nearest branch that breaks a constraint is
dropped and the row gated again, up to :data:`CONSTRAINT_RETRIES` times, then every slot is
gated; a dropped branch counts as meeting the FK gate and the limits and breaking a
constraint (a target whose every such branch broke one failed for the constraint, as when
every candidate is gated at once, not for want of an FK match). Both are written in the
kernels' portable subset: the CPU compiles them with numba (:func:`failure_rows`,
:func:`constrain_rows`), the Warp backend's are generated from them
(``backends/warp/_gen_constrained.py``), with the device's own check of a row's constraints as
a hook (:func:`constraints_all`).

A slot whose linear constraint is within round-off of zero cannot be decided by the compiled
tables (:func:`ikstack.ik._gate.constraints_row`); its row comes out :data:`UNDECIDED`, and
the host runs the same loop on it as plain Python (:func:`host_row`), where the chain's own
code (:meth:`~ikstack.model.Chain.constraints_satisfied`) decides every slot.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange
from numba.extending import overload

# the kernels' record types (read by the device translation)
from ikstack.ik._data import CHAIN, CONSTRAINTS  # noqa: F401
from ikstack.ik._gate import constraints_slots
from ikstack.ik.analytic._select import SELECT  # noqa: F401
from ikstack.ik.analytic._selection import NONE, _finalize_pl, nearest_open
from ikstack.ik.result import IKStatus

#: re-selections after the nearest branch broke a coupled-joint constraint
CONSTRAINT_RETRIES = 16
#: :class:`~ikstack.ik.IKStatus` values of a row's outcome
SUCCESS = int(IKStatus.SUCCESS)
JOINT_LIMITS = int(IKStatus.JOINT_LIMITS)
UNREACHABLE = int(IKStatus.UNREACHABLE)
STEP_LIMIT = int(IKStatus.STEP_LIMIT)
CONSTRAINT = int(IKStatus.CONSTRAINT)
#: a row whose coupled-joint constraints the compiled tables cannot decide (the host decides)
UNDECIDED = -1
#: rows from which :func:`constrain_rows` runs on all cores, and its rows per block there
PARALLEL_ROWS = 256
_BLOCK = 64


@njit(cache=True, inline="always")
def failure_code(fk_any, fk_lim, fk_lim_con):  # pragma: no cover - compiled
    """Why no candidate of a target passed (an :class:`~ikstack.ik.IKStatus` value), from
    whether any candidate met the FK gate (``fk_any``), any of those was within the limits
    (``fk_lim``) and any of those met the coupled-joint constraints (``fk_lim_con``): no FK
    match, then none within the limits, then none meeting the constraints, else the step
    bound."""
    if not fk_any:
        return UNREACHABLE
    if not fk_lim:
        return JOINT_LIMITS
    if not fk_lim_con:
        return CONSTRAINT
    return STEP_LIMIT


@njit(cache=True)
def row_failure(FK, LIM, CON, K):  # pragma: no cover - compiled
    """:func:`failure_code` of a target's ``K`` slots' flags (FK gate met, within the limits,
    constraints met)."""
    fk_any = False
    fk_lim = False
    fk_lim_con = False
    for k in range(K):
        if FK[k]:
            fk_any = True
            if LIM[k]:
                fk_lim = True
                if CON[k]:
                    fk_lim_con = True
    return failure_code(fk_any, fk_lim, fk_lim_con)


@njit(cache=True)
def failure_rows(FK, LIM, CON, out):  # pragma: no cover - compiled
    """``out[i]`` the :func:`row_failure` of row ``i`` of the (N, K) flags."""
    for i in range(FK.shape[0]):
        out[i] = row_failure(FK[i], LIM[i], CON[i], FK.shape[1])


def constraints_all(cons: Any, Q: Any, CON: Any) -> int:
    """``CON[k]``: whether slot ``Q[k]`` meets every coupled-joint constraint; returns 1 when
    some slot could not be decided (its ``CON`` then False), else 0.

    In compiled code ``cons`` is a :data:`ikstack.ik._data.CONSTRAINTS` record (the tables
    decide: :func:`ikstack.ik._gate.constraints_slots`); in plain Python (:func:`host_row`) it
    is the chain, whose own code decides every slot."""
    CON[:] = cons.constraints_satisfied(Q)
    return 0


@overload(constraints_all, inline="always")
def _constraints_all_impl(cons, Q, CON):  # pragma: no cover - compiled
    def tables(cons, Q, CON):
        return constraints_slots(Q, cons.qidx, cons.qcoef, cons.A, cons.b, CON)

    return tables


@njit(cache=True, inline="always")
def _breaks(OK, CON, K):  # pragma: no cover - compiled
    """Whether an open slot breaks a coupled-joint constraint."""
    for k in range(K):
        if OK[k] and not CON[k]:
            return True
    return False


@njit(cache=True)
def constrain_row(row, records, lazy, piters, work, flags):  # pragma: no cover - compiled
    """The coupled-joint constraints of one target after its first gate: ``(selected slot or
    NONE, status)``, the status :data:`UNDECIDED` when a slot's constraints could not be
    decided (:func:`constraints_all`).

    ``row = (Q, V, seed, T)``, ``records = (chain, sel, cons)`` and ``lazy, piters, work`` are
    as :func:`._selection._finalize_pl` takes them (the first gate's flags in ``work``, updated
    here), ``cons`` the constraints (see :func:`constraints_all`); ``flags = (polished, CON,
    DROP)`` (K,): the slots polished so far (as ``_finalize_pl``'s ``polished``), and outputs:
    constraints met, and the branches dropped for breaking one. With ``lazy`` (only the
    nearest valid slot was gated) a nearest branch that breaks a constraint is dropped and the
    row gated again, up to :data:`CONSTRAINT_RETRIES` times, then every slot is gated. A
    dropped branch then counts as meeting the FK gate and the limits and breaking a
    constraint; ``OK`` keeps the slots that meet the constraints."""
    Q, V, seed, T = row
    chain, sel, cons = records
    OK, FK, LIM, D, _ = work
    PL, CON, DROP = flags
    K = Q.shape[0]
    for k in range(K):
        DROP[k] = False
    und = constraints_all(cons, Q, CON)
    if lazy:
        tries = 0
        bad = _breaks(OK, CON, K)
        while bad and tries < CONSTRAINT_RETRIES:
            # the nearest branch breaks a coupled-joint constraint: drop it and gate again
            for k in range(K):
                if OK[k] and not CON[k]:
                    V[k] = False
                    DROP[k] = True
            best = _finalize_pl(Q, V, seed, T, chain, sel, True, piters, work, PL)
            und = max(und, constraints_all(cons, Q, CON))
            bad = _breaks(OK, CON, K)
            tries += 1
        if bad:
            # still breaking constraints after the retries: gate every slot
            best = _finalize_pl(Q, V, seed, T, chain, sel, False, piters, work, PL)
            und = max(und, constraints_all(cons, Q, CON))
    for k in range(K):
        if DROP[k]:
            FK[k] = True
            LIM[k] = True
            CON[k] = False
        OK[k] = OK[k] and CON[k]
    best = nearest_open(OK, D, K)
    if und > 0:
        return NONE, UNDECIDED
    if best >= 0:
        return best, SUCCESS
    return best, row_failure(FK, LIM, CON, K)


@njit(cache=True, inline="always")
def _constrain_block(lo, hi, arrays, records, lazy, piters, codes):  # pragma: no cover
    """:func:`constrain_row` of rows ``lo .. hi - 1`` (see :func:`constrain_rows`); a row
    that comes out :data:`UNDECIDED` is put back as it was (its first gate's flags) for the
    host."""
    Q, V, S, T, (OK, FK, LIM, D, PL, SEL, CON, DROP) = arrays
    K, dof = Q.shape[1], Q.shape[2]
    Tbuf = np.empty((4, 4))
    q0 = np.empty((K, dof))
    b0 = np.empty((5, K), dtype=np.bool_)
    d0 = np.empty(K)
    for i in range(lo, hi):
        q0[:] = Q[i]
        b0[0] = V[i]
        b0[1] = OK[i]
        b0[2] = FK[i]
        b0[3] = LIM[i]
        b0[4] = PL[i]
        d0[:] = D[i]
        best, code = constrain_row(
            (Q[i], V[i], S[i], T[i]),
            records,
            lazy,
            piters,
            (OK[i], FK[i], LIM[i], D[i], Tbuf),
            (PL[i], CON[i], DROP[i]),
        )
        codes[i] = code
        if code == UNDECIDED:
            Q[i] = q0
            V[i] = b0[0]
            OK[i] = b0[1]
            FK[i] = b0[2]
            LIM[i] = b0[3]
            PL[i] = b0[4]
            D[i] = d0
        else:
            SEL[i] = best


@njit(cache=True)
def _constrain_serial(arrays, chain, sel, cons, lazy, piters, codes):  # pragma: no cover
    records = (chain, sel, cons)
    _constrain_block(0, codes.shape[0], arrays, records, lazy, piters, codes)


@njit(cache=True, parallel=True)
def _constrain_parallel(arrays, chain, sel, cons, lazy, piters, codes):  # pragma: no cover
    # (numba's parallel loop takes no tuple of records as an argument: each one on its own)
    Q, V, S, T, (OK, FK, LIM, D, PL, SEL, CON, DROP) = arrays
    n = codes.shape[0]
    for b in prange((n + _BLOCK - 1) // _BLOCK):
        lo = b * _BLOCK
        block = (Q, V, S, T, (OK, FK, LIM, D, PL, SEL, CON, DROP))
        _constrain_block(lo, min(n, lo + _BLOCK), block, (chain, sel, cons), lazy, piters, codes)


def constrain_rows(
    arrays: tuple[Any, ...], records: tuple[Any, Any, Any], lazy: bool, piters: int | None
) -> np.ndarray:
    """:func:`constrain_row` of every target on compiled code: ``arrays = (Q, V, S, T, flags)``
    with ``flags = (OK, FK, LIM, D, PL, SEL, CON, DROP)`` (each (N, K) but ``SEL`` (N,),
    written), ``records = (chain, sel, cons)``; ``piters`` None for no polish. Returns the rows
    left :data:`UNDECIDED` (as their first gate left them)."""
    codes = np.empty(arrays[0].shape[0], dtype=np.int64)
    kern = _constrain_parallel if codes.shape[0] >= PARALLEL_ROWS else _constrain_serial
    kern(arrays, *records, lazy, piters, codes)
    return np.flatnonzero(codes == UNDECIDED)


def host_row(
    i: int,
    arrays: tuple[Any, ...],
    records: tuple[Any, Any, Any],
    lazy: bool,
    piters: int | None,
) -> None:
    """:func:`constrain_row` of target ``i`` as plain Python, its constraints decided by the
    chain's own code (``records = (chain record, sel, chain)``; see :func:`constrain_rows`)."""
    Q, V, S, T, (OK, FK, LIM, D, PL, SEL, CON, DROP) = arrays
    SEL[i], _ = constrain_row.py_func(
        (Q[i], V[i], S[i], T[i]),
        records,
        lazy,
        piters,
        (OK[i], FK[i], LIM[i], D[i], np.empty((4, 4))),
        (PL[i], CON[i], DROP[i]),
    )
