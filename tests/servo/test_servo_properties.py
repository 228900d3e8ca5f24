"""Property: whatever the command sequence, every reference is finite and within every limit.

Random sequences of pose targets (small moves and large jumps), twists in both frames, joint
jogs, missing and stale commands, solver faults and resets, on planar2, UR5 and Panda.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from servo_helpers import arm, check_reference

from ikstack.diffik import BoxQPSolver, DifferentialIK, DLSVelocitySolver
from ikstack.servo import (
    Action,
    JointJogCommand,
    JointState,
    PoseCommand,
    Servo,
    ServoStatus,
    TwistCommand,
)


class Flaky(DifferentialIK):
    """A Python solver that wraps a built-in one and misbehaves on demand."""

    def __init__(self, inner):
        self.inner = inner
        self.mode = "ok"

    def solve(self, request):
        if self.mode == "raise":
            raise RuntimeError("boom")
        if self.mode == "shape":
            return np.zeros(request.jacobian.shape[1] + 1)
        if self.mode == "nan":
            return np.full(request.jacobian.shape[1], np.nan)
        return self.inner.solve(request)


EVENT = st.one_of(
    st.tuples(st.just("pose_jump"), st.integers(0, 2**31 - 1)),
    st.tuples(st.just("pose_near"), st.integers(0, 2**31 - 1)),
    st.tuples(st.just("twist"), st.integers(0, 2**31 - 1)),
    st.tuples(st.just("jog"), st.integers(0, 2**31 - 1)),
    st.tuples(st.just("none"), st.just(0)),
    st.tuples(st.just("stale"), st.just(0)),
    st.tuples(st.just("fault"), st.sampled_from(["raise", "shape", "nan"])),
    st.tuples(st.just("reset"), st.just(0)),
)
SEQUENCE = st.lists(st.tuples(EVENT, st.integers(1, 25)), min_size=1, max_size=12)


def run_sequence(name, solver_cls, seed, events, dt):
    chain, cfg = arm(name)
    rng = np.random.default_rng(seed)
    flaky = Flaky(solver_cls())
    servo = Servo(chain, cfg, differential_ik=flaky)
    q = chain.random_q(rng) * 0.8 + 0.2 * chain.middle()
    dq = np.zeros(chain.dof)
    now = 0
    tick = int(dt * 1e9)
    seen = ServoStatus.NONE
    for (kind, arg), repeat in events:
        r = np.random.default_rng(arg if isinstance(arg, int) else 0)
        flaky.mode = "ok"
        if kind == "reset":
            servo.reset()
            continue
        if kind == "fault":
            flaky.mode = arg
        if kind == "pose_jump":
            target = chain.fk(chain.random_q(r))
        elif kind == "pose_near":
            target = chain.fk(np.clip(q + r.normal(size=chain.dof) * 0.1, chain.lower, chain.upper))
        for _ in range(repeat):
            now += tick
            if kind in ("pose_jump", "pose_near"):
                cmd = PoseCommand(target, now)
            elif kind == "twist":
                cmd = TwistCommand(r.normal(size=6) * 0.3, r.choice(["base", "tool"]), now)
            elif kind == "jog":
                cmd = JointJogCommand(r.normal(size=chain.dof), now)
            elif kind == "stale":
                cmd = PoseCommand(chain.fk(q), max(0, now - 10**9))
            elif kind == "fault":
                cmd = TwistCommand(np.full(6, 0.05), "base", now)
            else:
                cmd = None
            res = servo.step(JointState(q, dq, now), cmd, dt, now)
            assert res.action != Action.REJECT, res.message
            check_reference(chain, q, dq, res, dt)
            assert not res.status & ServoStatus.LIMIT_CONFLICT
            if kind == "fault":
                assert res.status & ServoStatus.SOLVER_ERROR
            seen |= res.status
            q, dq = res.reference.q, res.reference.dq
    return seen


SETTINGS = settings(
    max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)


@pytest.mark.parametrize("name", ["planar2", "ur5", "panda"])
@pytest.mark.parametrize("solver_cls", [BoxQPSolver, DLSVelocitySolver])
def test_every_reference_is_finite_and_within_all_limits(name, solver_cls):
    @SETTINGS
    @given(
        seed=st.integers(0, 2**31 - 1), events=SEQUENCE, dt=st.sampled_from([0.001, 0.004, 0.01])
    )
    def prop(seed, events, dt):
        run_sequence(name, solver_cls, seed, events, dt)

    prop()


@pytest.mark.parametrize("name", ["planar2", "ur5", "panda"])
def test_built_in_fast_path_respects_limits_under_target_jumps(name):
    chain, cfg = arm(name)
    rng = np.random.default_rng(7)
    for solver in (BoxQPSolver(), DLSVelocitySolver()):
        servo = Servo(chain, cfg, differential_ik=solver)
        q = chain.middle() * 0.5
        q = np.clip(q, chain.lower, chain.upper)
        dq = np.zeros(chain.dof)
        now = 0
        for k in range(600):
            now += 4_000_000
            if k % 60 == 0:
                target = chain.fk(chain.random_q(rng))
            res = servo.step(JointState(q, dq, now), PoseCommand(target, now), 0.004, now)
            check_reference(chain, q, dq, res, 0.004)
            q, dq = res.reference.q, res.reference.dq
