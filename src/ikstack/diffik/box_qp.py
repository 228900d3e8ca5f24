r"""BoxQPSolver: ikstack's own primal active-set method for the per-cycle box QP.

.. math::
    \min_{dq} \tfrac12 \|J\,dq - t\|^2 + \tfrac12 \lambda^2 \|dq - p\|^2
    \quad \text{s.t.} \quad l \le dq \le u

i.e. ``min 1/2 x^T H x + g^T x`` with ``H = J^T J + lambda^2 I`` and
``g = -(J^T t + lambda^2 p)``. Positive damping makes ``H`` positive definite and the problem
strictly convex, so the primal active-set method (Nocedal and Wright, Algorithm 16.3) ends in
finitely many steps: each iteration solves the equality problem on the free joints by Cholesky,
then either steps to the first blocking bound (adding it to the working set) or, at the
equality solution, drops the bound with the most negative multiplier. It stops when every
multiplier is non-negative, which with primal feasibility is the KKT certificate. Past
``max_iterations`` it reports failure; it never hands back an unchecked iterate.

Only box constraints are supported (no general inequality rows): ``supports_inequalities`` is
False.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit
from numpy.typing import NDArray

from ikstack._deprecated import warn_deprecated
from ikstack._records import F, I, Record
from ikstack.diffik._linalg import normal_matrices
from ikstack.diffik.solver import Array, DifferentialIK, DiffIKRequest, DiffIKResult, check_request
from ikstack.errors import InputError
from ikstack.spatial._dense import cholesky_inplace, cholesky_solve_inplace

# outcome codes of the kernel
CONVERGED = 0
ITERATION_LIMIT = 1
NOT_CONVEX = 2
INFEASIBLE = 3
INACCURATE = 4

MESSAGES = {
    CONVERGED: "ok",
    ITERATION_LIMIT: "active-set iteration cap reached before the KKT conditions held",
    NOT_CONVEX: "H = J^T J + lambda^2 I is not positive definite; use damping > 0",
    INFEASIBLE: "the box is empty (some lower bound exceeds its upper bound)",
    INACCURATE: "the final iterate failed the KKT stationarity check",
}


#: the box QP ``min 1/2 x^T H x + g^T x, lower <= x <= upper`` (``lower``/``upper`` may be
#: infinite), as :func:`box_qp_kernel_into` takes it
BOX_QP = Record(
    "BoxQP",
    __name__,
    [("H", F, ("n", "n")), ("g", F, ("n",)), ("lower", F, ("n",)), ("upper", F, ("n",))],
)
BoxQP = BOX_QP.type

#: the active-set loop's scratch: the free joints' Cholesky factor ``L`` and right-hand side
#: ``rhs``, their indices ``idx`` and the equality problem's solution ``y``
BOX_QP_SCRATCH = Record(
    "BoxQPScratch",
    __name__,
    [("L", F, ("n", "n")), ("rhs", F, ("n",)), ("idx", I, ("n",)), ("y", F, ("n",))],
)
BoxQPScratch = BOX_QP_SCRATCH.type


@njit(cache=True)
def _solve_free(H, g, x, state, L, rhs, idx, y):  # pragma: no cover - compiled
    """Minimize over the free joints with the others fixed; writes ``y`` (free entries).

    Takes the records' fields, not the records: it runs once per active-set iteration, and
    reading a record's fields in a compiled callee costs a reference count each (about 3% of a
    7-joint solve)."""
    n = H.shape[0]
    nf = int(0)  # noqa: UP018 - int64, not the literal 0: a callee compiles once
    for i in range(n):
        if state[i] == 0:
            idx[nf] = i
            nf += 1
    for a in range(nf):
        i = idx[a]
        s = -g[i]
        for j in range(n):
            if state[j] != 0:
                s -= H[i, j] * x[j]
        rhs[a] = s
        for b in range(a + 1):
            L[a, b] = H[i, idx[b]]
    if nf > 0:
        if not cholesky_inplace(L, nf):
            return -1
        cholesky_solve_inplace(L, nf, rhs)
    for i in range(n):
        y[i] = x[i]
    for a in range(nf):
        y[idx[a]] = rhs[a]
    return nf


@njit(cache=True)
def box_qp_kernel(H, g, lower, upper, x, state, max_iter, tol):  # pragma: no cover - compiled
    """Primal active set on ``min 1/2 x^T H x + g^T x, lower <= x <= upper``.

    ``state[i]`` ends as 0 (free), -1 (at lower), +1 (at upper) or 2 (fixed, lower == upper).
    Returns ``(code, iterations)``; ``x`` holds the solution when ``code == CONVERGED`` and
    zeros otherwise.
    """
    n = H.shape[0]
    scr = BoxQPScratch(np.empty((n, n)), np.empty(n), np.empty(n, dtype=np.int64), np.empty(n))
    return box_qp_kernel_into(BoxQP(H, g, lower, upper), x, state, max_iter, tol, scr)


@njit(cache=True)
def box_qp_kernel_into(qp, x, state, max_iter, tol, scr):  # pragma: no cover - compiled
    """:func:`box_qp_kernel` on the :data:`BOX_QP` record ``qp`` with caller-provided scratch
    ``scr`` (:data:`BOX_QP_SCRATCH`)."""
    H, g, lower, upper = qp.H, qp.g, qp.lower, qp.upper
    L, rhs, idx, y = scr.L, scr.rhs, scr.idx, scr.y
    n = H.shape[0]
    for i in range(n):
        if lower[i] > upper[i] or np.isnan(lower[i]) or np.isnan(upper[i]):
            x[:] = 0.0
            return INFEASIBLE, 0
        state[i] = 2 if lower[i] == upper[i] else 0
        x[i] = lower[i] if state[i] == 2 else 0.0
    # start from the clipped unconstrained minimizer
    if _solve_free(H, g, x, state, L, rhs, idx, y) < 0:
        x[:] = 0.0
        return NOT_CONVEX, 0
    clipped = False
    for i in range(n):
        if state[i] == 0:
            if y[i] <= lower[i]:
                x[i] = lower[i]
                state[i] = -1
                clipped = True
            elif y[i] >= upper[i]:
                x[i] = upper[i]
                state[i] = 1
                clipped = True
            else:
                x[i] = y[i]
    it = 0
    # with nothing clipped, the first iteration's equality problem is the one just solved
    # (same working set, same fixed values), so its solution y is reused as is
    fresh = not clipped
    while it < max_iter:
        it += 1
        if fresh:
            fresh = False
        elif _solve_free(H, g, x, state, L, rhs, idx, y) < 0:
            x[:] = 0.0
            return NOT_CONVEX, it
        alpha = 1.0
        block = -1
        for i in range(n):
            if state[i] != 0:
                continue
            d = y[i] - x[i]
            if y[i] < lower[i] and d < 0.0:
                a = (lower[i] - x[i]) / d
                if a < alpha:
                    alpha = a
                    block = i
            elif y[i] > upper[i] and d > 0.0:
                a = (upper[i] - x[i]) / d
                if a < alpha:
                    alpha = a
                    block = i
        if block >= 0:
            if alpha < 0.0:
                alpha = 0.0
            for i in range(n):
                if state[i] == 0:
                    x[i] += alpha * (y[i] - x[i])
            if y[block] < lower[block]:
                x[block] = lower[block]
                state[block] = -1
            else:
                x[block] = upper[block]
                state[block] = 1
            continue
        for i in range(n):
            if state[i] == 0:
                x[i] = y[i]
        # multipliers of the working set: grad_i >= 0 at a lower bound, <= 0 at an upper one
        worst = -tol
        drop = -1
        gmax = 0.0
        for i in range(n):
            gr = g[i]
            for j in range(n):
                gr += H[i, j] * x[j]
            if state[i] == -1:
                mu = gr
            elif state[i] == 1:
                mu = -gr
            else:
                if state[i] == 0 and abs(gr) > gmax:
                    gmax = abs(gr)
                continue
            if mu < worst:
                worst = mu
                drop = i
        if drop >= 0:
            state[drop] = 0
            continue
        # certificate: feasibility holds by construction; check stationarity of free joints
        scale = 1.0
        hmax = 0.0
        xmax = 0.0
        for i in range(n):
            if abs(g[i]) > scale:
                scale = abs(g[i])
            if abs(x[i]) > xmax:
                xmax = abs(x[i])
            for j in range(n):
                if abs(H[i, j]) > hmax:
                    hmax = abs(H[i, j])
        if hmax * xmax > scale:
            scale = hmax * xmax
        if gmax > 1e3 * tol * scale:
            x[:] = 0.0
            return INACCURATE, it
        return CONVERGED, it
    x[:] = 0.0
    return ITERATION_LIMIT, it


@njit(cache=True)
def box_qp_from_task(
    J, task, preferred, damping, lower, upper, x, state, max_iter, tol
):  # pragma: no cover - compiled
    """Build ``H, g`` from the task terms and solve; returns ``(code, iterations)``."""
    n = J.shape[1]
    H = np.empty((n, n))
    g = np.empty(n)
    normal_matrices(J, task, preferred, damping, H, g)
    return box_qp_kernel(H, g, lower, upper, x, state, max_iter, tol)


@njit(cache=True)
def _box_qp_from_task_into(
    J, task, preferred, damping, lower, upper, x, state, max_iter, tol, H, g, L, rhs, idx, y
):  # pragma: no cover - compiled
    """:func:`box_qp_from_task` with caller-provided scratch (``H``, ``L`` (n, n); ``g``,
    ``rhs``, ``idx`` (int), ``y`` (n,)).

    Deprecated under its public name ``box_qp_from_task_into`` (nothing in ikstack calls it);
    it goes in the next release.
    """
    normal_matrices(J, task, preferred, damping, H, g)
    return box_qp_kernel_into(
        BoxQP(H, g, lower, upper), x, state, max_iter, tol, BoxQPScratch(L, rhs, idx, y)
    )


def solve_box_qp(
    H: Array, g: Array, lower: Array, upper: Array, max_iterations: int = 100, tol: float = 1e-12
) -> tuple[Array, NDArray[np.int8], int, int]:
    """Solve ``min 1/2 x^T H x + g^T x`` s.t. ``lower <= x <= upper`` (the raw QP).

    Args:
        H: (n, n) symmetric positive definite.
        g: (n,).
        lower, upper: (n,) bounds (may be infinite).

    Returns:
        ``(x, state, code, iterations)``: ``state`` is -1/+1 at a lower/upper bound, 0 free,
        2 fixed; ``code`` is 0 on success (see ``MESSAGES``).
    """
    H = np.ascontiguousarray(H, dtype=np.float64)
    g = np.ascontiguousarray(g, dtype=np.float64)
    n = g.shape[0]
    if H.shape != (n, n):
        raise InputError(f"H has shape {H.shape}; expected ({n}, {n})")
    lo = np.ascontiguousarray(np.broadcast_to(lower, (n,)), dtype=np.float64)
    hi = np.ascontiguousarray(np.broadcast_to(upper, (n,)), dtype=np.float64)
    x = np.empty(n)
    state = np.empty(n, dtype=np.int8)
    code, it = box_qp_kernel(H, g, lo, hi, x, state, int(max_iterations), float(tol))
    return x, state, int(code), int(it)


class BoxQPSolver(DifferentialIK):
    """Own active-set solver of the damped task QP under per-joint velocity bounds.

    Args:
        max_iterations: active-set iterations before reporting failure (default 100).
        tolerance: multiplier tolerance of the optimality test.
    """

    supports_inequalities = False

    def __init__(self, max_iterations: int = 100, tolerance: float = 1e-12):
        if int(max_iterations) < 1:
            raise InputError(f"max_iterations must be >= 1; got {max_iterations}")
        if not (np.isfinite(tolerance) and tolerance > 0):
            raise InputError(f"tolerance must be finite and > 0; got {tolerance}")
        self.max_iterations = int(max_iterations)
        self.tolerance = float(tolerance)
        self._state = np.zeros(0, dtype=np.int8)

    def solve(self, request: DiffIKRequest) -> DiffIKResult:
        """Solve the request's box QP; ``active`` marks the bounds active at the solution."""
        if request.A_ineq is not None and np.size(request.A_ineq) > 0:
            return DiffIKResult(
                np.zeros(np.shape(request.q)[-1]),
                False,
                "BoxQPSolver supports box bounds only, not inequality rows",
            )
        J, t, lo, hi, p = check_request(request)
        n = J.shape[1]
        x = np.empty(n)
        state = np.empty(n, dtype=np.int8)
        code, it = box_qp_from_task(
            J, t, p, float(request.damping), lo, hi, x, state, self.max_iterations, self.tolerance
        )
        if code != CONVERGED:
            return DiffIKResult(np.zeros(n), False, MESSAGES[int(code)], int(it), None)
        return DiffIKResult(x, True, "ok", int(it), state != 0)

    def solve_arrays(
        self,
        J: Array,
        task: Array,
        preferred: Array,
        damping: float,
        lower: Array,
        upper: Array,
        out: Array,
    ) -> tuple[bool, int]:
        """The allocation-light path the servo kernel calls: writes ``out``; (ok, iterations)."""
        n = out.shape[0]
        if self._state.shape[0] != n:
            self._state = np.empty(n, dtype=np.int8)
        code, it = box_qp_from_task(
            J,
            task,
            preferred,
            damping,
            lower,
            upper,
            out,
            self._state,
            self.max_iterations,
            self.tolerance,
        )
        return code == CONVERGED, int(it)


def __getattr__(name: str) -> Any:
    # deprecated names, kept one release
    if name == "box_qp_from_task_into":
        warn_deprecated(
            "ikstack.diffik.box_qp.box_qp_from_task_into is deprecated and goes in the next release"
        )
        return _box_qp_from_task_into
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
