"""``OsqpQPSolver``: the published Tianji port's velocity QP on OSQP, driven as the port drives it.

OSQP runs with its own default settings except ``polishing=False`` and ``warm_starting=True``
(:meth:`~ikstack.diffik.qp_config.DiffQPConfig.osqp_settings`; tighter tolerances are an option).
The problem has a fixed sparsity pattern (the upper triangle of ``P`` dense; ``A`` = the identity
for the velocity boxes stacked over the coupled-joint rows on their joints). After each
:meth:`~ikstack.diffik.qp_step.VelocityQPStepper.reset` (the start of each chunk) the first step
sets OSQP up from its own data, so the problem scaling and step size start from that step and
nothing (primal, dual, rho) carries over from earlier chunks; later steps update the data in
place. Before every solve the primal warm start is the previous step's clipped velocity (zeros
after a reset); the dual warm start is what OSQP kept. Statuses ``solved`` and ``solved
inaccurate`` are accepted (then clipped to the box and re-checked); any other status is
``qp_infeasible``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import osqp
import scipy.sparse as sp
from numpy.typing import NDArray

from ikstack.diffik._qp_workspace import INF
from ikstack.diffik.qp_config import DiffQPConfig, QPData
from ikstack.diffik.qp_step import VelocityQPStepper
from ikstack.diffik.solver import DiffIKRequest, DiffIKResult, dense_qp
from ikstack.model import Chain

Array = NDArray[np.float64]

_ACCEPTED = (osqp.SolverStatus.OSQP_SOLVED, osqp.SolverStatus.OSQP_SOLVED_INACCURATE)


class OsqpQPSolver(VelocityQPStepper):
    """The published Tianji port's velocity QP for one arm, solved by OSQP.

    Use :meth:`step` for the port's per-step API (flange target, duration, lag guard, reasons)
    and :meth:`solve` for the generic :class:`~ikstack.diffik.solver.DifferentialIK` request
    (``supports_inequalities = True``).

    Example:
        >>> from ikstack.robots import load
        >>> arm = load("marvin_left")
        >>> qp = OsqpQPSolver(arm)
        >>> q = np.radians([10, 20, 0, -60, 0, 20, 10])
        >>> T = arm.fk(q); T[2, 3] += 0.001
        >>> qp.reset(); r = qp.step(q, T, 0.004); r.status.value
        'ok'
    """

    def __init__(self, chain: Chain, config: DiffQPConfig | None = None):
        super().__init__(chain, config)
        ws = self._ws
        self._Px, self._Ax, self._l, self._u = ws.work.Px, ws.work.Ax, ws.work.l, ws.work.u
        self._pattern = (ws.P_pattern, ws.A_pattern)
        self._settings: dict[str, Any] = self.config.osqp_settings()
        self._m = self.dof + self.num_rows
        self._prob: osqp.OSQP | None = None
        self._x_prev = np.zeros(self.dof)

    def _reset_solver(self) -> None:
        # The next step sets OSQP up afresh from its own data: no primal or dual state, step
        # size or scaling survives from before the reset.
        self._prob = None
        self._x_prev = np.zeros(self.dof)

    def _solve(self, data: QPData) -> tuple[Array | None, str, int]:
        # the workspace already holds this step's data in OSQP's fixed pattern
        if self._prob is None:
            Pm, Am = self._pattern
            P = sp.csc_matrix((self._Px.copy(), Pm.indices, Pm.indptr), shape=Pm.shape)
            A = sp.csc_matrix((self._Ax.copy(), Am.indices, Am.indptr), shape=Am.shape)
            prob = osqp.OSQP()
            prob.setup(P, data.c.copy(), A, self._l.copy(), self._u.copy(), **self._settings)
            self._prob = prob
        elif self.num_rows:
            self._prob.update(q=data.c, l=self._l, u=self._u, Px=self._Px, Ax=self._Ax)
        else:
            self._prob.update(q=data.c, l=self._l, u=self._u, Px=self._Px)
        self._prob.warm_start(x=self._x_prev)
        res = self._prob.solve(raise_error=False)
        info = res.info
        status = str(info.status)
        if info.status_val not in _ACCEPTED:
            return None, status, int(info.iter)
        x = np.asarray(res.x, dtype=np.float64)
        if np.all(np.isfinite(x)):
            self._x_prev = np.clip(x, data.lower, data.upper)
        return x, status, int(info.iter)

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
        # set up from this request's own data (OSQP's scaling is computed at setup)
        prob = osqp.OSQP()
        prob.setup(
            sp.csc_matrix(np.triu(P)),
            c,
            sp.csc_matrix(np.vstack([np.eye(n), A])),
            np.concatenate([np.clip(lo, -INF, INF), np.full(A.shape[0], -INF)]),
            np.concatenate([np.clip(hi, -INF, INF), np.clip(b, -INF, INF)]),
            **self._settings,
        )
        res = prob.solve(raise_error=False)
        if res.info.status_val not in _ACCEPTED or not np.all(np.isfinite(res.x)):
            return DiffIKResult(np.zeros(n), False, f"OSQP: {res.info.status}", int(res.info.iter))
        dq = np.clip(np.asarray(res.x, dtype=np.float64), lo, hi)
        return DiffIKResult(dq, True, "ok", int(res.info.iter))
