"""The real-time servo kernel: pose, twist and joint-jog commands to safe joint references.

``Servo(chain, ServoConfig(...), differential_ik=...)`` and
``step(JointState(q, dq, stamp_ns), command, dt, now_ns) -> ServoResult``.
"""

from ikstack.servo.commands import (
    Action,
    JointJogCommand,
    JointState,
    PoseCommand,
    Reference,
    ServoResult,
    ServoStatus,
    TwistCommand,
    TwistFrame,
)
from ikstack.servo.config import ServoConfig
from ikstack.servo.kernel import Servo
from ikstack.servo.motion import BoxIntegrator, MotionGenerator

__all__ = [
    "Action",
    "BoxIntegrator",
    "JointJogCommand",
    "JointState",
    "MotionGenerator",
    "PoseCommand",
    "Reference",
    "Servo",
    "ServoConfig",
    "ServoResult",
    "ServoStatus",
    "TwistCommand",
    "TwistFrame",
]
