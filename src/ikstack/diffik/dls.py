r"""Damped least squares: the default per-cycle solver.

Solves the unconstrained problem

.. math::
    \min_{dq} \tfrac12 \|J\,dq - t\|^2 + \tfrac12 \lambda^2 \|dq - p\|^2
    \quad\Rightarrow\quad
    dq = p + J^T (J J^T + \lambda^2 I)^{-1} (t - J p),

then brings the answer inside ``lower <= dq <= upper`` by MoveIt Servo's rule: scale the whole
vector by the worst joint's ratio (direction kept), and clip the joints whose box excludes zero
(a joint that must keep braking). It never redistributes motion between joints; that is what
:class:`~ikstack.diffik.BoxQPSolver` is for.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ikstack._deprecated import renamed_module_names
from ikstack.diffik._linalg import scale_into_box
from ikstack.diffik.qp_config import StepStatus
from ikstack.diffik.solver import Array, DifferentialIK, DiffIKRequest, DiffIKResult, check_request
from ikstack.errors import InputError
from ikstack.spatial._dense import cholesky_inplace, cholesky_solve_inplace


@njit(cache=True)
def dls_kernel(J, task, preferred, damping, lower, upper, out, A, y):  # pragma: no cover
    """DLS step into ``out``; ``A`` (m, m) and ``y`` (m,) are scratch. Returns (ok, scale)."""
    m, n = J.shape
    lam2 = damping * damping
    for r in range(m):
        s = task[r]
        for i in range(n):
            s -= J[r, i] * preferred[i]
        y[r] = s
        for c in range(r, m):
            a = 0.0
            for i in range(n):
                a += J[r, i] * J[c, i]
            A[r, c] = a
            A[c, r] = a
        A[r, r] += lam2
    if m > 0:
        if not cholesky_inplace(A, m):
            for i in range(n):
                out[i] = 0.0
            return False, 0.0
        cholesky_solve_inplace(A, m, y)
    for i in range(n):
        s = preferred[i]
        for r in range(m):
            s += J[r, i] * y[r]
        out[i] = s
    for i in range(n):
        if not np.isfinite(out[i]):
            for k in range(n):
                out[k] = 0.0
            return False, 0.0
    scale = scale_into_box(out, lower, upper, out)
    return True, scale


class DLSVelocitySolver(DifferentialIK):
    """Damped least squares with MoveIt-style scaling into the velocity box (the default;
    ``DampedLeastSquares``, its former name, warns: numerical position IK by damped least
    squares is :class:`~ikstack.ik.numerical.DampedLeastSquaresIK`).

    Args:
        min_damping: a floor on lambda; the request's ``damping`` is used when it is larger.
            With both zero, a rank-deficient task makes ``J J^T`` singular and the solve
            reports failure.
    """

    def __init__(self, min_damping: float = 0.0):
        if not (np.isfinite(min_damping) and min_damping >= 0.0):
            raise InputError(f"min_damping must be finite and >= 0; got {min_damping}")
        self.min_damping = float(min_damping)

    def solve(self, request: DiffIKRequest) -> DiffIKResult:
        """Joint velocities for ``request``: the damped least-squares step, scaled into the box."""
        J, t, lo, hi, p = check_request(request)
        n = J.shape[1]
        out = np.empty(n)
        ok, _ = self.solve_arrays(J, t, p, max(request.damping, self.min_damping), lo, hi, out)
        if not ok:
            return DiffIKResult(
                np.zeros(n),
                False,
                "J J^T + lambda^2 I is singular; use damping > 0",
                status=StepStatus.QP_FAILED,
            )
        return DiffIKResult(out, True, "ok", 1)

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
        m = J.shape[0]
        ok, _ = dls_kernel(
            J,
            task,
            preferred,
            max(damping, self.min_damping),
            lower,
            upper,
            out,
            np.empty((m, m)),
            np.empty(m),
        )
        return bool(ok), 1


__getattr__ = renamed_module_names(
    __name__, {"DampedLeastSquares": (__name__, "DLSVelocitySolver")}
)
