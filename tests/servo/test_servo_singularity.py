"""Singularities: decelerate approaching, halt when pushing in, escape when commanded out.

Cases: a planar arm stretched straight and at its zero pose, UR5 with its wrist aligned and at
its zero pose, Panda stretched.
"""

from __future__ import annotations

import numpy as np
from servo_helpers import arm, check_reference

from ikstack.diffik import BoxQPSolver, DLSVelocitySolver
from ikstack.kinematics import jacobian
from ikstack.servo import Action, JointState, PoseCommand, Servo, ServoStatus, TwistCommand

S = ServoStatus


def drive(chain, servo, q, command_at, steps, dt=0.01):
    """Run ``steps`` cycles; return the final state and the list of results."""
    dq = np.zeros(chain.dof)
    results = []
    start = getattr(servo, "_t", 0)
    for k in range(steps):
        now = start + (k + 1) * int(dt * 1e9)
        res = servo.step(JointState(q, dq, now), command_at(now, q), dt, now)
        assert res.action != Action.REJECT, res.message
        check_reference(chain, q, dq, res, dt)
        q, dq = res.reference.q, res.reference.dq
        results.append(res)
    servo._t = start + steps * int(dt * 1e9)
    return q, dq, results


def flags_seen(results):
    out = S.NONE
    for r in results:
        out |= r.status
    return out


def test_planar_arm_decelerates_and_halts_pushing_into_the_stretched_singularity_then_leaves():
    chain, cfg = arm("planar2")
    for solver in (BoxQPSolver(), DLSVelocitySolver()):
        servo = Servo(chain, cfg, differential_ik=solver)
        q0 = np.array([0.0, 0.8])
        q, dq, res = drive(
            chain, servo, q0, lambda now, q: TwistCommand([0.3, 0.0, 0, 0, 0, 0], "base", now), 800
        )
        seen = flags_seen(res)
        assert seen & S.SINGULARITY_DECELERATE
        assert seen & S.SINGULARITY_HALT
        assert res[-1].action == Action.HOLD
        assert np.allclose(dq, 0.0)
        kappas = [r.condition_number for r in res]
        assert max(kappas) < 31.0  # braked in time: stopped short of the halt threshold
        assert abs(q[1]) > 0.05
        # commanded out (toward the base): allowed even though kappa is above the threshold
        q2, _, res2 = drive(
            chain, servo, q, lambda now, q: TwistCommand([-0.3, 0.0, 0, 0, 0, 0], "base", now), 150
        )
        assert flags_seen(res2) & S.SINGULARITY_LEAVING
        assert res2[-1].condition_number < res[-1].condition_number
        assert np.linalg.norm(chain.fk(q2)[:2, 3]) < np.linalg.norm(chain.fk(q)[:2, 3]) - 0.02


def test_planar_arm_escapes_its_exact_zero_pose_singularity_when_commanded_inward():
    chain, cfg = arm("planar2")
    target = chain.fk(np.array([0.6, -1.2]))  # straight in along the arm: J^T e = 0 at q = 0
    assert abs(target[1, 3]) < 1e-12
    for solver in (BoxQPSolver(), DLSVelocitySolver()):
        servo = Servo(chain, cfg, differential_ik=solver)
        q, dq, res = drive(chain, servo, np.zeros(2), lambda now, q: PoseCommand(target, now), 1200)
        assert flags_seen(res) & S.SINGULARITY_ESCAPE
        assert res[-1].action == Action.HOLD and res[-1].status & S.GOAL_REACHED
        assert np.linalg.norm(chain.fk(q)[:2, 3] - target[:2, 3]) < 1e-3


def test_planar_arm_at_its_zero_pose_holds_when_pushed_further_out():
    chain, cfg = arm("planar2")
    target = chain.fk(np.zeros(2))
    target[0, 3] += 0.2  # beyond reach, straight out
    servo = Servo(chain, cfg, differential_ik=BoxQPSolver())
    q, dq, res = drive(chain, servo, np.zeros(2), lambda now, q: PoseCommand(target, now), 50)
    assert res[-1].action == Action.HOLD
    assert res[-1].status & S.SINGULARITY_HALT
    assert np.allclose(q, 0.0, atol=1e-9)


def test_ur5_decelerates_and_halts_aligning_its_wrist_and_leaves_when_commanded_out():
    chain, cfg = arm("ur5")
    q_out = np.array([0.0, -1.2, 1.5, -1.9, 0.6, 0.3])
    q_in = q_out.copy()
    q_in[4] = 0.0  # wrist 2 at zero: wrist 1 and wrist 3 axes aligned
    T_in = chain.fk(q_in)
    T_out = chain.fk(q_out)
    servo = Servo(chain, cfg, differential_ik=BoxQPSolver())
    q, dq, res = drive(chain, servo, q_out, lambda now, q: PoseCommand(T_in, now), 400)
    seen = flags_seen(res)
    assert seen & S.SINGULARITY_DECELERATE and seen & S.SINGULARITY_HALT
    assert res[-1].action == Action.HOLD
    assert abs(q[4]) > 0.01  # stopped before the wrist aligned
    q2, _, res2 = drive(chain, servo, q, lambda now, q: PoseCommand(T_out, now), 600)
    assert flags_seen(res2) & S.SINGULARITY_LEAVING
    assert res2[-1].position_error < 1e-3 and res2[-1].rotation_error < 1e-2


def test_ur5_leaves_an_exactly_aligned_wrist_when_commanded_out():
    chain, cfg = arm("ur5")
    q_in = np.array([0.0, -1.2, 1.5, -1.9, 0.0, 0.3])
    q_out = q_in.copy()
    q_out[4] = 0.5
    T_out = chain.fk(q_out)
    for solver in (BoxQPSolver(), DLSVelocitySolver()):
        servo = Servo(chain, cfg, differential_ik=solver)
        q, _, res = drive(chain, servo, q_in, lambda now, q: PoseCommand(T_out, now), 600)
        assert np.isinf(res[0].condition_number)
        assert res[-1].position_error < 1e-3 and res[-1].rotation_error < 1e-2


def test_ur5_leaves_its_zero_pose_when_commanded_out():
    chain, cfg = arm("ur5")
    q_goal = np.array([0.2, -0.4, 0.6, -0.3, 0.5, 0.2])
    T_goal = chain.fk(q_goal)
    servo = Servo(chain, cfg, differential_ik=BoxQPSolver())
    q, _, res = drive(chain, servo, np.zeros(6), lambda now, q: PoseCommand(T_goal, now), 1500)
    assert np.isinf(res[0].condition_number)
    assert res[-1].condition_number < 43.0
    assert res[-1].position_error < 1e-3 and res[-1].rotation_error < 1e-2


def test_panda_stretched_halts_when_pushed_out_and_leaves_when_commanded_back():
    chain, cfg = arm("panda")
    q_str = np.array([0.0, 0.0, 0.0, -0.0699, 0.0, 1.5, 0.785])
    T_str = chain.fk(q_str)
    shoulder = np.array([0.0, 0.0, 0.333])
    along = (T_str[:3, 3] - shoulder) / np.linalg.norm(T_str[:3, 3] - shoulder)
    beyond = T_str.copy()
    beyond[:3, 3] += 0.2 * along
    servo = Servo(chain, cfg, differential_ik=BoxQPSolver())
    q, _, res = drive(chain, servo, q_str, lambda now, q: PoseCommand(beyond, now), 80)
    assert res[0].condition_number > 43.0  # past MoveIt's leaving threshold: it would stay put
    assert flags_seen(res) & S.SINGULARITY_HALT
    assert res[-1].action == Action.HOLD
    # from the stretched pose (kappa 71, beyond MoveIt's leaving threshold 43) commanded out:
    # the tool motion of tilting the upper arm forward, which lowers kappa
    servo = Servo(chain, cfg, differential_ik=BoxQPSolver())
    out = jacobian(chain, q_str)[:, 1] * 0.5
    q2, _, res2 = drive(chain, servo, q_str, lambda now, q: TwistCommand(out, "base", now), 150)
    assert flags_seen(res2) & S.SINGULARITY_LEAVING
    assert res2[0].action == Action.TRACK and not res2[0].status & S.SINGULARITY_HALT
    assert min(r.condition_number for r in res2) < 43.0  # below the threshold MoveIt stops at
    assert np.linalg.norm(chain.fk(q2)[:3, 3] - T_str[:3, 3]) > 0.02
