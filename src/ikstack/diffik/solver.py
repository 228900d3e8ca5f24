"""The differential-IK interface: one per-cycle velocity solve, pluggable.

A solver maps a :class:`DiffIKRequest` to joint velocities ``dq`` [rad/s or m/s]. Built-in
solvers return a :class:`DiffIKResult`; a user subclass may return a plain ``(dof,)`` array,
which callers wrap with :func:`as_result`. Callers (the servo kernel, the chunk decoder) treat an
exception, a wrong shape or a non-finite output from any solver as a solver error, and still
pass a valid output through their own limits.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ikstack.diffik.qp_config import StepStatus
from ikstack.errors import InputError, NonFiniteError, ShapeError

Array = NDArray[np.float64]


@dataclass(frozen=True)
class DiffIKRequest:
    """One velocity problem.

    Minimize ``1/2 ||J dq - task||^2 + 1/2 damping^2 ||dq - preferred_velocity||^2`` subject to
    ``lower <= dq <= upper`` (and ``A_ineq dq <= b_ineq`` for solvers that support rows).

    Attributes:
        jacobian: (m, dof) task Jacobian, rows already selected and weighted.
        task: (m,) desired task velocity, weighted like ``jacobian``.
        q: (dof,) current joint positions.
        lower, upper: (dof,) velocity bounds for this cycle [rad/s or m/s].
        preferred_velocity: (dof,) secondary (nullspace) velocity; zeros when none.
        damping: lambda >= 0.
        A_ineq, b_ineq: optional (k, dof) and (k,) linear inequality rows on ``dq``.
        dt: the cycle's duration [s] (for solvers that need it).
    """

    jacobian: Array
    task: Array
    q: Array
    lower: Array
    upper: Array
    preferred_velocity: Array
    damping: float = 1e-3
    A_ineq: Array | None = None
    b_ineq: Array | None = None
    dt: float = 0.0


@dataclass(frozen=True)
class DiffIKResult:
    """A solver's answer: ``dq`` and whether it is usable.

    Attributes:
        dq: (dof,) joint velocities; finite even on failure (zeros then).
        success: False when the solver failed (iteration cap, infeasible, non-finite).
        message: why it failed, or "ok".
        iterations: iterations the solver used.
        active: (dof,) bool, bounds active at the solution (box solvers), if known.
        status: :class:`~ikstack.diffik.StepStatus` (the velocity step's reasons): ``OK`` on
            success; ``QP_INFEASIBLE`` when the solver did not solve the request (an empty
            velocity box, an infeasible problem, an iteration cap: a failure given no other
            status gets this one); ``QP_FAILED`` when its output is unusable (non-finite, the
            wrong shape, a singular system).
    """

    dq: Array
    success: bool = True
    message: str = "ok"
    iterations: int = 0
    active: NDArray[np.bool_] | None = field(default=None)
    status: StepStatus = StepStatus.OK

    def __post_init__(self) -> None:
        status = self.status
        if status is StepStatus.OK and self.success:  # the common case, checked first
            return
        status = StepStatus(status)  # a plain string works too
        if self.success and status is not StepStatus.OK:
            raise InputError(
                f"DiffIKResult: success=True with status {status.value!r}; a "
                "usable answer has status 'ok'"
            )
        if not self.success and status is StepStatus.OK:
            status = StepStatus.QP_INFEASIBLE
        if status is not self.status:
            object.__setattr__(self, "status", status)

    def __repr__(self) -> str:
        """A one-line summary (``dq`` is an attribute)."""
        top = float(np.max(np.abs(self.dq))) if np.size(self.dq) else 0.0
        return (
            f"DiffIKResult({'ok' if self.success else 'FAILED'}, {self.message!r}, "
            f"max |dq| {top:.3g}, {self.iterations} iterations)"
        )


class DifferentialIK(ABC):
    """A per-cycle velocity solver. Subclasses implement :meth:`solve`."""

    #: whether the solver honours ``A_ineq``/``b_ineq`` rows
    supports_inequalities: bool = False

    @abstractmethod
    def solve(self, request: DiffIKRequest) -> DiffIKResult | Array:
        """Joint velocities for ``request`` (a :class:`DiffIKResult`, or a plain array)."""


def as_result(out: object, dof: int) -> DiffIKResult:
    """Normalize a solver's output; a wrong shape or non-finite values become a failure."""
    if isinstance(out, DiffIKResult):
        res = out
    else:
        try:
            dq = np.asarray(out, dtype=np.float64)
        except (TypeError, ValueError):
            return DiffIKResult(
                np.zeros(dof),
                False,
                f"solver returned {type(out).__name__}, not an array",
                status=StepStatus.QP_FAILED,
            )
        res = DiffIKResult(dq)
    dq = np.asarray(res.dq, dtype=np.float64)
    if dq.shape != (dof,):
        return DiffIKResult(
            np.zeros(dof),
            False,
            f"solver returned shape {dq.shape}; expected ({dof},)",
            status=StepStatus.QP_FAILED,
        )
    if not np.all(np.isfinite(dq)):
        return DiffIKResult(
            np.zeros(dof),
            False,
            "solver returned non-finite velocities",
            status=StepStatus.QP_FAILED,
        )
    if not res.success:
        return DiffIKResult(
            np.zeros(dof), False, res.message, res.iterations, res.active, res.status
        )
    return DiffIKResult(dq.copy(), True, res.message, res.iterations, res.active)


def check_request(request: DiffIKRequest) -> tuple[Array, Array, Array, Array, Array]:
    """The request's ``(jacobian, task, lower, upper, preferred_velocity)`` as contiguous float64.

    Raises:
        ShapeError: an array's shape does not match ``(m, dof)``, ``(m,)`` or ``(dof,)``.
        NonFiniteError: the Jacobian, task or preferred velocity holds NaN or infinity (bounds
            may be infinite, never NaN).
    """
    J = np.ascontiguousarray(request.jacobian, dtype=np.float64)
    if J.ndim != 2:
        raise ShapeError("jacobian", J.shape, "(m, dof)")
    m, n = J.shape
    t = np.ascontiguousarray(request.task, dtype=np.float64)
    if t.shape != (m,):
        raise ShapeError("task", t.shape, f"({m},)")
    out = [J, t]
    for name in ("lower", "upper", "preferred_velocity"):
        a = np.ascontiguousarray(getattr(request, name), dtype=np.float64)
        if a.shape != (n,):
            raise ShapeError(name, a.shape, f"({n},)")
        out.append(a)
    for name, a in (("jacobian", J), ("task", t), ("preferred_velocity", out[4])):
        if not np.all(np.isfinite(a)):
            raise NonFiniteError(name)
    if np.any(np.isnan(out[2])) or np.any(np.isnan(out[3])):
        raise NonFiniteError("lower/upper")
    if not (np.isfinite(request.damping) and request.damping >= 0):
        raise InputError(f"damping must be finite and >= 0; got {request.damping}")
    return J, t, out[2], out[3], out[4]


@dataclass(frozen=True)
class DenseQP:
    """A request as the dense QP ``min 1/2 x^T P x + c^T x`` s.t. ``lower <= x <= upper`` and
    ``A x <= b`` (``P = J^T J + lambda^2 I``, ``c = -J^T task - lambda^2 preferred``)."""

    P: Array
    c: Array
    lower: Array
    upper: Array
    A: Array
    b: Array

    @property
    def empty_box(self) -> bool:
        """Whether some lower bound exceeds its upper bound (no feasible point)."""
        return bool(np.any(self.lower > self.upper))


def dense_qp(request: DiffIKRequest, dof: int) -> DenseQP:
    """The request's QP in dense form, contiguous float64 arrays.

    Raises:
        ShapeError: a Jacobian without ``dof`` columns, or inequality rows that do not match.
    """
    J = np.asarray(request.jacobian, dtype=np.float64)
    if J.ndim != 2 or J.shape[1] != dof:
        raise ShapeError("request.jacobian", J.shape, f"(m, {dof})")
    A = (
        np.zeros((0, dof))
        if request.A_ineq is None
        else np.atleast_2d(np.asarray(request.A_ineq, dtype=np.float64))
    )
    b = (
        np.zeros(0)
        if request.b_ineq is None
        else np.atleast_1d(np.asarray(request.b_ineq, dtype=np.float64))
    )
    if A.shape[1:] != (dof,) or b.shape != (A.shape[0],):
        raise ShapeError("request.A_ineq/b_ineq", A.shape, f"(k, {dof}) with b_ineq (k,)")
    d2 = float(request.damping) ** 2
    P = J.T @ J + d2 * np.eye(dof)
    c = -J.T @ np.asarray(request.task, dtype=np.float64) - d2 * np.asarray(
        request.preferred_velocity, dtype=np.float64
    )
    return DenseQP(
        np.ascontiguousarray(P),
        np.ascontiguousarray(c),
        np.ascontiguousarray(request.lower, dtype=np.float64),
        np.ascontiguousarray(request.upper, dtype=np.float64),
        np.ascontiguousarray(A),
        np.ascontiguousarray(b),
    )
