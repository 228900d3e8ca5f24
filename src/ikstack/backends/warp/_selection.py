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
Coupled-joint constraints in the compiled tables (:func:`ikstack.ik._fixed_gate.constraint_tables`:
quadrant polynomials and linear rows) are checked by :func:`ikstack.ik._gate.constraints_row`
(generated from the CPU source: ``_gen_gate``), with the CPU path's retries (drop the nearest
branch that breaks one, re-gate, up to 16 times, then gate every slot); a linear row within
round-off of zero is left to the host.
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._gen_gate import constraints_row
from ikstack.backends.warp._gen_selection import _finalize_pl
from ikstack.backends.warp._polish import Polish
from ikstack.backends.warp._prims import F
from ikstack.backends.warp._slot_steps import pose_errors
from ikstack.backends.warp._structs import CHAIN_T, CONSTRAINTS_T, GATE_T, SELECT_T

Chain = CHAIN_T.type
Constraints = CONSTRAINTS_T.type
Gate = GATE_T.type
Select = SELECT_T.type

#: outcome codes (IKStatus values)
SUCCESS = wp.constant(0)
JOINT_LIMITS = wp.constant(3)
UNREACHABLE = wp.constant(5)
STEP_LIMIT = wp.constant(6)
CONSTRAINT = wp.constant(7)
#: a row whose coupled-joint constraints the device cannot decide (the host solves it)
UNDECIDED = wp.constant(-1)
#: re-selections after the nearest branch broke a coupled-joint constraint (as the CPU path)
CONSTRAINT_RETRIES = wp.constant(16)


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
    #: constraints met; and the weighted seed distance
    V: wp.array2d(dtype=wp.int32)
    OK: wp.array2d(dtype=wp.int32)
    FK: wp.array2d(dtype=wp.int32)
    LIM: wp.array2d(dtype=wp.int32)
    VALID: wp.array2d(dtype=wp.int32)
    CON: wp.array2d(dtype=wp.int32)
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
    code = SUCCESS
    if best < 0:
        code = STEP_LIMIT
        if fk_any == 0:
            code = UNREACHABLE
        elif fk_lim == 0:
            code = JOINT_LIMITS
    return best, code


@wp.func
def _constraints_all(i: int, con: Constraints, w: Slots):
    """``w.CON[i]`` of every slot; 1 when some slot could not be decided."""
    und = int(0)  # noqa: UP018 (a mutable Warp variable)
    K = w.Q.shape[1]
    for k in range(K):
        c = constraints_row(w.Qf[i * K + k], con.qidx, con.qcoef, con.A, con.b)
        if c < 0:
            und = 1
            c = 0
        w.CON[i, k] = c
    return und


@wp.func
def _breaks(i: int, best: int, w: Slots):
    """1 when slot ``best`` exists and breaks a constraint."""
    out = int(0)  # noqa: UP018 (a mutable Warp variable)
    if best >= 0:
        if w.CON[i, best] == 0:
            out = 1
    return out


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
    """:func:`select_target` plus the coupled-joint constraints, as
    :meth:`AnalyticIK._candidates` applies them; returns ``(slot or -1, status)`` with status
    ``UNDECIDED`` when a constraint was too close to call here."""
    best, code = select_target(i, Tt, ch, sel, gate, lazy, w, pol)
    K = w.Q.shape[1]
    if con.qidx.shape[0] + con.A.shape[0] > 0:
        und = _constraints_all(i, con, w)
        # a branch dropped below met the FK gate and the limits and broke a constraint
        dropped = int(0)  # noqa: UP018 (a mutable Warp variable)
        if lazy != 0:
            tries = int(0)  # noqa: UP018 (a mutable Warp variable)
            bad = _breaks(i, best, w)
            while bad != 0 and tries < CONSTRAINT_RETRIES:
                # the nearest branch breaks a constraint: drop it and gate again
                w.V[i, best] = 0
                dropped = 1
                best, code = select_target(i, Tt, ch, sel, gate, 1, w, pol)
                und = und | _constraints_all(i, con, w)
                bad = _breaks(i, best, w)
                tries += 1
            if bad != 0:
                # still breaking constraints after the retries: every slot
                best, code = select_target(i, Tt, ch, sel, gate, 0, w, pol)
                und = und | _constraints_all(i, con, w)
        best = int(-1)  # noqa: UP018 (a mutable Warp variable)
        fk_any = int(0)  # noqa: UP018 (a mutable Warp variable)
        fk_lim = int(0)  # noqa: UP018 (a mutable Warp variable)
        fk_lim_con = int(0)  # noqa: UP018 (a mutable Warp variable)
        for k in range(K):
            if w.CON[i, k] == 0:
                w.OK[i, k] = 0
                w.VALID[i, k] = 0
            if w.OK[i, k] != 0:
                if best < 0:
                    best = k
                elif w.D[i, k] < w.D[i, best]:
                    best = k
            if w.FK[i, k] != 0:
                fk_any = 1
                if w.LIM[i, k] != 0:
                    fk_lim = 1
                    if w.CON[i, k] != 0:
                        fk_lim_con = 1
        if dropped != 0:  # as on the CPU path: the target failed for the constraint
            fk_any = 1
            fk_lim = 1
        code = int(SUCCESS)
        if best < 0:
            code = STEP_LIMIT
            if fk_any == 0:
                code = UNREACHABLE
            elif fk_lim == 0:
                code = JOINT_LIMITS
            elif fk_lim_con == 0:
                code = CONSTRAINT
        if und != 0:
            best = -1
            code = UNDECIDED
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
        pe, rg, rc = pose_errors(w.Qf, i * K + best, Tg, ch, w.zs, w.os)
        if certified(w.Qf, i * K + best, pe, rc, gate, rtc) != 0:
            chosen = 1
            perr = pe
            rerr = rc
        else:
            status = UNREACHABLE  # gate passed, certify did not (round-off at the tolerance)
    for j in range(w.S.shape[1]):
        if chosen != 0:
            out.q[r, j] = w.Qf[i * K + best, j]
        else:
            out.q[r, j] = w.S[i, j]
    if chosen == 0:
        pe, rg, rc = pose_errors(w.S, i, Tg, ch, w.zs, w.os)
        perr = pe
        rerr = rc
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
                pe, rg, rc = pose_errors(w.Qf, i * K + k, tg.Tg[i], ch, w.zs, w.os)
                w.VALID[i, k] = certified(w.Qf, i * K + k, pe, rc, gate, tg.rtc[i])
            else:
                w.VALID[i, k] = 0
    finish_row(i, best, code, tg.Tg[i], tg.rtc[i], ch, gate, w, out, i)
