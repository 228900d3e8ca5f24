"""The native servo's Python callbacks: a Python DifferentialIK's exceptions, wrong shapes and
NaN latch SOLVER_ERROR with the servo's messages; an interrupt is not swallowed; threads
stepping servos with Python solvers (the GIL released in step, taken back for the callback)
neither deadlock nor mix up their results."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import ikstack.robots as robots
from ikstack.diffik import DifferentialIK, DiffIKResult, DLSVelocitySolver
from ikstack.servo import (
    Action,
    JointJogCommand,
    JointState,
    MotionGenerator,
    PoseCommand,
    Servo,
    ServoConfig,
    ServoStatus,
)

native = pytest.importorskip("ikstack._native", reason="the C++ module is not built")
if not getattr(native, "HAVE_SERVO", False):
    pytest.skip("this build of ikstack._native has no servo kernel", allow_module_level=True)

Q0 = np.array([0.3, 1.2])


class Scripted(DifferentialIK):
    """Answers with whatever ``behaviour`` says; a damped pseudo-inverse when it is "ok"."""

    def __init__(self, behaviour: str):
        self.behaviour = behaviour
        self.calls = 0

    def solve(self, request):
        self.calls += 1
        J, t = np.asarray(request.jacobian), np.asarray(request.task)
        n = J.shape[1]
        if self.behaviour == "raise":
            raise RuntimeError("boom")
        if self.behaviour == "interrupt":
            raise KeyboardInterrupt
        if self.behaviour == "shape":
            return np.zeros((n, 2))
        if self.behaviour == "nan":
            return np.full(n, np.nan)
        if self.behaviour == "fail":
            return DiffIKResult(np.zeros(n), False, "gave up", 4)
        return DiffIKResult(
            J.T @ np.linalg.solve(J @ J.T + 1e-4 * np.eye(len(t)), t), True, "ok", 1
        )


def planar(solver, generator=None):
    chain = robots.load("planar2")
    servo = Servo(
        chain,
        ServoConfig(task_axes=(0, 1), max_linear_speed=0.5),
        differential_ik=solver,
        motion_generator=generator,
        kernel="native",
    )
    T = chain.fk(Q0 + np.array([0.2, -0.3]))
    return chain, servo, T


@pytest.mark.parametrize(
    "behaviour,reason",
    [
        ("raise", "Scripted raised RuntimeError: boom"),
        ("shape", "Scripted: solver returned shape (2, 2); expected (2,)"),
        ("nan", "Scripted: solver returned non-finite velocities"),
        ("fail", "Scripted: gave up"),
    ],
)
def test_a_failing_python_solver_latches_solver_error_until_reset(behaviour, reason):
    chain, servo, T = planar(Scripted(behaviour))
    r = servo.step(JointState(Q0, np.zeros(2), 0), PoseCommand(T, 0), 0.01, 0)
    assert r.status & ServoStatus.SOLVER_ERROR and r.action == Action.HOLD
    assert r.message == f"solver error: {reason}"
    assert servo.faulted
    assert np.all(np.isfinite(r.reference.q)) and np.all(r.reference.dq == 0.0)
    # latched: a later cycle neither calls the solver nor moves
    calls = servo.differential_ik.calls
    r = servo.step(JointState(Q0, np.zeros(2), 10**7), PoseCommand(T, 10**7), 0.01, 10**7)
    assert r.status & ServoStatus.SOLVER_ERROR and servo.differential_ik.calls == calls
    servo.differential_ik.behaviour = "ok"
    servo.reset()
    assert not servo.faulted
    r = servo.step(
        JointState(Q0, np.zeros(2), 2 * 10**7), PoseCommand(T, 2 * 10**7), 0.01, 2 * 10**7
    )
    assert r.action == Action.TRACK and not r.status & ServoStatus.SOLVER_ERROR


def test_a_python_solver_that_works_drives_the_arm_to_the_goal():
    chain, servo, T = planar(Scripted("ok"))
    q, dq = Q0.copy(), np.zeros(2)
    for k in range(600):
        r = servo.step(JointState(q, dq, k * 10**7), PoseCommand(T, k * 10**7), 0.01, k * 10**7)
        q, dq = r.reference.q, r.reference.dq
    assert r.status & ServoStatus.GOAL_REACHED, r
    assert np.linalg.norm(chain.fk(q)[:2, 3] - T[:2, 3]) < 2e-3


def test_an_interrupt_inside_a_python_solver_reaches_the_caller():
    _, servo, T = planar(Scripted("interrupt"))
    with pytest.raises(KeyboardInterrupt):
        servo.step(JointState(Q0, np.zeros(2), 0), PoseCommand(T, 0), 0.01, 0)


class Raising(MotionGenerator):
    def generate(self, q, dq, desired_velocity, lower, upper, q_lower, q_upper, dt):
        raise ValueError("no reference today")


def test_a_raising_motion_generator_latches_with_its_message():
    _, servo, T = planar(DLSVelocitySolver(), Raising())
    r = servo.step(JointState(Q0, np.zeros(2), 0), JointJogCommand(np.ones(2), 0), 0.01, 0)
    assert r.status & ServoStatus.SOLVER_ERROR
    assert r.message == "motion generator raised ValueError: no reference today"


def test_threads_stepping_servos_with_python_solvers_finish_with_their_own_results():
    servos = [planar(Scripted("ok")) for _ in range(3)]
    shared = planar(Scripted("ok"))
    finals: dict[int, np.ndarray] = {}
    errors: list[BaseException] = []

    def run(i, chain, servo, T, offset):
        try:
            q, dq = Q0.copy(), np.zeros(2)
            for k in range(300):
                now = offset + k * 10**7
                r = servo.step(JointState(q, dq, now), PoseCommand(T, now), 0.01, now)
                q, dq = r.reference.q, r.reference.dq
            finals[i] = q
        except BaseException as exc:  # reported to the main thread
            errors.append(exc)

    def hammer(servo, T):
        # one servo from two threads: the lock serializes them; every answer stays valid
        try:
            for _k in range(300):
                r = servo.step(
                    JointState(Q0, np.zeros(2), 10**12), PoseCommand(T, 10**12), 0.01, 10**12
                )
                assert np.all(np.isfinite(r.reference.q))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i, *s, 0)) for i, s in enumerate(servos)]
    threads += [threading.Thread(target=hammer, args=(shared[1], shared[2])) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread is stuck (deadlock)"
    assert not errors, errors
    # the same script on the same arm: every thread ends where a lone run ends
    for i in range(1, 3):
        np.testing.assert_array_equal(finals[i], finals[0])


# ---------------------------------------------------------------- how step is called
def _panda_inputs(kind: str = "plain"):
    chain = robots.load("panda")
    q = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.785])
    T = chain.fk(q)
    T[:3, 3] += [0.01, -0.005, 0.002]
    dq = np.zeros(7)
    if kind == "list":  # not an array: the adapter's general path reads it
        q = list(q)
    elif kind == "strided":  # a non-contiguous view
        q = np.repeat(q, 2)[::2]
    elif kind == "fortran":  # the target in column-major order
        T = np.asfortranarray(T)
    return chain, JointState(q, dq, 1_000), PoseCommand(T, 1_000)


@pytest.mark.parametrize("kind", ["plain", "list", "strided", "fortran"])
def test_step_answers_the_same_however_it_is_called(kind):
    chain, state, cmd = _panda_inputs(kind)
    _, state0, cmd0 = _panda_inputs()
    ref = Servo(chain, kernel="native").step(state0, cmd0, 0.001, 1_000)
    assert ref.action == Action.TRACK
    calls = [
        lambda s: s.step(state, cmd, 0.001, 1_000),
        lambda s: s.step(now_ns=1_000, dt=0.001, command=cmd, state=state),
        lambda s: s.step(state, cmd, dt=0.001, now_ns=1_000),
        lambda s: type(s).step(s, state, cmd, 0.001, 1_000),  # the class's method
    ]
    for call in calls:
        r = call(Servo(chain, kernel="native"))
        assert (r.action, r.status, r.message) == (ref.action, ref.status, ref.message)
        assert np.array_equal(r.reference.q, ref.reference.q)
        assert np.array_equal(r.reference.dq, ref.reference.dq)
        assert r.reference.q is not ref.reference.q  # each result owns its arrays


def test_step_with_wrong_arguments_raises_a_type_error_naming_them():
    chain, state, cmd = _panda_inputs()
    servo = Servo(chain, kernel="native")
    with pytest.raises(TypeError, match="now_ns"):
        servo.step(state, cmd, 0.001)
    with pytest.raises(TypeError, match="bogus"):
        servo.step(state, cmd, 0.001, 1_000, bogus=1)


def test_results_kept_from_earlier_cycles_do_not_change():
    chain, state, cmd = _panda_inputs()
    servo = Servo(chain, kernel="native")
    first = servo.step(state, cmd, 0.001, 1_000)
    q1 = first.reference.q.copy()
    servo.step(JointState(first.reference.q, first.reference.dq, 2_000), cmd, 0.001, 2_000)
    assert np.array_equal(first.reference.q, q1)


def test_a_subclass_that_overrides_step_is_called():
    chain, state, cmd = _panda_inputs()

    class Counting(type(Servo(chain, kernel="native"))):
        calls = 0

        def step(self, *args, **kwargs):
            type(self).calls += 1
            return super().step(*args, **kwargs)

    servo = Counting(chain, kernel="native")
    assert servo.step(state, cmd, 0.001, 1_000).action == Action.TRACK
    assert Counting.calls == 1


def test_a_servo_is_freed_once_nothing_refers_to_it():
    import gc
    import weakref

    chain, state, cmd = _panda_inputs()
    servo = Servo(chain, kernel="native")
    servo.step(state, cmd, 0.001, 1_000)
    gone = weakref.ref(servo)
    step = servo.step
    del servo
    gc.collect()
    assert gone() is not None  # a kept step keeps its servo, as a bound method does
    assert step(state, cmd, 0.001, 2_000).action == Action.TRACK
    del step
    gc.collect()
    assert gone() is None
