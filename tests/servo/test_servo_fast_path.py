"""The kernel's built-in solvers give the same answers as the public solver interface.

A built-in solver (exactly ``DLSVelocitySolver`` / ``BoxQPSolver``) runs in the C++ kernel
without a call back into Python; a Python subclass of it goes through
``DifferentialIK.solve`` and the general path. Over random command sequences, with bad inputs
mixed in, both must answer identically: the same action, status, message and bit-identical
references.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest
from servo_helpers import arm

from ikstack.diffik import BoxQPSolver, DLSVelocitySolver
from ikstack.servo import (
    Action,
    JointJogCommand,
    JointState,
    PoseCommand,
    Servo,
    ServoResult,
    ServoStatus,
    TwistCommand,
)


class PythonDLS(DLSVelocitySolver):
    """A subclass: the kernel must treat it as a user solver (public interface)."""


class PythonBoxQP(BoxQPSolver):
    """A subclass: the kernel must treat it as a user solver (public interface)."""


def _events(chain, rng, steps):
    """A random sequence of (state-perturbation, command, dt, now_ns) recipes."""
    T0 = chain.fk(chain.middle())
    now = 10_000_000
    out = []
    for _ in range(steps):
        kind = rng.choice(
            [
                "pose",
                "pose",
                "pose",
                "pose",
                "jump",
                "twist",
                "jog",
                "none",
                "stale",
                "nan_q",
                "back_now",
                "back_stamp",
                "outside",
                "bad_T",
                "list_q",
                "readonly",
                "fortran_T",
                "np_stamp",
                "float_now",
                "future",
                "bad_dt",
                "int_dt",
            ]
        )
        now += int(rng.integers(1, 3)) * 1_000_000
        out.append((str(kind), now, rng.normal(size=6), T0))
    return out


def _command(kind, now, x, T0, chain, rng_T):
    T = T0.copy()
    T[:3, 3] += 0.05 * x[:3] if kind != "jump" else 0.3 * x[:3]
    if kind == "bad_T":
        T[0, 0] = 2.0
    if kind == "fortran_T":
        T = np.asfortranarray(T)
    if kind == "none":
        return None
    if kind == "twist":
        return TwistCommand(0.1 * x, "tool" if x[0] > 0 else "base", now)
    if kind == "jog":
        return JointJogCommand(0.2 * np.resize(x, chain.dof), now)
    if kind == "stale":
        return PoseCommand(T, now - 500_000_000)
    if kind == "future":
        return PoseCommand(T, now + 1)
    if kind == "np_stamp":
        return PoseCommand(T, np.int64(now))
    return PoseCommand(T, now)


def _drive(servo, chain, seed, steps):
    rng = np.random.default_rng(seed)
    q = chain.middle()
    dq = np.zeros(chain.dof)
    answers = []
    for kind, now, x, T0 in _events(chain, np.random.default_rng(seed + 1), steps):
        cmd = _command(kind, now, x, T0, chain, rng)
        qs, dqs, stamp, dt, t_now = q.copy(), dq.copy(), now, 0.001, now
        if kind == "nan_q":
            qs[0] = np.nan
        elif kind == "back_now":
            t_now = now - 5_000_000
        elif kind == "back_stamp":
            stamp = now - 50_000_000
        elif kind == "outside":
            qs[1] = chain.upper[1] + 0.1
        elif kind == "list_q":
            qs = list(qs)
        elif kind == "readonly":
            qs.setflags(write=False)
        elif kind == "float_now":
            t_now = float(now)
        elif kind == "bad_dt":
            dt = float("nan")
        elif kind == "int_dt":
            dt = 1
        r = servo.step(JointState(qs, dqs, stamp), cmd, dt, t_now)
        answers.append(r)
        if r.action != Action.REJECT:
            q, dq = r.reference.q, r.reference.dq
    return answers


@pytest.mark.parametrize(
    "solver_cls, python_cls", [(DLSVelocitySolver, PythonDLS), (BoxQPSolver, PythonBoxQP)]
)
@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_fast_path_and_public_interface_give_identical_references(name, solver_cls, python_cls):
    chain, cfg = arm(name)
    fast = Servo(chain, cfg, differential_ik=solver_cls())
    slow = Servo(chain, cfg, differential_ik=python_cls())
    a = _drive(fast, chain, 7, 300)
    b = _drive(slow, chain, 7, 300)
    kinds = {r.action for r in a}
    assert kinds >= {Action.TRACK, Action.REJECT}
    for k, (ra, rb) in enumerate(zip(a, b, strict=True)):
        assert (ra.action, ra.status, ra.message) == (rb.action, rb.status, rb.message), k
        assert np.array_equal(ra.reference.q, rb.reference.q), k
        assert np.array_equal(ra.reference.dq, rb.reference.dq), k
        assert (ra.condition_number, ra.position_error, ra.task_residual, ra.solver_iterations) == (
            rb.condition_number,
            rb.position_error,
            rb.task_residual,
            rb.solver_iterations,
        ), k
        assert type(ra.task_residual) is float and type(ra.solver_iterations) is int
        for f in fields(ServoResult):  # every field set, with the same type on both paths
            assert type(getattr(ra, f.name)) is type(getattr(rb, f.name)), f.name


def test_fast_path_with_jerk_limits_matches_public_interface():
    chain, cfg = arm("panda")
    chain = chain.with_limits(jerk=[5000.0] * chain.dof)
    a = _drive(Servo(chain, cfg, differential_ik=DLSVelocitySolver()), chain, 3, 200)
    b = _drive(Servo(chain, cfg, differential_ik=PythonDLS()), chain, 3, 200)
    for ra, rb in zip(a, b, strict=True):
        assert ra.status == rb.status and ra.message == rb.message
        assert np.array_equal(ra.reference.q, rb.reference.q)
        assert np.array_equal(ra.reference.dq, rb.reference.dq)


def test_dls_damping_floor_applies_on_the_fast_path():
    chain, cfg = arm("ur5")
    q = np.array([0.0, -1.2, 1.5, -1.0, -1.5, 0.0])  # well away from singularities
    T = chain.fk(q)
    T[:3, 3] += [0.05, 0.0, 0.0]
    answers = []
    for solver in (
        DLSVelocitySolver(min_damping=0.5),
        PythonDLS(min_damping=0.5),
        DLSVelocitySolver(),
    ):
        r = Servo(chain, cfg, differential_ik=solver).step(
            JointState(q, np.zeros(chain.dof), 0), PoseCommand(T, 0), 0.001, 0
        )
        answers.append(r.reference.dq)
    assert np.array_equal(answers[0], answers[1])
    assert not np.allclose(answers[0], answers[2])


def test_reject_messages_name_the_problem_on_the_fast_path():
    chain, cfg = arm("panda")
    servo = Servo(chain, cfg)
    q = chain.middle()
    T = chain.fk(q)
    dq = np.zeros(chain.dof)
    assert servo.step(JointState(q, dq, 5), PoseCommand(T, 5), 0.001, 5).action == Action.HOLD
    bad_q = q.copy()
    bad_q[2] = np.nan
    cases = [
        (JointState(bad_q, dq, 6), PoseCommand(T, 6), 6, "finite"),
        (JointState(q, dq, 6), PoseCommand(T, 6), 4, "backwards"),
        (JointState(q, dq, 2), PoseCommand(T, 6), 6, "stamp_ns went backwards"),
        (JointState(q[:3], dq, 6), PoseCommand(T, 6), 6, "arrays"),
        (JointState(q, dq, 6), PoseCommand(T[:3], 6), 6, "rigid transform"),
        (JointState(q, dq, 6), PoseCommand(T, 9), 6, "future"),
    ]
    for state, cmd, now, words in cases:
        r = servo.step(state, cmd, 0.001, now)
        assert r.action == Action.REJECT and r.status & ServoStatus.INVALID_INPUT
        assert words in r.message, (words, r.message)
    far = q.copy()
    far[3] = chain.upper[3] + 1.0
    r = servo.step(JointState(far, dq, 7), PoseCommand(T, 7), 0.001, 7)
    assert r.action == Action.REJECT and chain.joint_names[3] in r.message
    huge = 2**64
    r = servo.step(JointState(q, dq, huge), PoseCommand(T, huge), 0.001, huge)
    assert r.action != Action.REJECT  # Python integers of any size are valid stamps
