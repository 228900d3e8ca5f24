"""Servo behaviour: stale commands, invalid input, solver faults, goals, nullspace, jerk."""

from __future__ import annotations

import math
import runpy
from pathlib import Path

import numpy as np
import pytest
from servo_helpers import arm, check_reference

import ikstack.robots as robots
from ikstack.diffik import BoxQPSolver, DifferentialIK, DLSVelocitySolver
from ikstack.errors import ConfigError, InputError
from ikstack.servo import (
    Action,
    BoxIntegrator,
    JointJogCommand,
    JointState,
    MotionGenerator,
    PoseCommand,
    Servo,
    ServoConfig,
    ServoStatus,
    TwistCommand,
)
from ikstack.servo.demo import plot_trace, run_demo

S = ServoStatus
ROOT = Path(__file__).resolve().parents[2]
DT = 0.01
TICK = 10_000_000


def run(chain, servo, q, commands, dt=DT, start=0, dq=None):
    """Feed commands (callables of now) and return the results; checks limits every cycle."""
    dq = np.zeros(chain.dof) if dq is None else dq
    out = []
    for k, make in enumerate(commands):
        now = start + (k + 1) * TICK
        res = servo.step(JointState(q, dq, now), make(now), dt, now)
        check_reference(chain, q, dq, res, dt)
        q, dq = res.reference.q, res.reference.dq
        out.append(res)
    return q, dq, out


def test_seed_example_runs_and_ends_in_hold_within_tolerance(capsys):
    runpy.run_path(str(ROOT / "examples" / "02_servo_qp.py"), run_name="__main__")
    assert "QP pose target reached" in capsys.readouterr().out


def test_config_defaults_are_moveit_servo_defaults():
    cfg = ServoConfig()
    assert cfg.command_timeout == 0.1
    assert cfg.position_tolerance == 0.001 and cfg.rotation_tolerance == 0.01
    assert cfg.joint_limit_margin == 0.1
    assert cfg.singularity_decelerate == 17.0 and cfg.singularity_halt == 30.0
    assert cfg.leaving_halt == 43.0
    assert cfg.stop_velocity == 1e-4
    assert (cfg.max_linear_speed, cfg.max_angular_speed) == (0.4, 0.8)
    with pytest.raises(ConfigError, match="task_axes"):
        ServoConfig(task_axes=(0, 7))
    with pytest.raises(ConfigError, match="singularity_halt"):
        ServoConfig(singularity_halt=10.0)


def test_config_numbers_are_checked_by_their_rule_and_stored_as_floats():
    assert ServoConfig(damping=0, max_dt=2).damping == 0.0
    assert type(ServoConfig(max_dt=2).max_dt) is float
    for name in ("max_dt", "pose_gain", "stop_velocity"):  # must be > 0
        with pytest.raises(ConfigError, match=f"ServoConfig.{name} must be finite and > 0; got 0"):
            ServoConfig(**{name: 0.0})
    for name in ("damping", "escape_speed", "state_tolerance"):  # may be 0
        assert getattr(ServoConfig(**{name: 0.0}), name) == 0.0
        with pytest.raises(ConfigError, match=f"{name} must be finite and >= 0; got -1"):
            ServoConfig(**{name: -1.0})
        with pytest.raises(ConfigError, match=f"{name} must be finite and >= 0; got nan"):
            ServoConfig(**{name: math.nan})


@pytest.mark.parametrize("kind", ["stale", "missing"])
def test_stale_or_missing_command_halts_within_acceleration_limits_then_holds(kind):
    chain, cfg = arm("planar2")
    servo = Servo(chain, cfg, differential_ik=BoxQPSolver())
    q = np.array([0.3, 1.2])
    q, dq, _ = run(
        chain, servo, q, [lambda now: TwistCommand([0.3, 0.2, 0, 0, 0, 0], "base", now)] * 40
    )
    assert np.max(np.abs(dq)) > 0.3  # moving fast
    last = 40 * TICK
    if kind == "stale":
        cmds = [lambda now: TwistCommand([0.3, 0.2, 0, 0, 0, 0], "base", last)] * 100
    else:
        cmds = [lambda now: None] * 100
    _, dq_end, res = run(chain, servo, q, cmds, start=last, dq=dq)
    first_stale = next(i for i, r in enumerate(res) if r.status & S.STALE_COMMAND)
    if kind == "missing":
        assert first_stale == 0
    else:  # within the 0.1 s timeout the old command is still obeyed
        assert first_stale == 10
    speeds = [np.max(np.abs(r.reference.dq)) for r in res[first_stale:]]
    assert all(b <= a + 1e-12 for a, b in zip(speeds, speeds[1:], strict=False))
    assert res[-1].action == Action.HOLD and res[-1].status & S.STALE_COMMAND
    assert np.all(dq_end == 0.0)


def test_invalid_input_is_rejected_with_a_message_and_a_safe_reference():
    chain, cfg = arm("planar2")
    servo = Servo(chain, cfg)
    q = np.array([0.3, 1.2])
    T = chain.fk(q)
    q1, dq1, _ = run(
        chain, servo, q, [lambda now: TwistCommand([0.2, 0, 0, 0, 0, 0], "base", now)] * 20
    )
    now = 20 * TICK
    bad_T = T.copy()
    bad_T[0, 0] = 2.0
    cases = [
        (JointState(np.array([np.nan, 0.0]), np.zeros(2), now + TICK), PoseCommand(T, now), "q"),
        (JointState(np.zeros(3), np.zeros(3), now + TICK), PoseCommand(T, now), "q"),
        (JointState(q1, dq1, now + TICK), PoseCommand(bad_T, now), "rigid"),
        (JointState(q1, dq1, now + TICK), PoseCommand(T, now + 5 * TICK), "future"),
        (
            JointState(np.array([3.5, 0.0]), np.zeros(2), now + TICK),
            PoseCommand(T, now),
            "outside its hard limits",
        ),
        (JointState(q1, dq1, now + TICK), TwistCommand(np.zeros(6), "world", now), "frame"),
        (JointState(q1, dq1, now + TICK), "go left", "unknown command"),
        (JointState(q1, dq1, 5), PoseCommand(T, 0), "backwards"),
    ]
    for state, cmd, word in cases:
        res = servo.step(state, cmd, DT, now + TICK)
        assert res.action == Action.REJECT, word
        assert word in res.message
        assert res.status & S.INVALID_INPUT
        assert np.all(np.isfinite(res.reference.q)) and chain.within_limits(res.reference.q)
        # a reject brakes within the acceleration limit from the measured state when it is
        # usable, else from the last reference
        usable = np.shape(state.q) == (2,) and np.all(np.isfinite(state.q))
        basis = state.dq if usable else dq1
        assert np.all(np.abs(res.reference.dq - basis) <= chain.acceleration_limits * DT + 1e-12)
        dq1 = res.reference.dq
    assert servo.step(JointState(q1, dq1, now), None, 0.0, now + TICK).action == Action.REJECT
    res = servo.step(JointState(q1, dq1, now + TICK), None, DT, now - 1)
    assert res.action == Action.REJECT and "now_ns went backwards" in res.message


class Faulty(DifferentialIK):
    """A Python solver that fails in one of three ways while ``mode`` says so."""

    def __init__(self, mode):
        self.mode = mode
        self.inner = BoxQPSolver()

    def solve(self, request):
        if self.mode == "raise":
            raise ValueError("bad solver")
        if self.mode == "shape":
            return np.zeros(3)
        if self.mode == "nan":
            return np.full(request.jacobian.shape[1], np.nan)
        return self.inner.solve(request)


@pytest.mark.parametrize("mode", ["raise", "shape", "nan"])
def test_a_failing_python_solver_latches_solver_error_until_reset(mode):
    chain, cfg = arm("planar2")
    solver = Faulty("ok")
    servo = Servo(chain, cfg, differential_ik=solver)
    target = chain.fk(np.array([0.2, 1.0]))
    q, dq, _ = run(chain, servo, np.array([0.8, 0.6]), [lambda now: PoseCommand(target, now)] * 15)
    assert np.max(np.abs(dq)) > 0
    solver.mode = mode
    q, dq, res = run(
        chain, servo, q, [lambda now: PoseCommand(target, now)] * 3, start=15 * TICK, dq=dq
    )
    assert res[0].status & S.SOLVER_ERROR and "solver error" in res[0].message
    solver.mode = "ok"  # the solver recovers; the fault stays latched
    q, dq, res = run(
        chain, servo, q, [lambda now: PoseCommand(target, now)] * 60, start=18 * TICK, dq=dq
    )
    assert all(r.status & S.SOLVER_ERROR for r in res)
    assert res[-1].action == Action.HOLD and servo.faulted
    servo.reset()
    assert not servo.faulted
    q, dq, res = run(
        chain, servo, q, [lambda now: PoseCommand(target, now)] * 300, start=78 * TICK, dq=dq
    )
    assert not res[-1].status & S.SOLVER_ERROR
    assert res[-1].status & S.GOAL_REACHED


def test_box_qp_iteration_cap_becomes_a_solver_error():
    chain, cfg = arm("panda")
    servo = Servo(chain, cfg, differential_ik=BoxQPSolver(max_iterations=1))
    target = chain.fk(chain.middle() + 0.4)
    _, _, res = run(chain, servo, chain.middle(), [lambda now: PoseCommand(target, now)] * 50)
    assert any(r.status & S.SOLVER_ERROR for r in res)
    assert "BoxQPSolver" in next(r.message for r in res if r.status & S.SOLVER_ERROR)


class Overshoot(MotionGenerator):
    def generate(self, q, dq, desired_velocity, lower, upper, q_lower, q_upper, dt):
        return q + 10.0 * dt, np.full_like(q, 10.0)


def test_motion_generator_output_is_revalidated():
    chain, cfg = arm("planar2")
    target = chain.fk(np.array([0.2, 1.0]))
    plain = Servo(chain, cfg, differential_ik=BoxQPSolver())
    custom = Servo(chain, cfg, differential_ik=BoxQPSolver(), motion_generator=BoxIntegrator())
    cmds = [lambda now: PoseCommand(target, now)] * 50
    qa, _, ra = run(chain, plain, np.array([0.8, 0.6]), cmds)
    qb, _, rb = run(chain, custom, np.array([0.8, 0.6]), cmds)
    assert np.allclose(qa, qb, atol=1e-12)
    bad = Servo(chain, cfg, differential_ik=BoxQPSolver(), motion_generator=Overshoot())
    _, _, rc = run(chain, bad, np.array([0.8, 0.6]), cmds[:5])
    assert rc[0].status & S.SOLVER_ERROR and "motion generator" in rc[0].message


def test_goal_reached_keeps_tracking_while_nullspace_motion_continues():
    chain, _ = arm("panda")
    q0 = chain.middle() + np.array([0.3, 0.2, -0.3, 0.2, 0.3, -0.2, 0.3])
    cfg = ServoConfig(nullspace_gain=1.0, nullspace_reference=chain.middle())
    servo = Servo(chain, cfg, differential_ik=BoxQPSolver())
    T = chain.fk(q0)
    q, _, res = run(chain, servo, q0, [lambda now: PoseCommand(T, now)] * 400)
    both = [r for r in res if r.status & S.GOAL_REACHED and r.action == Action.TRACK]
    assert both and all(r.nullspace_speed > 0 for r in both)
    assert all(r.position_error < 1e-3 for r in res)  # the tool stays on its goal
    assert np.linalg.norm(q - chain.middle()) < np.linalg.norm(q0 - chain.middle()) - 0.1


def test_jog_respects_position_limits_with_braking():
    chain, cfg = arm("planar2")
    servo = Servo(chain, cfg)
    q, dq, res = run(
        chain,
        servo,
        np.array([2.5, 0.0]),
        [lambda now: JointJogCommand(np.array([2.0, 0.0]), now)] * 200,
    )
    assert q[0] <= chain.upper[0] - cfg.joint_limit_margin + 1e-9
    assert any(r.status & S.JOINT_BOUND for r in res)
    assert res[-1].action == Action.HOLD


def test_jerk_limits_bound_the_change_of_acceleration():
    chain = robots.load("planar2").with_limits(acceleration=3.0, jerk=30.0)
    servo = Servo(chain, ServoConfig(task_axes=(0, 1)), differential_ik=BoxQPSolver())
    target = chain.fk(np.array([0.2, 1.0]))
    q, dq = np.array([0.8, 0.6]), np.zeros(2)
    acc_prev = None
    for k in range(300):
        now = (k + 1) * TICK
        res = servo.step(JointState(q, dq, now), PoseCommand(target, now), DT, now)
        check_reference(chain, q, dq, res, DT)
        acc = (res.reference.dq - dq) / DT
        if acc_prev is not None and not res.status & S.JERK_RELAXED:
            assert np.all(np.abs(acc - acc_prev) <= 30.0 * DT + 1e-9)
        acc_prev = acc
        q, dq = res.reference.q, res.reference.dq
    assert res.status & S.GOAL_REACHED


def test_tool_frame_twist_is_rotated_into_the_base_frame():
    chain, cfg = arm("ur5")
    q = np.array([0.3, -1.2, 1.5, -1.9, 1.0, 0.3])
    R = chain.fk(q)[:3, :3]
    a = Servo(chain, cfg, differential_ik=DLSVelocitySolver())
    b = Servo(chain, cfg, differential_ik=DLSVelocitySolver())
    tw = np.array([0.05, 0.0, 0.02, 0.0, 0.1, 0.0])
    ra = a.step(JointState(q, np.zeros(6), 1), TwistCommand(tw, "tool", 1), DT, 1)
    rb = b.step(
        JointState(q, np.zeros(6), 1),
        TwistCommand(np.concatenate([R @ tw[:3], R @ tw[3:]]), "base", 1),
        DT,
        1,
    )
    assert np.allclose(ra.reference.dq, rb.reference.dq, atol=1e-12)


def test_constructor_rejects_bad_arguments():
    chain, _ = arm("planar2")
    with pytest.raises(InputError, match="DifferentialIK"):
        Servo(chain, differential_ik=object())
    with pytest.raises(InputError, match="nullspace_reference"):
        Servo(chain, ServoConfig(nullspace_reference=np.zeros(3)))


def test_demo_returns_a_trace_that_reaches_the_target(tmp_path):
    chain = robots.load("panda")
    trace = run_demo(chain, chain.middle() + 0.2, steps=400, solver_name="box_qp")
    assert trace.q.shape == (400, 7) and trace.final_action == Action.HOLD
    assert trace.position_error[-1] < 1e-3
    with pytest.raises(InputError, match="valid"):
        run_demo(chain, chain.middle(), steps=2, solver_name="nope")
    pytest.importorskip("matplotlib")
    plot_trace(trace, str(tmp_path / "trace.png"))
    assert (tmp_path / "trace.png").exists()
