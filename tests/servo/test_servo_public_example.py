"""The servo's published usage example runs as written, importing everything from ``ikstack``.

The two snippets below are the documented text verbatim (only the module name is ikstack's);
they must keep working without edits.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np

import ikstack.robots as robots

ROOT = Path(__file__).resolve().parents[2]

POSE_EXAMPLE = textwrap.dedent("""
import numpy as np
from ikstack import (
    Action, BoxQPSolver, JointState, PoseCommand, Servo, ServoConfig, load_urdf,
)

model = load_urdf("examples/planar2.urdf", base="base", tip="tool",
                  acceleration_limits=[3.0, 3.0])
servo = Servo(model, ServoConfig(task_axes=(0, 1), max_linear_speed=0.5),
              differential_ik=BoxQPSolver())
q, dq = np.array([0.5, -1.0]), np.zeros(2)
target = model.fk(np.array([0.7, -0.7]))
for tick in range(1200):
    now = tick * 10_000_000
    result = servo.step(JointState(q, dq, now), PoseCommand(target, now),
                        dt=0.01, now_ns=now)
    if result.action == Action.REJECT:
        raise RuntimeError(result.message)
    q, dq = result.reference.q, result.reference.dq
assert result.action == Action.HOLD
assert np.linalg.norm(model.fk(q)[:2, 3] - target[:2, 3]) < 1.1e-4
print("QP pose target reached")
""")

NULLSPACE_SNIPPET = textwrap.dedent("""
from ikstack import Servo, ServoConfig, BoxQPSolver

servo = Servo(model, ServoConfig(
    nullspace_gain=0.1,
    nullspace_reference=home_joints,
    joint_centering_gain=0.05,
), differential_ik=BoxQPSolver())
""")


def test_the_pose_example_runs_verbatim(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    scope: dict = {}
    exec(compile(POSE_EXAMPLE, "pose_example", "exec"), scope)
    assert capsys.readouterr().out.strip() == "QP pose target reached"
    # checked independently of the example's own asserts: plain planar forward kinematics
    q = scope["q"]
    tip = np.array(
        [
            0.5 * np.cos(q[0]) + 0.5 * np.cos(q[0] + q[1]),
            0.5 * np.sin(q[0]) + 0.5 * np.sin(q[0] + q[1]),
        ]
    )
    goal = np.array([0.5 * np.cos(0.7) + 0.5 * np.cos(0.0), 0.5 * np.sin(0.7)])
    assert np.linalg.norm(tip - goal) < 1.1e-4


def test_the_nullspace_snippet_runs_verbatim():
    model = robots.load("panda").with_limits(acceleration=[15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0])
    scope = {"model": model, "home_joints": model.middle()}
    exec(compile(NULLSPACE_SNIPPET, "nullspace_snippet", "exec"), scope)
    assert scope["servo"].config.nullspace_gain == 0.1


def test_ikstack_exports_the_servo_names():
    import ikstack

    for name in (
        "Action",
        "BoxQPSolver",
        "DLSVelocitySolver",
        "JointJogCommand",
        "JointState",
        "PoseCommand",
        "Servo",
        "ServoConfig",
        "ServoStatus",
        "TwistCommand",
    ):
        assert name in ikstack.__all__
        assert getattr(ikstack, name) is not None


def test_importing_ikstack_loads_no_servo_code():
    import subprocess
    import sys

    code = (
        "import sys, ikstack; "
        "print('ikstack.servo' in sys.modules, 'ikstack.diffik' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
