"""The C++ servo kernel against the compiled-Python one: the same scripted sequences through
``Servo(..., backend="numba")`` and ``Servo(..., backend="native")`` give the same actions,
statuses and messages, and references within 1e-12, cycle by cycle.

Each script mixes pose targets (moving and jumping), twists in both frames, joint jogs, missing,
stale and future commands, resets while moving, NaN and malformed states, bad ``dt`` and clocks
going backwards, on planar2, Panda (posture and centering on and off, jerk limits), UR5 and
Marvin (its J6/J7 coupled constraint), with both built-in solvers, a Python solver, a faulty
Python solver and Python motion generators. Both servos get the same inputs every cycle (the
measured state is the compiled-Python servo's last reference unless the script replaces it).

``IKSTACK_PARITY_STEPS`` sets the cycles per script (default 400; 16000 for the long run).
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass

import numpy as np
import pytest
from servo_helpers import PANDA_ACC, UR5_ACC

import ikstack.robots as robots
from ikstack.diffik import BoxQPSolver, DampedLeastSquares, DifferentialIK, DiffIKResult
from ikstack.servo import (
    BoxIntegrator,
    JointJogCommand,
    JointState,
    MotionGenerator,
    PoseCommand,
    Servo,
    ServoConfig,
    TwistCommand,
)

native = pytest.importorskip("ikstack._native", reason="the C++ module is not built")
if not getattr(native, "HAVE_SERVO", False):
    pytest.skip("this build of ikstack._native has no servo kernel", allow_module_level=True)

STEPS = int(os.environ.get("IKSTACK_PARITY_STEPS", "400"))
PANDA_JERK = [7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0]


class PlainDLS(DampedLeastSquares):
    """A subclass: the servo calls it through its Python ``solve`` (the general path)."""


class Faulty(DifferentialIK):
    """A Python solver that fails now and then: it raises, returns NaN, a wrong shape, or a
    failed result; otherwise a damped pseudo-inverse that ignores the box."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def solve(self, request):
        J, t = np.asarray(request.jacobian), np.asarray(request.task)
        n = J.shape[1]
        u = self.rng.random()
        if u < 0.01:
            raise RuntimeError("faulty solver raised")
        if u < 0.02:
            return np.full(n, np.nan)
        if u < 0.03:
            return np.zeros((n + 1,))
        if u < 0.04:
            return DiffIKResult(np.zeros(n), False, "gave up", 3)
        dq = J.T @ np.linalg.solve(J @ J.T + 1e-4 * np.eye(J.shape[0]), t)
        return DiffIKResult(dq, True, "ok", 1)


class Jittery(MotionGenerator):
    """A generator that integrates like the default one but sometimes misbehaves."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.inner = BoxIntegrator()
        self.resets = 0

    def generate(self, q, dq, desired, lower, upper, q_lower, q_upper, dt):
        u = self.rng.random()
        if u < 0.01:
            raise ValueError("generator raised")
        if u < 0.02:
            return np.zeros(q.shape[0] + 1), np.zeros(q.shape[0])
        if u < 0.03:
            return q + 10.0, dq  # outside the limits
        return self.inner.generate(q, dq, desired, lower, upper, q_lower, q_upper, dt)

    def reset(self):
        self.resets += 1


@dataclass
class Case:
    robot: str
    solver: str  # dls, boxqp, python, faulty
    posture: bool = False
    generator: str = ""  # "", box, jittery


CASES = [
    Case("planar2", "dls"),
    Case("planar2", "boxqp"),
    Case("panda", "dls"),
    Case("panda", "boxqp", posture=True),
    Case("panda", "dls", posture=True),
    Case("ur5", "boxqp"),
    Case("marvin_left", "dls"),
    Case("marvin_left", "boxqp", posture=True),
    Case("panda", "python"),
    Case("marvin_left", "faulty"),
    Case("ur5", "dls", generator="box"),
    Case("panda", "boxqp", generator="jittery"),
]


def arm(name: str):
    chain = robots.load(name)
    if name == "panda":
        chain = chain.with_limits(acceleration=PANDA_ACC, jerk=PANDA_JERK)
    elif name == "ur5":
        chain = chain.with_limits(acceleration=UR5_ACC)
    return chain


def build(case: Case, backend: str):
    chain = arm(case.robot)
    kw = {}
    if case.robot == "planar2":
        kw = {"task_axes": (0, 1), "max_linear_speed": 0.5}
    if case.posture:
        kw.update(nullspace_gain=0.5, nullspace_reference=chain.middle(), joint_centering_gain=0.1)
    solver = {"dls": DampedLeastSquares, "boxqp": BoxQPSolver, "python": PlainDLS,
              "faulty": lambda: Faulty(1)}[case.solver]()
    gen = {"": None, "box": BoxIntegrator(), "jittery": Jittery(2)}[case.generator]
    return chain, Servo(chain, ServoConfig(**kw), differential_ik=solver, motion_generator=gen,
                        backend=backend)


def script(chain, steps: int, seed: int):
    """Yields (state, command, dt, now_ns, reset_first) given the last reference."""
    rng = np.random.default_rng(seed)
    n = chain.dof
    lo = np.where(np.isfinite(chain.lower), chain.lower, -np.pi)
    hi = np.where(np.isfinite(chain.upper), chain.upper, np.pi)
    q0 = chain.middle() if chain.name != "planar2" else np.array([0.3, 1.2])
    T = chain.fk(q0)
    now = 10**9
    mode = "pose"
    cmd_stamp = now
    twist = np.zeros(6)
    frame = "base"
    jog = np.zeros(n)
    ref = (q0, np.zeros(n))
    for _ in range(steps):
        dt = float(rng.choice([0.001, 0.002, 0.004]))
        now += int(dt * 1e9)
        u = rng.random()
        if u < 0.04:  # a new command
            mode = str(rng.choice(["pose", "pose", "twist", "jog", "none"]))
            cmd_stamp = now
            if mode == "pose":
                q_goal = rng.uniform(lo, hi) if rng.random() < 0.5 else ref[0] + rng.normal(0, 0.1, n)
                T = chain.fk(np.clip(q_goal, lo, hi))
            twist = rng.normal(0, 0.2, 6)
            frame = str(rng.choice(["base", "tool"]))
            jog = rng.normal(0, 1.0, n)
        elif u < 0.6:
            cmd_stamp = now  # a fresh copy of the same command (otherwise it goes stale)
        if mode == "pose":
            cmd = PoseCommand(T, cmd_stamp)
        elif mode == "twist":
            cmd = TwistCommand(twist, frame, cmd_stamp)
        elif mode == "jog":
            cmd = JointJogCommand(jog, cmd_stamp)
        else:
            cmd = None
        q, dq = ref
        state = JointState(q, dq, now)
        reset = False
        v = rng.random()
        if v < 0.01:
            reset = True
        elif v < 0.015:
            state = JointState(np.full(n, np.nan), dq, now)
        elif v < 0.02:
            state = JointState(list(q), list(dq), now)  # lists: read like arrays
        elif v < 0.025:
            state = JointState(q[:-1], dq, now)
        elif v < 0.03:
            state = JointState(q, dq, float(now))
        elif v < 0.035:
            state = "not a state"
        elif v < 0.04:
            dt = 5.0
        elif v < 0.045:
            now -= 10**6
        elif v < 0.05:
            cmd = PoseCommand(T, now + 10**6)  # from the future
        elif v < 0.055:
            cmd = TwistCommand(twist, "sideways", now)
        elif v < 0.06:
            cmd = PoseCommand("not a matrix", now)
        elif v < 0.065:
            cmd = JointJogCommand(np.full(n, np.nan), now)
        elif v < 0.07:
            cmd = ("pose", T)
        elif v < 0.075:
            state = JointState(q, dq, now - 10**8)  # stamp going backwards
        elif v < 0.08:
            far = q.copy()
            far[0] = hi[0] + 1.0
            state = JointState(far, dq, now)
        ref = yield state, cmd, dt, now, reset


def run_pair(case: Case, steps: int, seed: int):
    chain, a = build(case, "numba")
    _, b = build(case, "native")
    assert type(b).__name__ == "NativeServo"
    gen = script(chain, steps, seed)
    item = next(gen)
    counts: dict[str, int] = {}
    worst = 0.0
    for k in range(steps):
        state, cmd, dt, now, reset = item
        if reset:
            a.reset()
            b.reset()
        ra = a.step(state, cmd, dt, now)
        rb = b.step(state, cmd, dt, now)
        where = f"{case} cycle {k}: {ra!r} vs {rb!r}"
        assert ra.action == rb.action, where
        assert ra.status == rb.status, where
        assert ra.message == rb.message, where
        dq_err = np.abs(ra.reference.dq - rb.reference.dq).max()
        q_err = np.abs(ra.reference.q - rb.reference.q).max()
        worst = max(worst, q_err, dq_err)
        assert q_err <= 1e-12 and dq_err <= 1e-12, (where, q_err, dq_err)
        assert a.faulted == b.faulted, where
        counts[ra.action.name] = counts.get(ra.action.name, 0) + 1
        try:
            item = gen.send((ra.reference.q, ra.reference.dq))
        except StopIteration:
            break
    return counts, worst


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.robot}-{c.solver}"
                         f"{'-posture' if c.posture else ''}{'-' + c.generator if c.generator else ''}")
def test_native_servo_matches_the_compiled_python_one(case):
    counts, worst = run_pair(case, STEPS, seed=zlib.crc32(f"{case}".encode()) % 1000)
    # the script reached every kind of answer
    assert counts.get("REJECT", 0) > 0 and counts.get("TRACK", 0) + counts.get("HOLD", 0) > 0
    assert worst <= 1e-12


def test_the_backend_is_chosen_by_argument_or_environment(monkeypatch):
    chain = robots.load("planar2")
    cfg = ServoConfig(task_axes=(0, 1))
    assert type(Servo(chain, cfg)).__name__ == "Servo"
    assert type(Servo(chain, cfg, backend="native")).__name__ == "NativeServo"
    monkeypatch.setenv("IKSTACK_SERVO", "native")
    s = Servo(chain, cfg)
    assert isinstance(s, Servo) and type(s).__name__ == "NativeServo"
    monkeypatch.setenv("IKSTACK_SERVO", "fortran")
    from ikstack.errors import InputError
    with pytest.raises(InputError, match="IKSTACK_SERVO"):
        Servo(chain, cfg)
    with pytest.raises(InputError, match="backend must be one of"):
        Servo(chain, cfg, backend="fortran")
