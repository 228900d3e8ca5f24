# mypy: ignore-errors
"""The analytic path's selection on the device, around the generated selection loop.

The selection itself (representatives and limits, the lazy FK gate in order of seed distance
with the near-mode polish, the full pass that explains a failure, the nearest open slot) is
generated from the CPU's (:func:`ikstack.ik.analytic._selection._finalize_pl`:
``_gen_selection``, the FK and the polish of a slot in :mod:`._slot_steps`); this module adds
what the CPU path does on the host: the status from the flags, the certified mask, the error
definition of :func:`ikstack.ik.certify` (:func:`ikstack.ik._gate.fk_error_one`:
position error, and ``atan2(|vee(M - M^T)| / 2, (tr M - 1) / 2)`` of ``M = R_t R^T``), so a
target's mask, selection and status are decided on the device exactly as on the host.
The status rule and the coupled-joint constraints (the compiled tables of
:func:`ikstack.ik._fixed_gate.constraint_tables`: quadrant polynomials and linear rows) with
their retries (drop the nearest branch that breaks one, re-gate, up to 16 times, then gate
every slot) are generated from the CPU's too (:mod:`ikstack.ik.analytic._constrained`:
``_gen_constrained``); a row with a linear constraint within round-off of zero is left to the
host (``UNDECIDED``).
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._gen_constrained import (
    SUCCESS,
    UNDECIDED,
    UNREACHABLE,
    constrain_row,
    failure_code,
)
from ikstack.backends.warp._gen_selection import _finalize_pl
from ikstack.backends.warp._polish import Polish
from ikstack.backends.warp._prims import F
from ikstack.backends.warp._slot_steps import pose_errors
from ikstack.backends.warp._structs import CHAIN_T, CONSTRAINTS_T, GATE_T, SELECT_T

Chain = CHAIN_T.type
Constraints = CONSTRAINTS_T.type
Gate = GATE_T.type
Select = SELECT_T.type

#: (``SUCCESS``, ``UNDECIDED``: the generated outcome codes, for the path kernels)
__all__ = [
    "SUCCESS",
    "UNDECIDED",
    "Chain",
    "Constraints",
    "Gate",
    "Select",
    "Slots",
    "Targets",
    "Written",
    "finish_row",
    "gate_row",
    "select_kernel",
]


@wp.struct
class Slots:
    """A launch's per-target scratch: seeds, candidate slots and their flags (one row a
    target or path)."""

    #: (rows, dof) seeds (a path's previous selection)
    S: wp.array2d(dtype=wp.float64)
    #: (rows, K, dof) candidates, and the same viewed as (rows K, dof)
    Q: wp.array3d(dtype=wp.float64)
    Qf: wp.array2d(dtype=wp.float64)
    #: (rows, K) flags: the branch exists, gated, FK passed, within limits, certified,
    #: constraints met, dropped for breaking one; and the weighted seed distance
    V: wp.array2d(dtype=wp.int32)
    OK: wp.array2d(dtype=wp.int32)
    FK: wp.array2d(dtype=wp.int32)
    LIM: wp.array2d(dtype=wp.int32)
    VALID: wp.array2d(dtype=wp.int32)
    CON: wp.array2d(dtype=wp.int32)
    DROP: wp.array2d(dtype=wp.int32)
    D: wp.array2d(dtype=wp.float64)
    #: placeholders of the pose function's recorded axes and origins (never written)
    zs: wp.array2d(dtype=wp.vec3d)
    os: wp.array2d(dtype=wp.vec3d)


@wp.struct
class Targets:
    """The targets of a launch, one a row (a path's frames one after another): solved as
    ``T`` (each rotation projected to the nearest rotation), certified against ``Tg`` (as
    given) at the rotation tolerance ``rtc`` (widened by the projection's deviation)."""

    T: wp.array(dtype=wp.mat44d)
    Tg: wp.array(dtype=wp.mat44d)
    rtc: wp.array(dtype=wp.float64)


@wp.struct
class Written:
    """What comes back, one a row: the selection (or the seed), its status and errors."""

    q: wp.array2d(dtype=wp.float64)
    status: wp.array(dtype=wp.int32)
    perr: wp.array(dtype=wp.float64)
    rerr: wp.array(dtype=wp.float64)


@wp.func
def certified(
    q: wp.array2d(dtype=wp.float64),
    row: int,
    perr: wp.float64,
    rerr: wp.float64,
    gate: Gate,
    rtol: wp.float64,
):
    """:func:`ikstack.ik.certify` without constraints: finite, within the chain's limits
    (tolerance 0) and FK within ``gate.tol_p`` and ``rtol``."""
    ok = int(0)  # noqa: UP018 (a mutable Warp variable)
    if perr <= gate.tol_p and rerr <= rtol:
        ok = 1
    for j in range(gate.lo.shape[0]):
        x = q[row, j]
        if not (wp.isfinite(x) and x >= gate.lo[j] and x <= gate.hi[j]):
            ok = 0
    return ok


@wp.func
def select_target(
    i: int, Tt: wp.mat44d, ch: Chain, sel: Select, gate: Gate, lazy: int, w: Slots, pol: Polish
):
    """Gate the ``K`` candidate slots of row ``i`` (seeded by ``w.S[i]``) with the CPU's
    selection (``_finalize_pl``, generated); returns ``(selected slot or -1, status)``.

    ``lazy``: FK-check in order of seed distance until one passes (the nearest-solution mode);
    otherwise every slot, with ``w.VALID`` the certified mask of every slot (``return_all``).
    With ``pol.iters > 0`` each slot is polished on the true chain before its first FK check
    (the lazy order then sees it again at its new distance), at most once per target.
    """
    K = w.Q.shape[1]
    Q = w.Q[i]
    best = _finalize_pl(
        Q,
        w.V[i],
        w.S[i],
        Tt,
        ch,
        sel,
        lazy != 0,
        pol.iters,
        w.OK[i],
        w.FK[i],
        w.LIM[i],
        w.D[i],
        pol,
        i,
        pol.PL[i],
    )
    fk_any = int(0)  # noqa: UP018 (a mutable Warp variable)
    fk_lim = int(0)  # noqa: UP018 (a mutable Warp variable)
    for k in range(K):
        valid = int(0)  # noqa: UP018 (a mutable Warp variable)
        if lazy == 0 and w.OK[i, k] != 0:  # return_all: the certified mask
            # the errors of the slot's FK check in the full pass (an open slot passed one)
            valid = certified(Q, k, pol.PE[i, k], pol.RC[i, k], gate, gate.tol_r)
        w.VALID[i, k] = valid
        if w.FK[i, k] != 0:
            fk_any = 1
            if w.LIM[i, k] != 0:
                fk_lim = 1
    code = int(SUCCESS)
    if best < 0:  # no constraints here: any slot within the limits met them
        code = failure_code(fk_any != 0, fk_lim != 0, fk_lim != 0)
    return best, code


@wp.func
def gate_row(
    i: int,
    Tt: wp.mat44d,
    ch: Chain,
    con: Constraints,
    gate: Gate,
    sel: Select,
    lazy: int,
    w: Slots,
    pol: Polish,
):
    """:func:`select_target` plus the coupled-joint constraints (the CPU's
    :func:`~ikstack.ik.analytic._constrained.constrain_row`, generated); returns ``(slot or
    -1, status)`` with status ``UNDECIDED`` when a constraint was too close to call here."""
    best, code = select_target(i, Tt, ch, sel, gate, lazy, w, pol)
    if con.qidx.shape[0] + con.A.shape[0] > 0:
        best, code = constrain_row(
            w.Q[i],
            w.V[i],
            w.S[i],
            Tt,
            ch,
            sel,
            con,
            lazy != 0,
            pol.iters,
            w.OK[i],
            w.FK[i],
            w.LIM[i],
            w.D[i],
            pol,
            i,
            pol.PL[i],
            w.CON[i],
            w.DROP[i],
            0,
        )
        if code == UNDECIDED:
            best = -1  # (the resume point: the device's undecided rows are solved on the host)
        for k in range(w.Q.shape[1]):
            if w.OK[i, k] == 0:  # a slot that breaks a constraint is not valid
                w.VALID[i, k] = 0
    return best, code


@wp.func
def finish_row(
    i: int,
    best: int,
    code: int,
    Tg: wp.mat44d,
    rtc: wp.float64,
    ch: Chain,
    gate: Gate,
    w: Slots,
    out: Written,
    r: int,
):
    """Certify the selection of row ``i`` against ``Tg`` (rotation tolerance ``rtc``) and
    write it (or the seed ``w.S[i]``, with a status) to row ``r`` of ``out``, as
    :meth:`AnalyticIK._solve` decides them; returns the status written."""
    status = code
    chosen = int(0)  # noqa: UP018 (a mutable Warp variable)
    perr = F(0.0)
    rerr = F(0.0)
    K = w.Q.shape[1]
    if best >= 0:
        pe, re = pose_errors(w.Qf, i * K + best, Tg, ch, w.zs, w.os)
        if certified(w.Qf, i * K + best, pe, re, gate, rtc) != 0:
            chosen = 1
            perr = pe
            rerr = re
        else:
            status = UNREACHABLE  # gate passed, certify did not (round-off at the tolerance)
    for j in range(w.S.shape[1]):
        if chosen != 0:
            out.q[r, j] = w.Qf[i * K + best, j]
        else:
            out.q[r, j] = w.S[i, j]
    if chosen == 0:
        pe, re = pose_errors(w.S, i, Tg, ch, w.zs, w.os)
        perr = pe
        rerr = re
    out.status[r] = status
    out.perr[r] = perr
    out.rerr[r] = rerr
    return status


@wp.kernel
def select_kernel(
    tg: Targets,
    ch: Chain,
    con: Constraints,
    gate: Gate,
    sel: Select,
    lazy: int,
    w: Slots,
    out: Written,
    pol: Polish,
):
    """One thread a target: gate its candidates, select, certify, write ``(q, status,
    errors)`` (see :class:`Targets`), as :meth:`AnalyticIK._solve` does."""
    i = wp.tid()
    if pol.iters > 0:
        for k in range(w.Q.shape[1]):
            pol.PL[i, k] = 0
    best, code = gate_row(i, tg.T[i], ch, con, gate, sel, lazy, w, pol)
    K = w.Q.shape[1]
    if lazy == 0 and tg.rtc[i] != gate.tol_r:
        # return_all of a projected target: every gated slot certified against the target
        # as given
        for k in range(K):
            if w.OK[i, k] != 0:
                pe, re = pose_errors(w.Qf, i * K + k, tg.Tg[i], ch, w.zs, w.os)
                w.VALID[i, k] = certified(w.Qf, i * K + k, pe, re, gate, tg.rtc[i])
            else:
                w.VALID[i, k] = 0
    finish_row(i, best, code, tg.Tg[i], tg.rtc[i], ch, gate, w, out, i)
