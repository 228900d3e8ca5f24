"""Servo inputs (joint state, commands) and outputs (action, status flags, result).

Timestamps are integer nanoseconds, as in a ROS-style control loop; durations are seconds.
Commands are plain records: the kernel validates them each cycle and answers REJECT with a
message for bad ones, so a control loop never dies on an exception from a bad message.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ikstack._deprecated import renamed_attribute, warn_deprecated, warn_renamed
from ikstack.errors import InputError

Array = NDArray[np.float64]


@dataclass(frozen=True)
class JointState:
    """The measured (or previously commanded) joint state.

    Attributes:
        q: (dof,) positions [rad or m].
        dq: (dof,) velocities [rad/s or m/s].
        stamp_ns: when it was measured [ns].
    """

    q: Any
    dq: Any
    stamp_ns: int


@dataclass(frozen=True)
class PoseCommand:
    """Servo the tool to a pose.

    Attributes:
        T_base_target: (4, 4) target pose of the tool (TCP) in the base frame.
        stamp_ns: when the command was issued [ns].
    """

    T_base_target: Any
    stamp_ns: int


class TwistFrame(IntEnum):
    """The frame a twist command is expressed in."""

    BASE = 0  #: the chain's base frame
    TOOL = 1  #: the tool frame (rotated into the base frame each cycle; point at the tool)


@dataclass(frozen=True)
class TwistCommand:
    """Move the tool with a twist.

    Attributes:
        twist: (6,) ``[v; w]`` [m/s, rad/s] of the tool origin.
        frame: :class:`TwistFrame` (or ``"base"``/``"tool"``) the twist is expressed in.
        stamp_ns: when the command was issued [ns].
    """

    twist: Any
    frame: Any
    stamp_ns: int


@dataclass(frozen=True)
class JointJogCommand:
    """Jog joints directly.

    Attributes:
        velocities: (dof,) joint velocities [rad/s or m/s] (still limited by the kernel).
        stamp_ns: when the command was issued [ns].
    """

    velocities: Any
    stamp_ns: int


class Action(IntEnum):
    """What the caller should do with a result's reference."""

    TRACK = 0  #: send the reference; the arm is moving
    HOLD = 1  #: the reference is at rest (goal reached, halted, stale, or faulted)
    #: the input was invalid; the reference is a stop within the acceleration limits from the
    #: measured state (from the last reference when the state is unusable)
    REJECT = 2


class ServoStatus(IntFlag):
    """Why the reference is what it is; several may be set at once."""

    NONE = 0
    GOAL_REACHED = 1 << 0  #: the pose is within tolerance
    VELOCITY_SCALED = 1 << 1  #: the command was scaled or clipped by velocity/acceleration
    SINGULARITY_DECELERATE = 1 << 2  #: slowing down approaching a singularity
    SINGULARITY_HALT = 1 << 3  #: halted: moving further would enter a singularity
    SINGULARITY_LEAVING = 1 << 4  #: moving away from a singularity (allowed, maybe slowed)
    JOINT_BOUND = 1 << 5  #: a joint is held back by its position limit (braking bound)
    STALE_COMMAND = 1 << 6  #: the command is older than the timeout, or missing
    SOLVER_ERROR = 1 << 7  #: the solver or motion generator failed (latched until reset)
    INVALID_INPUT = 1 << 8  #: the input was rejected
    LIMIT_CONFLICT = 1 << 9  #: the measured state made limits incompatible; priority applied
    JERK_RELAXED = 1 << 10  #: the jerk limit had to yield to position/velocity/acceleration
    SINGULARITY_ESCAPE = 1 << 11  #: an escape motion was added at an exact singularity
    COUPLED_BOUND = 1 << 12  #: a coupled-joint constraint of the chain holds the motion back


@dataclass(slots=True)
class Reference:
    """The joint reference for the next cycle.

    Attributes:
        q: (dof,) positions [rad or m] at the end of the cycle.
        dq: (dof,) velocities [rad/s or m/s] over the cycle.
    """

    q: Array
    dq: Array


@dataclass(slots=True)
class ServoResult:
    """One cycle's answer.

    Attributes:
        action: :class:`Action`.
        reference: the joint reference (always finite and within limits).
        status: :class:`ServoStatus` flags.
        message: a human-readable reason (``"ok"`` when nothing notable happened).
        task_residual: ``||J dq - task||`` of the solver's output (weighted task error rate),
            before singularity, velocity and smoothing scaling [m/s or rad/s mix].
        nullspace_speed: norm of the projected secondary velocity [rad/s].
        condition_number: condition number of the task Jacobian (inf at a singularity).
        position_error: tool position error to a pose goal [m] (0 for other commands).
        rotation_error: tool rotation error to a pose goal [rad] (0 for other commands;
            ``orientation_error``, its former name, reads and constructs with a deprecation
            warning for one release).
        solver_iterations: iterations the solver reported.
        success: the input was accepted and the solver did not fail (not ``REJECT``, no
            ``SOLVER_ERROR``).
    """

    action: Action
    reference: Reference
    status: ServoStatus
    message: str = "ok"
    task_residual: float = 0.0
    nullspace_speed: float = 0.0
    condition_number: float = 1.0
    position_error: float = 0.0
    rotation_error: float = 0.0
    solver_iterations: int = 0

    @property
    def success(self) -> bool:
        """The input was accepted and the solver did not fail: the action is not ``REJECT``
        and ``SOLVER_ERROR`` is not set (the reference is safe to send either way)."""
        return self.action != Action.REJECT and not self.status & ServoStatus.SOLVER_ERROR

    @classmethod
    def _trusted(
        cls,
        action: Action,
        q: Array,
        dq: Array,
        status: ServoStatus,
        message: str,
        task_residual: float,
        nullspace_speed: float,
        condition_number: float,
        position_error: float,
        rotation_error: float,
        solver_iterations: int,
    ) -> ServoResult:
        """The servo cycle's fast constructor: the same object as ``ServoResult(action,
        Reference(q, dq), status, ...)``, built without the two ``__init__`` calls (half a
        microsecond of a cycle). Nothing is converted or checked, as in the constructors;
        every field is given (a test keeps this list equal to the dataclass's fields)."""
        new = object.__new__
        ref = new(Reference)
        ref.q = q
        ref.dq = dq
        res = new(cls)
        res.action = action
        res.reference = ref
        res.status = status
        res.message = message
        res.task_residual = task_residual
        res.nullspace_speed = nullspace_speed
        res.condition_number = condition_number
        res.position_error = position_error
        res.rotation_error = rotation_error
        res.solver_iterations = solver_iterations
        return res

    def __repr__(self) -> str:
        """A one-line summary (the reference arrays are attributes)."""
        flags = "|".join(f.name or "" for f in ServoStatus if f and f in self.status) or "NONE"
        return (
            f"ServoResult({self.action.name}, status {flags}, {self.message!r}, "
            f"position error {self.position_error:.1e} m, rotation error "
            f"{self.rotation_error:.1e} rad, condition {self.condition_number:.3g})"
        )


ServoResult.orientation_error = renamed_attribute(  # type: ignore[attr-defined]
    "orientation_error", "rotation_error"
)
_result_init = ServoResult.__init__


@functools.wraps(_result_init)
def _result_init_renamed(self: ServoResult, *args: Any, **kwargs: Any) -> None:
    # ``orientation_error=``: the former name of rotation_error, kept one release
    if "orientation_error" in kwargs:
        if "rotation_error" in kwargs or len(args) > 8:
            raise InputError(
                "ServoResult got both rotation_error and orientation_error; pass only "
                "rotation_error"
            )
        warn_renamed("ServoResult(orientation_error=...)", "rotation_error=...")
        kwargs["rotation_error"] = kwargs.pop("orientation_error")
    _result_init(self, *args, **kwargs)


ServoResult.__init__ = _result_init_renamed  # type: ignore[method-assign]


def __getattr__(name: str) -> Any:
    # deprecated names, kept one release
    if name == "Command":
        warn_deprecated(
            "ikstack.servo.commands.Command is deprecated and goes in the next "
            "release; write PoseCommand | TwistCommand | JointJogCommand"
        )
        return PoseCommand | TwistCommand | JointJogCommand
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
