"""The servo cycle compiles once: the one-call PoseCommand path, its fault cycle and the
general path (other commands) share one specialization of the compiled cycle.

Each extra specialization of ``packed_cycle`` recompiles the whole cycle with its solvers (tens
of seconds on a first run); a literal argument at a compiled call site (``False``, ``1``, a
module constant) is enough to create one.
"""

from __future__ import annotations

import numpy as np

import ikstack.robots as robots
from ikstack.diffik import BoxQPSolver
from ikstack.servo import JointState, PoseCommand, Servo, ServoConfig, TwistCommand
from ikstack.servo.cycle import packed_cycle


def test_pose_twist_and_fault_cycles_share_one_compiled_cycle():
    arm = robots.load("panda").with_limits(acceleration=[15, 7.5, 10, 12.5, 15, 20, 20])
    servo = Servo(arm, ServoConfig(), differential_ik=BoxQPSolver())
    q = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.785])
    dq = np.zeros(7)
    T = arm.fk(q)
    T[:3, 3] += 0.01
    r = servo.step(JointState(q, dq, 0), PoseCommand(T, 0), 0.001, 0)  # the one-call path
    assert r.action.name == "TRACK"
    twist = TwistCommand(np.array([0.01, 0.0, 0.0, 0.0, 0.0, 0.0]), "base", 1_000_000)
    r = servo.step(JointState(q, dq, 1_000_000), twist, 0.001, 1_000_000)  # the general path
    assert r.action.name == "TRACK"
    assert len(packed_cycle.signatures) == 1, packed_cycle.signatures
