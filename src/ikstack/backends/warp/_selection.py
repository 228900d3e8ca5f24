# mypy: ignore-errors
"""Warp float64 port of the analytic path's selection and FK gate.

Mirrors :mod:`ikstack.ik.analytic._select` (periodic representatives, limits with the same
snap, the lazy FK gate in order of seed distance, the full pass that explains a failure) and
the error definition of :func:`ikstack.ik.certify` (:func:`ikstack.ik._gate.fk_error_one`:
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

from ikstack.backends.warp._gen_gate import constraints_row, pose_residual
from ikstack.backends.warp._gen_select import LIMIT_SNAP as SNAP
from ikstack.backends.warp._gen_select import representative
from ikstack.backends.warp._kernels import kinematics_kernels
from ikstack.backends.warp._polish import Polish, polish_one
from ikstack.backends.warp._prims import F

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

_pose = kinematics_kernels()["pose"]


@wp.func
def limits_row(
    Q: wp.array3d(dtype=wp.float64),
    i: int,
    k: int,
    S: wp.array2d(dtype=wp.float64),
    lo: wp.array(dtype=wp.float64),
    hi: wp.array(dtype=wp.float64),
    revolute: wp.array(dtype=wp.int32),
    W: wp.array(dtype=wp.float64),
):
    """Move slot ``k`` to its representatives in place; ``(within limits, distance, step)``."""
    lim = int(1)  # noqa: UP018 (a mutable Warp variable)
    d = F(0.0)
    step = F(0.0)
    for j in range(S.shape[1]):
        x = Q[i, k, j]
        if revolute[j] != 0:
            x = representative(x, S[i, j], lo[j], hi[j])
        if x < lo[j]:
            if x >= lo[j] - SNAP:
                x = lo[j]
            else:
                lim = 0
        if x > hi[j]:
            if x <= hi[j] + SNAP:
                x = hi[j]
            else:
                lim = 0
        Q[i, k, j] = x
        dd = x - S[i, j]
        d += W[j] * dd * dd
        step = wp.max(step, wp.abs(dd))
    return lim, d, step


@wp.func
def pose_errors(
    q: wp.array2d(dtype=wp.float64),
    row: int,
    Tt: wp.mat44d,
    Rs: wp.array(dtype=wp.mat33d),
    ps: wp.array(dtype=wp.vec3d),
    kinds: wp.array(dtype=wp.int32),
    R_end: wp.mat33d,
    p_end: wp.vec3d,
    zs: wp.array2d(dtype=wp.vec3d),
    os: wp.array2d(dtype=wp.vec3d),
):
    """FK of ``q[row]`` against ``Tt``: ``(position error, rotation error of the candidate
    gate, rotation error of certify)`` (the two angles differ only in rounding)."""
    R0, p0 = _pose(q, row, Rs, ps, kinds, zs, os, 0)
    p = p0 + R0 * p_end
    T = R0 * R_end
    perr, c, vx, vy, vz = pose_residual(
        wp.mat44d(
            T[0, 0],
            T[0, 1],
            T[0, 2],
            p[0],
            T[1, 0],
            T[1, 1],
            T[1, 2],
            p[1],
            T[2, 0],
            T[2, 1],
            T[2, 2],
            p[2],
            F(0.0),
            F(0.0),
            F(0.0),
            F(1.0),
        ),
        Tt,
    )
    v0 = F(0.5) * vx
    v1 = F(0.5) * vy
    v2 = F(0.5) * vz
    gate = wp.atan2(wp.sqrt(v0 * v0 + v1 * v1 + v2 * v2), c)
    cert = wp.atan2(F(0.5) * wp.sqrt(vx * vx + vy * vy + vz * vz), c)
    return perr, gate, cert


@wp.func
def certified(
    q: wp.array2d(dtype=wp.float64),
    row: int,
    perr: wp.float64,
    rerr: wp.float64,
    ptol: wp.float64,
    rtol: wp.float64,
    clo: wp.array(dtype=wp.float64),
    chi: wp.array(dtype=wp.float64),
):
    """:func:`ikstack.ik.certify` without constraints: finite, within the chain's limits
    (tolerance 0) and FK within both tolerances."""
    ok = int(0)  # noqa: UP018 (a mutable Warp variable)
    if perr <= ptol and rerr <= rtol:
        ok = 1
    for j in range(clo.shape[0]):
        x = q[row, j]
        if not (wp.isfinite(x) and x >= clo[j] and x <= chi[j]):
            ok = 0
    return ok


@wp.func
def select_target(
    i: int,
    Tt: wp.mat44d,
    S: wp.array2d(dtype=wp.float64),
    Q: wp.array3d(dtype=wp.float64),
    Qf: wp.array2d(dtype=wp.float64),
    V: wp.array2d(dtype=wp.int32),
    lo: wp.array(dtype=wp.float64),
    hi: wp.array(dtype=wp.float64),
    clo: wp.array(dtype=wp.float64),
    chi: wp.array(dtype=wp.float64),
    revolute: wp.array(dtype=wp.int32),
    W: wp.array(dtype=wp.float64),
    Rs: wp.array(dtype=wp.mat33d),
    ps: wp.array(dtype=wp.vec3d),
    kinds: wp.array(dtype=wp.int32),
    R_end: wp.mat33d,
    p_end: wp.vec3d,
    zs: wp.array2d(dtype=wp.vec3d),
    os: wp.array2d(dtype=wp.vec3d),
    ptol: wp.float64,
    rtol: wp.float64,
    max_step: wp.float64,
    lazy: int,
    OK: wp.array2d(dtype=wp.int32),
    FK: wp.array2d(dtype=wp.int32),
    LIM: wp.array2d(dtype=wp.int32),
    D: wp.array2d(dtype=wp.float64),
    VALID: wp.array2d(dtype=wp.int32),
    pol: Polish,
):
    """Gate the ``K`` candidate slots of row ``i`` (seeded by ``S[i]``) as
    ``_select._finalize_pl`` does; returns ``(selected slot or -1, status)``.

    ``lazy``: FK-check in order of seed distance until one passes (the nearest-solution mode);
    otherwise every slot, with ``VALID`` the certified mask of every slot (``return_all``).
    With ``pol.iters > 0`` each slot is polished on the true chain before its first FK check
    (the lazy order then sees it again at its new distance), at most once per target.
    """
    K = Q.shape[1]
    dof = S.shape[1]
    for k in range(K):
        v = V[i, k]
        for j in range(dof):
            if not wp.isfinite(Q[i, k, j]):
                Q[i, k, j] = S[i, j]
                v = 0
        V[i, k] = v
        lim, d, step = limits_row(Q, i, k, S, lo, hi, revolute, W)
        LIM[i, k] = lim
        D[i, k] = d
        ok = int(0)  # noqa: UP018 (a mutable Warp variable)
        if v != 0 and lim != 0 and step <= max_step:
            ok = 1
        OK[i, k] = ok
        FK[i, k] = 0
        VALID[i, k] = 0
    best = int(-1)  # noqa: UP018 (a mutable Warp variable)
    if lazy != 0:
        searching = int(1)  # noqa: UP018 (a mutable Warp variable)
        while searching != 0:
            cand = int(-1)  # noqa: UP018 (a mutable Warp variable)
            for k in range(K):
                if OK[i, k] != 0 and FK[i, k] == 0:
                    if cand < 0:
                        cand = k
                    elif D[i, k] < D[i, cand]:
                        cand = k
            polish_now = int(0)  # noqa: UP018 (a mutable Warp variable)
            if cand >= 0 and pol.iters > 0:
                if pol.PL[i, cand] == 0:
                    polish_now = 1
            if cand < 0:
                searching = 0
            elif polish_now != 0:
                # polish, then let the polished candidate compete again at its new distance
                polish_one(Qf, i * K + cand, i, Tt, Rs, ps, kinds, R_end, p_end, ptol, rtol, pol)
                pol.PL[i, cand] = 1
                lim, d, step = limits_row(Q, i, cand, S, lo, hi, revolute, W)
                LIM[i, cand] = lim
                D[i, cand] = d
                OK[i, cand] = 0
                if lim != 0 and step <= max_step:
                    OK[i, cand] = 1
            else:
                pe, rg, rc = pose_errors(Qf, i * K + cand, Tt, Rs, ps, kinds, R_end, p_end, zs, os)
                if pe <= ptol and rg <= rtol:
                    FK[i, cand] = 1
                    for k in range(K):
                        OK[i, k] = 0
                    OK[i, cand] = 1
                    best = cand
                    searching = 0
                else:
                    OK[i, cand] = 0
    if best < 0:
        # every slot: the flags explain a failure (and return_all needs every mask)
        for k in range(K):
            step = F(0.0)
            if V[i, k] != 0 and pol.iters > 0:
                if pol.PL[i, k] == 0:
                    polish_one(Qf, i * K + k, i, Tt, Rs, ps, kinds, R_end, p_end, ptol, rtol, pol)
                    pol.PL[i, k] = 1
                    lim, d, st = limits_row(Q, i, k, S, lo, hi, revolute, W)
                    LIM[i, k] = lim
                    D[i, k] = d
                    step = st
            for j in range(dof):
                step = wp.max(step, wp.abs(Q[i, k, j] - S[i, j]))
            fk = int(0)  # noqa: UP018 (a mutable Warp variable)
            if V[i, k] != 0:
                pe, rg, rc = pose_errors(Qf, i * K + k, Tt, Rs, ps, kinds, R_end, p_end, zs, os)
                if pe <= ptol and rg <= rtol:
                    fk = 1
                    if LIM[i, k] != 0 and step <= max_step:
                        VALID[i, k] = certified(Qf, i * K + k, pe, rc, ptol, rtol, clo, chi)
            FK[i, k] = fk
            ok = int(0)  # noqa: UP018 (a mutable Warp variable)
            if fk != 0 and LIM[i, k] != 0 and step <= max_step:
                ok = 1
            OK[i, k] = ok
            if ok != 0:
                if best < 0:
                    best = k
                elif D[i, k] < D[i, best]:
                    best = k
    for k in range(K):
        if LIM[i, k] == 0:
            for j in range(dof):
                Q[i, k, j] = wp.min(wp.max(Q[i, k, j], lo[j]), hi[j])
    code = SUCCESS
    if best < 0:
        fk_any = int(0)  # noqa: UP018 (a mutable Warp variable)
        fk_lim = int(0)  # noqa: UP018 (a mutable Warp variable)
        for k in range(K):
            if FK[i, k] != 0:
                fk_any = 1
                if LIM[i, k] != 0:
                    fk_lim = 1
        code = STEP_LIMIT
        if fk_any == 0:
            code = UNREACHABLE
        elif fk_lim == 0:
            code = JOINT_LIMITS
    return best, code


@wp.func
def _constraints_all(
    i: int,
    Qf: wp.array2d(dtype=wp.float64),
    K: int,
    CON: wp.array2d(dtype=wp.int32),
    qidx: wp.array2d(dtype=wp.int32),
    qcoef: wp.array4d(dtype=wp.float64),
    Ac: wp.array2d(dtype=wp.float64),
    bc: wp.array(dtype=wp.float64),
):
    """``CON[i]`` of every slot; 1 when some slot could not be decided."""
    und = int(0)  # noqa: UP018 (a mutable Warp variable)
    for k in range(K):
        c = constraints_row(Qf[i * K + k], qidx, qcoef, Ac, bc)
        if c < 0:
            und = 1
            c = 0
        CON[i, k] = c
    return und


@wp.func
def _breaks(i: int, best: int, CON: wp.array2d(dtype=wp.int32)):
    """1 when slot ``best`` exists and breaks a constraint."""
    out = int(0)  # noqa: UP018 (a mutable Warp variable)
    if best >= 0:
        if CON[i, best] == 0:
            out = 1
    return out


@wp.func
def gate_row(
    i: int,
    Tt: wp.mat44d,
    S: wp.array2d(dtype=wp.float64),
    Q: wp.array3d(dtype=wp.float64),
    Qf: wp.array2d(dtype=wp.float64),
    V: wp.array2d(dtype=wp.int32),
    lo: wp.array(dtype=wp.float64),
    hi: wp.array(dtype=wp.float64),
    clo: wp.array(dtype=wp.float64),
    chi: wp.array(dtype=wp.float64),
    revolute: wp.array(dtype=wp.int32),
    W: wp.array(dtype=wp.float64),
    Rs: wp.array(dtype=wp.mat33d),
    ps: wp.array(dtype=wp.vec3d),
    kinds: wp.array(dtype=wp.int32),
    R_end: wp.mat33d,
    p_end: wp.vec3d,
    zs: wp.array2d(dtype=wp.vec3d),
    os: wp.array2d(dtype=wp.vec3d),
    ptol: wp.float64,
    rtol: wp.float64,
    max_step: wp.float64,
    lazy: int,
    OK: wp.array2d(dtype=wp.int32),
    FK: wp.array2d(dtype=wp.int32),
    LIM: wp.array2d(dtype=wp.int32),
    D: wp.array2d(dtype=wp.float64),
    VALID: wp.array2d(dtype=wp.int32),
    CON: wp.array2d(dtype=wp.int32),
    qidx: wp.array2d(dtype=wp.int32),
    qcoef: wp.array4d(dtype=wp.float64),
    Ac: wp.array2d(dtype=wp.float64),
    bc: wp.array(dtype=wp.float64),
    pol: Polish,
):
    """:func:`select_target` plus the coupled-joint constraints, as
    :meth:`AnalyticIK._candidates` applies them; returns ``(slot or -1, status)`` with status
    ``UNDECIDED`` when a constraint was too close to call here."""
    best, code = select_target(
        i,
        Tt,
        S,
        Q,
        Qf,
        V,
        lo,
        hi,
        clo,
        chi,
        revolute,
        W,
        Rs,
        ps,
        kinds,
        R_end,
        p_end,
        zs,
        os,
        ptol,
        rtol,
        max_step,
        lazy,
        OK,
        FK,
        LIM,
        D,
        VALID,
        pol,
    )
    K = Q.shape[1]
    if qidx.shape[0] + Ac.shape[0] > 0:
        und = _constraints_all(i, Qf, K, CON, qidx, qcoef, Ac, bc)
        if lazy != 0:
            tries = int(0)  # noqa: UP018 (a mutable Warp variable)
            bad = _breaks(i, best, CON)
            while bad != 0 and tries < CONSTRAINT_RETRIES:
                # the nearest branch breaks a constraint: drop it and gate again
                V[i, best] = 0
                best, code = select_target(
                    i,
                    Tt,
                    S,
                    Q,
                    Qf,
                    V,
                    lo,
                    hi,
                    clo,
                    chi,
                    revolute,
                    W,
                    Rs,
                    ps,
                    kinds,
                    R_end,
                    p_end,
                    zs,
                    os,
                    ptol,
                    rtol,
                    max_step,
                    1,
                    OK,
                    FK,
                    LIM,
                    D,
                    VALID,
                    pol,
                )
                und = und | _constraints_all(i, Qf, K, CON, qidx, qcoef, Ac, bc)
                bad = _breaks(i, best, CON)
                tries += 1
            if bad != 0:
                # still breaking constraints after the retries: every slot
                best, code = select_target(
                    i,
                    Tt,
                    S,
                    Q,
                    Qf,
                    V,
                    lo,
                    hi,
                    clo,
                    chi,
                    revolute,
                    W,
                    Rs,
                    ps,
                    kinds,
                    R_end,
                    p_end,
                    zs,
                    os,
                    ptol,
                    rtol,
                    max_step,
                    0,
                    OK,
                    FK,
                    LIM,
                    D,
                    VALID,
                    pol,
                )
                und = und | _constraints_all(i, Qf, K, CON, qidx, qcoef, Ac, bc)
        best = int(-1)  # noqa: UP018 (a mutable Warp variable)
        fk_any = int(0)  # noqa: UP018 (a mutable Warp variable)
        fk_lim = int(0)  # noqa: UP018 (a mutable Warp variable)
        fk_lim_con = int(0)  # noqa: UP018 (a mutable Warp variable)
        for k in range(K):
            if CON[i, k] == 0:
                OK[i, k] = 0
                VALID[i, k] = 0
            if OK[i, k] != 0:
                if best < 0:
                    best = k
                elif D[i, k] < D[i, best]:
                    best = k
            if FK[i, k] != 0:
                fk_any = 1
                if LIM[i, k] != 0:
                    fk_lim = 1
                    if CON[i, k] != 0:
                        fk_lim_con = 1
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
    Tt: wp.mat44d,
    S: wp.array2d(dtype=wp.float64),
    Qf: wp.array2d(dtype=wp.float64),
    K: int,
    clo: wp.array(dtype=wp.float64),
    chi: wp.array(dtype=wp.float64),
    Rs: wp.array(dtype=wp.mat33d),
    ps: wp.array(dtype=wp.vec3d),
    kinds: wp.array(dtype=wp.int32),
    R_end: wp.mat33d,
    p_end: wp.vec3d,
    zs: wp.array2d(dtype=wp.vec3d),
    os: wp.array2d(dtype=wp.vec3d),
    ptol: wp.float64,
    rtol: wp.float64,
    q_out: wp.array2d(dtype=wp.float64),
    r: int,
):
    """Certify the selection of row ``i`` and write it (or the seed ``S[i]``, with a status)
    to ``q_out[r]``; returns ``(status, position error, rotation error)`` of what was written,
    as :meth:`AnalyticIK._solve` decides them."""
    status = code
    sel = int(0)  # noqa: UP018 (a mutable Warp variable)
    perr = F(0.0)
    rerr = F(0.0)
    if best >= 0:
        pe, rg, rc = pose_errors(Qf, i * K + best, Tt, Rs, ps, kinds, R_end, p_end, zs, os)
        if certified(Qf, i * K + best, pe, rc, ptol, rtol, clo, chi) != 0:
            sel = 1
            perr = pe
            rerr = rc
        else:
            status = UNREACHABLE  # gate passed, certify did not (round-off at the tolerance)
    for j in range(S.shape[1]):
        if sel != 0:
            q_out[r, j] = Qf[i * K + best, j]
        else:
            q_out[r, j] = S[i, j]
    if sel == 0:
        pe, rg, rc = pose_errors(S, i, Tt, Rs, ps, kinds, R_end, p_end, zs, os)
        perr = pe
        rerr = rc
    return status, perr, rerr


@wp.kernel
def select_kernel(
    T: wp.array(dtype=wp.mat44d),
    S: wp.array2d(dtype=wp.float64),
    Q: wp.array3d(dtype=wp.float64),
    Qf: wp.array2d(dtype=wp.float64),
    V: wp.array2d(dtype=wp.int32),
    lo: wp.array(dtype=wp.float64),
    hi: wp.array(dtype=wp.float64),
    clo: wp.array(dtype=wp.float64),
    chi: wp.array(dtype=wp.float64),
    revolute: wp.array(dtype=wp.int32),
    W: wp.array(dtype=wp.float64),
    Rs: wp.array(dtype=wp.mat33d),
    ps: wp.array(dtype=wp.vec3d),
    kinds: wp.array(dtype=wp.int32),
    R_end: wp.mat33d,
    p_end: wp.vec3d,
    zs: wp.array2d(dtype=wp.vec3d),
    os: wp.array2d(dtype=wp.vec3d),
    ptol: wp.float64,
    rtol: wp.float64,
    max_step: wp.float64,
    lazy: int,
    OK: wp.array2d(dtype=wp.int32),
    FK: wp.array2d(dtype=wp.int32),
    LIM: wp.array2d(dtype=wp.int32),
    D: wp.array2d(dtype=wp.float64),
    VALID: wp.array2d(dtype=wp.int32),
    CON: wp.array2d(dtype=wp.int32),
    qidx: wp.array2d(dtype=wp.int32),
    qcoef: wp.array4d(dtype=wp.float64),
    Ac: wp.array2d(dtype=wp.float64),
    bc: wp.array(dtype=wp.float64),
    q_out: wp.array2d(dtype=wp.float64),
    status: wp.array(dtype=wp.int32),
    perr: wp.array(dtype=wp.float64),
    rerr: wp.array(dtype=wp.float64),
    Tg: wp.array(dtype=wp.mat44d),
    rtc: wp.array(dtype=wp.float64),
    pol: Polish,
):
    """One thread a target: gate its candidates, select, certify, write ``(q, status,
    errors)``; ``Qf`` is ``Q`` viewed as (N K, dof).

    ``T`` holds the targets solved (each rotation projected to the nearest rotation), ``Tg``
    the targets as given and ``rtc`` the rotation tolerance certifying against them (widened
    by the projection's deviation), as :meth:`AnalyticIK._solve` does."""
    i = wp.tid()
    Tt = T[i]
    if pol.iters > 0:
        for k in range(Q.shape[1]):
            pol.PL[i, k] = 0
    best, code = gate_row(
        i,
        Tt,
        S,
        Q,
        Qf,
        V,
        lo,
        hi,
        clo,
        chi,
        revolute,
        W,
        Rs,
        ps,
        kinds,
        R_end,
        p_end,
        zs,
        os,
        ptol,
        rtol,
        max_step,
        lazy,
        OK,
        FK,
        LIM,
        D,
        VALID,
        CON,
        qidx,
        qcoef,
        Ac,
        bc,
        pol,
    )
    K = Q.shape[1]
    if lazy == 0 and rtc[i] != rtol:
        # return_all of a projected target: every gated slot certified against the target
        # as given
        for k in range(K):
            if OK[i, k] != 0:
                pe, rg, rc = pose_errors(Qf, i * K + k, Tg[i], Rs, ps, kinds, R_end, p_end, zs, os)
                VALID[i, k] = certified(Qf, i * K + k, pe, rc, ptol, rtc[i], clo, chi)
            else:
                VALID[i, k] = 0
    st, pe, re = finish_row(
        i,
        best,
        code,
        Tg[i],
        S,
        Qf,
        K,
        clo,
        chi,
        Rs,
        ps,
        kinds,
        R_end,
        p_end,
        zs,
        os,
        ptol,
        rtc[i],
        q_out,
        i,
    )
    status[i] = st
    perr[i] = pe
    rerr[i] = re
