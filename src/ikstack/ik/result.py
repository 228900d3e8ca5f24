"""The result object every IK solver returns, and the FK certification that fills it.

Contract (docs/design.md): a ``True`` in ``success`` means the joint vector is finite, within limits
(and coupled-joint constraints), and its FK meets the tolerances, checked after solving.
Failed rows hold a finite, limit-projected joint vector and a status saying why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ikstack.errors import ShapeError
from ikstack.ik._gate import fk_errors_rows
from ikstack.kinematics import fk
from ikstack.model import Chain

Array = NDArray[np.float64]


class IKStatus(IntEnum):
    """Why a target succeeded or failed (one per target)."""

    SUCCESS = 0
    ITERATION_LIMIT = 1  #: numerical: iteration cap reached without meeting the tolerances
    TIME_LIMIT = 2  #: numerical: time budget spent
    JOINT_LIMITS = 3  #: a solution exists geometrically but none lies within the limits
    SINGULAR = 4  #: the step became singular and could not proceed
    UNREACHABLE = 5  #: no candidate met the FK tolerances (analytic: no real branch)
    STEP_LIMIT = 6  #: every valid candidate jumps more than ``max_joint_step`` from the seed
    CONSTRAINT = 7  #: candidates violate the chain's coupled-joint constraints
    NOT_SOLVED = 8  #: the target was not attempted (e.g. a path frame after a failure policy)

    @property
    def reason(self) -> str:
        """The status in words (``IKStatus.UNREACHABLE.reason``)."""
        return STATUS_TEXT[self]


STATUS_TEXT = {
    IKStatus.SUCCESS: "solved and certified by FK",
    IKStatus.ITERATION_LIMIT: "iteration cap reached before the tolerances were met",
    IKStatus.TIME_LIMIT: "time budget spent before the tolerances were met",
    IKStatus.JOINT_LIMITS: "no solution within the joint limits",
    IKStatus.SINGULAR: "singular configuration: no usable step",
    IKStatus.UNREACHABLE: "no candidate met the FK tolerances (target out of reach?)",
    IKStatus.STEP_LIMIT: "every valid solution exceeds max_joint_step from the seed",
    IKStatus.CONSTRAINT: "every candidate violates a coupled-joint constraint",
    IKStatus.NOT_SOLVED: "not attempted",
}


@dataclass(frozen=True)
class IKResult:
    """Solutions for N targets.

    Attributes:
        q: (N, dof) selected joint vectors (finite; limit-projected seeds where failed).
        success: (N,) certified success mask: authoritative.
        position_error: (N,) [m] FK position error of ``q``.
        rotation_error: (N,) [rad] FK geodesic rotation error of ``q``.
        status: (N,) :class:`IKStatus` codes.
        method: which solver produced the result, e.g. ``"analytic:three_parallel"``.
        iterations: (N,) iterations used (numerical; zeros for analytic).
        restarts: (N,) restarts used (numerical; zeros for analytic).
        q_all: (N, K, dof) every candidate (``return_all``), or None.
        valid_all: (N, K) mask of ``q_all``, or None.
    """

    q: Array
    success: NDArray[np.bool_]
    position_error: Array
    rotation_error: Array
    status: NDArray[np.int64]
    method: str
    iterations: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    restarts: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    q_all: Array | None = None
    valid_all: NDArray[np.bool_] | None = None

    def __len__(self) -> int:
        return int(self.q.shape[0])

    @classmethod
    def _trusted(
        cls,
        q: Array,
        success: NDArray[np.bool_],
        position_error: Array,
        rotation_error: Array,
        status: NDArray[np.int64],
        method: str,
        iterations: NDArray[np.int64],
        restarts: NDArray[np.int64],
        q_all: Array | None = None,
        valid_all: NDArray[np.bool_] | None = None,
    ) -> IKResult:
        """The solvers' fast constructor: the same object as ``IKResult(...)`` with these
        fields, built without the frozen dataclass's per-field ``object.__setattr__`` (about a
        microsecond per result, which a single-target solve notices). Nothing is converted or
        checked, as in ``IKResult(...)``; every field must be given (a test keeps this list
        equal to the dataclass's fields)."""
        out = object.__new__(cls)
        out.__dict__.update(
            q=q,
            success=success,
            position_error=position_error,
            rotation_error=rotation_error,
            status=status,
            method=method,
            iterations=iterations,
            restarts=restarts,
            q_all=q_all,
            valid_all=valid_all,
        )
        return out

    @property
    def success_rate(self) -> float:
        """Share of targets solved (1.0 for an empty batch)."""
        return float(self.success.mean()) if len(self) else 1.0

    def reason(self, i: int) -> str:
        """Human reason for target ``i``'s status."""
        return STATUS_TEXT[IKStatus(int(self.status[i]))]

    def reasons(self) -> list[str]:
        """Human reasons for every target."""
        return [self.reason(i) for i in range(len(self))]

    @property
    def message(self) -> str:
        """One readable line: how many targets were solved and, for the failures, why
        (per-target reasons: :meth:`reasons`)."""
        ok = np.asarray(self.success, dtype=bool).reshape(-1)
        n = int(ok.size)
        k = int(np.count_nonzero(ok))
        if k == n:
            return f"all {n} target{'s' if n != 1 else ''} solved and certified by FK"
        codes, counts = np.unique(np.asarray(self.status).reshape(-1)[~ok], return_counts=True)
        why = ", ".join(f"{c} {_status_text(int(s))}" for s, c in zip(codes, counts, strict=True))
        return f"{k} of {n} targets solved; failed: {why}"

    def __repr__(self) -> str:
        """A summary: count, success share, method, worst errors of the successes, failures
        by status (the arrays are attributes; ``repr`` does not print them)."""
        n = len(self)
        ok = np.asarray(self.success, dtype=bool)
        k = int(np.count_nonzero(ok))
        parts = [
            f"{n} target{'s' if n != 1 else ''}",
            f"{k} solved ({100.0 * k / n:.1f}%)" if n else "0 solved",
            f"method {self.method!r}",
        ]
        if k:
            parts.append(
                f"worst error {float(np.max(self.position_error[ok])):.1e} m, "
                f"{float(np.max(self.rotation_error[ok])):.1e} rad"
            )
        if k < n:
            codes, counts = np.unique(np.asarray(self.status)[~ok], return_counts=True)
            parts.append(
                "failed: "
                + ", ".join(
                    f"{c} {_status_name(int(s))}" for s, c in zip(codes, counts, strict=True)
                )
            )
        if self.q_all is not None:
            parts.append(f"{self.q_all.shape[1]} candidates per target")
        return f"IKResult({'; '.join(parts)})"

    @classmethod
    def concat(cls, parts: list[IKResult], method: str) -> IKResult:
        """Results of consecutive pieces (of a path, or chunks of a batch) as one result of
        ``method``; every candidate (``q_all``, ``valid_all``) joined too where each piece has
        them."""
        if len(parts) == 1 and parts[0].method == method:
            return parts[0]
        fields = ["q", "success", "position_error", "rotation_error", "status"]
        fields += ["iterations", "restarts"]
        if all(r.q_all is not None and r.valid_all is not None for r in parts):
            fields += ["q_all", "valid_all"]
        cat = {f: np.concatenate([getattr(r, f) for r in parts]) for f in fields}
        return cls(method=method, **cat)

    def reshaped(self, lead: tuple[int, ...]) -> IKResult:
        """This result of ``prod(lead)`` flattened targets with the batch dimensions ``lead``
        restored: ``q`` (*lead, dof), ``success`` (*lead,), ``q_all`` (*lead, K, dof)..."""

        def per(a: Any, tail: int) -> Any:  # an array (or None) with its leading axis split
            return None if a is None else a.reshape(lead + a.shape[a.ndim - tail :])

        return IKResult._trusted(
            q=per(self.q, 1),
            success=per(self.success, 0),
            position_error=per(self.position_error, 0),
            rotation_error=per(self.rotation_error, 0),
            status=per(self.status, 0),
            method=self.method,
            iterations=per(self.iterations, 0)
            if self.iterations.size == len(self)
            else self.iterations,
            restarts=per(self.restarts, 0) if self.restarts.size == len(self) else self.restarts,
            q_all=per(self.q_all, 2),
            valid_all=per(self.valid_all, 1),
        )


def batch_dims(T_base_tcp: object) -> tuple[int, ...] | None:
    """The leading batch dimensions of targets shaped ``(..., 4, 4)`` with two or more of them
    (``(B1, B2, 4, 4)`` gives ``(B1, B2)``), else None: ``(4, 4)`` and ``(N, 4, 4)`` are the
    solvers' own shapes."""
    shape = np.shape(T_base_tcp)  # type: ignore[call-overload]
    if len(shape) > 3 and tuple(shape[-2:]) == (4, 4):
        return tuple(int(d) for d in shape[:-2])
    return None


def flatten_batch(
    T_base_tcp: object, seed: object, dof: int, lead: tuple[int, ...]
) -> tuple[Array, Array | None]:
    """Targets ``(*lead, 4, 4)`` as ``(N, 4, 4)`` and a seed ``(dof,)``, ``(1, dof)`` or
    ``(*lead, dof)`` as one the solvers take (``(dof,)`` or ``(N, dof)``).

    Raises:
        ShapeError: a seed of another shape.
    """
    T = np.asarray(T_base_tcp)
    n = int(np.prod(lead))
    Tf = T.reshape((n, 4, 4))
    if seed is None:
        return Tf, None
    s = np.asarray(seed)
    if s.shape in ((dof,), (1, dof)):
        return Tf, s
    if s.shape == lead + (dof,):
        return Tf, s.reshape(n, dof)
    raise ShapeError(
        "q0", s.shape, f"({dof},), (1, {dof}) or {lead + (dof,)} (the targets' batch dimensions)"
    )


def _status_text(code: int) -> str:
    try:
        return IKStatus(code).reason
    except ValueError:
        return f"status {code}"


def _status_name(code: int) -> str:
    try:
        return IKStatus(code).name.lower()
    except ValueError:
        return f"status {code}"


def _pose_rows(T: Array, shape: tuple[int, ...]) -> Array:
    """``T`` broadcast to ``shape`` poses as ``(n, 4, 4)`` rows, contiguous and writable: a
    broadcast view is read-only, and a read-only array is another signature (the error kernel
    compiled a second time on a first run). Copies only a view or a read-only array."""
    if T.shape[:-2] != shape:
        T = np.broadcast_to(T, shape + (4, 4))
    return np.require(T.reshape(-1, 4, 4), None, ("C", "W"))


def fk_errors(chain: Chain, q: Array, T_target: Array) -> tuple[Array, Array]:
    """Position [m] and geodesic rotation [rad] errors of ``fk(q)`` against targets (broadcast).

    The errors of :func:`ikstack.spatial.position_rotation_error` (to round-off), computed
    directly: the angle of ``R_target R^T`` is ``atan2(|axial part| / 2, (trace - 1) / 2)``,
    accurate near 0 and pi, without the quaternion round trip (this gate runs on every IK
    candidate). One compiled kernel (:func:`ikstack.ik._gate.fk_error_one`) computes them for
    every solver path, so a number never depends on the path taken.
    """
    T = fk(chain, q)
    Tt = np.asarray(T_target, dtype=np.float64)
    shape = np.broadcast_shapes(T.shape[:-2], Tt.shape[:-2])
    F = _pose_rows(T, shape)
    G = _pose_rows(Tt, shape)
    perr = np.empty(F.shape[0])
    rerr = np.empty(F.shape[0])
    fk_errors_rows(F, G, perr, rerr)
    return perr.reshape(shape)[()], rerr.reshape(shape)[()]


def certify(
    chain: Chain,
    q: Array,
    T_target: Array,
    position_tolerance: float | Array,
    rotation_tolerance: float | Array,
    limit_tolerance: float = 0.0,
    check_constraints: bool = True,
) -> tuple[NDArray[np.bool_], Array, Array]:
    """The FK gate: ``(ok, position_error, rotation_error)`` for candidates ``q (..., dof)``.

    ``ok`` is True only where ``q`` is finite, within the limits (``limit_tolerance`` allows
    representation round-off), satisfies the coupled-joint constraints, and its FK meets both
    tolerances. Non-finite rows get infinite errors and never pass. The tolerances may be
    arrays broadcasting against the candidates' leading shape (per-target tolerances).
    """
    q = np.asarray(q, dtype=np.float64)
    finite = np.all(np.isfinite(q), axis=-1)
    q_safe = np.where(finite[..., None], q, 0.0)
    perr, rerr = fk_errors(chain, q_safe, T_target)
    perr = np.where(finite, perr, np.inf)
    rerr = np.where(finite, rerr, np.inf)
    ok = finite & (perr <= position_tolerance) & (rerr <= rotation_tolerance)
    ok &= chain.within_limits(q_safe, tol=limit_tolerance)
    if check_constraints and chain.constraints:
        ok &= chain.constraints_satisfied(q_safe)
    return ok, perr, rerr
