"""The model check's report: per-target results, verdict, likely cause, table and JSON."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ikstack._deprecated import renamed_attribute
from ikstack.vocabulary import StrEnum


class CheckStatus(StrEnum):
    """Verdict of a model check, with the process exit code each maps to."""

    PASS = "pass"
    FAIL = "fail"
    SKIPPED = "skipped"

    @property
    def exit_code(self) -> int:
        """0 pass, 1 fail, 3 skipped."""
        return {CheckStatus.PASS: 0, CheckStatus.FAIL: 1, CheckStatus.SKIPPED: 3}[self]


#: the model check's failure table: symptom -> likely cause
LIKELY_CAUSES = {
    "low_pass_rate": "Jacobian becomes singular near the joint configuration used as the IK "
    "starting point; joint limits are too tight to allow the solver to converge",
    "iteration_budget": "Damping lambda too high (over-regularized); target is near a "
    "singularity; stiffness or range asymmetry",
    "skipped": "No end effector discovered on the articulation; robot type is a gripper",
    "stale_pose": "The end-effector pose does not change with the joints: a stale pose source, "
    "or a marker not attached to a moving link",
}


@dataclass(frozen=True)
class TargetResult:
    """One FK-sampled target and what the solver made of it.

    Attributes:
        index: target number.
        q_sample: (dof,) joints the target was sampled from [rad or m].
        position: (3,) target position [m].
        success: both tolerances met within the iteration budget (``reached``, its former
            name, warns).
        position_error: [m] final position error.
        rotation_error_deg: [deg] final geodesic rotation error (``orientation_error_deg``,
            its former name, warns).
        iterations: solver iterations used.
        q_final: (dof,) final joints.
        pinned_joints: joints that ended at a limit.
        history: per iteration ``(position_error [m], rotation_error [deg])``.
    """

    index: int
    q_sample: list[float]
    position: list[float]
    success: bool
    position_error: float
    rotation_error_deg: float
    iterations: int
    q_final: list[float]
    pinned_joints: list[str] = field(default_factory=list)
    history: list[tuple[float, float]] = field(default_factory=list, repr=False)

    reached = renamed_attribute("reached", "success")
    orientation_error_deg = renamed_attribute("orientation_error_deg", "rotation_error_deg")

    @property
    def status(self) -> CheckStatus:
        """``PASS`` when the target was reached, else ``FAIL``."""
        return CheckStatus.PASS if self.success else CheckStatus.FAIL

    @property
    def message(self) -> str:
        """The outcome in words."""
        return (
            f"reached in {self.iterations} iterations"
            if self.success
            else f"not reached in {self.iterations} iterations"
        )


@dataclass(frozen=True)
class JacobianIKReport:
    """Result of :func:`ikstack.validate.check_jacobian_ik`.

    Attributes:
        model: the checked model's name.
        status: :class:`CheckStatus`.
        reason: one line saying why (pass, fail, skip).
        likely_cause: the failure table's likely cause for a failure or skip ("" on a pass).
        pass_rate: share of targets reached (nan when skipped).
        min_pass_rate: the threshold.
        distinct_targets: spatially distinct target positions.
        targets: per-target results.
        diagnostics: findings that point at the cause (joints that do not move the end
            effector, condition of the start Jacobian, pinned joints...).
        config: every setting the check ran with.
    """

    model: str
    status: CheckStatus
    reason: str
    likely_cause: str
    pass_rate: float
    min_pass_rate: float
    distinct_targets: int
    targets: list[TargetResult]
    diagnostics: dict[str, Any]
    config: dict[str, Any]

    @property
    def passed(self) -> bool:
        return self.status == CheckStatus.PASS

    @property
    def success(self) -> bool:
        """The check passed (the same as :attr:`passed`)."""
        return self.status == CheckStatus.PASS

    @property
    def message(self) -> str:
        """Why, in one line (the same as :attr:`reason`)."""
        return self.reason

    @property
    def exit_code(self) -> int:
        """0 pass, 1 fail, 3 skipped."""
        return self.status.exit_code

    def to_dict(self, history: bool = False) -> dict[str, Any]:
        """Plain data for JSON (per-iteration histories only when ``history``)."""
        d = asdict(self)
        d["status"] = self.status.value
        d["exit_code"] = self.exit_code
        for t in d["targets"]:
            # SI with the unit in the key; the previous keys (position_error in m, reached,
            # orientation_error_deg and orientation_error_rad) stay one release
            t["position_m"] = t["position"]
            t["position_error_m"] = t["position_error"]
            t["reached"] = t["success"]
            t["orientation_error_deg"] = t["rotation_error_deg"]
            t["rotation_error_rad"] = math.radians(t["rotation_error_deg"])
            t["orientation_error_rad"] = t["rotation_error_rad"]
            if not history:
                t.pop("history", None)
        return _finite(d)

    def to_json(self, history: bool = False, indent: int | None = 2) -> str:
        """The report as JSON text (NaN written as null)."""
        return json.dumps(self.to_dict(history), indent=indent)

    def format_table(self) -> str:
        """The human table (see :func:`format_table`)."""
        return format_table(self)


def _finite(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_finite(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def format_table(report: JacobianIKReport) -> str:
    """A human-readable table: one row per target, then the verdict and the likely cause."""
    cfg = report.config
    lines = [
        f"Jacobian-IK model check: {report.model}",
        f"  {cfg.get('num_targets')} FK-sampled targets, DLS on a finite-difference Jacobian "
        f"(eps {cfg.get('eps'):g}), damping {cfg.get('damping'):g}, "
        f"{cfg.get('max_iterations')} iterations, tolerances "
        f"{cfg.get('position_tolerance', math.nan) * 1e3:g} mm / "
        f"{cfg.get('rotation_tolerance_deg'):g} deg",
    ]
    if cfg.get("max_step") is not None:
        lines.append(
            f"  step clamp: every DLS step scaled to move no joint more than "
            f"{cfg['max_step']:g} (not plain DLS)"
        )
    if report.targets:
        lines.append(
            f"  {'#':>3}  {'reached':<7}  {'pos err [mm]':>12}  {'rot err [deg]':>13}  "
            f"{'iters':>5}  target position [mm]"
        )
        for t in report.targets:
            p = ", ".join(f"{v * 1e3:+.1f}" for v in t.position)
            pin = f"  pinned: {', '.join(t.pinned_joints)}" if t.pinned_joints else ""
            lines.append(
                f"  {t.index:>3}  {'yes' if t.success else 'NO':<7}  "
                f"{t.position_error * 1e3:12.3f}  {t.rotation_error_deg:13.3f}  "
                f"{t.iterations:>5}  ({p}){pin}"
            )
    if report.status != CheckStatus.SKIPPED:
        lines.append(
            f"  pass rate {report.pass_rate:.2f} (minimum {report.min_pass_rate:.2f}); "
            f"{report.distinct_targets} spatially distinct targets"
        )
    lines.append(
        f"  result: {report.status.value.upper()} (exit code {report.exit_code}): {report.reason}"
    )
    if report.likely_cause:
        lines.append(f"  likely cause: {report.likely_cause}")
    for k, v in report.diagnostics.items():
        lines.append(f"  {k}: {v}")
    return "\n".join(lines)
