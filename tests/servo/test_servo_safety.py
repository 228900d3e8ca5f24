"""Safe at every edge: coupled joints, the kinematic-margin band, stops, unusable states.

Every check here is computed from the published limits with plain numpy (the Marvin J6/J7
diamond written out by hand, Franka's acceleration table), never with the servo's own limit
code. The property test drives closed-loop sequences of jogs, twists, pose jumps, stale and
future stamps, resets while moving, NaN states and at-rest states inside the margin band.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ikstack.robots as robots
from ikstack import (
    Action,
    BoxQPSolver,
    DLSVelocitySolver,
    JointJogCommand,
    JointState,
    PoseCommand,
    Servo,
    ServoConfig,
    ServoStatus,
    TwistCommand,
)

DEG = math.pi / 180
#: the published Marvin table [deg]: limits, accelerations; J6/J7 |q7| + 1.025 |q6| <= 110.5
MARVIN_LO = np.array([-170, -120, -170, -145, -170, -60, -90]) * DEG
MARVIN_HI = np.array([170, 120, 170, 60, 170, 60, 90]) * DEG
MARVIN_ACC = np.array([450, 450, 900, 900, 900, 900, 900]) * DEG
MARVIN_VMAX = 0.904779
MARVIN_MARGIN = 5 * DEG
PANDA_ACC = np.array([15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0])
S = ServoStatus
DT = 0.004
TICK = 4_000_000


def diamond_deg(q):
    return (abs(q[6]) + 1.025 * abs(q[5])) / DEG


def marvin():
    return robots.load("marvin_left")


def check(chain, acc, basis_q, basis_dq, res, dt, tol=1e-9):
    """Every promise for one reference from the measured (or last) state, in plain numpy."""
    q, dq = res.reference.q, res.reference.dq
    assert np.all(np.isfinite(q)) and np.all(np.isfinite(dq))
    assert np.all(q >= chain.lower - tol) and np.all(q <= chain.upper + tol)
    assert np.all(np.abs(dq) <= chain.velocity_limits * (1 + tol) + tol)
    assert np.all(np.abs(dq - basis_dq) <= acc * dt * (1 + 1e-9) + tol), (dq - basis_dq) / (
        acc * dt
    )
    assert np.all(np.abs(q - basis_q - dq * dt) <= 1e-6)  # no jump
    if chain.name.startswith("marvin"):
        assert diamond_deg(q) <= 110.5 + 1e-7


# ---------------------------------------------------------------------------- coupled joints
def test_jogging_j7_stops_at_the_j6_j7_diamond():
    chain = marvin()
    servo = Servo(chain)
    q = np.zeros(7)
    q[5] = 40 * DEG
    dq = np.zeros(7)
    jog = np.zeros(7)
    jog[6] = 0.8
    worst = 0.0
    for k in range(600):
        now = k * TICK
        res = servo.step(JointState(q, dq, now), JointJogCommand(jog, now), DT, now)
        assert res.action != Action.REJECT, res.message
        check(chain, MARVIN_ACC, q, dq, res, DT)
        q, dq = res.reference.q, res.reference.dq
        worst = max(worst, diamond_deg(q))
    # stopped at the diamond less the 5 deg margin, with the cause named
    assert worst <= 110.5 - 5.0 + 1e-6
    assert worst > 105.0
    assert res.action == Action.HOLD
    assert res.status & S.COUPLED_BOUND
    assert "j6_j7_interference" in res.message and "singularity" not in res.message


def test_a_motion_generator_is_held_at_the_diamond_too():
    from ikstack.servo import BoxIntegrator

    chain = marvin()
    servo = Servo(chain, motion_generator=BoxIntegrator())
    q, dq = np.zeros(7), np.zeros(7)
    q[5] = -40 * DEG
    jog = np.zeros(7)
    jog[6] = -0.8
    for k in range(400):
        now = k * TICK
        res = servo.step(JointState(q, dq, now), JointJogCommand(jog, now), DT, now)
        assert res.action != Action.REJECT, res.message
        check(chain, MARVIN_ACC, q, dq, res, DT)
        q, dq = res.reference.q, res.reference.dq
    assert res.status & S.COUPLED_BOUND and diamond_deg(q) > 105.0


@pytest.mark.parametrize("solver", [DLSVelocitySolver, BoxQPSolver])
def test_a_pose_beyond_the_diamond_is_approached_without_crossing_it(solver):
    chain = marvin()
    servo = Servo(chain, differential_ik=solver())
    q = np.zeros(7)
    q[3] = -60 * DEG
    q[5] = 40 * DEG
    goal = q.copy()
    goal[6] = 85 * DEG  # 41 + 85 = 126 deg: outside the diamond
    T = chain.fk(goal)
    dq = np.zeros(7)
    bound = False
    for k in range(1500):
        now = k * TICK
        res = servo.step(JointState(q, dq, now), PoseCommand(T, now), DT, now)
        assert res.action != Action.REJECT, res.message
        check(chain, MARVIN_ACC, q, dq, res, DT)
        bound |= bool(res.status & S.COUPLED_BOUND)
        q, dq = res.reference.q, res.reference.dq
    assert bound or diamond_deg(q) < 105.5


# ---------------------------------------------------------------------------- margin band
def band_state():
    q = np.zeros(7)
    q[3] = 57 * DEG  # 3 deg below J4's hardware limit: inside the 5 deg margin
    return q


@pytest.mark.parametrize("direction", [-1.0, 1.0])
def test_a_state_in_the_margin_band_is_legal(direction):
    chain = marvin()
    servo = Servo(chain)
    q, dq = band_state(), np.zeros(7)
    jog = np.zeros(7)
    jog[3] = direction * 0.5
    for k in range(200):
        now = k * TICK
        res = servo.step(JointState(q, dq, now), JointJogCommand(jog, now), DT, now)
        assert res.action != Action.REJECT, res.message
        check(chain, MARVIN_ACC, q, dq, res, DT)
        if direction > 0:  # deeper into the band: refused, held where it is
            assert res.reference.q[3] <= 57 * DEG + 1e-12
        q, dq = res.reference.q, res.reference.dq
    if direction < 0:  # out of the band: allowed
        assert q[3] < MARVIN_HI[3] - MARVIN_MARGIN - 0.1
    else:
        assert res.status & S.JOINT_BOUND and "position limit" in res.message


def test_a_pose_hold_in_the_band_does_not_jump():
    chain = marvin()
    servo = Servo(chain, differential_ik=BoxQPSolver())
    q, dq = band_state(), np.zeros(7)
    T = chain.fk(q)
    res = servo.step(JointState(q, dq, 0), PoseCommand(T, 0), DT, 0)
    assert res.action != Action.REJECT, res.message
    check(chain, MARVIN_ACC, q, dq, res, DT)


def test_reject_only_outside_the_hard_limits():
    chain = marvin()
    q = np.zeros(7)
    q[3] = MARVIN_HI[3] + 1e-7  # within the state tolerance of the hard limit
    res = Servo(chain).step(JointState(q, np.zeros(7), 0), None, DT, 0)
    assert res.action != Action.REJECT
    q[3] = MARVIN_HI[3] + 1e-3
    res = Servo(chain).step(JointState(q, np.zeros(7), 0), None, DT, 0)
    assert res.action == Action.REJECT
    assert "hard limits" in res.message and "joint4" in res.message
    assert np.all(res.reference.q <= MARVIN_HI + 1e-12)


# ---------------------------------------------------------------------------- stops
def moving_marvin():
    chain = marvin()
    servo = Servo(chain)
    q, dq = np.zeros(7), np.zeros(7)
    jog = np.full(7, MARVIN_VMAX)
    for k in range(60):
        now = k * TICK
        res = servo.step(JointState(q, dq, now), JointJogCommand(jog, now), DT, now)
        q, dq = res.reference.q, res.reference.dq
    assert np.abs(dq).max() > 0.8
    return chain, servo, q, dq, 60 * TICK


def test_a_reject_right_after_reset_brakes_within_the_acceleration_limit():
    chain, servo, q, dq, now = moving_marvin()
    servo.reset()
    future = JointJogCommand(np.zeros(7), now + 10 * TICK)
    res = servo.step(JointState(q, dq, now), future, DT, now)
    assert res.action == Action.REJECT
    check(chain, MARVIN_ACC, q, dq, res, DT)
    assert np.abs(res.reference.dq).max() > 0.5  # still braking, not stopped at once


def test_an_unusable_state_says_so_and_keeps_braking_from_the_last_reference():
    chain, servo, q, dq, now = moving_marvin()
    bad = q.copy()
    bad[2] = np.nan
    for k in range(40):
        res = servo.step(JointState(bad, dq, now + k * TICK), None, DT, now + k * TICK)
        assert res.action == Action.REJECT
        assert "unusable" in res.message and "last safe reference" in res.message
        check(chain, MARVIN_ACC, q, dq, res, DT)
        q, dq = res.reference.q, res.reference.dq
    assert np.all(dq == 0.0)  # braked to a hold


def test_messages_name_the_binding_cause():
    chain = robots.load("panda").with_limits(acceleration=PANDA_ACC)
    servo = Servo(chain)
    q = chain.middle()
    res = servo.step(JointState(q, np.full(7, 1e9), 0), PoseCommand(chain.fk(q), 0), DT, 0)
    assert res.status & S.LIMIT_CONFLICT
    assert "limit conflict" in res.message and "singularity" not in res.message


# ---------------------------------------------------------------------------- properties
KINDS = ("jog", "jog_j67", "twist", "pose", "none", "stale", "future", "reset", "nan", "band")


def random_state(chain, rng, band):
    km = chain.kinematic_margin
    while True:
        q = rng.uniform(chain.lower + km, chain.upper - km)
        if band:
            j = int(rng.integers(chain.dof))
            d = rng.uniform(0.0, km) if km > 0 else 0.0
            q[j] = chain.upper[j] - d if rng.random() < 0.5 else chain.lower[j] + d
        if not chain.name.startswith("marvin") or diamond_deg(q) <= 110.5:
            return q


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    robot=st.sampled_from(["marvin_left", "marvin_right", "panda"]),
    solver=st.sampled_from(["dls", "boxqp"]),
    events=st.lists(
        st.tuples(st.sampled_from(KINDS), st.integers(0, 2**32 - 1)), min_size=5, max_size=25
    ),
)
def test_every_reference_is_safe_under_random_sequences(robot, solver, events):
    chain = robots.load(robot)
    acc = MARVIN_ACC if robot.startswith("marvin") else PANDA_ACC
    if robot == "panda":
        chain = chain.with_limits(acceleration=PANDA_ACC)
    servo = Servo(
        chain,
        ServoConfig(),
        differential_ik=BoxQPSolver() if solver == "boxqp" else DLSVelocitySolver(),
    )
    n = chain.dof
    vmax = chain.velocity_limits
    q, dq = random_state(chain, np.random.default_rng(events[0][1]), False), np.zeros(n)
    now = 0
    cmd = None
    for kind, seed in events:
        rng = np.random.default_rng(seed)
        if kind == "jog":
            cmd = ("jog", rng.uniform(-2, 2, n) * vmax)
        elif kind == "jog_j67":
            v = np.zeros(n)
            v[int(rng.integers(n - 2, n))] = rng.choice([-2.0, 2.0]) * vmax[-1]
            cmd = ("jog", v)
        elif kind == "twist":
            cmd = ("twist", np.concatenate([rng.normal(0, 0.3, 3), rng.normal(0, 1.0, 3)]))
        elif kind == "pose":
            cmd = ("pose", chain.fk(random_state(chain, rng, False)))
        elif kind == "none":
            cmd = None
        for k in range(int(rng.integers(3, 40))):
            now += TICK
            state_q, state_dq, stamp = q, dq, now
            cstamp = now
            if kind == "stale":
                cstamp = now - 10**9
            elif kind == "future" and k == 0:
                cstamp = now + 10**7
            elif kind == "reset" and k == 0:
                servo.reset()
            elif kind == "nan" and k == 0 and now > TICK:
                # (after the first cycle: before any reference was sent the servo cannot know
                # where a joint it cannot read is)
                state_q = q.copy()
                state_q[int(rng.integers(n))] = np.nan
            elif kind == "band" and k == 0:
                state_q, state_dq = random_state(chain, rng, True), np.zeros(n)
            command = None
            if cmd is not None:
                command = (
                    JointJogCommand(cmd[1], cstamp)
                    if cmd[0] == "jog"
                    else TwistCommand(cmd[1], "base", cstamp)
                    if cmd[0] == "twist"
                    else PoseCommand(cmd[1], cstamp)
                )
            res = servo.step(JointState(state_q, state_dq, stamp), command, DT, now)
            usable = np.all(np.isfinite(state_q))
            check(chain, acc, state_q if usable else q, state_dq if usable else dq, res, DT)
            q, dq = res.reference.q, res.reference.dq


def test_a_state_across_the_diamond_is_refused_and_named():
    chain = marvin()
    q = np.zeros(7)
    q[5], q[6] = 40 * DEG, 75 * DEG  # 41 + 75 = 116 deg
    res = Servo(chain).step(JointState(q, np.zeros(7), 0), None, DT, 0)
    assert res.action == Action.REJECT
    assert "j6_j7_interference" in res.message
    assert diamond_deg(res.reference.q) <= 110.5 + 1e-7
