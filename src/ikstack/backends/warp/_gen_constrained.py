# mypy: ignore-errors
# ruff: noqa
"""GENERATED from ``src/ikstack/ik/analytic/_constrained.py`` by :mod:`ikstack.backends.warp._translate`:
do not edit; edit the CPU source and run ``python -m ikstack.backends.warp._translate``
(a test fails when this file and its source disagree)."""

import warp as wp

from ikstack.backends.warp._prims import *  # noqa: F403
from ikstack.backends.warp._gen_gate import constraints_slots
from ikstack.backends.warp._gen_selection import _finalize_pl, nearest_open
from ikstack.backends.warp._slot_steps import Polish
from ikstack.backends.warp._structs import CHAIN_T, CONSTRAINTS_T, SELECT_T

CONSTRAINT = wp.constant(7)
CONSTRAINT_RETRIES = wp.constant(16)
JOINT_LIMITS = wp.constant(3)
STEP_LIMIT = wp.constant(6)
SUCCESS = wp.constant(0)
UNDECIDED = wp.constant(-1)
UNREACHABLE = wp.constant(5)


@wp.func
def failure_code(fk_any: bool, fk_lim: bool, fk_lim_con: bool):
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


@wp.func
def row_failure(FK: wp.array(dtype=wp.int32), LIM: wp.array(dtype=wp.int32), CON: wp.array(dtype=wp.int32), K: int):
    """:func:`failure_code` of a target's ``K`` slots' flags (FK gate met, within the limits,
    constraints met)."""
    fk_any = bool(False)
    fk_lim = bool(False)
    fk_lim_con = bool(False)
    for k in range(K):
        if (FK[k] != 0):
            fk_any = bool(True)
            if (LIM[k] != 0):
                fk_lim = bool(True)
                if (CON[k] != 0):
                    fk_lim_con = bool(True)
    return failure_code(fk_any, fk_lim, fk_lim_con)


@wp.func
def constraints_all(cons: CONSTRAINTS_T.type, Q: wp.array2d(dtype=wp.float64), CON: wp.array(dtype=wp.int32)):
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


@wp.func
def _to_check(FK: wp.array(dtype=wp.int32), LIM: wp.array(dtype=wp.int32), CON: wp.array(dtype=wp.int32)):
    """Mark in ``CON`` the slots that met the FK gate within the limits: the only ones whose
    constraints the selection and the status read (:func:`constraints_all` checks them)."""
    for k in range(CON.shape[0]):
        CON[k] = wp.where((FK[k] != 0) and (LIM[k] != 0), 1, 0)


@wp.func
def _breaks(OK: wp.array(dtype=wp.int32), CON: wp.array(dtype=wp.int32), K: int):
    """Whether an open slot breaks a coupled-joint constraint."""
    for k in range(K):
        if (OK[k] != 0) and (not (CON[k] != 0)):
            return True
    return False


@wp.func
def constrain_row(Q: wp.array2d(dtype=wp.float64), V: wp.array(dtype=wp.int32), seed: wp.array(dtype=wp.float64), T: wp.mat44d, chain: CHAIN_T.type, sel: SELECT_T.type, cons: CONSTRAINTS_T.type, lazy: bool, piters: int, OK: wp.array(dtype=wp.int32), FK: wp.array(dtype=wp.int32), LIM: wp.array(dtype=wp.int32), D: wp.array(dtype=wp.float64), work_4: Polish, work_4_row: int, PL: wp.array(dtype=wp.int32), CON: wp.array(dtype=wp.int32), DROP: wp.array(dtype=wp.int32), at: int):
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
    constraint; ``OK`` keeps the slots that meet the constraints.

    On the device (generated from ``ikstack.ik.analytic._constrained.constrain_row``): ``row``
    is passed as ``Q``, ``V``, ``seed`` and ``T``; ``records`` is passed as ``chain``, ``sel``
    and ``cons``; ``piters`` is always passed; ``work`` is passed as ``OK``, ``FK``, ``LIM``,
    ``D``, ``work_4`` and ``work_4_row``; ``flags`` is passed as ``PL``, ``CON`` and ``DROP``."""
    tries = int(0)
    bad = bool(False)
    K = Q.shape[0]
    if at == 0:
        for k in range(K):
            DROP[k] = 0
    _to_check(FK, LIM, CON)
    if constraints_all(cons, Q, CON) > 0:
        return at, UNDECIDED
    if lazy and at <= CONSTRAINT_RETRIES:
        tries = at
        bad = _breaks(OK, CON, K)
        while bad and tries < CONSTRAINT_RETRIES:
            for k in range(K):
                if (OK[k] != 0) and (not (CON[k] != 0)):
                    V[k] = 0
                    DROP[k] = 1
            _finalize_pl(Q, V, seed, T, chain, sel, True, piters, OK, FK, LIM, D, work_4, work_4_row, PL)
            tries = tries + 1
            _to_check(FK, LIM, CON)
            if constraints_all(cons, Q, CON) > 0:
                return tries, UNDECIDED
            bad = _breaks(OK, CON, K)
        if bad:
            _finalize_pl(Q, V, seed, T, chain, sel, False, piters, OK, FK, LIM, D, work_4, work_4_row, PL)
            _to_check(FK, LIM, CON)
            if constraints_all(cons, Q, CON) > 0:
                return 17, UNDECIDED
    for k in range(K):
        if (DROP[k] != 0):
            FK[k] = 1
            LIM[k] = 1
            CON[k] = 0
        OK[k] = wp.where((OK[k] != 0) and (CON[k] != 0), 1, 0)
    best = nearest_open(OK, D, K)
    if best >= 0:
        return best, SUCCESS
    return best, row_failure(FK, LIM, CON, K)
