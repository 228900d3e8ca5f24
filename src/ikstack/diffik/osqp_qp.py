"""``OsqpQPSolver``: the velocity QP on OSQP, with general linear inequality rows.

OSQP is set up once per solver with a fixed sparsity pattern (the upper triangle of ``P``
dense; ``A`` = the identity for the velocity boxes stacked over the coupled-joint rows on their
joints) and updated in place every step. Polishing is off and warm starting on within a chunk;
:meth:`~ikstack.diffik.qp_step.VelocityQPStepper.reset` zeroes both the primal and the dual
warm start at the start of each chunk. Statuses ``solved`` and ``solved inaccurate`` are
accepted (then clipped to the box and re-checked); anything else fails the step.
"""

from __future__ import annotations

import numpy as np
import osqp
import scipy.sparse as sp
from numpy.typing import NDArray

from ikstack.diffik._qp_workspace import INF, upper_pattern
from ikstack.diffik.qp_config import DiffQPConfig, QPData
from ikstack.diffik.qp_step import VelocityQPStepper
from ikstack.diffik.solver import DiffIKRequest, DiffIKResult, dense_qp
from ikstack.model import Chain

Array = NDArray[np.float64]

_ACCEPTED = (osqp.SolverStatus.OSQP_SOLVED, osqp.SolverStatus.OSQP_SOLVED_INACCURATE)


class OsqpQPSolver(VelocityQPStepper):
    """Seed 000's velocity QP for one arm, solved by OSQP.

    Use :meth:`step` for the seed's per-step API (flange target, duration, lag guard, reasons)
    and :meth:`solve` for the generic :class:`~ikstack.diffik.solver.DifferentialIK` request
    (``supports_inequalities = True``).

    Example:
        >>> from ikstack.robots import load
        >>> arm = load("marvin_left")
        >>> qp = OsqpQPSolver(arm)
        >>> q = np.radians([10, 20, 0, -60, 0, 20, 10])
        >>> T = arm.fk(q); T[2, 3] += 0.001
        >>> qp.reset(); r = qp.step(q, T, 0.004); r.reason.value
        'ok'
    """

    def __init__(self, chain: Chain, config: DiffQPConfig | None = None):
        super().__init__(chain, config)
        ws = self._ws
        self._Px, self._Ax, self._l, self._u = ws.v["Px"], ws.v["Ax"], ws.v["l"], ws.v["u"]
        self._pattern = (ws.P_pattern, ws.A_pattern)
        cfg = self.config
        # Scaling is off: OSQP computes it once at setup, from the placeholder pattern here, so
        # it would carry no information; with it on, results also came to depend (at 1e-13)
        # on earlier problems. A fixed adaptive-rho interval keeps rho updates off the clock.
        self._settings = dict(verbose=False, polishing=False, warm_starting=True, scaling=0,
                              eps_abs=cfg.eps_abs, eps_rel=cfg.eps_rel, max_iter=cfg.max_iter,
                              adaptive_rho_interval=25)
        self._m = self.dof + self.num_rows
        self._prob = self._fresh_problem()
        self._generic: dict[tuple[int, int, int],
                            tuple[osqp.OSQP, NDArray[np.int64], NDArray[np.int64]]] = {}

    def _fresh_problem(self) -> osqp.OSQP:
        Pm, Am = self._pattern
        prob = osqp.OSQP()
        prob.setup(Pm, np.zeros(self.dof), Am, np.full(self._m, -INF), np.full(self._m, INF),
                   **self._settings)
        return prob

    def _reset_solver(self) -> None:
        # Zero the primal and dual warm start. OSQP also adapts its step size rho across
        # solves, so a fresh setup (same pattern) is what makes a chunk independent of every
        # earlier one, bit for bit.
        self._prob = self._fresh_problem()
        self._prob.warm_start(x=np.zeros(self.dof), y=np.zeros(self._m))

    def _solve(self, data: QPData) -> tuple[Array | None, str, int]:
        # the workspace already holds this step's data in OSQP's fixed pattern
        if self.num_rows:
            self._prob.update(q=data.c, l=self._l, u=self._u, Px=self._Px, Ax=self._Ax)
        else:
            self._prob.update(q=data.c, l=self._l, u=self._u, Px=self._Px)
        res = self._prob.solve(raise_error=False)
        info = res.info
        status = str(info.status)
        if info.status_val not in _ACCEPTED:
            return None, status, int(info.iter)
        return res.x, status, int(info.iter)

    # ------------------------------------------------------------------ generic interface
    def solve(self, request: DiffIKRequest) -> DiffIKResult:
        """Solve a generic velocity request with OSQP (rows ``A_ineq dq <= b_ineq`` honoured).

        Minimizes ``1/2 ||J dq - task||^2 + 1/2 damping^2 ||dq - preferred||^2`` subject to the
        request's box and rows. Failures come back as ``success=False`` with zeros.
        """
        n = self.dof
        qp = dense_qp(request, n)
        if qp.empty_box:
            return DiffIKResult(np.zeros(n), False, "empty velocity box")
        P, c, lo, hi, A, b = qp.P, qp.c, qp.lower, qp.upper, qp.A, qp.b
        key = (n, A.shape[0], 0)
        if key not in self._generic:
            Pm, pr, pc = upper_pattern(n)
            Am = sp.csc_matrix(np.vstack([np.eye(n), np.ones((A.shape[0], n))]))
            prob = osqp.OSQP()
            prob.setup(Pm, np.zeros(n), Am, np.full(n + A.shape[0], -INF),
                       np.full(n + A.shape[0], INF), **self._settings)
            self._generic[key] = (prob, pr, pc)
        prob, pr, pc = self._generic[key]
        Ad = np.vstack([np.eye(n), A])
        Ax = Ad.T[np.abs(np.vstack([np.eye(n), np.ones((A.shape[0], n))]).T) > 0]
        l = np.concatenate([np.clip(lo, -INF, INF), np.full(A.shape[0], -INF)])
        u = np.concatenate([np.clip(hi, -INF, INF), np.clip(b, -INF, INF)])
        prob.update(q=c, l=l, u=u, Px=P[pr, pc], Ax=Ax)
        res = prob.solve(raise_error=False)
        if res.info.status_val not in _ACCEPTED or not np.all(np.isfinite(res.x)):
            return DiffIKResult(np.zeros(n), False, f"OSQP: {res.info.status}", int(res.info.iter))
        dq = np.clip(np.asarray(res.x, dtype=np.float64), lo, hi)
        return DiffIKResult(dq, True, "ok", int(res.info.iter))
