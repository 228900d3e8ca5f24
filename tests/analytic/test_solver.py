"""AnalyticIK: FK -> IK -> FK round trips, every solution, seeds, limits, paths, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from analytic_arms import STRUCTURES_6R, random_arm

import ikstack.robots as robots
from ikstack.errors import InputError, NonFiniteError, NotRigidTransformError, ShapeError
from ikstack.ik import IKStatus, certify
from ikstack.ik.analytic import AnalyticIK, classify

N = 200


def in_limit_targets(chain, rng, n=N):
    lo = chain.lower + chain.kinematic_margin
    hi = chain.upper - chain.kinematic_margin
    q = rng.uniform(lo, hi, size=(4 * n, chain.dof))
    q = q[chain.constraints_satisfied(q)][:n]
    return q, chain.fk(q)


@pytest.fixture(scope="module")
def ur5_ik():
    return AnalyticIK(robots.load("ur5"))


@pytest.mark.parametrize(
    "name, mode, samples",
    [
        ("ur5", "strict", 128),
        ("iiwa14", "strict", 32),
        ("panda", "strict", 64),
        ("marvin_left", "near", 32),
        ("arx_x5", "near", 128),
    ],
)
def test_round_trip_recovers_every_in_limit_target(name, mode, samples):
    chain = robots.load(name)
    rng = np.random.default_rng(1)
    q, T = in_limit_targets(chain, rng)
    ik = AnalyticIK(chain, mode=mode, num_samples=samples)
    r = ik.solve(T)
    assert r.success.all(), np.bincount(r.status)
    assert r.method.startswith("analytic:")
    assert r.position_error.max() < 1e-6 and r.rotation_error.max() < 1e-6
    # exact geometry: ~1e-13 even in near mode (the surrogate is the arm itself)
    assert r.position_error.max() < 1e-9 and r.rotation_error.max() < 1e-9
    assert chain.within_limits(r.q).all() and chain.constraints_satisfied(r.q).all()


@pytest.mark.parametrize("structure", [*STRUCTURES_6R, "srs", "locked_last"])
def test_random_arms_round_trip_to_1e_9(structure):
    rng = np.random.default_rng(4)
    for _ in range(4):
        chain = random_arm(structure, rng)
        ik = AnalyticIK(chain, num_samples=8)
        q = rng.uniform(-np.pi, np.pi, (50, chain.dof))
        r = ik.solve(chain.fk(q), q0=q)
        assert r.success.all()
        assert r.position_error.max() < 1e-9 and r.rotation_error.max() < 1e-9


def test_calibrated_arm_needs_near_mode_and_near_mode_recovers_it():
    ur5 = robots.load("ur5")
    rng = np.random.default_rng(8)
    origins = ur5.origins.copy()
    origins[:, :3, 3] += rng.normal(scale=1e-3, size=(6, 3))
    axes = ur5.axes + rng.normal(scale=2e-4, size=(6, 3))
    calibrated = ur5.replace(origins=origins, axes=axes)
    c = classify(calibrated)
    assert c.needs_near and c.family is not None
    q, T = in_limit_targets(calibrated, rng, 100)
    r = AnalyticIK(calibrated, mode="near").solve(T, q0=q + 0.05)
    assert r.success.mean() == 1.0
    assert r.method.endswith(":near")


def test_return_all_gives_fixed_k_and_certified_mask(ur5_ik):
    chain = ur5_ik.chain
    q, T = in_limit_targets(chain, np.random.default_rng(2), 50)
    r = ur5_ik.solve(T, return_all=True)
    assert r.q_all.shape == (50, 8, 6) and r.valid_all.shape == (50, 8)
    ok, _, _ = certify(chain, r.q_all, T[:, None], 1e-6, 1e-6)
    assert np.all(ok[r.valid_all])
    assert np.isfinite(r.q_all).all()
    assert r.valid_all.sum(axis=1).min() >= 1
    # the truth is among the solutions (up to whole turns)
    d = np.abs(np.angle(np.exp(1j * (r.q_all - q[:, None])))).max(axis=2)
    assert np.all(np.where(r.valid_all, d, np.inf).min(axis=1) < 1e-8)


def test_seed_at_the_truth_returns_the_truth(ur5_ik):
    q, T = in_limit_targets(ur5_ik.chain, np.random.default_rng(3), 50)
    r = ur5_ik.solve(T, q0=q)
    assert np.abs(r.q - q).max() < 1e-8


def test_whole_turn_representative_nearest_the_seed(ur5_ik):
    q = np.array([-0.3, -1.2, 1.0, -0.7, 1.1, 0.4])
    T = ur5_ik.chain.fk(q)
    seed = q.copy()
    seed[0] += 2 * np.pi - 0.05  # joint 1 allows +-2 pi: the turn near 2 pi - 0.3 is nearer
    r = ur5_ik.solve(T, q0=seed)
    assert r.success[0]
    assert abs(r.q[0, 0] - (q[0] + 2 * np.pi)) < 1e-8


def test_weights_change_which_solution_is_nearest(ur5_ik):
    chain = ur5_ik.chain
    q = np.array([0.3, -1.2, 1.0, -0.7, 1.1, 0.4])
    T = chain.fk(q)
    r_all = ur5_ik.solve(T, return_all=True)
    cands = r_all.q_all[0][r_all.valid_all[0]]
    seed = chain.middle()
    for w in (np.array([1, 0, 0, 0, 0, 0.0]), np.array([0, 0, 0, 0, 0, 1.0])):
        ik = AnalyticIK(chain, weights=w)
        sel = ik.solve(T, q0=seed).q[0]
        cost = ((cands - seed) ** 2 * w).sum(axis=1)
        assert ((sel - seed) ** 2 * w).sum() <= cost.min() + 1e-9


def test_unreachable_target_fails_with_finite_limit_projected_seed(ur5_ik):
    T = np.eye(4)
    T[:3, 3] = [3.0, 0.0, 0.0]  # 3 m away: beyond the UR5's reach
    seed = np.full(6, 10.0)  # outside the limits: projected
    r = ur5_ik.solve(T, q0=seed)
    assert not r.success[0] and r.status[0] == IKStatus.UNREACHABLE
    assert np.isfinite(r.q).all() and ur5_ik.chain.within_limits(r.q).all()


def test_max_joint_step_rejects_far_solutions():
    chain = robots.load("ur5")
    q = np.array([0.3, -1.2, 1.0, -0.7, 1.1, 0.4])
    T = chain.fk(q)
    ik = AnalyticIK(chain, max_joint_step=0.1)
    assert ik.solve(T, q0=q + 0.05).success[0]
    r = ik.solve(T, q0=q + 0.5)
    assert not r.success[0] and r.status[0] == IKStatus.STEP_LIMIT
    assert np.allclose(r.q[0], q + 0.5)


def test_joint_limits_status_when_every_branch_is_outside():
    chain = robots.load("ur5")
    q = np.array([0.3, -1.2, 1.0, -0.7, 1.1, 0.4])
    T = chain.fk(q)
    narrow = chain.with_limits(
        lower=q - 1e-3 + np.array([0, 0, 0, 0, 0, 0.5]),
        upper=q + 1e-3 + np.array([0, 0, 0, 0, 0, 0.5]),
    )
    r = AnalyticIK(narrow).solve(T)
    assert not r.success[0] and r.status[0] == IKStatus.JOINT_LIMITS


@pytest.mark.parametrize(
    "name, q",
    [
        ("ur5", [0.3, -1.2, 1.0, -0.7, 0.0, 0.4]),  # wrist axes 4 and 6 aligned
        ("ur5", [0.3, -1.2, 0.0, -0.7, 1.0, 0.4]),  # elbow stretched
        ("iiwa14", [0.3, 0.5, 0.2, 0.0, 0.4, 0.6, 0.1]),  # elbow stretched
        ("iiwa14", [0.3, 0.0, 0.2, 0.9, 0.4, 0.0, 0.1]),  # shoulder and wrist aligned
        ("panda", [0.3, 0.2, 0.2, -1.5, 0.4, 0.0, 0.1]),
    ],
)
def test_singular_configurations_give_finite_certified_representatives(name, q):
    chain = robots.load(name)
    q = np.asarray(q)
    T = chain.fk(q)
    r = AnalyticIK(chain, num_samples=16).solve(T, q0=q, return_all=True)
    assert np.isfinite(r.q).all() and np.isfinite(r.q_all).all()
    assert not np.isnan(r.position_error).any()
    assert r.success[0]


def test_empty_batch(ur5_ik):
    r = ur5_ik.solve(np.zeros((0, 4, 4)), return_all=True)
    assert r.q.shape == (0, 6) and r.success.shape == (0,)
    assert r.q_all.shape == (0, 8, 6)


def test_single_pose_and_seed_shapes(ur5_ik):
    q = np.array([0.3, -1.2, 1.0, -0.7, 1.1, 0.4])
    T = ur5_ik.chain.fk(q)
    for seed in (None, q, q[None], np.tile(q, (1, 1))):
        r = ur5_ik.solve(T, q0=seed)
        assert r.q.shape == (1, 6) and r.success[0]
    r = ur5_ik.solve(np.stack([T, T, T]), q0=q[None])
    assert r.q.shape == (3, 6) and r.success.all()


def test_inputs_are_not_mutated(ur5_ik):
    q = np.array([0.3, -1.2, 1.0, -0.7, 1.1, 0.4])
    T = ur5_ik.chain.fk(q)
    T0, s0 = T.copy(), (q + 0.1).copy()
    seed = q + 0.1
    ur5_ik.solve(T, q0=seed)
    assert np.array_equal(T, T0) and np.array_equal(seed, s0)


def test_bad_inputs_raise_named_errors(ur5_ik):
    T = ur5_ik.chain.fk(np.zeros(6))
    with pytest.raises(ShapeError):
        ur5_ik.solve(np.eye(3))
    bad = T.copy()
    bad[0, 0] = np.nan
    with pytest.raises(NonFiniteError):
        ur5_ik.solve(bad)
    bad = T.copy()
    bad[:3, :3] *= 2.0
    with pytest.raises(NotRigidTransformError):
        ur5_ik.solve(bad)
    with pytest.raises(ShapeError, match="q0"):
        ur5_ik.solve(np.stack([T, T]), q0=np.zeros((3, 6)))
    with pytest.raises(InputError):
        ur5_ik.solve(T, q0=np.zeros(5))
    with pytest.raises(InputError, match="mode"):
        AnalyticIK(ur5_ik.chain, mode="fast")
    with pytest.raises(InputError, match="num_samples"):
        AnalyticIK(ur5_ik.chain, num_samples=0)
    with pytest.raises(InputError, match="weights"):
        AnalyticIK(ur5_ik.chain, weights=-np.ones(6))


def test_path_is_continuous_and_failed_frames_hold_the_previous_pose():
    chain = robots.load("iiwa14")
    q0 = np.array([0.1, 0.5, 0.2, -1.0, 0.3, 0.6, 0.1])
    qs = q0 + np.linspace(0, 0.5, 30)[:, None] * np.array([1, -0.5, 0.3, 0.4, -0.2, 0.5, 0.3])
    T = chain.fk(qs)
    T[10, :3, 3] = [5.0, 0.0, 0.0]  # unreachable frame
    ik = AnalyticIK(chain, num_samples=32, max_joint_step=0.2)
    r = ik.solve_path(T, q0=q0)
    assert not r.success[10] and r.status[10] == IKStatus.UNREACHABLE
    assert np.array_equal(r.q[10], r.q[9])
    assert r.success[np.arange(30) != 10].all()
    assert np.abs(np.diff(r.q, axis=0)).max() <= 0.2 + 1e-12
    # the swivel follows the previous frame (the redundancy is resolved by continuity)
    assert r.position_error[r.success].max() < 1e-9


def test_path_step_bound_rejects_a_jump():
    chain = robots.load("ur5")
    q0 = np.array([0.3, -1.2, 1.0, -0.7, 1.1, 0.4])
    q1 = q0 + 0.5
    ik = AnalyticIK(chain, max_joint_step=0.1)
    r = ik.solve_path(chain.fk(np.stack([q0, q1, q0])), q0=q0)
    assert r.success[0] and not r.success[1] and r.success[2]
    assert r.status[1] == IKStatus.STEP_LIMIT and np.array_equal(r.q[1], r.q[0])


def test_large_batches_are_chunked_with_identical_results(monkeypatch):
    import ikstack.ik.analytic.solver as solver_mod

    chain = robots.load("iiwa14")
    q, T = in_limit_targets(chain, np.random.default_rng(6), 40)
    ik = AnalyticIK(chain, num_samples=8)
    whole = ik.solve(T)
    monkeypatch.setattr(solver_mod, "CHUNK_CANDIDATES", 3 * ik.K)
    parts = ik.solve(T)
    assert np.array_equal(whole.q, parts.q) and np.array_equal(whole.success, parts.success)


def test_near_mode_on_an_exact_arm_matches_strict_solutions():
    chain = robots.load("ur5")
    q, T = in_limit_targets(chain, np.random.default_rng(9), 50)
    for seed in (q, None):  # at the truth, and far from it (the middle of the limits)
        strict = AnalyticIK(chain).solve(T, q0=seed)
        near = AnalyticIK(chain, mode="near").solve(T, q0=seed)
        assert near.success.all() and near.method == "analytic:three_parallel:near"
        assert np.abs(near.q - strict.q).max() < 1e-6


def industrial_layouts():
    ex, ey, ez = np.eye(3)
    z = np.zeros(3)
    return {
        # shoulder axes meeting and upper arm parallel to forearm axis (PUMA)
        "puma": (
            np.array([ez, ey, ey, ez, ey, ez]),
            np.array([0.67 * ez, 0.15 * ey, 0.43 * ex, 0.43 * ez - 0.02 * ey, z, z, 0.056 * ez]),
        ),
        # shoulder offset, axes 2 and 3 parallel (KUKA KR / IRB 6640)
        "kuka_kr": (
            np.array([-ez, ey, ey, -ex, ey, -ex]),
            np.array([0.675 * ez, 0.35 * ex, 1.15 * ez, -0.041 * ez + 1.2 * ex, z, z, 0.215 * ex]),
        ),
        # axes 2 and 3 meeting
        "second_meet": (
            np.array([ez, ey, ex, ez, ey, ez]),
            np.array([0.4 * ez, 0.1 * ex, z, 0.5 * ex + 0.3 * ez, z, z, 0.1 * ez]),
        ),
    }


@pytest.mark.parametrize("layout", ["puma", "kuka_kr", "second_meet"])
def test_spherical_wrist_variants_recover_every_target(layout):
    from ikstack.ik.analytic.geometry import chain_from_hp

    H, P = industrial_layouts()[layout]
    chain = chain_from_hp(H, P)
    assert classify(chain).family == "spherical_wrist"
    rng = np.random.default_rng(12)
    q = rng.uniform(-np.pi, np.pi, (300, 6))
    r = AnalyticIK(chain).solve(chain.fk(q), q0=q, return_all=True)
    assert r.success.all() and r.position_error.max() < 1e-9
    assert np.abs(np.angle(np.exp(1j * (r.q - q)))).max() < 1e-6


def test_coupled_joint_constraint_is_respected_by_the_selection():
    from ikstack.model.constraints import LinearJointConstraint

    ur5 = robots.load("ur5")
    q = np.array([0.3, -1.2, 1.0, -0.7, 1.1, 0.4])
    T = ur5.fk(q)
    # q3 <= 0 only: the truth (the nearest branch, q3 = 1.0) breaks the rule
    rule = LinearJointConstraint(
        A=np.array([[0, 0, 1.0, 0, 0, 0]]), b=np.array([0.0]), name="elbow_down"
    )
    chain = ur5.with_constraints([rule])
    r = AnalyticIK(chain).solve(T, q0=q)
    assert r.success[0] and r.q[0, 2] <= 0.0
    assert chain.constraints_satisfied(r.q).all()
    assert np.abs(r.q[0] - q).max() > 0.1  # another branch than the seed's own


@pytest.mark.parametrize("name", ["iiwa14", "marvin_left"])
def test_swivel_limit_arcs_recover_targets_that_sampling_misses(name):
    from ikstack.ik.analytic.families import SRS
    from ikstack.ik.analytic.geometry import chain_lines

    chain = robots.load(name)
    q, T = in_limit_targets(chain, np.random.default_rng(14), 600)
    with_arcs = AnalyticIK(chain, num_samples=1).solve(T)
    # the same solver with a family given no limits: no arcs
    sampled_only = AnalyticIK(chain, num_samples=1)._with_family(SRS(chain_lines(chain), 1))
    missed = ~sampled_only.solve(T).success
    assert missed.any()  # one swivel sample (plus the seed's) is not enough ...
    assert with_arcs.success.all()  # ... but one per joint-limit arc is


def test_nearly_folded_elbow_with_nearly_aligned_wrist_is_exact():
    # subproblem 6's quartic is ill-conditioned here; its roots are polished on the equations
    chain = robots.load("ur5")
    q = np.array([3.67393861, 4.12199443, -3.11038738, -3.76891503, 3.07272056, 0.89078852])
    r = AnalyticIK(chain).solve(chain.fk(q), return_all=True)
    assert r.success[0]
    assert r.position_error[0] < 1e-12 and r.rotation_error[0] < 1e-12
    assert r.valid_all[0].sum() == 8
