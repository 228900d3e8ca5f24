"""Parsing of servo inputs on the general path (the compiled pose path checks its own).

Each helper answers a value or an error message; the kernel turns messages into REJECT.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ikstack.kinematics._kernels import all_finite
from ikstack.servo.commands import JointJogCommand, PoseCommand, TwistCommand, TwistFrame
from ikstack.servo.cycle import JOG, MISSING, STALE
from ikstack.servo.pose_cycle import rigid_ok
from ikstack.servo.task import POSE, TWIST


def as_array(x: Any, n: int) -> np.ndarray | None:
    """``x`` as a float64 (n,) array (finiteness not checked), or None."""
    if type(x) is not np.ndarray or x.dtype != np.float64:
        try:
            x = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            return None
    if x.shape != (n,):
        return None
    return x


def as_vector(x: Any, n: int) -> np.ndarray | None:
    """``x`` as a finite float64 (n,) array, or None."""
    if type(x) is not np.ndarray or x.dtype != np.float64:
        try:
            x = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            return None
    if x.shape != (n,) or not all_finite(x):
        return None
    return x


def parse_command(command: Any, now_ns: int, n: int, timeout_s: float, eye: np.ndarray,
                  z6: np.ndarray, zn: np.ndarray) -> tuple[int, Any, Any, bool, Any, str]:
    """``(mode, target, twist, tool_frame, jog, error)`` of a command (``error`` empty when
    valid). ``eye``, ``z6``, ``zn`` fill the slots a command does not use."""
    if command is None:
        return MISSING, eye, z6, False, zn, ""
    if not isinstance(command, (PoseCommand, TwistCommand, JointJogCommand)):
        return 0, None, None, False, None, \
            f"unknown command type {type(command).__name__}; use PoseCommand, " \
            "TwistCommand, JointJogCommand or None"
    stamp = getattr(command, "stamp_ns", None)
    if type(stamp) is not int and not isinstance(stamp, np.integer):
        return 0, None, None, False, None, "command.stamp_ns must be an integer [ns]"
    if stamp > now_ns:
        return 0, None, None, False, None, f"command stamped in the future ({stamp} > {now_ns})"
    stale = (now_ns - stamp) > timeout_s * 1e9
    if type(command) is PoseCommand or isinstance(command, PoseCommand):
        T = command.T_base_target
        if type(T) is not np.ndarray or T.dtype != np.float64:
            try:
                T = np.asarray(T, dtype=np.float64)
            except (TypeError, ValueError):
                return 0, None, None, False, None, "T_base_target must be a (4, 4) array"
        if T.shape != (4, 4) or not rigid_ok(T):
            return 0, None, None, False, None, \
                "T_base_target must be a finite (4, 4) rigid transform"
        if not T.flags.c_contiguous:
            T = np.ascontiguousarray(T)
        return (STALE if stale else POSE), T, z6, False, zn, ""
    if isinstance(command, TwistCommand):
        tw = as_vector(command.twist, 6)
        if tw is None:
            return 0, None, None, False, None, "twist must be a finite (6,) array [v; w]"
        try:
            frame = TwistFrame[command.frame.upper()] if isinstance(command.frame, str) \
                else TwistFrame(command.frame)
        except (KeyError, ValueError):
            return 0, None, None, False, None, \
                f"twist frame {command.frame!r} is unknown; valid: 'base', 'tool'"
        return (STALE if stale else TWIST), eye, tw, frame == TwistFrame.TOOL, zn, ""
    if isinstance(command, JointJogCommand):
        v = as_vector(command.velocities, n)
        if v is None:
            return 0, None, None, False, None, f"jog velocities must be a finite ({n},) array"
        return (STALE if stale else JOG), eye, z6, False, v, ""
    return 0, None, None, False, None, \
        f"unknown command type {type(command).__name__}; use PoseCommand, TwistCommand, " \
        "JointJogCommand or None"
