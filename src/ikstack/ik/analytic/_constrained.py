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
tables (:func:`ikstack.ik._gate.constraints_row`), nor can constraints the tables cannot hold;
its row comes out :data:`UNDECIDED` with its state kept in its arrays. On the CPU
(:func:`constrain_rows`) the chain's own code (:meth:`~ikstack.model.Chain.constraints_satisfied`)
decides the first gate's slots of every row at once (vectorized), the tables those of a row
gated again; the slots of every row left undecided are then decided by the chain's code at
once and those rows resume where they stopped, until none is left. The device's undecided
rows are solved again on the CPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

# the kernels' record types (read by the device translation)
from ikstack.ik._data import CHAIN, CONSTRAINTS  # noqa: F401
from ikstack.ik._gate import constraints_slots
from ikstack.ik.analytic._select import SELECT  # noqa: F401
from ikstack.ik.analytic._selection import _finalize_pl, nearest_open
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


def constraints_all(cons, Q, CON):  # pragma: no cover - compiled (see the overload)
    """``CON[k]`` of the slots marked in ``CON`` (the others stay False): whether slot ``Q[k]``
    meets every coupled-joint constraint; returns 1 when some marked slot could not be
    decided, else 0. This body is the tables' decision
    (:func:`ikstack.ik._gate.constraints_slots`), the only variant on the device, where
    ``cons`` is always a :data:`ikstack.ik._data.CONSTRAINTS` record. On the CPU numba picks
    the variant from ``cons``'s type (compiled code only):

    - a :data:`ikstack.ik._data.CONSTRAINTS` record: this body;
    - None: no tables, every marked slot is undecided (the chain's code decides it, later);
    - ``(given, tables)``: the chain's own decisions ``given`` (K,) of the slots (:data:`USED`
      once read), then ``tables`` (a record or None) for a row gated again."""
    return constraints_slots(Q, cons.qidx, cons.qcoef, cons.A, cons.b, CON)


#: a row of given decisions already read (see :func:`constraints_all`)
USED = 2


@overload(constraints_all, inline="always")
def _constraints_all_impl(cons, Q, CON):  # pragma: no cover - compiled
    if isinstance(cons, types.BaseNamedTuple):
        return constraints_all  # the tables decide

    if isinstance(cons, types.NoneType):

        def undecided(cons, Q, CON):
            for k in range(Q.shape[0]):
                if CON[k]:
                    return 1
            return 0

        return undecided

    def given_then(cons, Q, CON):
        given, tabs = cons
        if given[0] != USED:  # the chain's own decisions
            for k in range(Q.shape[0]):
                if CON[k]:
                    CON[k] = given[k] == 1
                given[k] = USED
            return 0
        return constraints_all(tabs, Q, CON)  # a row gated again: the tables, if any

    return given_then


@njit(cache=True, inline="always")
def _to_check(FK, LIM, CON):  # pragma: no cover - compiled
    """Mark in ``CON`` the slots that met the FK gate within the limits: the only ones whose
    constraints the selection and the status read (:func:`constraints_all` checks them)."""
    for k in range(CON.shape[0]):
        CON[k] = FK[k] and LIM[k]


@njit(cache=True, inline="always")
def _breaks(OK, CON, K):  # pragma: no cover - compiled
    """Whether an open slot breaks a coupled-joint constraint."""
    for k in range(K):
        if OK[k] and not CON[k]:
            return True
    return False


@njit(cache=True, inline="always")
def constrain_row(row, records, lazy, piters, work, flags, at):  # pragma: no cover - compiled
    """The coupled-joint constraints of one target after its first gate: ``(selected slot or
    -1, status)``, or ``(resume point, UNDECIDED)`` as soon as a slot's constraints cannot
    be decided (:func:`constraints_all`): the row's state stays in its arrays, and once its
    slots are decided the row resumes from there (``at`` that point; 0 from the first gate).

    ``row = (Q, V, seed, T)``, ``records = (chain, sel, cons)`` and ``lazy, piters, work`` are
    as :func:`._selection._finalize_pl` takes them (the first gate's flags in ``work``, updated
    here), ``cons`` the constraints (see :func:`constraints_all`); ``flags = (polished, CON,
    DROP)`` (K,): the slots polished so far (as ``_finalize_pl``'s ``polished``), and outputs:
    constraints met (of the slots that met the FK gate within the limits; False elsewhere),
    and the branches dropped for breaking one. With ``lazy`` (only the
    nearest valid slot was gated) a nearest branch that breaks a constraint is dropped and the
    row gated again, up to :data:`CONSTRAINT_RETRIES` times (the resume point after the
    ``t``-th: ``t``), then every slot is gated (after it: ``CONSTRAINT_RETRIES + 1``). A
    dropped branch then counts as meeting the FK gate and the limits and breaking a
    constraint; ``OK`` keeps the slots that meet the constraints."""
    Q, V, seed, T = row
    chain, sel, cons = records
    OK, FK, LIM, D, _ = work
    PL, CON, DROP = flags
    K = Q.shape[0]
    if at == 0:
        for k in range(K):
            DROP[k] = False
    _to_check(FK, LIM, CON)
    if constraints_all(cons, Q, CON) > 0:
        return at, UNDECIDED
    if lazy and at <= CONSTRAINT_RETRIES:
        tries = at
        bad = _breaks(OK, CON, K)
        while bad and tries < CONSTRAINT_RETRIES:
            # the nearest branch breaks a coupled-joint constraint: drop it and gate again
            for k in range(K):
                if OK[k] and not CON[k]:
                    V[k] = False
                    DROP[k] = True
            _finalize_pl(Q, V, seed, T, chain, sel, True, piters, work, PL)
            tries += 1
            _to_check(FK, LIM, CON)
            if constraints_all(cons, Q, CON) > 0:
                return tries, UNDECIDED
            bad = _breaks(OK, CON, K)
        if bad:
            # still breaking constraints after the retries: gate every slot
            _finalize_pl(Q, V, seed, T, chain, sel, False, piters, work, PL)
            _to_check(FK, LIM, CON)
            if constraints_all(cons, Q, CON) > 0:
                return CONSTRAINT_RETRIES + 1, UNDECIDED
    for k in range(K):
        if DROP[k]:
            FK[k] = True
            LIM[k] = True
            CON[k] = False
        OK[k] = OK[k] and CON[k]
    best = nearest_open(OK, D, K)
    if best >= 0:
        return best, SUCCESS
    return best, row_failure(FK, LIM, CON, K)


@njit(cache=True, inline="always")
def _constrain_block(lo, hi, arrays, records, lazy, piters, AT, rows):  # pragma: no cover
    """:func:`constrain_row` of rows ``rows[lo .. hi - 1]`` (see :func:`constrain_rows`),
    each from its resume point ``AT[i]``; a row that comes out :data:`UNDECIDED` keeps its
    state and its resume point in ``AT[i]``, else ``AT[i]`` is -1."""
    Q, V, S, T, (OK, FK, LIM, D, PL, SEL, CON, DROP) = arrays
    chain, sel, (given, tabs) = records
    Tbuf = np.empty((4, 4))
    for r in range(lo, hi):
        i = rows[r]
        best, code = constrain_row(
            (Q[i], V[i], S[i], T[i]),
            (chain, sel, (given[i], tabs)),
            lazy,
            piters,
            (OK[i], FK[i], LIM[i], D[i], Tbuf),
            (PL[i], CON[i], DROP[i]),
            AT[i],
        )
        if code != UNDECIDED:
            SEL[i] = best
            AT[i] = -1
        else:
            AT[i] = best


@njit(cache=True)
def _constrain_serial(arrays, chain, sel, given, tabs, lazy, piters, AT, rows):  # pragma: no cover
    records = (chain, sel, (given, tabs))
    _constrain_block(0, rows.shape[0], arrays, records, lazy, piters, AT, rows)


@njit(cache=True, parallel=True)
def _constrain_parallel(
    arrays, chain, sel, given, tabs, lazy, piters, AT, rows
):  # pragma: no cover
    # (numba's parallel loop takes no tuple of records as an argument: each one on its own)
    Q, V, S, T, (OK, FK, LIM, D, PL, SEL, CON, DROP) = arrays
    n = rows.shape[0]
    for b in prange((n + _BLOCK - 1) // _BLOCK):
        lo = b * _BLOCK
        block = (Q, V, S, T, (OK, FK, LIM, D, PL, SEL, CON, DROP))
        records = (chain, sel, (given, tabs))
        _constrain_block(lo, min(n, lo + _BLOCK), block, records, lazy, piters, AT, rows)


def constrain_rows(
    arrays: tuple[Any, ...], records: tuple[Any, ...], lazy: bool, piters: int | None
) -> None:
    """:func:`constrain_row` of every target on compiled code: ``arrays = (Q, V, S, T, flags)``
    with ``flags = (OK, FK, LIM, D, PL, SEL, CON, DROP)`` (each (N, K) but ``SEL`` (N,),
    written), ``records = (chain, sel, tables, decide)``: ``tables`` the
    :data:`ikstack.ik._data.CONSTRAINTS` record that decides a row gated again (None: no row
    gated again is decided there), ``decide(Q)`` the chain's own decisions of slots ``Q`` (M,
    K, dof) (M, K); ``piters`` None for no polish.

    The chain's own code decides the first gate's slots of every row at once; a row that comes
    out :data:`UNDECIDED` keeps its state, and every such row's slots are decided by the
    chain's code at once before those rows resume, until none is left."""
    chain, sel, tabs, decide = records
    Q = arrays[0]
    rows = np.arange(Q.shape[0])
    AT = np.zeros(Q.shape[0], dtype=np.int64)  # each row's resume point
    given = np.asarray(decide(Q), dtype=np.int8)
    while True:
        kern: Any = _constrain_parallel if rows.size >= PARALLEL_ROWS else _constrain_serial
        kern(arrays, chain, sel, given, tabs, lazy, piters, AT, rows)
        rows = rows[AT[rows] >= 0]
        if not rows.size:
            return
        given[rows] = decide(Q[rows])
