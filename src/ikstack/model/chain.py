"""The immutable serial chain every ikstack solver works on."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import Enum, IntEnum
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack._deprecated import warn_deprecated
from ikstack.errors import InputError, JointLimitError, ModelError, ShapeError
from ikstack.model.constraints import JointConstraint
from ikstack.spatial import as_transforms, as_vectors

Array = NDArray[np.float64]


class JointType(IntEnum):
    """Joint types of a serial chain (fixed joints are folded into origins)."""

    REVOLUTE = 0
    CONTINUOUS = 1
    PRISMATIC = 2


class ChainRole(str, Enum):
    """What a chain is for; solvers and checks use it to decide what applies."""

    ARM = "arm"
    GRIPPER = "gripper"


def _frozen(a: ArrayLike, shape: tuple[int, ...], name: str) -> Array:
    arr = np.array(a, dtype=np.float64)
    if arr.shape != shape:
        raise ShapeError(name, arr.shape, str(shape))
    arr.flags.writeable = False
    return arr


def per_joint(
    value: ArrayLike | None,
    names: Sequence[str],
    what: str,
    where: str,
    error: type[ModelError] = ModelError,
) -> Array:
    """A per-joint limit given as None (unlimited), a scalar or ``(dof,)`` values, as a
    ``(dof,)`` array; ``error`` names ``what`` and the chain ``where`` when the count is off."""
    dof = len(names)
    if value is None:
        return np.full(dof, math.inf)
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 0:
        return np.full(dof, float(arr))
    if arr.shape != (dof,):
        raise error(
            f"{what} has {arr.size} values; the chain {where} has {dof} joints ({', '.join(names)})"
        )
    return arr


@dataclass(frozen=True, eq=False)
class Chain:
    """An immutable serial chain from a base frame to a tip frame, with an optional TCP.

    Forward kinematics is
    ``T_base_tcp = O_1 M_1(q_1) O_2 M_2(q_2) ... O_n M_n(q_n) T_last_tip T_tip_tcp``,
    where ``O_i`` is joint ``i``'s origin in the previous joint's frame (fixed joints folded in)
    and ``M_i`` rotates about (revolute, continuous) or slides along (prismatic) the unit
    ``axes[i]`` expressed in joint ``i``'s frame.

    Attributes:
        joint_names: (dof,) names in base-to-tip order.
        joint_types: (dof,) :class:`JointType`.
        axes: (dof, 3) unit axes in each joint's frame.
        origins: (dof, 4, 4) ``T_prev_joint`` at zero configuration.
        T_last_tip: (4, 4) from the last joint's frame to the tip link.
        T_tip_tcp: (4, 4) tool (TCP) in the tip frame; identity when no tool is set.
        lower, upper: (dof,) position limits [rad or m]; +-inf for continuous joints.
        velocity_limits, acceleration_limits, jerk_limits: (dof,) [rad/s, rad/s^2, rad/s^3]
            (m for prismatic); +inf where unknown.
        base, tip: link names of the base and tip frames; ``tcp_name`` names the TCP frame.
        link_names: (dof,) the link each joint moves (its child link).
        constraints: coupled-joint constraints solvers must respect.
        kinematic_margin: extra distance [rad or m] to keep from position limits (a solver may
            raise it, never lower it).
        role: arm or gripper.
        name: a display name; ``source``: where the model came from (provenance).
        notes: how the loader read anything ambiguous in the source (shown by
            :meth:`describe`), e.g. a URDF velocity limit of 0 taken as "not given".

    A chain holds no derived data: each owner of data derived from chains (compiled
    kinematics, solvers, device arrays) keeps it in its own bounded, weak
    :class:`~ikstack.model.chain_cache.ChainCache`, so a chain pickles as plain data and a
    derived chain (:meth:`with_tcp`, :meth:`with_limits`, :meth:`replace`...) never shares its
    parent's derived data.
    """

    joint_names: tuple[str, ...]
    joint_types: tuple[JointType, ...]
    axes: Array
    origins: Array
    T_last_tip: Array
    lower: Array
    upper: Array
    velocity_limits: Array
    acceleration_limits: Array
    jerk_limits: Array
    base: str = "base"
    tip: str = "tip"
    link_names: tuple[str, ...] = ()
    T_tip_tcp: Array = field(default_factory=lambda: np.eye(4))
    tcp_name: str | None = None
    constraints: tuple[JointConstraint, ...] = ()
    kinematic_margin: float = 0.0
    role: ChainRole = ChainRole.ARM
    name: str = ""
    source: str = ""
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        n = len(self.joint_names)
        if n == 0:
            raise ModelError("a chain needs at least one moving joint between base and tip")
        if len(self.joint_types) != n:
            raise ModelError(f"{len(self.joint_types)} joint types for {n} joints")
        if len(set(self.joint_names)) != n:
            raise ModelError(f"joint names repeat: {self.joint_names}")
        object.__setattr__(self, "joint_types", tuple(JointType(t) for t in self.joint_types))
        axes = np.array(self.axes, dtype=np.float64)
        if axes.shape != (n, 3):
            raise ShapeError("axes", axes.shape, f"({n}, 3)")
        norms = np.linalg.norm(axes, axis=1)
        if not np.all(np.isfinite(axes)) or np.any(norms < 1e-9):
            raise ModelError(f"joint axes must be finite and non-zero; got norms {norms}")
        # normalizing is idempotent: an axis already unit to round-off keeps its bits, so a
        # chain read back from a file equals the one written
        unit = np.abs(norms - 1.0) <= 1e-15
        axes = np.where(unit[:, None], axes, axes / norms[:, None])
        axes.flags.writeable = False
        object.__setattr__(self, "axes", axes)
        origins = as_transforms(self.origins, "origins").copy()
        if origins.shape != (n, 4, 4):
            raise ShapeError("origins", origins.shape, f"({n}, 4, 4)")
        origins.flags.writeable = False
        object.__setattr__(self, "origins", origins)
        for name in ("T_last_tip", "T_tip_tcp"):
            T = as_transforms(getattr(self, name), name).copy()
            if T.shape != (4, 4):
                raise ShapeError(name, T.shape, "(4, 4)")
            T.flags.writeable = False
            object.__setattr__(self, name, T)
        lo = np.array(self.lower, dtype=np.float64)
        hi = np.array(self.upper, dtype=np.float64)
        for i, t in enumerate(self.joint_types):
            if t == JointType.CONTINUOUS:
                lo[i], hi[i] = -np.inf, np.inf
        for name, val in (("lower", lo), ("upper", hi)):
            object.__setattr__(self, name, _frozen(val, (n,), name))
        if np.any(np.isnan(lo)) or np.any(np.isnan(hi)) or np.any(lo > hi):
            bad = [self.joint_names[i] for i in range(n) if not lo[i] <= hi[i]]
            raise ModelError(f"joint limits have lower > upper (or NaN) for joints {bad}")
        for name in ("velocity_limits", "acceleration_limits", "jerk_limits"):
            v = np.array(getattr(self, name), dtype=np.float64)
            if v.shape == ():
                v = np.full(n, float(v))
            v = _frozen(v, (n,), name)
            if np.any(np.isnan(v)) or np.any(v <= 0):
                raise ModelError(f"{name} must be positive (inf for unknown); got {v.tolist()}")
            object.__setattr__(self, name, v)
        if not self.link_names:
            object.__setattr__(self, "link_names", tuple(f"link{i + 1}" for i in range(n)))
        elif len(self.link_names) != n:
            raise ModelError(f"{len(self.link_names)} link names for {n} joints")
        object.__setattr__(self, "constraints", tuple(self.constraints))
        object.__setattr__(self, "notes", tuple(str(n) for n in self.notes))
        for c in self.constraints:
            c.check_indices(n)
        if not (math.isfinite(self.kinematic_margin) and self.kinematic_margin >= 0):
            raise ModelError(
                f"kinematic_margin must be finite and >= 0; got {self.kinematic_margin}"
            )
        object.__setattr__(self, "role", ChainRole(self.role))

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("notes", ())
        self.__dict__.pop("_cache", None)  # pickled by a version that cached on the chain

    # ------------------------------------------------------------------ properties
    @property
    def dof(self) -> int:
        """Number of moving joints."""
        return len(self.joint_names)

    @property
    def bounded(self) -> NDArray[np.bool_]:
        """(dof,) whether each joint has finite position limits."""
        return np.isfinite(self.lower) & np.isfinite(self.upper)

    @property
    def is_revolute(self) -> NDArray[np.bool_]:
        """(dof,) whether each joint rotates (revolute or continuous)."""
        return np.array([t != JointType.PRISMATIC for t in self.joint_types])

    @property
    def tcp_frame(self) -> str:
        """Name of the frame FK returns: the TCP when one is set, otherwise the tip link."""
        return self.tcp_name or self.tip

    def middle(self) -> Array:
        """(dof,) middle of the limits; 0 for unbounded joints."""
        mid = 0.5 * (self.lower + self.upper)
        return np.where(self.bounded, mid, 0.0)

    def joint_index(self, name: str) -> int:
        """Index of a joint by name (raises :class:`InputError` listing the names).

        Deprecated: nothing in ikstack uses it; ``chain.joint_names.index(name)`` does the same.
        It goes in the next release.
        """
        warn_deprecated(
            "Chain.joint_index is deprecated and goes in the next release; use "
            "chain.joint_names.index(name)"
        )
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise InputError(
                f"unknown joint {name!r}; joints: {', '.join(self.joint_names)}"
            ) from None

    # ------------------------------------------------------------------ configurations
    def check_q(self, q: ArrayLike, name: str = "q") -> Array:
        """``q`` as a finite float64 array of shape ``(dof,)`` or ``(..., dof)``."""
        arr = as_vectors(q, name, self.dof)
        return arr

    def within_limits(
        self, q: ArrayLike, tol: float = 0.0, margin: float = 0.0
    ) -> NDArray[np.bool_]:
        """(...,) whether every joint lies within
        ``[lower + margin - tol, upper - margin + tol]``."""
        q = np.asarray(q, dtype=np.float64)
        return np.all((q >= self.lower + margin - tol) & (q <= self.upper - margin + tol), axis=-1)

    def constraints_satisfied(self, q: ArrayLike, margin: float = 0.0) -> NDArray[np.bool_]:
        """(...,) whether every coupled-joint constraint holds with ``margin`` to spare."""
        q = np.asarray(q, dtype=np.float64)
        ok = np.ones(q.shape[:-1], dtype=bool)
        for c in self.constraints:
            ok &= c.satisfied(q, margin)
        return ok

    def require_within_limits(self, q: ArrayLike, tol: float = 1e-9) -> None:
        """Raise :class:`JointLimitError` naming the first joint outside its limits."""
        q = np.atleast_2d(np.asarray(q, dtype=np.float64))
        bad = (q < self.lower - tol) | (q > self.upper + tol)
        if bad.any():
            r, j = (int(x) for x in np.argwhere(bad)[0])
            raise JointLimitError(
                self.joint_names[j], float(q[r, j]), float(self.lower[j]), float(self.upper[j])
            )

    def clip(self, q: ArrayLike) -> Array:
        """``q`` projected into the position limits."""
        return np.clip(np.asarray(q, dtype=np.float64), self.lower, self.upper)

    def random_q(
        self, rng: np.random.Generator, n: int | None = None, unbounded_range: float = math.pi
    ) -> Array:
        """Uniform configurations within limits; unbounded joints in ``[-range, range]``."""
        lo = np.where(np.isfinite(self.lower), self.lower, -unbounded_range)
        hi = np.where(np.isfinite(self.upper), self.upper, unbounded_range)
        shape = (self.dof,) if n is None else (n, self.dof)
        return rng.uniform(lo, hi, size=shape)

    # ------------------------------------------------------------------ derived chains
    def with_tcp(self, T_tip_tcp: ArrayLike, name: str = "tcp") -> Chain:
        """A copy whose FK ends at a tool frame ``T_tip_tcp`` (given in the tip/flange frame)."""
        T = as_transforms(T_tip_tcp, "T_tip_tcp")
        if T.shape != (4, 4):
            raise ShapeError("T_tip_tcp", T.shape, "(4, 4)")
        return replace(self, T_tip_tcp=T.copy(), tcp_name=name)

    def without_tcp(self) -> Chain:
        """A copy whose FK ends at the tip link."""
        return replace(self, T_tip_tcp=np.eye(4), tcp_name=None)

    def with_limits(
        self,
        lower: ArrayLike | None = None,
        upper: ArrayLike | None = None,
        velocity: ArrayLike | None = None,
        acceleration: ArrayLike | None = None,
        jerk: ArrayLike | None = None,
    ) -> Chain:
        """A copy with some limits replaced (each (dof,) or a scalar)."""

        def pick(new: ArrayLike | None, old: Array) -> Array:
            if new is None:
                return old
            arr = np.broadcast_to(np.asarray(new, dtype=np.float64), (self.dof,)).copy()
            return arr

        return replace(
            self,
            lower=pick(lower, self.lower),
            upper=pick(upper, self.upper),
            velocity_limits=pick(velocity, self.velocity_limits),
            acceleration_limits=pick(acceleration, self.acceleration_limits),
            jerk_limits=pick(jerk, self.jerk_limits),
        )

    def with_constraints(self, constraints: Sequence[JointConstraint]) -> Chain:
        """A copy with these coupled-joint constraints (replacing any it had)."""
        return replace(self, constraints=tuple(constraints))

    def replace(self, **changes: Any) -> Chain:
        """A copy with dataclass fields replaced (a new chain: no derived data is shared)."""
        return replace(self, **changes)

    # ------------------------------------------------------------------ chain files
    def to_file(self, path: str | os.PathLike[str]) -> None:
        """Write the chain description file (``ikstack-chain 1``, see ``docs/chain-file.md``)
        that the C++ library reads; atomic, and exact on reading back."""
        from ikstack.model.chain_file import write_chain_file

        write_chain_file(self, path)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Chain:
        """Read a chain description file written by :meth:`to_file` (or ``ikstack export``).

        Raises:
            ChainFileError: malformed content, naming the file, line and field.
            StorageError: the file cannot be read.
        """
        from ikstack.model.chain_file import read_chain_file

        return read_chain_file(path)

    # ------------------------------------------------------------------ conveniences
    def fk(self, q: ArrayLike) -> Array:
        """``T_base_tcp`` for ``q`` (..., dof); see :func:`ikstack.kinematics.fk`."""
        return self._kinematics().fk(self, q)

    def jacobian(self, q: ArrayLike) -> Array:
        """Geometric Jacobian (..., 6, dof); see :func:`ikstack.kinematics.jacobian`."""
        return self._kinematics().jacobian(self, q)

    @staticmethod
    def _kinematics() -> Any:
        # The chain is data; evaluating it is the kinematics layer's job. ``chain.fk(q)`` is kept
        # as a convenience (servo-style scripts call ``model.fk(q)``). It is the one deliberate
        # exception to the layer rule: resolved lazily at call time, so importing the model
        # layer never imports kinematics and no import cycle exists.
        import importlib

        return importlib.import_module("ikstack.kinematics")

    def describe(self) -> str:
        """A readable multi-line summary: joints, types, axes, limits, tool, constraints."""
        deg = 180.0 / math.pi
        lines = [
            f"Chain {self.name or '(unnamed)'}: {self.dof} joints, {self.base} -> {self.tip}"
            + (f" -> {self.tcp_name} (TCP)" if self.tcp_name else ""),
            f"  role: {self.role.value}" + (f"; source: {self.source}" if self.source else ""),
            f"  {'#':>2} {'joint':<22} {'type':<10} {'axis':<22} {'lower':>9} {'upper':>9} "
            f"{'vel':>8} {'acc':>8}",
        ]
        for i in range(self.dof):
            t = self.joint_types[i]
            scale, unit = (1.0, "m") if t == JointType.PRISMATIC else (deg, "deg")
            ax = "(" + ", ".join(f"{a:+.3f}" for a in self.axes[i]) + ")"
            lo = f"{self.lower[i] * scale:9.2f}" if np.isfinite(self.lower[i]) else f"{'-inf':>9}"
            hi = f"{self.upper[i] * scale:9.2f}" if np.isfinite(self.upper[i]) else f"{'inf':>9}"
            v = self.velocity_limits[i] * scale
            a = self.acceleration_limits[i] * scale
            vs = f"{v:8.1f}" if np.isfinite(v) else f"{'-':>8}"
            as_ = f"{a:8.1f}" if np.isfinite(a) else f"{'-':>8}"
            lines.append(
                f"  {i + 1:>2} {self.joint_names[i]:<22} {t.name.lower():<10} {ax:<22} "
                f"{lo} {hi} {vs} {as_}  [{unit}]"
            )
        if self.tcp_name:
            p = self.T_tip_tcp[:3, 3]
            lines.append(
                f"  TCP {self.tcp_name}: translation ({p[0]:+.4f}, {p[1]:+.4f}, {p[2]:+.4f}) m"
            )
        if self.kinematic_margin:
            lines.append(f"  kinematic margin: {self.kinematic_margin * deg:.2f} deg")
        for c in self.constraints:
            desc = getattr(c, "description", "") or type(c).__name__
            lines.append(f"  constraint {c.name}: {desc}")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (
            f"Chain(name={self.name!r}, dof={self.dof}, base={self.base!r}, tip={self.tip!r}, "
            f"tcp={self.tcp_name!r})"
        )
