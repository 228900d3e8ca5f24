"""Numerical IK: FK round trips, certification, statuses, masks, determinism, input errors."""

from __future__ import annotations

import numpy as np
import pytest

import ikstack.robots as robots
from ikstack.errors import InputError, NotRigidTransformError, ShapeError
from ikstack.ik import IKStatus
from ikstack.ik.numerical import DampedLeastSquaresIK, LevenbergMarquardt, LimitMode
from ikstack.kinematics import fk
from ikstack.spatial import make_transform, pose_error, rotvec_to_matrix
from ikstack.vocabulary import DAMPING_RULES, DampingRule

ARMS = [
    "ur5",
    "panda",
    "panda_hand",
    "iiwa14",
    "marvin_left",
    "marvin_right",
    "rizon4",
    "rizon4s",
    "arx_x5",
]


def _targets(chain, n, seed=0):
    rng = np.random.default_rng(seed)
    # reachable ones: every solver keeps the chain's kinematic margin from the limits
    km = chain.kinematic_margin
    q = np.clip(chain.random_q(rng, 4 * n), chain.lower + km, chain.upper - km)
    if chain.constraints:
        q = q[chain.constraints_satisfied(q)]
    q = q[:n]
    return q, fk(chain, q)


def _assert_certified(chain, res, T, tol_p=1e-5, tol_r=1e-5):
    ok = res.success
    assert np.all(np.isfinite(res.q))
    assert np.all(chain.within_limits(res.q))  # failed rows too: limit-projected
    e = pose_error(T[ok], fk(chain, res.q[ok]))
    assert np.all(np.linalg.norm(e[:, :3], axis=1) <= tol_p)
    assert np.all(np.linalg.norm(e[:, 3:], axis=1) <= tol_r)
    if chain.constraints:
        assert np.all(chain.constraints_satisfied(res.q[ok]))
    assert np.all(res.status[ok] == IKStatus.SUCCESS)
    assert np.all(res.status[~ok] != IKStatus.SUCCESS)


@pytest.mark.parametrize("name", ARMS)
def test_lm_solves_fk_sampled_targets_on_every_bundled_arm(name):
    chain = robots.load(name)
    _, T = _targets(chain, 150, seed=1)
    res = LevenbergMarquardt(chain).solve(T)
    assert res.method == "numerical:lm"
    assert res.success_rate >= 0.99
    _assert_certified(chain, res, T)


def test_sugihara_damping_solves_fk_sampled_targets():
    chain = robots.load("iiwa14")
    _, T = _targets(chain, 100, seed=2)
    res = LevenbergMarquardt(chain, damping="sugihara").solve(T)
    assert res.success_rate >= 0.97
    _assert_certified(chain, res, T)


def test_damping_rule_enum_and_its_string_are_the_same_solver():
    """``DampingRule`` members and their plain strings pick the same step and default
    parameter (a string stays accepted), and answer alike."""
    chain = robots.load("panda")
    _, T = _targets(chain, 20, seed=4)
    for rule, text in ((DampingRule.SUGIHARA, "sugihara"), (DampingRule.CHAN, "chan")):
        a, b = LevenbergMarquardt(chain, damping=rule), LevenbergMarquardt(chain, damping=text)
        assert a.damping_rule is b.damping_rule is rule and a.damping == b.damping
        ra, rb = a.solve(T), b.solve(T)
        np.testing.assert_array_equal(ra.q, rb.q)
        np.testing.assert_array_equal(ra.status, rb.status)
    assert LevenbergMarquardt(chain).damping_rule is DampingRule.CHAN
    assert DAMPING_RULES == ("chan", "sugihara")


def test_dls_converges_from_a_nearby_seed():
    chain = robots.load("panda")
    q, T = _targets(chain, 50, seed=3)
    seed = chain.clip(q + 0.1)
    res = DampedLeastSquaresIK(chain, damping=0.01, max_iterations=200).solve(T, q0=seed)
    assert res.method == "numerical:dls"
    assert res.success.all()
    _assert_certified(chain, res, T)


@pytest.mark.parametrize("mode", [LimitMode.PROJECT, LimitMode.CLAMP_STEP])
def test_limit_aware_steps_keep_every_iterate_inside_the_limits(mode):
    chain = robots.load("panda")
    _, T = _targets(chain, 100, seed=4)
    res = LevenbergMarquardt(chain, limits=mode).solve(T)
    assert res.success_rate >= 0.97
    _assert_certified(chain, res, T)


def test_single_target_is_a_batch_of_one_with_the_same_answer():
    chain = robots.load("rizon4")
    _, T = _targets(chain, 5, seed=5)
    solver = LevenbergMarquardt(chain, rng=7)
    batch = solver.solve(T)
    for i in range(5):
        one = solver.solve(T[i])
        assert len(one) == 1
        np.testing.assert_array_equal(one.q[0], batch.q[i])
        assert one.iterations[0] == batch.iterations[i]


def test_same_int_seed_gives_identical_results_and_generator_seeds_draw_fresh_restarts():
    chain = robots.load("panda")
    _, T = _targets(chain, 80, seed=6)
    a = LevenbergMarquardt(chain, rng=3).solve(T)
    b = LevenbergMarquardt(chain, rng=3).solve(T)
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.restarts, b.restarts)
    g1 = LevenbergMarquardt(chain, rng=np.random.default_rng(11)).solve(T)
    g2 = LevenbergMarquardt(chain, rng=np.random.default_rng(11)).solve(T)
    np.testing.assert_array_equal(g1.q, g2.q)


def test_large_batch_runs_the_parallel_path_with_the_serial_answers():
    chain = robots.load("iiwa14")
    _, T = _targets(chain, 130, seed=8)
    solver = LevenbergMarquardt(chain)
    whole = solver.solve(T)  # >= PARALLEL_THRESHOLD
    parts = [solver.solve(T[i : i + 10]) for i in range(0, 130, 10)]
    np.testing.assert_array_equal(whole.q, np.concatenate([p.q for p in parts]))


def test_position_only_mask_reaches_positions_whatever_the_orientation():
    chain = robots.load("ur5")
    q, T = _targets(chain, 40, seed=9)
    rng = np.random.default_rng(0)
    T = T.copy()
    T[:, :3, :3] = rotvec_to_matrix(rng.normal(size=(40, 3)))  # orientations it cannot match
    res = LevenbergMarquardt(chain, mask="position").solve(T)
    assert res.success_rate >= 0.95
    assert np.all(res.position_error[res.success] <= 1e-5)
    assert np.median(res.rotation_error) > 0.1  # orientation was not solved for


def test_axis_subset_mask_ignores_rotation_about_z_only():
    chain = robots.load("panda")
    q, T = _targets(chain, 40, seed=10)
    twist = make_transform(rotvec_to_matrix([0.0, 0.0, 0.7]))
    T2 = T @ twist  # rotate the tool about its own z: the base-z component differs
    mask = (1, 1, 1, 1, 1, 0)
    res = LevenbergMarquardt(chain, mask=mask).solve(T2)
    e = pose_error(T2, fk(chain, res.q))
    ok = res.success
    assert ok.mean() >= 0.9
    assert np.all(np.linalg.norm(e[ok][:, :3], axis=1) <= 1e-5)
    assert np.all(np.linalg.norm(e[ok][:, 3:5], axis=1) <= 1e-5)


def test_unreachable_target_is_a_status_with_a_finite_in_limit_answer_not_an_exception():
    chain = robots.load("ur5")
    T = make_transform(p=[3.0, 0.0, 0.5])  # far outside the 0.85 m reach
    res = LevenbergMarquardt(chain, max_restarts=5).solve(T)
    assert not res.success[0]
    assert res.status[0] in (IKStatus.ITERATION_LIMIT, IKStatus.SINGULAR, IKStatus.JOINT_LIMITS)
    assert np.all(np.isfinite(res.q)) and chain.within_limits(res.q[0])
    assert res.position_error[0] > 1.0
    assert res.restarts[0] == 5
    assert res.reason(0)


def test_time_budget_stops_restarts_with_time_limit_status():
    chain = robots.load("panda")
    T = make_transform(p=[3.0, 0.0, 0.5])
    res = LevenbergMarquardt(chain, max_restarts=100000, time_budget=2e-3).solve(T)
    assert res.status[0] == IKStatus.TIME_LIMIT
    assert res.restarts[0] < 100000


def test_out_of_limit_solutions_report_joint_limits():
    # planar2 reaching (0, 0.6): elbow needs |q2| ~ 1.98 rad; limits of +-1 rad forbid it
    chain = robots.load("planar2").with_limits(lower=[-3.0, -1.0], upper=[3.0, 1.0])
    d = 0.6
    q2 = np.arccos((d * d - 0.5) / 0.5)
    q1 = np.pi / 2 - np.arctan2(0.5 * np.sin(q2), 0.5 + 0.5 * np.cos(q2))
    T = fk(robots.load("planar2"), np.array([q1, q2]))
    for mode in (LimitMode.IGNORE, LimitMode.PROJECT):
        res = LevenbergMarquardt(chain, limits=mode, max_restarts=20).solve(T)
        assert not res.success[0]
        assert res.status[0] == IKStatus.JOINT_LIMITS, mode
        assert chain.within_limits(res.q[0])


def test_singular_best_iterate_reports_singular():
    # fully stretched planar2 pointing at a target straight beyond its reach
    chain = robots.load("planar2")
    T = make_transform(p=[1.5, 0.0, 0.0])
    res = LevenbergMarquardt(chain, mask="position", max_restarts=3).solve(T, q0=[0.0, 0.0])
    assert not res.success[0]
    assert res.status[0] == IKStatus.SINGULAR


def test_marvin_answers_respect_the_coupled_joint_constraint():
    chain = robots.load("marvin_left")
    rng = np.random.default_rng(12)
    km = chain.kinematic_margin
    q = np.clip(chain.random_q(rng, 2000), chain.lower + km, chain.upper - km)
    q = q[chain.constraints_satisfied(q)]
    # targets near the J6/J7 diamond's edge, where unconstrained answers often violate it
    edge = np.abs(q[:, 6]) + 1.025 * np.abs(q[:, 5]) > np.radians(95)
    T = fk(chain, q[edge][:60])
    res = LevenbergMarquardt(chain).solve(T)
    assert res.success_rate >= 0.97
    _assert_certified(chain, res, T)


def test_answers_match_pinocchio_forward_kinematics():
    pin = pytest.importorskip("pinocchio")
    chain = robots.load("panda")
    _, T = _targets(chain, 20, seed=13)
    res = LevenbergMarquardt(chain).solve(T)
    model = pin.buildModelFromUrdf(str(robots.data_path("panda.urdf")))
    data = model.createData()
    fid = model.getFrameId("panda_link8")
    for i in np.flatnonzero(res.success):
        qp = pin.neutral(model)
        qp[: chain.dof] = res.q[i]
        pin.framesForwardKinematics(model, data, qp)
        M = data.oMf[fid]
        np.testing.assert_allclose(M.translation, T[i, :3, 3], atol=2e-5)
        np.testing.assert_allclose(M.rotation, T[i, :3, :3], atol=2e-5)


def test_bad_inputs_raise_named_errors():
    chain = robots.load("panda")
    solver = LevenbergMarquardt(chain)
    bad = np.eye(4)
    bad[0, 0] = 2.0
    with pytest.raises(NotRigidTransformError):
        solver.solve(bad)
    with pytest.raises(ShapeError):
        solver.solve(np.eye(3))
    with pytest.raises(ShapeError):
        solver.solve(np.eye(4), q0=np.zeros(3))
    with pytest.raises(InputError, match="valid options"):
        LevenbergMarquardt(chain, max_iteration=5)
    with pytest.raises(InputError, match="mask"):
        LevenbergMarquardt(chain, mask="orientation-ish")
    with pytest.raises(InputError, match="no axis"):
        LevenbergMarquardt(chain, mask=(0, 0, 0, 0, 0, 0))
    with pytest.raises(InputError, match="damping"):
        LevenbergMarquardt(chain, damping="wampler")
    with pytest.raises(InputError):
        DampedLeastSquaresIK(chain, damping=-1.0)


def test_inputs_are_not_mutated():
    chain = robots.load("ur5")
    q, T = _targets(chain, 3, seed=14)
    T0, s0 = T.copy(), q.copy()
    LevenbergMarquardt(chain).solve(T, q0=q)
    np.testing.assert_array_equal(T, T0)
    np.testing.assert_array_equal(q, s0)
