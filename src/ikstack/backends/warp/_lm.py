# mypy: ignore-errors
"""Warp float64 port of the CPU path's numerical-IK loop (:mod:`ikstack.ik.numerical._kernels`).

One thread a target runs :func:`_solve_one`'s searches operation by operation: the seeded
search, then random restarts drawn uniformly within the limits from the same per-target
splitmix64 stream (:func:`uniform`, seeded by :func:`target_key`), so a restart starts from
the same configuration as on the CPU. The damped step (fixed damping, Sugihara's or Chan's
adaptive damping; task space when fewer weighted rows than joints; the active set), the pose
error, cost, masked norms and the singularity test are generated from the CPU source
(``_gen_lm``: ``_step``, ``_pose_error``, ``_cost``, ``_masked_norms``, ``_is_singular``), as
is the in-loop coupled-joint constraint check (``_gen_gate``); here: the searches, the move
(step cap; limits by projection, step clamping or none: inline in the CPU loop, where an
inline function of its own measured 8-10% slower), the stall rule and the failure codes.
Per-target scratch is the CPU path's scratch record with a row a target
(:data:`ikstack.backends.warp._structs.SCRATCH_ROWS_T`; Warp threads have no dynamic local
arrays).
"""

from __future__ import annotations

import math

import warp as wp

from ikstack.backends.warp._gen_gate import constraints_row
from ikstack.backends.warp._gen_kinematics import _jac_into
from ikstack.backends.warp._gen_lm import (
    _cost,
    _damping_lambda,
    _failure_code,
    _is_singular,
    _masked_norms,
    _pose_error,
    _step,
)
from ikstack.backends.warp._lm_steps import INF, _clip, target_key, uniform
from ikstack.backends.warp._prims import F, mat44_of
from ikstack.backends.warp._structs import CHAIN_T, CONSTRAINTS_T, LM_T, SCRATCH_ROWS_T
from ikstack.ik.numerical import _kernels as K

Chain = CHAIN_T.type
Constraints = CONSTRAINTS_T.type
#: the search's settings (the CPU record's fields)
Settings = LM_T.type
#: the search's scratch, a row a target (the CPU record's fields)
Work = SCRATCH_ROWS_T.type

# the CPU module's step kinds, limit modes, stall rule and step cap, and the codes it reads
# from IKStatus (one source: the numbers are the CPU's)
LIMITS_PROJECT = wp.constant(K.LIMITS_PROJECT)
LIMITS_CLAMP_STEP = wp.constant(K.LIMITS_CLAMP_STEP)
LIMITS_IGNORE = wp.constant(K.LIMITS_IGNORE)
CODE_SUCCESS = wp.constant(K.CODE_SUCCESS)
AT_LIMIT = wp.constant(wp.float64(K._AT_LIMIT))
MAX_STEP = wp.constant(wp.float64(K._MAX_STEP))
STALL_RATIO = wp.constant(wp.float64(K._STALL_RATIO))
STALL_STEPS = wp.constant(K._STALL_STEPS)
STALL_FLOOR = wp.constant(wp.float64(K._STALL_FLOOR))
PI = wp.constant(wp.float64(math.pi))


@wp.struct
class Found:
    """What comes back, one a target: the answer, its code, iterations and restarts."""

    q: wp.array2d(dtype=wp.float64)
    codes: wp.array(dtype=wp.int32)
    iters: wp.array(dtype=wp.int32)
    restarts: wp.array(dtype=wp.int32)


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
    """FK into ``wk.T``, the Jacobian into ``wk.J`` and the pose error into ``wk.e`` at
    ``wk.q[k]`` (the generated ``_jac_into``, as the CPU search)."""
    _jac_into(wk.q[k], ch.Rs, ch.ps, ch.kinds, ch.R_end, ch.p_end, wk.J[k], wk.T[k])
    _pose_error(Tt, mat44_of(wk.T[k]), wk.e[k])


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
    for r in range(6):
        wk.sw[k, r] = wp.sqrt(w[r])
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
                    E = _cost(e[k], w)
                    if not wp.isfinite(E):
                        singular = int(1)  # noqa: UP018 (a mutable Warp variable)
                        running = int(0)  # noqa: UP018 (a mutable Warp variable)
                    else:
                        norms = _masked_norms(e[k], w)
                        ep = norms[0]
                        er = norms[1]
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
                                lam = _damping_lambda(step_kind, damping, E)
                                if not _step(wk, k, lam, lo, hi, limit_mode == LIMITS_PROJECT):
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
            if _is_singular(J[k], w, wk.Jw[k], wk.G[k], wk.L[k]):
                singular_best = int(1)  # noqa: UP018 (a mutable Warp variable)
        for i in range(n):
            x = q_out[k, i]
            if not wp.isfinite(x) or best_E == INF:
                x = Q0[k, i]
            q_out[k, i] = _clip(x, lo[i], hi[i])
        code = _failure_code(
            any_violated != 0,
            best_limits != 0 or best_pinned != 0,
            any_singular != 0 or singular_best != 0,
        )
    found.codes[k] = code
    found.iters[k] = iterations
    found.restarts[k] = restarts
