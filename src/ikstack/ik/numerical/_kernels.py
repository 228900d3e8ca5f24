"""Compiled numerical-IK loops (numba ``njit(cache=True)``).

One target's whole solve (iterations, restarts, time budget, failure reason) is one scalar
function, :func:`_solve_one`; :func:`solve_batch` loops it over targets (without the GIL: the
solver runs it on blocks of targets from several threads, :func:`ikstack.ik._blocks.run_blocks`).
FK and the Jacobian come from the kinematics layer's kernel ``_jac_into`` on the chain's
canonical compiled data.

Restarts draw from a splitmix64 stream seeded per target from the call's key and the target's
pose, so a target's restarts depend neither on the thread that ran it nor on the rest of the
batch. Scratch arrays are allocated once per call (per block of targets in parallel), never per
target or per iteration.

The Warp backend's search is generated from this source (:func:`_solve_one` and the steps it
calls, and the per-target restart seed :func:`_target_key`, by
``python -m ikstack.backends.warp._translate``; splitmix64 is :mod:`._splitmix`'s, generated
too); only the clock (:func:`_now`) is the device's own there (a hook: no time budget on the
device), so the move, stall rule and failure codes stay inline here, where the compiled loop
is a hot path.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit, objmode

from ikstack._records import B, F, I, Record
from ikstack.ik._data import CHAIN, CONSTRAINTS  # noqa: F401 (_solve_one's records, read by the translator)
from ikstack.ik._gate import constraints_row
from ikstack.ik.numerical._splitmix import uniform
from ikstack.ik.result import IKStatus
from ikstack.kinematics._kernels import _jac_into
from ikstack.spatial._dense import cap_step_inplace, cholesky_inplace, cholesky_solve_inplace
from ikstack.spatial._tuple_math import rel_rotation, rotation_vector

# step kinds
STEP_DLS = 0  #: fixed damping: (J^T W J + d^2 I) dq = J^T W e
STEP_LM_SUGIHARA = 1  #: lambda = E + w_n
STEP_LM_CHAN = 2  #: lambda = k E

# limit handling
LIMITS_PROJECT = 0  #: joints at a bound held there (active set), every iterate projected
LIMITS_CLAMP_STEP = 1  #: the whole step scaled down so the iterate stays in the box
LIMITS_IGNORE = 2  #: unconstrained iterations; limits only checked at the end

# kernel outcome codes: the IKStatus values, as plain ints for the compiled code (and the
# Warp backend's constants, read from here)
CODE_SUCCESS = int(IKStatus.SUCCESS)
CODE_ITERATION_LIMIT = int(IKStatus.ITERATION_LIMIT)
CODE_TIME_LIMIT = int(IKStatus.TIME_LIMIT)
CODE_JOINT_LIMITS = int(IKStatus.JOINT_LIMITS)
CODE_SINGULAR = int(IKStatus.SINGULAR)
CODE_CONSTRAINT = int(IKStatus.CONSTRAINT)

#: targets per block a thread takes (the batch solve on several threads)
BLOCK = 16

_AT_LIMIT = 1e-9  # [rad or m] a joint this close to a bound counts as pinned there
_SINGULAR_RATIO = 1e-7  # smallest/largest Cholesky pivot of the task Gram matrix: singular below
_MAX_STEP = 1.0  # [rad or m] largest joint move of one step (a trust region against wild steps)
_STALL_RATIO = 0.7  # an iteration keeping more than this share of the cost made too little progress
_STALL_STEPS = 2  # this many such iterations in a row end a search (restart sooner, not later)
_STALL_FLOOR = 1e-8  # below this cost (|e| ~ 1.4e-4) a slow search is close: let it finish

#: a solver's search settings, as :func:`solve_batch` reads them
SETTINGS = Record(
    "LMSettings",
    __name__,
    [
        ("lo", F, ("dof",)),  # the limits the iterates keep to (margin applied)
        ("hi", F, ("dof",)),
        ("slo", F, ("dof",)),  # the box restarts draw from (finite)
        ("shi", F, ("dof",)),
        ("w", F, (6,)),  # task weights times the axis mask
        ("tol_p", F, ()),  # [m]
        ("tol_r", F, ()),  # [rad]
        ("damping", F, ()),  # the step's parameter (see the step kinds)
        ("budget", F, ()),  # [s] per target, inf for none
        ("step_kind", I, ()),
        ("limit_mode", I, ()),
        ("max_iter", I, ()),
        ("max_restarts", I, ()),
    ],
)
LMSettings = SETTINGS.type


#: :func:`_solve_one`'s scratch (:func:`workspace`); the Warp backend holds one row a target
#: of each field (its struct made from this definition)
SCRATCH = Record(
    "Scratch",
    __name__,
    [
        ("J", F, (6, "dof")),  # Jacobian
        ("T", F, (4, 4)),  # pose
        ("e", F, (6,)),  # pose error
        ("dq", F, ("dof",)),  # step
        ("L", F, ("k", "k")),  # Cholesky factor, k = max(dof, 6)
        ("q", F, ("dof",)),  # iterate
        ("held", B, ("dof",)),  # joints the active set holds
        ("Jw", F, (6, "dof")),  # weighted Jacobian rows
        ("ew", F, (6,)),  # weighted error rows
        ("y", F, (6,)),  # task-space solution
        ("sw", F, (6,)),  # square roots of the weights
        ("G", F, (6, 6)),  # the singularity test's Gram matrix
    ],
)
Scratch = SCRATCH.type


@njit(cache=True)
def _now():  # pragma: no cover - compiled
    with objmode(t="float64"):
        t = time.perf_counter()
    return t


@njit(cache=True)
def rigid_ok(T, atol):  # pragma: no cover - compiled
    """Fast accept of (N, 4, 4) rigid transforms (finite, last row 0 0 0 1, R^T R = I, det +1);
    False sends the caller to the full check, which names what is wrong."""
    for k in range(T.shape[0]):
        for r in range(4):
            for c in range(4):
                if not np.isfinite(T[k, r, c]):
                    return False
        if (
            abs(T[k, 3, 0]) > atol
            or abs(T[k, 3, 1]) > atol
            or abs(T[k, 3, 2]) > atol
            or abs(T[k, 3, 3] - 1.0) > atol
        ):
            return False
        for a in range(3):
            for b in range(3):
                s = T[k, 0, a] * T[k, 0, b] + T[k, 1, a] * T[k, 1, b] + T[k, 2, a] * T[k, 2, b]
                if abs(s - (1.0 if a == b else 0.0)) > atol:
                    return False
        det = (
            T[k, 0, 0] * (T[k, 1, 1] * T[k, 2, 2] - T[k, 1, 2] * T[k, 2, 1])
            - T[k, 0, 1] * (T[k, 1, 0] * T[k, 2, 2] - T[k, 1, 2] * T[k, 2, 0])
            + T[k, 0, 2] * (T[k, 1, 0] * T[k, 2, 1] - T[k, 1, 1] * T[k, 2, 0])
        )
        if det < 0.0:
            return False
    return True


@njit(cache=True)
def _target_key(key, Tt):  # pragma: no cover - compiled
    """A restart seed from the call's key and the target itself, so a target gets the same
    restarts wherever it sits in a batch (and a single query equals a batch of one)."""
    h = key % 2147483647
    for r in range(3):
        for c in range(4):
            h = (h * 1000003 + np.int64(np.floor(Tt[r, c] * 1e6)) % 2147483647) % 2147483647
    return h


@njit(cache=True, inline="always")
def _pose_error(Tt, T, e):  # pragma: no cover - compiled
    """``e = [p_t - p, rotvec(R_t R^T)]`` (base frame; ``R_t R^T`` by
    :func:`~ikstack.spatial._tuple_math.rel_rotation`, its rotation vector by
    :func:`~ikstack.spatial._tuple_math.rotation_vector`: accurate up to and at pi)."""
    for r in range(3):
        e[r] = Tt[r, 3] - T[r, 3]
    rx, ry, rz = rotation_vector(rel_rotation(Tt, T))
    e[3] = rx
    e[4] = ry
    e[5] = rz


@njit(cache=True, inline="always")
def _masked_norms(e, w):  # pragma: no cover - compiled
    ep = 0.0
    er = 0.0
    for r in range(3):
        if w[r] > 0.0:
            ep += e[r] * e[r]
        if w[r + 3] > 0.0:
            er += e[r + 3] * e[r + 3]
    return np.sqrt(ep), np.sqrt(er)


@njit(cache=True, inline="always")
def _cost(e, w):  # pragma: no cover - compiled
    E = 0.0
    for r in range(6):
        E += w[r] * e[r] * e[r]
    return 0.5 * E


@njit(cache=True)
def _is_singular(J, w, Jw, G, L):  # pragma: no cover - compiled
    """Whether the active rows of ``W^(1/2) J`` lose rank: the Cholesky factor of the smaller
    Gram matrix has a pivot below ``_SINGULAR_RATIO`` of the largest (or does not exist).
    ``Jw`` (6, n), ``G`` (6, 6) and ``L`` (at least 6 x 6) are scratch."""
    n = J.shape[1]
    rows = 0
    for r in range(6):
        if w[r] > 0.0:
            rows += 1
    if rows == 0:
        return False
    k = 0
    for r in range(6):
        if w[r] > 0.0:
            sw = np.sqrt(w[r])
            for c in range(n):
                Jw[k, c] = sw * J[r, c]
            k += 1
    m = min(rows, n)
    for a in range(m):
        for b in range(a + 1):
            s = 0.0
            if rows <= n:  # J J^T
                for c in range(n):
                    s += Jw[a, c] * Jw[b, c]
            else:  # J^T J
                for c in range(rows):
                    s += Jw[c, a] * Jw[c, b]
            G[a, b] = s
            G[b, a] = s
    lo_piv = np.inf
    hi_piv = 0.0
    for i in range(m):
        for j in range(i + 1):
            s = G[i, j]
            for t in range(j):
                s -= L[i, t] * L[j, t]
            if i == j:
                if not s > 0.0:
                    return True
                L[i, i] = np.sqrt(s)
                lo_piv = min(lo_piv, L[i, i])
                hi_piv = max(hi_piv, L[i, i])
            else:
                L[i, j] = s / L[j, j]
    return lo_piv < _SINGULAR_RATIO * hi_piv


@njit(cache=True)
def workspace(n):  # pragma: no cover - compiled
    """Scratch arrays of :func:`_solve_one` for a ``n``-joint chain (one set per thread).

    One allocation, then views: a single-target solve builds this on every call, so each view
    counts (a reshape calls a C helper: ``J`` and ``Jw`` share one reshape as the two halves of
    a (2, 6, n) block, and ``held`` is a bool view of the same buffer, not an allocation)."""
    k = max(n, 6)
    buf = np.empty(12 * n + 16 + 6 + n + k * k + n + 18 + 36 + n)
    o = 0
    JJ = buf[o : o + 12 * n].reshape((2, 6, n))
    o += 12 * n
    T = buf[o : o + 16].reshape((4, 4))
    o += 16
    e = buf[o : o + 6]
    o += 6
    dq = buf[o : o + n]
    o += n
    L = buf[o : o + k * k].reshape((k, k))
    o += k * k
    q = buf[o : o + n]
    o += n
    ew = buf[o : o + 6]
    y = buf[o + 6 : o + 12]
    sw = buf[o + 12 : o + 18]
    G = buf[o + 18 : o + 54].reshape((6, 6))
    o += 54
    held = buf[o : o + n].view(np.bool_)[:n]
    for i in range(n):
        held[i] = False
    return Scratch(JJ[0], T, e, dq, L, q, held, JJ[1], ew, y, sw, G)


@njit(cache=True, inline="always")
def _step(ws, lam, lo, hi, active_set):  # pragma: no cover - compiled
    """The damped step ``ws.dq`` of ``(J^T W J + lam I) dq = J^T W e`` at ``ws.q``; False when
    singular.

    With ``Jw = W^(1/2) J`` over the ``m`` weighted rows, a redundant chain (``m < n``) solves
    the same step in task space, ``dq = Jw^T (Jw Jw^T + lam I)^-1 W^(1/2) e`` (an ``m x m``
    system, well conditioned even as ``lam`` vanishes); otherwise the ``n x n`` normal equations.
    ``active_set``: a joint at a bound whose step points outwards is held there (its column
    dropped) and the rest re-solved, so the other joints make up for it.
    """
    J, e, sw, q, dq, L, held = ws.J, ws.e, ws.sw, ws.q, ws.dq, ws.L, ws.held
    Jw, ew, y = ws.Jw, ws.ew, ws.y
    n = J.shape[1]
    for i in range(n):
        held[i] = False
    m = int(0)  # noqa: UP018 - int64, not the literal 0: a callee compiles once
    for r in range(6):
        if sw[r] > 0.0:
            for c in range(n):
                Jw[m, c] = sw[r] * J[r, c]
            ew[m] = sw[r] * e[r]
            m += 1
    for _ in range(n + 1):
        if m < n:
            for a in range(m):
                for b in range(a + 1):
                    s = 0.0
                    for c in range(n):
                        s += Jw[a, c] * Jw[b, c]
                    L[a, b] = s
                L[a, a] += lam
                y[a] = ew[a]
            if not cholesky_inplace(L, m):
                return False
            cholesky_solve_inplace(L, m, y)
            for c in range(n):
                s = 0.0
                for a in range(m):
                    s += Jw[a, c] * y[a]
                dq[c] = s
        else:
            for a in range(n):
                s = 0.0
                for r in range(m):
                    s += Jw[r, a] * ew[r]
                dq[a] = s
                for b in range(a + 1):
                    s = 0.0
                    for r in range(m):
                        s += Jw[r, a] * Jw[r, b]
                    L[a, b] = s
                L[a, a] += lam
            for i in range(n):
                if held[i]:  # its column is zero: a unit pivot keeps the system definite
                    L[i, i] = 1.0
            if not cholesky_inplace(L, n):
                return False
            cholesky_solve_inplace(L, n, dq)
        if not active_set:
            return True
        grew = False
        for i in range(n):
            if not held[i] and ((q[i] <= lo[i] and dq[i] < 0.0) or (q[i] >= hi[i] and dq[i] > 0.0)):
                held[i] = True
                grew = True
                for r in range(m):
                    Jw[r, i] = 0.0
        if not grew:
            break
    for i in range(n):
        if held[i]:
            dq[i] = 0.0
    return True


@njit(cache=True, inline="always")  # callers pass literal flags when their branches prune
def _failure_code(violated, limits, singular):  # pragma: no cover - compiled
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


@njit(cache=True)
def _solve_one(Tt, q0, chain, cons, lm, key, ws, q_out):  # pragma: no cover - compiled
    """Solve one target; returns ``(code, iterations, restarts)`` and writes ``q_out``.

    ``chain`` is a :data:`ikstack.ik._data.CHAIN` record, ``lm`` a :data:`SETTINGS` record.
    ``q_out`` holds the converged vector, or the best (lowest cost) iterate of all searches.
    ``ws`` is :func:`workspace`'s scratch; ``key`` seeds the restarts' draws. A search that
    converges onto a configuration that violates a coupled-joint constraint (``cons``, a
    :data:`ikstack.ik._data.CONSTRAINTS` record, see :func:`ikstack.ik._gate.constraints_row`)
    counts as failed and the next restart follows.
    """
    n = q0.shape[0]
    Rs, ps, kinds, R_end, p_end = chain.Rs, chain.ps, chain.kinds, chain.R_end, chain.p_end
    lo, hi, slo, shi, w = lm.lo, lm.hi, lm.slo, lm.shi, lm.w
    tol_p, tol_r, damping, budget = lm.tol_p, lm.tol_r, lm.damping, lm.budget
    step_kind, limit_mode, max_iter = lm.step_kind, lm.limit_mode, lm.max_iter
    max_restarts = lm.max_restarts
    J, T, e, dq, q, sw = ws.J, ws.T, ws.e, ws.dq, ws.q, ws.sw
    for r in range(6):
        sw[r] = np.sqrt(w[r])
    for i in range(n):
        q[i] = min(max(q0[i], lo[i]), hi[i]) if limit_mode != LIMITS_IGNORE else q0[i]
        # a search may end before recording a best iterate: the answer is then the seed
        q_out[i] = min(max(q0[i], lo[i]), hi[i])
    best_E = np.inf
    any_singular = False
    best_pinned = False
    best_limits = False
    any_violated = False
    timed = budget < np.inf
    t0 = _now() if timed else 0.0
    iterations = 0
    restarts = 0
    state = np.uint64(key)
    for search in range(max_restarts + 1):
        if search > 0:
            if timed and _now() - t0 > budget:
                for i in range(n):
                    q_out[i] = min(max(q_out[i], lo[i]), hi[i])
                return CODE_TIME_LIMIT, iterations, restarts
            restarts += 1
            for i in range(n):
                state, u = uniform(state)
                q[i] = slo[i] + (shi[i] - slo[i]) * u
        singular = False
        out_of_limits = False
        violated = False
        E_prev = np.inf
        stall = 0
        for it in range(max_iter + 1):
            _jac_into(q, Rs, ps, kinds, R_end, p_end, J, T)
            _pose_error(Tt, T, e)
            E = _cost(e, w)
            if not np.isfinite(E):
                singular = True
                break
            ep, er = _masked_norms(e, w)
            if ep <= tol_p and er <= tol_r:
                inside = True
                if limit_mode == LIMITS_IGNORE:
                    for i in range(n):
                        # a revolute joint may be a full turn away from its limits' window
                        if q[i] < lo[i] or q[i] > hi[i]:
                            if kinds[i] == 0:
                                k2 = np.round((0.5 * (slo[i] + shi[i]) - q[i]) / (2 * np.pi))
                                q[i] += k2 * 2 * np.pi
                            if q[i] < lo[i] or q[i] > hi[i]:
                                inside = False
                if inside and constraints_row(q, cons.qidx, cons.qcoef, cons.A, cons.b) == 0:
                    violated = True
                    break
                if inside:
                    for i in range(n):
                        q_out[i] = q[i]
                    return CODE_SUCCESS, iterations, restarts
                out_of_limits = True
                break
            if E < best_E:
                best_E = E
                best_pinned = False
                for i in range(n):
                    q_out[i] = q[i]
                    if limit_mode != LIMITS_IGNORE and (
                        q[i] - lo[i] < _AT_LIMIT or hi[i] - q[i] < _AT_LIMIT
                    ):
                        best_pinned = True
            if it == max_iter:
                break
            # a search that stops making progress is abandoned for a restart
            if E > _STALL_RATIO * E_prev and E > _STALL_FLOOR:
                stall += 1
                if stall >= _STALL_STEPS:
                    break
            else:
                stall = 0
            E_prev = E
            iterations += 1
            # damping
            if step_kind == STEP_DLS:
                lam = damping * damping
            elif step_kind == STEP_LM_SUGIHARA:
                lam = E + damping
            else:
                lam = damping * E
            if not _step(ws, lam, lo, hi, limit_mode == LIMITS_PROJECT):
                singular = True
                break
            cap_step_inplace(dq, n, _MAX_STEP)
            if limit_mode == LIMITS_CLAMP_STEP:
                scale = 1.0
                for i in range(n):
                    nq = q[i] + dq[i]
                    if nq > hi[i] and dq[i] > 0.0:
                        scale = min(scale, (hi[i] - q[i]) / dq[i])
                    elif nq < lo[i] and dq[i] < 0.0:
                        scale = min(scale, (lo[i] - q[i]) / dq[i])
                scale = max(scale, 0.0)
                for i in range(n):
                    q[i] = min(max(q[i] + scale * dq[i], lo[i]), hi[i])
            elif limit_mode == LIMITS_PROJECT:
                for i in range(n):
                    q[i] = min(max(q[i] + dq[i], lo[i]), hi[i])
            else:
                for i in range(n):
                    q[i] += dq[i]
        if out_of_limits:
            best_limits = True
        if singular:
            any_singular = True
        if violated:
            any_violated = True
    # the best iterate's Jacobian tells a singular failure from a plain iteration cap
    singular_best = False
    if best_E < np.inf and not (any_violated or best_limits or best_pinned or any_singular):
        _jac_into(q_out, Rs, ps, kinds, R_end, p_end, J, T)
        singular_best = _is_singular(J, w, ws.Jw, ws.G, ws.L)
    for i in range(n):
        if not np.isfinite(q_out[i]):
            q_out[i] = q0[i]
        q_out[i] = min(max(q_out[i], lo[i]), hi[i])
    code = _failure_code(any_violated, best_limits or best_pinned, any_singular or singular_best)
    return code, iterations, restarts


@njit(cache=True, nogil=True, inline="always")
def solve_batch(
    Tt, Q0, chain, cons, lm, key, Q_out, codes, iters, restarts
):  # pragma: no cover - compiled
    """:func:`_solve_one` over every target, one workspace for all. Inlined into its compiled
    caller (the single-target call): a real call would pass every record field as an argument."""
    ws = workspace(Q0.shape[1])
    for k in range(Tt.shape[0]):
        c, it, rs = _solve_one(Tt[k], Q0[k], chain, cons, lm, _target_key(key, Tt[k]), ws, Q_out[k])
        codes[k] = c
        iters[k] = it
        restarts[k] = rs
