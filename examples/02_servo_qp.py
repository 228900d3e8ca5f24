"""Servo a planar arm to a pose target with ikstack's own active-set QP.

Run from the repository root: ``python examples/02_servo_qp.py``.
"""

from pathlib import Path

import numpy as np

from ikstack import load_urdf
from ikstack.diffik import BoxQPSolver
from ikstack.servo import Action, JointState, PoseCommand, Servo, ServoConfig

URDF = Path(__file__).resolve().parent / "planar2.urdf"

model = load_urdf(URDF, base="base", tip="tool", acceleration_limits=[3.0, 3.0])
servo = Servo(
    model, ServoConfig(task_axes=(0, 1), max_linear_speed=0.5), differential_ik=BoxQPSolver()
)
q, dq = np.array([0.5, -1.0]), np.zeros(2)
target = model.fk(np.array([0.7, -0.7]))
for tick in range(1200):
    now = tick * 10_000_000
    result = servo.step(JointState(q, dq, now), PoseCommand(target, now), dt=0.01, now_ns=now)
    if result.action == Action.REJECT:
        raise RuntimeError(result.message)
    q, dq = result.reference.q, result.reference.dq
if result.action != Action.HOLD:
    raise RuntimeError(f"expected HOLD, got {result.action.name}: {result.message}")
error = np.linalg.norm(model.fk(q)[:2, 3] - target[:2, 3])
if not error < 1.1e-4:
    raise RuntimeError(f"final position error {error:.3g} m")
print("QP pose target reached")
