"""One arm's chunk decode: the differential (QP) method and the analytic method.

Both turn H TCP knots at a fixed action interval into H joint knots from the measured state.

* ``diff``: each knot's SE(3) segment starts at the TCP pose (FK) of the joints actually
  reached (the measured state for knot 0), not at the previous target knot, as the published
  port's adapter does: under lag the two differ. It is divided into
  ``ceil(interval / substep)`` equal substeps (``substep`` = ``ik_validation_dt_s``, or the QP's
  ``dt_max_s`` when that is shorter) along straight-line position and geodesic rotation; each
  substep's flange target (through the mounted tool) is tracked by one QP step given the
  substep's actual duration; the last substep lands on the knot. Only the final joint state of
  each source knot is kept. The solver is reset (primal and dual) at the start of every chunk.
  The lag figures (worst position and Euler residual, exceedances) cover the accepted steps.
* ``analytic``: per knot, analytic IK seeded from the previous knot; candidates must pass the
  FK gate, the joint-limit margins and the coupled-joint constraints; the branch check rejects a
  knot whose largest per-joint jump from the seed exceeds ``branch_check_deg`` unless a valid
  alternative stays within it (the closest is chosen).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ikstack._deprecated import renamed_attribute, renamed_module_names, warn_renamed
from ikstack.chunk.types import ArmDecodeResult, DecodeMethod, DecodeStatus, LagStats
from ikstack.diffik.qp_config import DiffQPConfig
from ikstack.diffik.qp_select import make_velocity_qp
from ikstack.errors import ConfigError, InputError, ShapeError
from ikstack.ik import certify
from ikstack.kinematics import fk
from ikstack.model import Chain
from ikstack.spatial import as_transforms, as_vectors, se3
from ikstack.vocabulary import ANALYTIC_MODES, DECODE_METHODS, AnalyticMode

Array = NDArray[np.float64]

#: default substep bound of the diff method [s]
DEFAULT_IK_VALIDATION_DT_S = 0.004


@dataclass(frozen=True)
class AnalyticDecodeConfig:
    """Settings of the analytic decode method (``AnalyticSettings``, its former name, warns).

    Attributes:
        branch_check_deg: largest per-joint jump from the seed a knot may make [deg].
        position_tolerance_m, rotation_tolerance_deg: the FK gate [m], [deg].
        limit_margin_deg: margin from the position limits [deg]; None inherits the chain's
            kinematic margin (never lower).
        mode: the analytic solver's :class:`~ikstack.vocabulary.AnalyticMode` (or its name;
            ``"near"`` handles near-SRS arms such as Marvin).

    Raises:
        ConfigError: a mode that is not one of :data:`~ikstack.vocabulary.ANALYTIC_MODES`.
    """

    branch_check_deg: float = 1.8
    position_tolerance_m: float = 1e-4
    rotation_tolerance_deg: float = 0.06
    limit_margin_deg: float | None = None
    mode: str = AnalyticMode.NEAR

    def __post_init__(self) -> None:
        if self.mode not in ANALYTIC_MODES:
            raise ConfigError(f"mode must be one of {', '.join(ANALYTIC_MODES)}; got {self.mode!r}")
        object.__setattr__(self, "mode", AnalyticMode(self.mode))


def _chunk_targets(T: Any, name: str) -> Array:
    arr = np.asarray(T, dtype=np.float64)
    if arr.ndim != 3 or arr.shape[1:] != (4, 4) or arr.shape[0] == 0:
        raise ShapeError(name, arr.shape, "(H, 4, 4) with H >= 1")
    return as_transforms(arr, name)


@dataclass(frozen=True)
class ArmDecodeConfig:
    """How one arm's chunks are decoded: the method and its settings (``ArmDecoder(name, chain,
    config=ArmDecodeConfig("diff", diff=DiffQPConfig(...)))``).

    Attributes:
        method: :class:`DecodeMethod` (or ``"analytic"``, ``"diff"``).
        analytic: settings of the analytic method.
        diff: QP tuning of the diff method.
        ik_validation_dt_s: the diff method's longest substep [s].

    Raises:
        ConfigError: an unknown method, a bad substep, or settings of the wrong type.
    """

    method: str = DecodeMethod.ANALYTIC
    analytic: AnalyticDecodeConfig = field(default_factory=AnalyticDecodeConfig)
    diff: DiffQPConfig = field(default_factory=DiffQPConfig)
    ik_validation_dt_s: float = DEFAULT_IK_VALIDATION_DT_S

    def __post_init__(self) -> None:
        if self.method not in DECODE_METHODS:
            raise ConfigError(
                f"method (ik_method) must be one of {', '.join(DECODE_METHODS)}; got "
                f"{self.method!r}"
            )
        dt = self.ik_validation_dt_s
        if isinstance(dt, bool) or not (
            isinstance(dt, (int, float)) and math.isfinite(dt) and dt > 0
        ):
            raise ConfigError(
                f"ik_validation_dt_s must be a positive number of seconds; got {dt!r}"
            )
        for name, kind in (("analytic", AnalyticDecodeConfig), ("diff", DiffQPConfig)):
            if not isinstance(getattr(self, name), kind):
                raise ConfigError(
                    f"{name} must be a {kind.__name__}; got {type(getattr(self, name)).__name__}"
                )
        object.__setattr__(self, "method", DecodeMethod(self.method))
        object.__setattr__(self, "ik_validation_dt_s", float(dt))


#: ``ArmDecoder``'s former settings arguments, in their positional order
_OLD_ARGS = ("method", "diff_config", "analytic", "ik_validation_dt_s")


def _old_arguments(
    config: ArmDecodeConfig | str | None, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> ArmDecodeConfig:
    """The :class:`ArmDecodeConfig` of the previous release's ``ArmDecoder`` arguments
    (``method, diff_config, analytic, ik_validation_dt_s`` and ``backend=``); they warn."""
    given: dict[str, Any] = {}
    positional = args if config is None else (config, *args)
    if len(positional) > len(_OLD_ARGS):
        raise InputError(
            f"ArmDecoder takes name, chain and config; got {len(positional)} more arguments"
        )
    given.update(zip(_OLD_ARGS, positional, strict=False))
    for key, value in kwargs.items():
        if key == "backend":
            warn_renamed("ArmDecoder(backend=...)", "config=ArmDecodeConfig(method=...)")
            key = "method"
        elif key not in _OLD_ARGS:
            raise TypeError(f"ArmDecoder() got an unexpected keyword argument {key!r}")
        if key in given:
            raise InputError(f"ArmDecoder got {key!r} twice")
        given[key] = value
    others = [k for k in given if k != "method" or "backend" not in kwargs]
    if others:
        warn_renamed(
            f"ArmDecoder({', '.join(others)})",
            "ArmDecoder(name, chain, config=ArmDecodeConfig(method, analytic=, diff=, "
            "ik_validation_dt_s=))",
        )
    return ArmDecodeConfig(
        given.get("method", DecodeMethod.ANALYTIC),
        given.get("analytic") or AnalyticDecodeConfig(),
        given.get("diff_config") or DiffQPConfig(),
        given.get("ik_validation_dt_s", DEFAULT_IK_VALIDATION_DT_S),
    )


class ArmDecoder:
    """Decodes chunks for one arm (a chain with its mounted tool as TCP).

    Args:
        name: the arm's name (reported in rejections).
        chain: the arm; its TCP is the mounted tool the targets refer to.
        config: an :class:`ArmDecodeConfig`: the method and its settings (default: analytic).

    The previous release's settings arguments (``method``, ``diff_config``, ``analytic``,
    ``ik_validation_dt_s``, by position or keyword, and ``backend``) still work and warn.

    Raises:
        ConfigError: an unknown method, a bad substep, or (analytic) no analytic solver.
    """

    def __init__(
        self,
        name: str,
        chain: Chain,
        config: ArmDecodeConfig | None = None,
        *old_args: Any,
        **old_kwargs: Any,
    ):
        self.name = name
        self.chain = chain
        if old_args or old_kwargs or not (config is None or isinstance(config, ArmDecodeConfig)):
            config = _old_arguments(config, old_args, old_kwargs)
        self.config = config or ArmDecodeConfig()
        self.T_tcp_flange = se3.inverse(chain.T_tip_tcp)
        if self.method == "diff":
            self.qp = make_velocity_qp(chain, self.config.diff)
        else:
            self._init_analytic()

    @property
    def method(self) -> DecodeMethod:
        """The decode method (``config.method``; ``backend``, its former name, warns)."""
        return DecodeMethod(self.config.method)

    @property
    def ik_validation_dt_s(self) -> float:
        """The diff method's longest substep [s] (``config.ik_validation_dt_s``)."""
        return self.config.ik_validation_dt_s

    @property
    def diff_config(self) -> DiffQPConfig:
        """Deprecated: ``config.diff``."""
        warn_renamed("ArmDecoder.diff_config", ".config.diff")
        return self.config.diff

    @property
    def analytic(self) -> AnalyticDecodeConfig:
        """Deprecated: ``config.analytic``."""
        warn_renamed("ArmDecoder.analytic", ".config.analytic")
        return self.config.analytic

    def _init_analytic(self) -> None:
        try:
            from ikstack.ik.analytic import AnalyticIK  # type: ignore[attr-defined]
        except ImportError as exc:
            raise ConfigError(
                "ik_method 'analytic' needs ikstack.ik.analytic.AnalyticIK, which is not "
                f"available in this installation ({exc}); use ik_method: diff"
            ) from None
        s = self.config.analytic
        self.ik = AnalyticIK(self.chain, mode=s.mode)
        lm = (
            self.chain.kinematic_margin
            if s.limit_margin_deg is None
            else math.radians(s.limit_margin_deg)
        )
        if lm < self.chain.kinematic_margin - 1e-12:
            raise ConfigError(
                f"analytic_ik.limit_margin_deg {s.limit_margin_deg} is below the "
                "arm's kinematic margin"
            )
        self.analytic_margin = lm

    backend = renamed_attribute("backend", "method")

    def warm_up(self) -> None:
        """Run one tiny decode so compiled kernels and caches are loaded before real chunks."""
        q = np.clip(self.chain.middle(), self.chain.lower + 0.2, self.chain.upper - 0.2)
        if self.chain.constraints and not self.chain.constraints_satisfied(q):
            q = np.zeros(self.chain.dof)
        T = fk(self.chain, q)[None]
        try:
            self.decode(q, T, self.ik_validation_dt_s)
        finally:
            if self.method == "diff":
                self.qp.reset()

    # ------------------------------------------------------------------ entry point
    def decode(self, q0: Any, T_base_tcp: Any, action_interval_s: float) -> ArmDecodeResult:
        """Decode one chunk for this arm.

        Args:
            q0: (dof,) measured joint state [rad] (the seed).
            T_base_tcp: (H, 4, 4) TCP targets.
            action_interval_s: the fixed policy action interval [s].

        Raises:
            ShapeError, NonFiniteError, NotRigidTransformError, InputError: bad inputs.
        """
        q = as_vectors(q0, f"q_observed[{self.name!r}]", self.chain.dof)
        if q.shape != (self.chain.dof,):
            raise ShapeError(f"q_observed[{self.name!r}]", q.shape, f"({self.chain.dof},)")
        T = _chunk_targets(T_base_tcp, f"T_base_tcp[{self.name!r}]")
        if not (math.isfinite(action_interval_s) and action_interval_s > 0):
            raise InputError(f"action_interval_s must be positive; got {action_interval_s}")
        if self.method == "diff":
            return self._decode_diff(q.copy(), T, float(action_interval_s))
        return self._decode_analytic(q.copy(), T)

    def substeps(self, action_interval_s: float) -> int:
        """Substeps per knot: ``ceil(interval / bound)``, the bound being ``ik_validation_dt_s``
        or the QP's ``dt_max_s`` when that is shorter (a 1e-9 slack keeps an exact multiple
        from gaining a substep through round-off)."""
        bound = self.ik_validation_dt_s
        if self.config.diff.dt_max_s is not None:
            bound = min(bound, self.config.diff.dt_max_s)
        return max(1, math.ceil(action_interval_s / bound - 1e-9))

    # ------------------------------------------------------------------ diff
    def _decode_diff(self, q: Array, T: Array, interval: float) -> ArmDecodeResult:
        qp = self.qp
        qp.reset()
        H = T.shape[0]
        n_sub = self.substeps(interval)
        dt = interval / n_sub
        frac = np.arange(1, n_sub + 1, dtype=np.float64) / n_sub
        out = np.empty((H, self.chain.dof))
        worst_p, worst_e, exceed, steps = 0.0, 0.0, 0, 0
        for k in range(H):
            # the segment starts where the arm actually is, not at the previous target knot
            T_start = fk(self.chain, q)
            T_flange = se3.interpolate(T_start, T[k], frac) @ self.T_tcp_flange
            for j in range(n_sub):
                r = qp.step_trusted(q, np.ascontiguousarray(T_flange[j]), dt)
                steps += 1
                if not r.success:
                    out[k:] = q
                    return ArmDecodeResult(
                        self.name,
                        False,
                        out,
                        k,
                        j,
                        DecodeStatus(r.status.value),
                        r.message,
                        LagStats(worst_p, worst_e, exceed, steps),
                    )
                worst_p = max(worst_p, r.position_residual_m * 1000.0)
                worst_e = max(worst_e, r.euler_residual_deg)
                exceed += int(r.lag_exceeded)
                q = r.q
            out[k] = q
        return ArmDecodeResult(self.name, True, out, lag=LagStats(worst_p, worst_e, exceed, steps))

    # ------------------------------------------------------------------ analytic
    def _decode_analytic(self, q: Array, T: Array) -> ArmDecodeResult:
        s = self.config.analytic
        ch = self.chain
        H = T.shape[0]
        out = np.empty((H, ch.dof))
        branch = math.radians(s.branch_check_deg)
        for k in range(H):
            res = self.ik.solve(T[k : k + 1], q[None, :], return_all=True)
            cands = [np.asarray(res.q[0], dtype=np.float64)]
            if res.q_all is not None and res.valid_all is not None:
                cands += [
                    np.asarray(c, dtype=np.float64)
                    for c in np.asarray(res.q_all)[0][np.asarray(res.valid_all)[0]]
                ]
            C = np.array(cands)
            fk_ok, _, _ = certify(
                ch,
                C,
                T[k],
                s.position_tolerance_m,
                math.radians(s.rotation_tolerance_deg),
                check_constraints=False,
            )
            lim_ok = ch.within_limits(C, tol=1e-9, margin=self.analytic_margin)
            con_ok = ch.constraints_satisfied(C) if ch.constraints else np.ones(len(C), bool)
            valid = fk_ok & lim_ok & con_ok
            jump = np.max(np.abs(C - q), axis=1)
            pick = -1
            if valid[0] and jump[0] <= branch:
                pick = 0
            else:
                ok = np.flatnonzero(valid & (jump <= branch))
                if ok.size:
                    pick = int(ok[np.argmin(jump[ok])])
            if pick < 0:
                if valid.any():
                    reason, msg = (
                        "branch_jump",
                        (
                            f"every valid solution jumps more than {s.branch_check_deg} deg "
                            f"(smallest {math.degrees(float(jump[valid].min())):.3f} deg)"
                        ),
                    )
                elif (fk_ok & ~lim_ok).any():
                    reason, msg = "joint_limit", "solutions leave the margin-adjusted limits"
                elif (fk_ok & lim_ok & ~con_ok).any():
                    reason, msg = "coupled_joint", "solutions violate a coupled-joint constraint"
                else:
                    reason, msg = "ik_failed", "no analytic solution met the FK tolerances"
                out[k:] = q
                return ArmDecodeResult(self.name, False, out, k, -1, DecodeStatus(reason), msg)
            q = C[pick].copy()
            out[k] = q
        return ArmDecodeResult(self.name, True, out)


__getattr__ = renamed_module_names(
    __name__, {"AnalyticSettings": (__name__, "AnalyticDecodeConfig")}
)
