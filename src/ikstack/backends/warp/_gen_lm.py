# mypy: ignore-errors
# ruff: noqa
"""GENERATED from ``src/ikstack/ik/numerical/_kernels.py`` by :mod:`ikstack.backends.warp._translate`:
do not edit; edit the CPU source and run ``python -m ikstack.backends.warp._translate``
(a test fails when this file and its source disagree)."""

import warp as wp

from ikstack.backends.warp._prims import *  # noqa: F403
from ikstack.backends.warp._gen_dense import cap_step_inplace, cholesky_inplace, cholesky_solve_inplace
from ikstack.backends.warp._gen_gate import constraints_row
from ikstack.backends.warp._gen_kinematics import _jac_into
from ikstack.backends.warp._gen_splitmix import uniform
from ikstack.backends.warp._gen_tuple_math import rel_rotation, rotation_vector
from ikstack.backends.warp._lm_steps import _now
from ikstack.backends.warp._structs import CHAIN_T, CONSTRAINTS_T, SCRATCH_ROWS_T, SETTINGS_T

CODE_CONSTRAINT = wp.constant(7)
CODE_ITERATION_LIMIT = wp.constant(1)
CODE_JOINT_LIMITS = wp.constant(3)
CODE_SINGULAR = wp.constant(4)
CODE_SUCCESS = wp.constant(0)
CODE_TIME_LIMIT = wp.constant(2)
LIMITS_CLAMP_STEP = wp.constant(1)
LIMITS_IGNORE = wp.constant(2)
LIMITS_PROJECT = wp.constant(0)
STEP_DLS = wp.constant(0)
STEP_LM_SUGIHARA = wp.constant(1)
_AT_LIMIT = wp.constant(F(1e-09))
_MAX_STEP = wp.constant(F(1.0))
_SINGULAR_RATIO = wp.constant(F(1e-07))
_STALL_FLOOR = wp.constant(F(1e-08))
_STALL_RATIO = wp.constant(F(0.7))
_STALL_STEPS = wp.constant(2)


@wp.func
def _target_key(key: wp.int64, Tt: wp.mat44d):
    """A restart seed from the call's key and the target itself, so a target gets the same
    restarts wherever it sits in a batch (and a single query equals a batch of one)."""
    h = floor_mod(key, wp.int64(2147483647))
    for r in range(3):
        for c in range(4):
            h = floor_mod(h * wp.int64(1000003) + floor_mod(wp.int64(wp.floor(Tt[r, c] * F(1000000.0))), wp.int64(2147483647)), wp.int64(2147483647))
    return h


@wp.func
def _pose_error(Tt: wp.mat44d, T: wp.mat44d, e: wp.array(dtype=wp.float64)):
    """``e = [p_t - p, rotvec(R_t R^T)]`` (base frame; ``R_t R^T`` by
    :func:`~ikstack.spatial._tuple_math.rel_rotation`, its rotation vector by
    :func:`~ikstack.spatial._tuple_math.rotation_vector`: accurate up to and at pi)."""
    for r in range(3):
        e[r] = Tt[r, 3] - T[r, 3]
    rx_ry_rz = rotation_vector(rel_rotation(Tt, T))
    rx = rx_ry_rz[0]
    ry = rx_ry_rz[1]
    rz = rx_ry_rz[2]
    e[3] = rx
    e[4] = ry
    e[5] = rz


@wp.func
def _masked_norms(e: wp.array(dtype=wp.float64), w: wp.array(dtype=wp.float64)):
    ep = F(0.0)
    er = F(0.0)
    for r in range(3):
        if w[r] > F(0.0):
            ep = ep + e[r] * e[r]
        if w[r + 3] > F(0.0):
            er = er + e[r + 3] * e[r + 3]
    return wp.vec2d(wp.sqrt(ep), wp.sqrt(er))


@wp.func
def _cost(e: wp.array(dtype=wp.float64), w: wp.array(dtype=wp.float64)):
    E = F(0.0)
    for r in range(6):
        E = E + w[r] * e[r] * e[r]
    return F(0.5) * E


@wp.func
def _is_singular(J: wp.array2d(dtype=wp.float64), w: wp.array(dtype=wp.float64), Jw: wp.array2d(dtype=wp.float64), G: wp.array2d(dtype=wp.float64), L: wp.array2d(dtype=wp.float64)):
    """Whether the active rows of ``W^(1/2) J`` lose rank: the Cholesky factor of the smaller
    Gram matrix has a pivot below ``_SINGULAR_RATIO`` of the largest (or does not exist).
    ``Jw`` (6, n), ``G`` (6, 6) and ``L`` (at least 6 x 6) are scratch."""
    sw = F(0.0)
    n = J.shape[1]
    rows = int(0)
    for r in range(6):
        if w[r] > F(0.0):
            rows = rows + 1
    if rows == 0:
        return False
    k = int(0)
    for r in range(6):
        if w[r] > F(0.0):
            sw = wp.sqrt(w[r])
            for c in range(n):
                Jw[k, c] = sw * J[r, c]
            k = k + 1
    m = wp.min(rows, n)
    for a in range(m):
        for b in range(a + 1):
            s = F(0.0)
            if rows <= n:
                for c in range(n):
                    s = s + Jw[a, c] * Jw[b, c]
            else:
                for c in range(rows):
                    s = s + Jw[c, a] * Jw[c, b]
            G[a, b] = s
            G[b, a] = s
    lo_piv = INF
    hi_piv = F(0.0)
    for i in range(m):
        for j in range(i + 1):
            s = G[i, j]
            for t in range(j):
                s = s - L[i, t] * L[j, t]
            if i == j:
                if not (s > F(0.0)):
                    return True
                L[i, i] = wp.sqrt(s)
                lo_piv = wp.min(lo_piv, L[i, i])
                hi_piv = wp.max(hi_piv, L[i, i])
            else:
                L[i, j] = s / L[j, j]
    return lo_piv < _SINGULAR_RATIO * hi_piv


@wp.func
def _step(ws: SCRATCH_ROWS_T.type, ws_row: int, lam: wp.float64, lo: wp.array(dtype=wp.float64), hi: wp.array(dtype=wp.float64), active_set: bool):
    """The damped step ``ws.dq`` of ``(J^T W J + lam I) dq = J^T W e`` at ``ws.q``; False when
    singular.

    With ``Jw = W^(1/2) J`` over the ``m`` weighted rows, a redundant chain (``m < n``) solves
    the same step in task space, ``dq = Jw^T (Jw Jw^T + lam I)^-1 W^(1/2) e`` (an ``m x m``
    system, well conditioned even as ``lam`` vanishes); otherwise the ``n x n`` normal equations.
    ``active_set``: a joint at a bound whose step points outwards is held there (its column
    dropped) and the rest re-solved, so the other joints make up for it.

    On the device (generated from ``ikstack.ik.numerical._kernels._step``): ``ws`` is followed
    by the thread's row ``ws_row``.
    """
    s = F(0.0)
    J = ws.J[ws_row]
    e = ws.e[ws_row]
    sw = ws.sw[ws_row]
    q = ws.q[ws_row]
    dq = ws.dq[ws_row]
    L = ws.L[ws_row]
    held = ws.held[ws_row]
    Jw = ws.Jw[ws_row]
    ew = ws.ew[ws_row]
    y = ws.y[ws_row]
    n = J.shape[1]
    for i in range(n):
        held[i] = 0
    m = int(0)
    for r in range(6):
        if sw[r] > F(0.0):
            for c in range(n):
                Jw[m, c] = sw[r] * J[r, c]
            ew[m] = sw[r] * e[r]
            m = m + 1
    for _ in range(n + 1):
        if m < n:
            for a in range(m):
                for b in range(a + 1):
                    s = F(0.0)
                    for c in range(n):
                        s = s + Jw[a, c] * Jw[b, c]
                    L[a, b] = s
                L[a, a] = L[a, a] + lam
                y[a] = ew[a]
            if not cholesky_inplace(L, m):
                return False
            cholesky_solve_inplace(L, m, y)
            for c in range(n):
                s = F(0.0)
                for a in range(m):
                    s = s + Jw[a, c] * y[a]
                dq[c] = s
        else:
            for a in range(n):
                s = F(0.0)
                for r in range(m):
                    s = s + Jw[r, a] * ew[r]
                dq[a] = s
                for b in range(a + 1):
                    s = F(0.0)
                    for r in range(m):
                        s = s + Jw[r, a] * Jw[r, b]
                    L[a, b] = s
                L[a, a] = L[a, a] + lam
            for i in range(n):
                if (held[i] != 0):
                    L[i, i] = F(1.0)
            if not cholesky_inplace(L, n):
                return False
            cholesky_solve_inplace(L, n, dq)
        if not active_set:
            return True
        grew = bool(False)
        for i in range(n):
            if (not (held[i] != 0)) and ((q[i] <= lo[i] and dq[i] < F(0.0)) or (q[i] >= hi[i] and dq[i] > F(0.0))):
                held[i] = 1
                grew = bool(True)
                for r in range(m):
                    Jw[r, i] = F(0.0)
        if not grew:
            break
    for i in range(n):
        if (held[i] != 0):
            dq[i] = F(0.0)
    return True


@wp.func
def _failure_code(violated: bool, limits: bool, singular: bool):
    """The outcome code of a target no search solved: a search ended on a configuration that
    violates a coupled-joint constraint, else the best iterate at (or a converged one outside)
    the joint limits, else a singular step (or a singular best iterate), else the iteration cap.
    """
    if violated:
        return CODE_CONSTRAINT
    if limits:
        return CODE_JOINT_LIMITS
    if singular:
        return CODE_SINGULAR
    return CODE_ITERATION_LIMIT


@wp.func
def _solve_one(Tt: wp.mat44d, q0: wp.array(dtype=wp.float64), chain: CHAIN_T.type, cons: CONSTRAINTS_T.type, lm: SETTINGS_T.type, key: int, ws: SCRATCH_ROWS_T.type, ws_row: int, q_out: wp.array(dtype=wp.float64)):
    """Solve one target; returns ``(code, iterations, restarts)`` and writes ``q_out``.

    ``chain`` is a :data:`ikstack.ik._data.CHAIN` record, ``lm`` a :data:`SETTINGS` record.
    ``q_out`` holds the converged vector, or the best (lowest cost) iterate of all searches.
    ``ws`` is :func:`workspace`'s scratch; ``key`` seeds the restarts' draws. A search that
    converges onto a configuration that violates a coupled-joint constraint (``cons``, a
    :data:`ikstack.ik._data.CONSTRAINTS` record, see :func:`ikstack.ik._gate.constraints_row`)
    counts as failed and the next restart follows.

    On the device (generated from ``ikstack.ik.numerical._kernels._solve_one``): ``ws`` is
    followed by the thread's row ``ws_row``.
    """
    u = F(0.0)
    inside = bool(False)
    k2 = F(0.0)
    lam = F(0.0)
    scale = F(0.0)
    nq = F(0.0)
    n = q0.shape[0]
    Rs = chain.Rs
    ps = chain.ps
    kinds = chain.kinds
    R_end = chain.R_end
    p_end = chain.p_end
    lo = lm.lo
    hi = lm.hi
    slo = lm.slo
    shi = lm.shi
    w = lm.w
    tol_p = lm.tol_p
    tol_r = lm.tol_r
    damping = lm.damping
    budget = lm.budget
    step_kind = lm.step_kind
    limit_mode = lm.limit_mode
    max_iter = lm.max_iter
    max_restarts = lm.max_restarts
    J = ws.J[ws_row]
    T = ws.T[ws_row]
    e = ws.e[ws_row]
    dq = ws.dq[ws_row]
    q = ws.q[ws_row]
    sw = ws.sw[ws_row]
    for r in range(6):
        sw[r] = wp.sqrt(w[r])
    for i in range(n):
        q[i] = wp.where(limit_mode != LIMITS_IGNORE, wp.min(wp.max(q0[i], lo[i]), hi[i]), q0[i])
        q_out[i] = wp.min(wp.max(q0[i], lo[i]), hi[i])
    best_E = INF
    any_singular = bool(False)
    best_pinned = bool(False)
    best_limits = bool(False)
    any_violated = bool(False)
    timed = budget < INF
    t0 = wp.where(timed, _now(), F(0.0))
    iterations = int(0)
    restarts = int(0)
    state = wp.uint64(key)
    for search in range(max_restarts + 1):
        if search > 0:
            if timed and _now() - t0 > budget:
                for i in range(n):
                    q_out[i] = wp.min(wp.max(q_out[i], lo[i]), hi[i])
                return CODE_TIME_LIMIT, iterations, restarts
            restarts = restarts + 1
            for i in range(n):
                state, u = uniform(state)
                q[i] = slo[i] + (shi[i] - slo[i]) * u
        singular = bool(False)
        out_of_limits = bool(False)
        violated = bool(False)
        E_prev = INF
        stall = int(0)
        for it in range(max_iter + 1):
            _jac_into(q, Rs, ps, kinds, R_end, p_end, J, T)
            _pose_error(Tt, mat44_of(T), e)
            E = _cost(e, w)
            if not wp.isfinite(E):
                singular = bool(True)
                break
            ep_er = _masked_norms(e, w)
            ep = ep_er[0]
            er = ep_er[1]
            if ep <= tol_p and er <= tol_r:
                inside = bool(True)
                if limit_mode == LIMITS_IGNORE:
                    for i in range(n):
                        if q[i] < lo[i] or q[i] > hi[i]:
                            if kinds[i] == 0:
                                k2 = wp.rint((F(0.5) * (slo[i] + shi[i]) - q[i]) / F(6.283185307179586))
                                q[i] = q[i] + k2 * F(2.0) * F(3.141592653589793)
                            if q[i] < lo[i] or q[i] > hi[i]:
                                inside = bool(False)
                if inside and constraints_row(q, cons.qidx, cons.qcoef, cons.A, cons.b) == 0:
                    violated = bool(True)
                    break
                if inside:
                    for i in range(n):
                        q_out[i] = q[i]
                    return CODE_SUCCESS, iterations, restarts
                out_of_limits = bool(True)
                break
            if E < best_E:
                best_E = E
                best_pinned = bool(False)
                for i in range(n):
                    q_out[i] = q[i]
                    if limit_mode != LIMITS_IGNORE and (q[i] - lo[i] < _AT_LIMIT or hi[i] - q[i] < _AT_LIMIT):
                        best_pinned = bool(True)
            if it == max_iter:
                break
            if E > _STALL_RATIO * E_prev and E > _STALL_FLOOR:
                stall = stall + 1
                if stall >= _STALL_STEPS:
                    break
            else:
                stall = int(0)
            E_prev = E
            iterations = iterations + 1
            if step_kind == STEP_DLS:
                lam = damping * damping
            elif step_kind == STEP_LM_SUGIHARA:
                lam = E + damping
            else:
                lam = damping * E
            if not _step(ws, ws_row, lam, lo, hi, limit_mode == LIMITS_PROJECT):
                singular = bool(True)
                break
            cap_step_inplace(dq, n, _MAX_STEP)
            if limit_mode == LIMITS_CLAMP_STEP:
                scale = F(1.0)
                for i in range(n):
                    nq = q[i] + dq[i]
                    if nq > hi[i] and dq[i] > F(0.0):
                        scale = wp.min(scale, (hi[i] - q[i]) / dq[i])
                    elif nq < lo[i] and dq[i] < F(0.0):
                        scale = wp.min(scale, (lo[i] - q[i]) / dq[i])
                scale = wp.max(scale, F(0.0))
                for i in range(n):
                    q[i] = wp.min(wp.max(q[i] + scale * dq[i], lo[i]), hi[i])
            elif limit_mode == LIMITS_PROJECT:
                for i in range(n):
                    q[i] = wp.min(wp.max(q[i] + dq[i], lo[i]), hi[i])
            else:
                for i in range(n):
                    q[i] = q[i] + dq[i]
        if out_of_limits:
            best_limits = bool(True)
        if singular:
            any_singular = bool(True)
        if violated:
            any_violated = bool(True)
    singular_best = bool(False)
    if best_E < INF and (not (any_violated or best_limits or best_pinned or any_singular)):
        _jac_into(q_out, Rs, ps, kinds, R_end, p_end, J, T)
        singular_best = _is_singular(J, w, ws.Jw[ws_row], ws.G[ws_row], ws.L[ws_row])
    for i in range(n):
        if not wp.isfinite(q_out[i]):
            q_out[i] = q0[i]
        q_out[i] = wp.min(wp.max(q_out[i], lo[i]), hi[i])
    code = _failure_code(any_violated, best_limits or best_pinned, any_singular or singular_best)
    return code, iterations, restarts
