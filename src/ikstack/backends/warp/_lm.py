# mypy: ignore-errors
"""Warp float64 port of the CPU path's numerical-IK loop (:mod:`ikstack.ik.numerical._kernels`).

One thread a target runs :func:`_solve_one`'s searches operation by operation: the seeded
search, then random restarts drawn uniformly within the limits from the same per-target
splitmix64 stream (:func:`uniform`, seeded by :func:`target_key`), so a restart starts from
the same configuration as on the CPU. Steps: fixed damping, Sugihara's or Chan's adaptive
damping, solved in task space (``m x m``) when fewer weighted rows than joints; limits:
active-set projection, step clamping or none; the same stall rule, step cap, in-loop
coupled-joint constraint check (quadrant polynomials and linear rows), singularity test and
failure codes. Per-target scratch lives in caller-owned arrays (Warp threads have no dynamic
local arrays).
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._gen_gate import constraints_row
from ikstack.backends.warp._lm_steps import (
    INF,
    _clip,
    cholesky,
    cholesky_solve,
    is_singular,
    jac_into,
    pose_error,
    target_key,
    uniform,
)
from ikstack.backends.warp._prims import F
from ikstack.backends.warp._structs import CHAIN_T, CONSTRAINTS_T, LM_T

Chain = CHAIN_T.type
Constraints = CONSTRAINTS_T.type
#: the search's settings (the CPU record's fields) and ``sw``, the square roots of ``w``
Settings = LM_T.type

STEP_DLS = wp.constant(0)
STEP_LM_SUGIHARA = wp.constant(1)
LIMITS_PROJECT = wp.constant(0)
LIMITS_CLAMP_STEP = wp.constant(1)
LIMITS_IGNORE = wp.constant(2)
CODE_SUCCESS = wp.constant(0)
CODE_ITERATION_LIMIT = wp.constant(1)
CODE_JOINT_LIMITS = wp.constant(3)
CODE_SINGULAR = wp.constant(4)
CODE_CONSTRAINT = wp.constant(7)
AT_LIMIT = wp.constant(wp.float64(1e-9))
MAX_STEP = wp.constant(wp.float64(1.0))
STALL_RATIO = wp.constant(wp.float64(0.7))
STALL_STEPS = wp.constant(2)
STALL_FLOOR = wp.constant(wp.float64(1e-8))
PI = wp.constant(wp.float64(3.141592653589793))


@wp.struct
class Work:
    """Per-target scratch (Warp threads have no dynamic local arrays), one row a target:
    iterate, Jacobian, error, weighted rows, task-space right side, Cholesky factor, Gram
    matrix, step, and the joints the active set holds."""

    q: wp.array2d(dtype=wp.float64)
    J: wp.array3d(dtype=wp.float64)
    e: wp.array2d(dtype=wp.float64)
    Jw: wp.array3d(dtype=wp.float64)
    ew: wp.array2d(dtype=wp.float64)
    y: wp.array2d(dtype=wp.float64)
    L: wp.array3d(dtype=wp.float64)
    G: wp.array3d(dtype=wp.float64)
    dq: wp.array2d(dtype=wp.float64)
    held: wp.array2d(dtype=wp.int32)


@wp.struct
class Found:
    """What comes back, one a target: the answer, its code, iterations and restarts."""

    q: wp.array2d(dtype=wp.float64)
    codes: wp.array(dtype=wp.int32)
    iters: wp.array(dtype=wp.int32)
    restarts: wp.array(dtype=wp.int32)


@wp.func
def step(k: int, n: int, lam: wp.float64, active_set: int, st: Settings, wk: Work):
    """``ikstack.ik.numerical._kernels._step`` of row ``k``: the damped step into ``wk.dq``
    (``m x m`` task-space system when the ``m`` weighted rows are fewer than the joints, else
    the ``n x n`` normal equations; active set when asked); 0 when singular."""
    J = wk.J
    e = wk.e
    sw = st.sw
    q = wk.q
    lo = st.lo
    hi = st.hi
    Jw = wk.Jw
    ew = wk.ew
    y = wk.y
    dq = wk.dq
    L = wk.L
    held = wk.held
    for i in range(n):
        held[k, i] = 0
    m = int(0)  # noqa: UP018 (a mutable Warp variable)
    for r in range(6):
        if sw[r] > F(0.0):
            for c in range(n):
                Jw[k, m, c] = sw[r] * J[k, r, c]
            ew[k, m] = sw[r] * e[k, r]
            m += 1
    ok = int(1)  # noqa: UP018 (a mutable Warp variable)
    going = int(1)  # noqa: UP018 (a mutable Warp variable)
    for _pass in range(n + 1):
        if going != 0:
            if m < n:
                for a in range(m):
                    for b in range(a + 1):
                        s = F(0.0)
                        for c in range(n):
                            s += Jw[k, a, c] * Jw[k, b, c]
                        L[k, a, b] = s
                    L[k, a, a] = L[k, a, a] + lam
                    y[k, a] = ew[k, a]
                if cholesky(L, k, m) == 0:
                    ok = int(0)  # noqa: UP018 (a mutable Warp variable)
                else:
                    cholesky_solve(L, k, m, y)
                    for c in range(n):
                        s = F(0.0)
                        for a in range(m):
                            s += Jw[k, a, c] * y[k, a]
                        dq[k, c] = s
            else:
                for a in range(n):
                    s = F(0.0)
                    for r in range(m):
                        s += Jw[k, r, a] * ew[k, r]
                    dq[k, a] = s
                    for b in range(a + 1):
                        s2 = F(0.0)
                        for r in range(m):
                            s2 += Jw[k, r, a] * Jw[k, r, b]
                        L[k, a, b] = s2
                    L[k, a, a] = L[k, a, a] + lam
                for i in range(n):
                    if held[k, i] != 0:  # a zero column: a unit pivot keeps it definite
                        L[k, i, i] = F(1.0)
                if cholesky(L, k, n) == 0:
                    ok = int(0)  # noqa: UP018 (a mutable Warp variable)
                else:
                    cholesky_solve(L, k, n, dq)
            if ok == 0 or active_set == 0:
                going = int(0)  # noqa: UP018 (a mutable Warp variable)
            else:
                grew = int(0)  # noqa: UP018 (a mutable Warp variable)
                for i in range(n):
                    if held[k, i] == 0 and (
                        (q[k, i] <= lo[i] and dq[k, i] < F(0.0))
                        or (q[k, i] >= hi[i] and dq[k, i] > F(0.0))
                    ):
                        held[k, i] = 1
                        grew = int(1)  # noqa: UP018 (a mutable Warp variable)
                        for r in range(m):
                            Jw[k, r, i] = F(0.0)
                if grew == 0:
                    going = int(0)  # noqa: UP018 (a mutable Warp variable)
    if ok != 0 and active_set != 0:
        for i in range(n):
            if held[k, i] != 0:
                dq[k, i] = F(0.0)
    return ok


@wp.func
def move(
    k: int,
    n: int,
    q: wp.array2d(dtype=wp.float64),
    dq: wp.array2d(dtype=wp.float64),
    lo: wp.array(dtype=wp.float64),
    hi: wp.array(dtype=wp.float64),
    limit_mode: int,
):
    """The step cap and the limit handling of one iteration (as on the CPU)."""
    big = F(0.0)
    for i in range(n):
        big = wp.max(big, wp.abs(dq[k, i]))
    if big > MAX_STEP:
        for i in range(n):
            dq[k, i] = dq[k, i] * (MAX_STEP / big)
    if limit_mode == LIMITS_CLAMP_STEP:
        scale = F(1.0)
        for i in range(n):
            nq = q[k, i] + dq[k, i]
            if nq > hi[i] and dq[k, i] > F(0.0):
                scale = wp.min(scale, (hi[i] - q[k, i]) / dq[k, i])
            elif nq < lo[i] and dq[k, i] < F(0.0):
                scale = wp.min(scale, (lo[i] - q[k, i]) / dq[k, i])
        scale = wp.max(scale, F(0.0))
        for i in range(n):
            q[k, i] = _clip(q[k, i] + scale * dq[k, i], lo[i], hi[i])
    elif limit_mode == LIMITS_PROJECT:
        for i in range(n):
            q[k, i] = _clip(q[k, i] + dq[k, i], lo[i], hi[i])
    else:
        for i in range(n):
            q[k, i] = q[k, i] + dq[k, i]


@wp.func
def evaluate(k: int, n: int, ch: Chain, Tt: wp.mat44d, wk: Work):
    """FK, the Jacobian into ``wk.J`` and the pose error into ``wk.e`` at ``wk.q[k]``."""
    Re, pe = jac_into(wk.q, k, n, ch.Rs, ch.ps, ch.kinds, ch.R_end, ch.p_end, wk.J)
    pose_error(Tt, Re, pe, wk.e, k)


@wp.kernel
def lm_kernel(
    T: wp.array(dtype=wp.mat44d),
    Q0: wp.array2d(dtype=wp.float64),
    ch: Chain,
    st: Settings,
    key: wp.int64,
    con: Constraints,
    wk: Work,
    found: Found,
):
    """``_solve_one`` of target ``k`` (no time budget): code, iterations, restarts, q."""
    lo = st.lo
    hi = st.hi
    slo = st.slo
    shi = st.shi
    w = st.w
    tol_p = st.tol_p
    tol_r = st.tol_r
    step_kind = st.step_kind
    damping = st.damping
    limit_mode = st.limit_mode
    max_iter = st.max_iter
    max_restarts = st.max_restarts
    q = wk.q
    J = wk.J
    e = wk.e
    held = wk.held
    q_out = found.q
    kinds = ch.kinds
    k = wp.tid()
    n = lo.shape[0]
    Tt = T[k]
    for i in range(n):
        held[k, i] = 0
        if limit_mode != LIMITS_IGNORE:
            q[k, i] = _clip(Q0[k, i], lo[i], hi[i])
        else:
            q[k, i] = Q0[k, i]
    best_E = INF
    any_singular = int(0)  # noqa: UP018 (a mutable Warp variable)
    best_pinned = int(0)  # noqa: UP018 (a mutable Warp variable)
    best_limits = int(0)  # noqa: UP018 (a mutable Warp variable)
    any_violated = int(0)  # noqa: UP018 (a mutable Warp variable)
    iterations = int(0)  # noqa: UP018 (a mutable Warp variable)
    restarts = int(0)  # noqa: UP018 (a mutable Warp variable)
    state = wp.uint64(target_key(key, Tt))
    solved = int(0)  # noqa: UP018 (a mutable Warp variable)
    for search in range(max_restarts + 1):
        if solved == 0:
            if search > 0:
                restarts += 1
                for i in range(n):
                    state, u = uniform(state)
                    q[k, i] = slo[i] + (shi[i] - slo[i]) * u
            singular = int(0)  # noqa: UP018 (a mutable Warp variable)
            out_of_limits = int(0)  # noqa: UP018 (a mutable Warp variable)
            violated = int(0)  # noqa: UP018 (a mutable Warp variable)
            E_prev = INF
            stall = int(0)  # noqa: UP018 (a mutable Warp variable)
            running = int(1)  # noqa: UP018 (a mutable Warp variable)
            for it in range(max_iter + 1):
                if running != 0:
                    evaluate(k, n, ch, Tt, wk)
                    E = F(0.0)
                    for r in range(6):
                        E += w[r] * e[k, r] * e[k, r]
                    E = F(0.5) * E
                    if not wp.isfinite(E):
                        singular = int(1)  # noqa: UP018 (a mutable Warp variable)
                        running = int(0)  # noqa: UP018 (a mutable Warp variable)
                    else:
                        ep = F(0.0)
                        er = F(0.0)
                        for r in range(3):
                            if w[r] > F(0.0):
                                ep += e[k, r] * e[k, r]
                            if w[r + 3] > F(0.0):
                                er += e[k, r + 3] * e[k, r + 3]
                        ep = wp.sqrt(ep)
                        er = wp.sqrt(er)
                        if ep <= tol_p and er <= tol_r:
                            running = int(0)  # noqa: UP018 (a mutable Warp variable)
                            inside = int(1)  # noqa: UP018 (a mutable Warp variable)
                            if limit_mode == LIMITS_IGNORE:
                                for i in range(n):
                                    if q[k, i] < lo[i] or q[k, i] > hi[i]:
                                        if kinds[i] == 0:
                                            k2 = wp.rint(
                                                (F(0.5) * (slo[i] + shi[i]) - q[k, i])
                                                / (F(2.0) * PI)
                                            )
                                            q[k, i] = q[k, i] + k2 * F(2.0) * PI
                                        if q[k, i] < lo[i] or q[k, i] > hi[i]:
                                            inside = int(0)  # noqa: UP018 (a mutable Warp variable)
                            if inside == 0:
                                out_of_limits = int(1)  # noqa: UP018 (a mutable Warp variable)
                            elif constraints_row(q[k], con.qidx, con.qcoef, con.A, con.b) == 0:
                                violated = int(1)  # noqa: UP018 (a mutable Warp variable)
                            else:
                                for i in range(n):
                                    q_out[k, i] = q[k, i]
                                solved = int(1)  # noqa: UP018 (a mutable Warp variable)
                        else:
                            if E < best_E:
                                best_E = E
                                best_pinned = int(0)  # noqa: UP018 (a mutable Warp variable)
                                for i in range(n):
                                    q_out[k, i] = q[k, i]
                                    if limit_mode != LIMITS_IGNORE and (
                                        q[k, i] - lo[i] < AT_LIMIT or hi[i] - q[k, i] < AT_LIMIT
                                    ):
                                        best_pinned = int(1)  # noqa: UP018
                            if it == max_iter:
                                running = int(0)  # noqa: UP018 (a mutable Warp variable)
                            elif (
                                E > STALL_RATIO * E_prev
                                and E > STALL_FLOOR
                                and (stall + 1 >= STALL_STEPS)
                            ):
                                running = 0  # no progress: abandoned for a restart
                            else:
                                if E > STALL_RATIO * E_prev and E > STALL_FLOOR:
                                    stall += 1
                                else:
                                    stall = int(0)  # noqa: UP018 (a mutable Warp variable)
                                E_prev = E
                                iterations += 1
                                lam = damping * E
                                if step_kind == STEP_DLS:
                                    lam = damping * damping
                                elif step_kind == STEP_LM_SUGIHARA:
                                    lam = E + damping
                                project = wp.where(limit_mode == LIMITS_PROJECT, 1, 0)
                                if step(k, n, lam, project, st, wk) == 0:
                                    singular = int(1)  # noqa: UP018 (a mutable Warp variable)
                                    running = int(0)  # noqa: UP018 (a mutable Warp variable)
                                else:
                                    move(k, n, q, wk.dq, lo, hi, limit_mode)
            if out_of_limits != 0:
                best_limits = int(1)  # noqa: UP018 (a mutable Warp variable)
            if singular != 0:
                any_singular = int(1)  # noqa: UP018 (a mutable Warp variable)
            if violated != 0:
                any_violated = int(1)  # noqa: UP018 (a mutable Warp variable)
    code = CODE_SUCCESS
    if solved == 0:
        # the best iterate's Jacobian tells a singular failure from a plain iteration cap
        singular_best = int(0)  # noqa: UP018 (a mutable Warp variable)
        if (
            best_E < INF
            and any_violated == 0
            and best_limits == 0
            and best_pinned == 0
            and (any_singular == 0)
        ):
            for i in range(n):
                q[k, i] = q_out[k, i]
            evaluate(k, n, ch, Tt, wk)
            singular_best = is_singular(J, w, k, n, wk.Jw, wk.G, wk.L)
        for i in range(n):
            x = q_out[k, i]
            if not wp.isfinite(x) or best_E == INF:
                x = Q0[k, i]
            q_out[k, i] = _clip(x, lo[i], hi[i])
        code = CODE_ITERATION_LIMIT
        if any_violated != 0:
            code = CODE_CONSTRAINT
        elif best_limits != 0 or best_pinned != 0:
            code = CODE_JOINT_LIMITS
        elif any_singular != 0 or singular_best != 0:
            code = CODE_SINGULAR
    found.codes[k] = code
    found.iters[k] = iterations
    found.restarts[k] = restarts
