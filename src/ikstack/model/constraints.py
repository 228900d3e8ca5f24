"""Coupled-joint constraints: inequalities between joints that solvers must respect.

Each constraint is a set of rows ``g(q) <= 0``. Solvers read ``residual(q)`` to check a
configuration and ``linearize(q)`` to build a local linear row ``g(q) + G dq <= -margin``.
The Tianji Marvin J6/J7 interference diamond is one instance of
:class:`QuadrantPolynomialConstraint`; any linear inequality ``A q <= b`` is a
:class:`LinearJointConstraint`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack.errors import InputError, ModelError

Array = NDArray[np.float64]


class JointConstraint(ABC):
    """Rows ``g(q) <= 0`` over a chain's joints (joint indices in chain order)."""

    name: str

    @property
    @abstractmethod
    def joints(self) -> tuple[int, ...]:
        """Indices of the joints the constraint involves."""

    @property
    @abstractmethod
    def num_rows(self) -> int:
        """Number of rows ``m`` returned by :meth:`residual` and :meth:`linearize`."""

    @abstractmethod
    def residual(self, q: ArrayLike) -> Array:
        """``g(q)`` of shape ``(..., m)`` [rad or m]; the constraint holds where ``g <= 0``."""

    @abstractmethod
    def linearize(self, q: ArrayLike, dof: int) -> tuple[Array, Array]:
        """``(g, G)`` at a single ``q``: ``g (m,)`` and ``G (m, dof)`` with
        ``g(q + dq) ~ g + G dq``."""

    def satisfied(self, q: ArrayLike, margin: float = 0.0) -> NDArray[np.bool_]:
        """Whether every row holds with ``margin`` to spare, per configuration (...,)."""
        return np.all(self.residual(q) <= -margin, axis=-1)

    def check_indices(self, dof: int) -> None:
        """Raise :class:`ModelError` if a joint index does not exist in a ``dof`` chain."""
        for j in self.joints:
            if not 0 <= j < dof:
                raise ModelError(
                    f"constraint {self.name!r} refers to joint index {j}; "
                    f"the chain has {dof} joints"
                )


@dataclass(frozen=True)
class LinearJointConstraint(JointConstraint):
    """Linear inequalities ``A q <= b`` over joint positions.

    Attributes:
        A: (m, dof) coefficients.
        b: (m,) bounds [rad or m].
    """

    A: Array
    b: Array
    name: str = "linear"

    def __post_init__(self) -> None:
        A = np.atleast_2d(np.asarray(self.A, dtype=np.float64)).copy()
        b = np.atleast_1d(np.asarray(self.b, dtype=np.float64)).copy()
        if A.ndim != 2 or b.shape != (A.shape[0],):
            raise InputError(
                f"LinearJointConstraint: A has shape {A.shape} and b {b.shape}; "
                "expected A (m, dof) and b (m,)"
            )
        if not (np.isfinite(A).all() and np.isfinite(b).all()):
            raise InputError("LinearJointConstraint: A and b must be finite")
        A.flags.writeable = False
        b.flags.writeable = False
        object.__setattr__(self, "A", A)
        object.__setattr__(self, "b", b)

    @property
    def joints(self) -> tuple[int, ...]:
        return tuple(int(i) for i in np.flatnonzero(np.any(self.A != 0, axis=0)))

    @property
    def num_rows(self) -> int:
        return int(self.A.shape[0])

    def residual(self, q: ArrayLike) -> Array:
        q = np.asarray(q, dtype=np.float64)
        return q @ self.A.T - self.b

    def linearize(self, q: ArrayLike, dof: int) -> tuple[Array, Array]:
        q = np.asarray(q, dtype=np.float64)
        if self.A.shape[1] != dof:
            raise ModelError(
                f"constraint {self.name!r} has {self.A.shape[1]} columns; chain has {dof}"
            )
        return q @ self.A.T - self.b, self.A.copy()

    def check_indices(self, dof: int) -> None:
        if self.A.shape[1] != dof:
            raise ModelError(
                f"constraint {self.name!r} has {self.A.shape[1]} columns; "
                f"the chain has {dof} joints"
            )


@dataclass(frozen=True)
class QuadrantRow:
    """One quadrant's bound on joint ``j`` as a polynomial of joint ``i``.

    Active where ``sign(q_i)`` and ``sign(q_j)`` match ``i_nonneg``/``j_nonneg`` (zero counts as
    non-negative). The bound is ``b(q_i) = a0 q_i^2 + a1 q_i + a2`` [rad]; ``upper=True`` means
    ``q_j <= b``, otherwise ``q_j >= b``.
    """

    i_nonneg: bool
    j_nonneg: bool
    a0: float
    a1: float
    a2: float
    upper: bool


@dataclass(frozen=True)
class QuadrantPolynomialConstraint(JointConstraint):
    """A piecewise bound between two joints, one polynomial row per sign quadrant.

    Written in radians. Build the Tianji J6/J7 diamond with :meth:`abs_sum` or from the
    published degree rows with :meth:`from_degree_rows`.
    """

    joint_i: int
    joint_j: int
    rows: tuple[QuadrantRow, ...]
    name: str = "coupled"
    description: str = ""
    _coeffs: Array = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        quads = {(r.i_nonneg, r.j_nonneg) for r in self.rows}
        if len(quads) != 4 or len(self.rows) != 4:
            raise ModelError(
                f"constraint {self.name!r} needs exactly one row per sign quadrant of "
                f"(q{self.joint_i}, q{self.joint_j}); got {len(self.rows)} rows covering "
                f"{sorted(quads)}"
            )
        if self.joint_i == self.joint_j:
            raise ModelError(f"constraint {self.name!r} couples joint {self.joint_i} with itself")
        table = np.zeros((2, 2, 4))
        for r in self.rows:
            vals = (r.a0, r.a1, r.a2, 1.0 if r.upper else -1.0)
            if not all(math.isfinite(v) for v in vals):
                raise ModelError(f"constraint {self.name!r} has a non-finite coefficient")
            table[int(r.i_nonneg), int(r.j_nonneg)] = vals
        table.flags.writeable = False
        object.__setattr__(self, "_coeffs", table)

    @classmethod
    def from_degree_rows(
        cls,
        joint_i: int,
        joint_j: int,
        rows_deg: Sequence[tuple[bool, bool, float, float, float, bool]],
        name: str = "coupled",
        description: str = "",
    ) -> QuadrantPolynomialConstraint:
        """Rows given in degrees, ``b_deg(q_i_deg) = a0 q^2 + a1 q + a2``, converted to radians."""
        k = 180.0 / math.pi
        rows = tuple(
            QuadrantRow(
                bool(i_nn), bool(j_nn), float(a0) * k, float(a1), math.radians(a2), bool(up)
            )
            for (i_nn, j_nn, a0, a1, a2, up) in rows_deg
        )
        return cls(joint_i, joint_j, rows, name=name, description=description)

    @classmethod
    def abs_sum(
        cls, joint_i: int, joint_j: int, slope: float, bound: float, name: str = "coupled"
    ) -> QuadrantPolynomialConstraint:
        """``|q_j| + slope |q_i| <= bound`` [rad] as four quadrant rows."""
        rows = (
            QuadrantRow(True, True, 0.0, -slope, bound, True),
            QuadrantRow(False, True, 0.0, slope, bound, True),
            QuadrantRow(False, False, 0.0, -slope, -bound, False),
            QuadrantRow(True, False, 0.0, slope, -bound, False),
        )
        desc = f"|q{joint_j}| + {slope:g} |q{joint_i}| <= {bound:.6g} rad"
        return cls(joint_i, joint_j, rows, name=name, description=desc)

    @property
    def joints(self) -> tuple[int, ...]:
        return (self.joint_i, self.joint_j)

    @property
    def num_rows(self) -> int:
        return 1

    def _row(self, qi: Array, qj: Array) -> Array:
        return self._coeffs[(qi >= 0).astype(int), (qj >= 0).astype(int)]

    def residual(self, q: ArrayLike) -> Array:
        q = np.asarray(q, dtype=np.float64)
        qi, qj = q[..., self.joint_i], q[..., self.joint_j]
        c = self._row(qi, qj)
        b = c[..., 0] * qi * qi + c[..., 1] * qi + c[..., 2]
        g = np.where(c[..., 3] > 0, qj - b, b - qj)
        return g[..., None]

    def linearize(self, q: ArrayLike, dof: int) -> tuple[Array, Array]:
        q = np.asarray(q, dtype=np.float64)
        qi, qj = float(q[self.joint_i]), float(q[self.joint_j])
        a0, a1, a2, sense = self._coeffs[int(qi >= 0), int(qj >= 0)]
        b = a0 * qi * qi + a1 * qi + a2
        slope = 2.0 * a0 * qi + a1
        G = np.zeros((1, dof))
        if sense > 0:
            g = qj - b
            G[0, self.joint_i], G[0, self.joint_j] = -slope, 1.0
        else:
            g = b - qj
            G[0, self.joint_i], G[0, self.joint_j] = slope, -1.0
        return np.array([g]), G
