r"""A dense dual active-set QP solver (Goldfarb-Idnani) for small strictly convex problems, and
``ActiveSetQPSolver``: the published port's velocity QP on it instead of OSQP.

Problem: :math:`\min_x \tfrac12 x^T P x + c^T x` subject to ``lower <= x <= upper`` and
``G x <= h``, with ``P`` positive definite. The dual method starts from the unconstrained
minimum and adds the most violated constraint until none is violated, keeping the dual
multipliers non-negative (dropping a constraint when its multiplier would turn negative). Each
iteration recomputes its projection operators from the active rows (at most ``n``), which for
the 7-variable arm QP is cheaper and simpler than updating factorizations. The solution is exact
to round-off (no ADMM tolerance); a problem whose rows cannot all hold is reported infeasible.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

from ikstack.diffik.qp_config import DiffQPConfig, QPData
from ikstack.diffik.qp_step import VelocityQPStepper
from ikstack.diffik.solver import DiffIKRequest, DiffIKResult, dense_qp
from ikstack.model import Chain
from ikstack.spatial._dense import cholesky_inplace

Array = NDArray[np.float64]

SOLVED = 0
INFEASIBLE = 1
MAX_ITER = 2
NOT_CONVEX = 3
STATUS_TEXT = {
    SOLVED: "solved",
    INFEASIBLE: "primal infeasible",
    MAX_ITER: "maximum iterations",
    NOT_CONVEX: "P is not positive definite",
}


@njit(cache=True)
def solve_dense_qp(P, c, lower, upper, G, h, x, max_iter):  # pragma: no cover - compiled
    """Solve the QP into ``x``; return ``(status, iterations)``. Infinite bounds are ignored.

    ``P`` is factored by :func:`ikstack.spatial._dense.cholesky_inplace` (its lower triangle
    read) and the status is ``NOT_CONVEX`` when that fails: a pivot not above ``1e-300``,
    NaN included, so a NaN in ``P`` is never solved.
    """
    n = P.shape[0]
    k = G.shape[0]
    m = 2 * n + k
    # constraints as C_i x >= d_i
    C = np.zeros((m, n))
    d = np.zeros(m)
    use = np.zeros(m, dtype=np.bool_)
    for i in range(n):
        C[i, i] = 1.0
        d[i] = lower[i]
        use[i] = np.isfinite(lower[i])
        C[n + i, i] = -1.0
        d[n + i] = -upper[i]
        use[n + i] = np.isfinite(upper[i])
    for g in range(k):
        for j in range(n):
            C[2 * n + g, j] = -G[g, j]
        d[2 * n + g] = -h[g]
        use[2 * n + g] = np.isfinite(h[g])
    # H = P^-1 through the Cholesky factor of P's lower triangle (its upper one stays zero)
    L = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1):
            L[i, j] = P[i, j]
    if not cholesky_inplace(L, n):
        return NOT_CONVEX, 0
    Linv = np.linalg.inv(L)
    H = Linv.T @ Linv
    for i in range(n):
        acc = 0.0
        for j in range(n):
            acc -= H[i, j] * c[j]
        x[i] = acc
    act = np.empty(n, dtype=np.int64)
    u = np.zeros(n + 1)
    nact = 0
    it = 0
    while it < max_iter:
        it += 1
        # most violated constraint
        p = -1
        worst = 0.0
        for i in range(m):
            if not use[i]:
                continue
            sv = -d[i]
            for j in range(n):
                sv += C[i, j] * x[j]
            tol = 1e-10 * (1.0 + abs(d[i]))
            if sv < -tol and sv < worst:
                isact = False
                for a in range(nact):
                    if act[a] == i:
                        isact = True
                if not isact:
                    worst = sv
                    p = i
        if p < 0:
            return SOLVED, it
        np_ = C[p]
        up = 0.0  # multiplier of p
        while True:
            it += 1
            if it > max_iter:
                return MAX_ITER, it
            Hn = H @ np_
            r = np.zeros(nact)
            z = Hn.copy()
            if nact > 0:
                N = np.empty((nact, n))
                for a in range(nact):
                    N[a] = C[act[a]]
                M = N @ H @ N.T
                r = np.linalg.solve(M, N @ Hn)
                z = Hn - H @ (N.T @ r)
            # partial step (dual) length
            t1 = np.inf
            ell = -1
            for a in range(nact):
                if r[a] > 1e-14 and u[a] / r[a] < t1:
                    t1 = u[a] / r[a]
                    ell = a
            zn = 0.0
            znorm = 0.0
            for j in range(n):
                zn += z[j] * np_[j]
                znorm += z[j] * z[j]
            sp_ = -d[p]
            for j in range(n):
                sp_ += np_[j] * x[j]
            if znorm <= 1e-24 or zn <= 1e-20:
                t2 = np.inf
            else:
                t2 = -sp_ / zn
            t = min(t1, t2)
            if t == np.inf:
                return INFEASIBLE, it
            for a in range(nact):
                u[a] -= t * r[a]
            up += t
            if t2 != np.inf:
                for j in range(n):
                    x[j] += t * z[j]
            if t == t2:
                act[nact] = p
                u[nact] = up
                nact += 1
                break
            # drop constraint ell
            for a in range(ell, nact - 1):
                act[a] = act[a + 1]
                u[a] = u[a + 1]
            nact -= 1
    return MAX_ITER, it


class ActiveSetQPSolver(VelocityQPStepper):
    """The published Tianji port's velocity QP for one arm, solved by ikstack's dense dual
    active-set method.

    The same problem as :class:`~ikstack.diffik.osqp_qp.OsqpQPSolver` (``qp_solver:
    active_set``): exact to round-off and without solver state, so the per-chunk reset only
    drops cached kinematics.
    """

    def __init__(self, chain: Chain, config: DiffQPConfig | None = None, max_iter: int = 200):
        super().__init__(chain, config)
        self.max_iter = int(max_iter)
        self._x = np.zeros(self.dof)

    def _reset_solver(self) -> None:
        self._x[:] = 0.0

    def _solve(self, data: QPData) -> tuple[Array | None, str, int]:
        status, iters = solve_dense_qp(
            data.P, data.c, data.lower, data.upper, data.G, data.h, self._x, self.max_iter
        )
        if status != SOLVED:
            return None, STATUS_TEXT[status], int(iters)
        return self._x.copy(), STATUS_TEXT[status], int(iters)

    def solve(self, request: DiffIKRequest) -> DiffIKResult:
        """Solve a generic velocity request (rows ``A_ineq dq <= b_ineq`` honoured)."""
        n = self.dof
        qp = dense_qp(request, n)
        if qp.empty_box:
            return DiffIKResult(np.zeros(n), False, "empty velocity box")
        x = np.zeros(n)
        status, iters = solve_dense_qp(qp.P, qp.c, qp.lower, qp.upper, qp.A, qp.b, x, self.max_iter)
        if status != SOLVED or not np.all(np.isfinite(x)):
            return DiffIKResult(np.zeros(n), False, STATUS_TEXT[status], int(iters))
        return DiffIKResult(np.clip(x, qp.lower, qp.upper), True, "ok", int(iters))
