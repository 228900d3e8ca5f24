"""ServoConfig: every tunable of the servo kernel, validated once.

Defaults follow MoveIt Servo (moveit2 ``moveit_servo``) where it has one: incoming command
timeout 0.1 s, pose tolerances 0.001 m / 0.01 rad, joint limit margin 0.1 rad, Cartesian scale
0.4 m/s and 0.8 rad/s, singularity thresholds 17 (decelerate) and 30 (halt), leaving multiplier
2, a stop threshold of 1e-4 per joint.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ikstack._deprecated import renamed_attribute, warn_renamed
from ikstack.errors import ConfigError

Array = NDArray[np.float64]


@dataclass(frozen=True)
class ServoConfig:
    """Settings of :class:`~ikstack.servo.Servo`. Units: SI (m, rad, s).

    Attributes:
        task_axes: which rows of ``[x, y, z, rx, ry, rz]`` (base frame) the task controls;
            ``(0, 1)`` for a planar arm's position.
        task_weights: (6,) weight of each task row (applied to the selected rows).
        max_linear_speed: cap on the commanded tool speed [m/s] (MoveIt ``scale.linear``).
        max_angular_speed: cap on the commanded tool angular speed [rad/s].
        pose_gain: proportional gain of the pose task [1/s]: ``v = gain * error``, capped.
        position_tolerance: a pose goal counts as reached within this [m].
        rotation_tolerance: ... and within this rotation angle [rad] (``orientation_tolerance``,
            its former name, warns, as a keyword or an attribute).
        nullspace_gain: gain of the posture term [1/s]; 0 disables it.
        nullspace_reference: (dof,) posture; ``None`` means no posture term.
        joint_centering_gain: gain toward the middle of finite limits [1/s]; 0 disables it.
        damping: lambda of the task problem (DLS damping; makes the QP strictly convex).
        command_timeout: a command older than this [s] is stale (smooth halt, then HOLD).
        stop_velocity: the reference counts as stopped when every |dq| is below this.
        singularity_decelerate: condition number where deceleration starts (MoveIt 17).
        singularity_halt: condition number of a halt when moving toward it (MoveIt 30).
        leaving_multiplier: when leaving, the halt threshold is
            ``decelerate + (halt - decelerate) * multiplier`` (MoveIt: 17 + 13 x 2 = 43).
        singularity_probe: size of MoveIt's look-ahead step along the last singular vector.
        halt_scale: moving toward a singularity, a speed scale at or below this halts (the
            linear scale only reaches zero asymptotically, which would creep on forever).
        leaving_min_scale: the least speed scale of motion that leaves a singularity; such
            motion is never halted (ikstack's fix of MoveIt's stuck-at-singularity behaviour).
        escape_speed: joint speed [rad/s] of the escape motion tried at an exact singularity
            when the task cannot be reached to first order (stretched arm, zero pose).
        joint_limit_margin: distance [rad or m] from position limits where a joint may not keep
            moving toward its limit (MoveIt 0.1); the hard limit stays enforced by braking.
        state_tolerance: measured positions may exceed limits by this much before REJECT.
        smoothing: first-order low-pass factor in [0, 1) on the solver's velocity (0 = off);
            the result still passes every limit.
        max_dt: a cycle whose ``dt`` exceeds this [s] is rejected (protects integration).
    """

    task_axes: tuple[int, ...] = (0, 1, 2, 3, 4, 5)
    task_weights: tuple[float, ...] = (1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
    max_linear_speed: float = 0.4
    max_angular_speed: float = 0.8
    pose_gain: float = 10.0
    position_tolerance: float = 0.001
    rotation_tolerance: float = 0.01
    nullspace_gain: float = 0.0
    nullspace_reference: Any = None
    joint_centering_gain: float = 0.0
    damping: float = 1e-3
    command_timeout: float = 0.1
    stop_velocity: float = 1e-4
    singularity_decelerate: float = 17.0
    singularity_halt: float = 30.0
    leaving_multiplier: float = 2.0
    singularity_probe: float = 0.01
    halt_scale: float = 0.05
    leaving_min_scale: float = 0.5
    escape_speed: float = 0.1
    joint_limit_margin: float = 0.1
    state_tolerance: float = 1e-6
    smoothing: float = 0.0
    max_dt: float = 1.0
    _posture: Array | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        axes = tuple(int(a) for a in self.task_axes)
        if not axes or len(set(axes)) != len(axes) or any(a < 0 or a > 5 for a in axes):
            raise ConfigError(f"task_axes must be distinct indices in 0..5; got {self.task_axes}")
        object.__setattr__(self, "task_axes", tuple(sorted(axes)))
        w = tuple(float(x) for x in self.task_weights)
        if len(w) != 6 or not all(math.isfinite(x) and x > 0 for x in w):
            raise ConfigError(f"task_weights must be 6 positive numbers; got {self.task_weights}")
        object.__setattr__(self, "task_weights", w)
        positive = (
            "max_linear_speed",
            "max_angular_speed",
            "pose_gain",
            "position_tolerance",
            "rotation_tolerance",
            "command_timeout",
            "stop_velocity",
            "singularity_decelerate",
            "singularity_probe",
            "max_dt",
        )
        non_negative = (
            "nullspace_gain",
            "joint_centering_gain",
            "damping",
            "leaving_multiplier",
            "escape_speed",
            "joint_limit_margin",
            "state_tolerance",
        )
        for names, zero_ok in ((positive, False), (non_negative, True)):
            for name in names:
                v = float(getattr(self, name))
                if not (math.isfinite(v) and (v >= 0 if zero_ok else v > 0)):
                    rule = ">= 0" if zero_ok else "> 0"
                    raise ConfigError(f"ServoConfig.{name} must be finite and {rule}; got {v}")
                object.__setattr__(self, name, v)
        if not self.singularity_halt > self.singularity_decelerate:
            raise ConfigError(
                "ServoConfig.singularity_halt must exceed singularity_decelerate; "
                f"got {self.singularity_halt} <= {self.singularity_decelerate}"
            )
        if not 0.0 <= self.halt_scale < 1.0:
            raise ConfigError(f"ServoConfig.halt_scale must be in [0, 1); got {self.halt_scale}")
        if not 0.0 <= self.leaving_min_scale <= 1.0:
            raise ConfigError(
                f"ServoConfig.leaving_min_scale must be in [0, 1]; got {self.leaving_min_scale}"
            )
        if not 0.0 <= self.smoothing < 1.0:
            raise ConfigError(f"ServoConfig.smoothing must be in [0, 1); got {self.smoothing}")
        if self.nullspace_reference is not None:
            p = np.array(self.nullspace_reference, dtype=np.float64).reshape(-1)
            if not np.all(np.isfinite(p)):
                raise ConfigError("ServoConfig.nullspace_reference must be finite")
            p.flags.writeable = False
            object.__setattr__(self, "_posture", p)

    @property
    def leaving_halt(self) -> float:
        """Halt threshold when moving away from a singularity (MoveIt: 17 + 13 x 2 = 43)."""
        return (
            self.singularity_decelerate
            + (self.singularity_halt - self.singularity_decelerate) * self.leaving_multiplier
        )

    @property
    def posture(self) -> Array | None:
        """The nullspace reference as a read-only float array (or ``None``)."""
        return self._posture


ServoConfig.orientation_tolerance = renamed_attribute(  # type: ignore[attr-defined]
    "orientation_tolerance", "rotation_tolerance"
)
_dataclass_init = ServoConfig.__init__


@functools.wraps(_dataclass_init)
def _init(
    self: ServoConfig, *args: Any, orientation_tolerance: float | None = None, **kwargs: Any
) -> None:
    # ``orientation_tolerance=``: the former name of rotation_tolerance, kept one release
    if orientation_tolerance is not None:
        if "rotation_tolerance" in kwargs or len(args) > 6:
            raise ConfigError(
                "ServoConfig got both rotation_tolerance and "
                "orientation_tolerance; pass only rotation_tolerance"
            )
        warn_renamed("ServoConfig(orientation_tolerance=...)", "rotation_tolerance=...")
        kwargs["rotation_tolerance"] = orientation_tolerance
    _dataclass_init(self, *args, **kwargs)


ServoConfig.__init__ = _init  # type: ignore[method-assign]
