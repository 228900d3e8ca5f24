"""Settings and per-step results of the velocity QP (the published Tianji differential-IK port).

The QP's defaults and equations are those of tianji-control's ``diff_ik`` as the published
port (manimux ``tianji_diff``) runs it:
task weights ``w_pos = w_rot = 1``, regularization ``lam = 1e-3``, joint-limit avoidance
``mu = 1000`` with a 25 deg activation band, a 5 mm lag guard. Velocity limits are never a
setting: they always come from the chain's motion limits (one copy of the arm's speed limit).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ikstack._deprecated import renamed_attribute, renamed_module_names, warn_deprecated
from ikstack.errors import ConfigError
from ikstack.vocabulary import StrEnum

Array = NDArray[np.float64]

#: the shortest step [s]: ``dt = max(dt_in, DT_MIN_S)`` (the caller's duration is never capped)
DT_MIN_S = 1e-6
#: settings every OSQP problem of the velocity QP gets; everything else is OSQP's default
#: unless the configuration says otherwise (as the published port runs it)
OSQP_FIXED_SETTINGS = {"verbose": False, "polishing": False, "warm_starting": True}
#: profile keys accepted under another name: the published port's key on the left
ALIASES = {"j67_margin_deg": "coupled_margin_deg"}


class LagPolicy(StrEnum):
    """What a residual over the lag thresholds means."""

    ABORT = "abort"  #: a tracking_lag failure (library default)
    REPORT = "report"  #: keep the bounded step, count the exceedance


class StepStatus(StrEnum):
    """Why a step was accepted or rejected, in priority order after the QP (``StepReason``,
    its former name, warns); also a :class:`~ikstack.diffik.DiffIKResult`'s status."""

    QP_INFEASIBLE = "qp_infeasible"  #: an empty velocity box, or the QP solver did not solve it
    QP_FAILED = "qp_failed"  #: the solver returned a non-finite (or otherwise unusable) solution
    JOINT_LIMIT = "joint_limit"  #: the step left the margin-adjusted limits
    COUPLED_JOINT = "coupled_joint"  #: the step violates a coupled-joint constraint
    TRACKING_LAG = "tracking_lag"  #: residual over the lag guard (abort policy)
    OK = "ok"


class InternalUnits(StrEnum):
    """Units the QP is written in: the port's mm/deg (its weighting exactly) or SI."""

    MM_DEG = "mm_deg"
    SI = "si"


class QPSolverKind(StrEnum):
    """Which QP solver runs the step."""

    OSQP = "osqp"
    ACTIVE_SET = "active_set"


_FIELDS = (
    "w_pos",
    "w_rot",
    "lam",
    "limit_margin_deg",
    "coupled_margin_deg",
    "mu_nullspace",
    "nullspace_activation_deg",
    "nullspace_weights",
    "max_lag_mm",
    "max_lag_deg",
    "lag_policy",
    "internal_units",
    "qp_solver",
    "dt_max_s",
    "eps_abs",
    "eps_rel",
    "max_iter",
    "adaptive_rho_interval",
    "scaling",
)


@dataclass(frozen=True)
class DiffQPConfig:
    """Tuning of the velocity QP (all validated on construction).

    Attributes:
        w_pos, w_rot: task weights of the linear and angular rows (finite, >= 0, not both 0).
        lam: regularization ``lam ||qdot||^2`` (finite, >= 0).
        limit_margin_deg: margin kept from the position limits [deg]; None inherits the chain's
            kinematic margin, which it may raise but never lower.
        coupled_margin_deg: buffer on the chain's coupled-joint rows in the QP [deg] (positive,
            overrides); None inherits the joint margin (``limit_margin_deg``, itself the arm's
            kinematic margin, 5 deg on the Marvin arms, when None), as the published port does.
            Profiles may call it ``j67_margin_deg``.
        mu_nullspace: weight of the joint-limit-avoidance gradient (finite, >= 0).
        nullspace_activation_deg: activation band [deg] (> 0); None selects the global form.
        nullspace_weights: per-joint weights (finite, >= 0, one per joint); None for ones.
        max_lag_mm: position residual guard at the flange after each step [mm] (> 0).
        max_lag_deg: optional guard on the maximum wrapped XYZ-Euler residual [deg] (> 0).
        lag_policy: ``abort`` (a residual over a guard fails the step) or ``report``.
        internal_units: ``mm_deg`` (the port's weighting, default) or ``si``.
        qp_solver: ``osqp`` (default) or ``active_set`` (ikstack's own dense solver).
        dt_max_s: optional bound on the chunk decoder's substep length [s] (with its
            ``ik_validation_dt_s``); None: no further bound. The solver itself always integrates
            the duration its caller supplies (at least :data:`DT_MIN_S`).
        eps_abs, eps_rel, max_iter, adaptive_rho_interval, scaling: OSQP settings; None (the
            default) keeps OSQP's own default, as the published port does (OSQP 1.x: 1e-3,
            1e-3, 4000, 50, 10). Tighter tolerances (e.g. 1e-9) bring each step within ~1e-6
            deg of the exact QP solution, at several times the iterations; the parity benchmark
            shows both.
    """

    w_pos: float = 1.0
    w_rot: float = 1.0
    lam: float = 1e-3
    limit_margin_deg: float | None = None
    coupled_margin_deg: float | None = None
    mu_nullspace: float = 1000.0
    nullspace_activation_deg: float | None = 25.0
    nullspace_weights: tuple[float, ...] | None = None
    max_lag_mm: float = 5.0
    max_lag_deg: float | None = None
    lag_policy: LagPolicy = LagPolicy.ABORT
    internal_units: InternalUnits = InternalUnits.MM_DEG
    qp_solver: QPSolverKind = QPSolverKind.OSQP
    dt_max_s: float | None = None
    eps_abs: float | None = None
    eps_rel: float | None = None
    max_iter: int | None = None
    adaptive_rho_interval: int | None = None
    scaling: int | None = None
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        where = f" in {self.source}" if self.source else ""

        def bad(name: str, why: str, value: Any) -> ConfigError:
            return ConfigError(f"diff_ik.{name}{where}: {why}; got {value!r}")

        def num(name: str, *, positive: bool = False, optional: bool = False) -> None:
            v = getattr(self, name)
            if v is None:
                if optional:
                    return
                raise bad(name, "a number is required", v)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise bad(name, "must be a number", v)
            v = float(v)
            if not math.isfinite(v):
                raise bad(name, "must be finite", v)
            if positive and v <= 0:
                raise bad(name, "must be positive", v)
            if v < 0:
                raise bad(name, "must not be negative", v)
            object.__setattr__(self, name, v)

        for name in ("w_pos", "w_rot", "lam", "mu_nullspace"):
            num(name)
        if self.w_pos == 0 and self.w_rot == 0:
            raise bad("w_pos", "w_pos and w_rot cannot both be zero", 0.0)
        num("limit_margin_deg", optional=True)
        num("coupled_margin_deg", positive=True, optional=True)
        num("nullspace_activation_deg", positive=True, optional=True)
        num("max_lag_mm", positive=True)
        num("max_lag_deg", positive=True, optional=True)
        num("dt_max_s", positive=True, optional=True)
        num("eps_abs", positive=True, optional=True)
        num("eps_rel", positive=True, optional=True)
        for name, least in (("max_iter", 1), ("adaptive_rho_interval", 0), ("scaling", 0)):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < least):
                raise bad(name, f"must be an integer >= {least}", v)
        if self.nullspace_weights is not None:
            w = self.nullspace_weights
            if isinstance(w, (str, bytes)) or not hasattr(w, "__len__"):
                raise bad("nullspace_weights", "must be a list of numbers, one per joint", w)
            vals = []
            for x in w:
                if (
                    isinstance(x, bool)
                    or not isinstance(x, (int, float))
                    or not math.isfinite(x)
                    or x < 0
                ):
                    raise bad("nullspace_weights", "every weight must be finite and >= 0", list(w))
                vals.append(float(x))
            object.__setattr__(self, "nullspace_weights", tuple(vals))
        for name, enum in (
            ("lag_policy", LagPolicy),
            ("internal_units", InternalUnits),
            ("qp_solver", QPSolverKind),
        ):
            v = getattr(self, name)
            try:
                object.__setattr__(self, name, enum(v))
            except ValueError:
                valid = ", ".join(e.value for e in enum)
                raise bad(name, f"must be one of {valid}", v) from None

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        """Names of the settings a profile may give (see :data:`ALIASES` for other names)."""
        return _FIELDS

    def osqp_settings(self) -> dict[str, Any]:
        """The OSQP settings of this configuration: :data:`OSQP_FIXED_SETTINGS` plus every
        OSQP setting given (not None); OSQP's own defaults for the rest."""
        out: dict[str, Any] = dict(OSQP_FIXED_SETTINGS)
        for name in ("eps_abs", "eps_rel", "max_iter", "adaptive_rho_interval", "scaling"):
            v = getattr(self, name)
            if v is not None:
                out[name] = v
        return out

    def with_source(self, source: str) -> DiffQPConfig:
        """A copy whose error messages name ``source`` (a file).

        Deprecated: ``dataclasses.replace(config, source=...)`` does the same; it goes in the
        next release.
        """
        warn_deprecated(
            "DiffQPConfig.with_source is deprecated and goes in the next release; use "
            "dataclasses.replace(config, source=...)"
        )
        return replace(self, source=source)

    def to_dict(self) -> dict[str, Any]:
        """Plain values of every setting (enums as strings)."""
        out: dict[str, Any] = {}
        for name in _FIELDS:
            v = getattr(self, name)
            out[name] = v.value if isinstance(v, Enum) else (list(v) if isinstance(v, tuple) else v)
        return out


@dataclass(frozen=True)
class StepResult:
    """One differential-IK step.

    Attributes:
        q: (dof,) joint positions after the step [rad]; the input ``q`` when the step failed.
        qdot: (dof,) joint velocities of the step [rad/s]; zeros when it failed.
        status: :class:`StepStatus` (``ok`` when accepted; ``reason``, its former name, warns).
        dt: the duration actually integrated [s] (the caller's, at least 1 us).
        position_residual_m: flange position residual after the step [m] (nan if no step).
        euler_residual_deg: maximum wrapped Euler residual after the step [deg]: SciPy's
            ``as_euler("xyz")`` (extrinsic x-y-z) of both rotations, difference wrapped to
            [-180, 180) (nan if no step).
        lag_exceeded: the residual exceeded a lag guard (under both policies).
        qp_status: the QP solver's status text.
        iterations: QP iterations.
        message: a readable explanation.
    """

    q: Array
    qdot: Array
    status: StepStatus
    dt: float
    position_residual_m: float = math.nan
    euler_residual_deg: float = math.nan
    lag_exceeded: bool = False
    qp_status: str = ""
    iterations: int = 0
    message: str = "ok"

    reason = renamed_attribute("reason", "status")

    @property
    def success(self) -> bool:
        """Whether the step was accepted."""
        return self.status == StepStatus.OK


@dataclass
class QPData:
    """The QP of one step in the solver's internal units, for inspection (``build`` output).

    ``minimize 1/2 x^T P x + c^T x`` s.t. ``lower <= x <= upper`` and ``G x <= h``.
    """

    P: Array
    c: Array
    lower: Array
    upper: Array
    G: Array
    h: Array
    dt: float
    empty_box: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))


#: names renamed in this release, kept one release (they warn)
__getattr__ = renamed_module_names(__name__, {"StepReason": (__name__, "StepStatus")})
