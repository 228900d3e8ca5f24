"""General 6R elimination IK: round trips, completeness against an independent multistart search,
Rizon 4 / 4s through joint locking, paths, and input checks."""

from __future__ import annotations

import numpy as np
import pytest

import ikstack.robots as robots
from ikstack.errors import (
    InputError,
    NonFiniteError,
    NotRigidTransformError,
    ShapeError,
    UnsupportedGeometryError,
)
from ikstack.ik import IKStatus, certify
from ikstack.ik.analytic.general6r import General6R, LockedJoint7R, LockSearch
from ikstack.kinematics import fk, fk_jacobian
from ikstack.model import Chain, JointType
from ikstack.spatial import se3
from random_chains import random_6r


def wrapped_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(np.angle(np.exp(1j * (a - b)))).max(axis=-1)


def multistart_solutions(
    chain: Chain, T: np.ndarray, rng: np.random.Generator, starts: int = 400, iters: int = 60
) -> np.ndarray:
    """Independent reference: damped Gauss-Newton from many random starts, deduplicated."""
    q = rng.uniform(-np.pi, np.pi, size=(starts, 6))
    for _ in range(iters):
        Tq, J = fk_jacobian(chain, q)
        e = se3.pose_error(T, Tq)
        JT = np.swapaxes(J, 1, 2)
        H = JT @ J + 1e-9 * np.eye(6)
        dq = np.linalg.solve(H, np.einsum("nij,nj->ni", JT, e)[..., None])[..., 0]
        q = q + np.clip(dq, -0.5, 0.5)
    err = np.linalg.norm(se3.pose_error(T, fk(chain, q)), axis=-1)
    good = q[err < 1e-10]
    sols: list[np.ndarray] = []
    for s in good:
        if all(wrapped_distance(s, t) > 1e-5 for t in sols):
            sols.append(s)
    return np.array(sols).reshape(-1, 6)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_6r_round_trip_recovers_every_target_and_its_own_configuration(seed):
    chain = random_6r(seed)
    solver = General6R(chain)
    rng = np.random.default_rng(100 + seed)
    q = chain.random_q(rng, 200)
    T = fk(chain, q)
    res = solver.solve(T, q0=q, return_all=True)
    assert res.success.all()
    assert res.method == "analytic:general6r"
    # the result is certified: independent FK check of the selected solution
    pe, re = se3.position_rotation_error(T, fk(chain, res.q))
    assert pe.max() <= 1e-6 and re.max() <= 1e-6
    # the seed (= the generating configuration) is among the solutions, so it is selected
    assert (wrapped_distance(res.q, q) < 1e-6).mean() >= 0.99
    assert res.q_all is not None and res.q_all.shape == (200, 16, 6)


@pytest.mark.parametrize("seed", [3, 4])
def test_solution_sets_match_an_independent_multistart_search(seed):
    chain = random_6r(seed, continuous=True)
    solver = General6R(chain)
    rng = np.random.default_rng(seed)
    for _ in range(2):
        T = fk(chain, rng.uniform(-np.pi, np.pi, 6))
        q_all, valid = solver.candidates(T)
        ours = q_all[valid]
        ref = multistart_solutions(chain, T, rng)
        # every reference solution is one of ours, and ours are distinct real solutions
        for s in ref:
            assert wrapped_distance(ours, s).min() < 1e-5
        distinct = [
            s for i, s in enumerate(ours) if all(wrapped_distance(s, t) > 1e-5 for t in ours[:i])
        ]
        assert len(distinct) == len(ref)
        assert len(ref) % 2 == 0 and 2 <= len(ref) <= 16


def test_candidates_are_certified_and_failed_slots_are_finite():
    chain = random_6r(5)
    solver = General6R(chain)
    q = chain.random_q(np.random.default_rng(5), 50)
    T = fk(chain, q)
    q_all, valid = solver.candidates(T)
    assert np.isfinite(q_all).all()
    assert valid.sum(axis=1).min() >= 1
    ok, _, _ = certify(chain, q_all, T[:, None], 1e-6, 1e-6)
    assert np.array_equal(ok & valid, valid)
    assert chain.within_limits(q_all).all()


def test_unreachable_target_is_a_status_with_a_finite_in_limit_joint_vector():
    chain = random_6r(6)
    solver = General6R(chain)
    T = se3.make_transform(np.eye(3), [50.0, 0.0, 0.0])
    res = solver.solve(T)
    assert not res.success[0]
    assert res.status[0] == IKStatus.UNREACHABLE
    assert np.isfinite(res.q).all() and chain.within_limits(res.q).all()


def test_float32_round_off_targets_are_still_solved_against_the_original_pose():
    chain = random_6r(7)
    solver = General6R(chain)
    q = chain.random_q(np.random.default_rng(7), 100)
    T32 = fk(chain, q).astype(np.float32).astype(np.float64)
    solver_loose = General6R(chain, position_tolerance=1e-5, rotation_tolerance=1e-5)
    res = solver_loose.solve(T32, q0=q)
    assert res.success.mean() >= 0.99
    pe, re = se3.position_rotation_error(T32, fk(chain, res.q))
    assert pe[res.success].max() <= 1e-5 and re[res.success].max() <= 1e-5
    assert solver.solve(T32[:5]).q.shape == (5, 6)


def test_solutions_respect_joint_limits():
    chain = random_6r(8).with_limits(lower=-np.ones(6), upper=np.ones(6))
    solver = General6R(chain)
    q = chain.random_q(np.random.default_rng(8), 100)
    res = solver.solve(fk(chain, q), q0=q, return_all=True)
    assert res.success.all()
    assert res.valid_all is not None and res.q_all is not None
    assert chain.within_limits(res.q_all[res.valid_all]).all()


def test_solve_is_deterministic():
    chain = random_6r(9)
    solver = General6R(chain)
    T = fk(chain, chain.random_q(np.random.default_rng(9), 20))
    a, b = solver.solve(T), General6R(chain).solve(T)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.success, b.success)


@pytest.mark.parametrize("name", ["rizon4", "rizon4s"])
def test_rizon_locked_joint_round_trips(name):
    chain = robots.load(name)
    solver = LockedJoint7R(chain)
    assert solver.num_candidates == 16 * 16
    assert solver.candidates_for("near_q0") == (16 + 9) * 16
    rng = np.random.default_rng(11)
    q = chain.random_q(rng, 150)
    T = fk(chain, q)
    grid = solver.solve(T, q0=q, return_all=True)
    assert grid.q_all is not None and grid.q_all.shape == (150, 256, 7)
    assert np.isfinite(grid.q_all).all()
    assert grid.success.mean() >= 0.9
    pe, re = se3.position_rotation_error(T, fk(chain, grid.q))
    assert pe[grid.success].max() <= 1e-6 and re[grid.success].max() <= 1e-6
    # near_q0 from a nearby guess finds the branch through the guess's own lock value
    near = np.clip(q + rng.normal(scale=0.02, size=q.shape), chain.lower, chain.upper)
    local = solver.solve(T, q0=near, search=LockSearch.NEAR_Q0)
    assert local.success.all()
    assert np.abs(local.q - q).max() < 0.2


def test_rizon4s_continuous_path_keeps_its_branch():
    chain = robots.load("rizon4s")
    solver = LockedJoint7R(chain, search="near_q0")
    rng = np.random.default_rng(12)
    q0 = chain.random_q(rng) * 0.5
    q1 = np.clip(q0 + rng.uniform(-0.4, 0.4, 7), chain.lower, chain.upper)
    s = np.linspace(0.0, 1.0, 40)[:, None]
    path_q = q0 + s * (q1 - q0)
    res = solver.solve_path(fk(chain, path_q), q0=q0)
    assert res.success.all()
    steps = np.abs(np.diff(np.vstack([q0, res.q]), axis=0)).max(axis=1)
    assert steps.max() < 0.15


def test_failed_path_frame_holds_the_previous_pose():
    chain = robots.load("rizon4")
    solver = LockedJoint7R(chain, search="near_q0")
    q0 = chain.middle() + 0.3
    T = fk(chain, np.stack([q0, q0]))
    T[1, :3, 3] += 10.0  # out of reach
    res = solver.solve_path(T, q0=q0)
    assert res.success[0] and not res.success[1]
    assert np.array_equal(res.q[1], res.q[0])
    assert res.status[1] == IKStatus.UNREACHABLE


def test_bad_inputs_raise_named_errors():
    chain = random_6r(13)
    solver = General6R(chain)
    T = np.eye(4)
    with pytest.raises(NotRigidTransformError):
        solver.solve(np.diag([2.0, 1.0, 1.0, 1.0]))
    bad = T.copy()
    bad[0, 3] = np.nan
    with pytest.raises(NonFiniteError):
        solver.solve(bad)
    with pytest.raises(ShapeError):
        solver.solve(np.eye(3))
    with pytest.raises(ShapeError):
        solver.solve(T, q0=np.zeros(5))
    with pytest.raises(InputError):
        General6R(chain, position_tolerance=-1.0)
    with pytest.raises(UnsupportedGeometryError):
        General6R(robots.load("rizon4"))
    with pytest.raises(UnsupportedGeometryError):
        LockedJoint7R(chain)
    rizon = robots.load("rizon4")
    with pytest.raises(InputError):
        LockedJoint7R(rizon, search="grid")
    with pytest.raises(InputError):
        LockedJoint7R(rizon, lock_joint=7)
    with pytest.raises(InputError):
        LockedJoint7R(rizon, num_locks=0)


def test_any_lock_joint_can_be_given_and_near_q0_returns_400_slots():
    chain = robots.load("rizon4")
    solver = LockedJoint7R(chain, lock_joint=3, num_locks=8)
    assert solver.lock_joint == 3
    q = chain.random_q(np.random.default_rng(14), 40)
    T = fk(chain, q)
    res = solver.solve(T, q0=q, search="near_q0", return_all=True)
    assert res.q_all is not None and res.q_all.shape == (40, (8 + 9) * 16, 7)
    assert res.success.all()
    # locked joint values in every slot come from the lock samples, within limits
    assert chain.within_limits(res.q_all).all()


def test_determinant_newton_pulls_a_perturbed_root_back_and_never_raises_det():
    from ikstack.ik.analytic.general6r import _backsub as BS
    from ikstack.ik.analytic.general6r import _engine as EN
    from ikstack.ik.analytic.general6r import _pencil as PN

    chain = random_6r(15)
    solver = General6R(chain)
    q = chain.random_q(np.random.default_rng(15), 1)
    T = fk(chain, q)
    g = solver._geom
    zero = np.zeros(1, dtype=np.int64)
    items = PN.new_items(zero, zero)
    # writable limits, as the solver passes (a chain's own are read-only: another kernel type,
    # which the one-compile-per-type test would see when it runs in this process)
    lo, hi = chain.lower.copy(), chain.upper.copy()
    cfg = PN.PencilSettings(EN.PHI, EN.IMAG_TOL, EN.NEWTON_ITERS, lo, hi)
    PN.prepare_rows(EN.conditioned(T), g, cfg, items, 0, 1)
    S = items.S
    hidden = (g.shift + 2) % 6  # the eigenvalue joint
    truth = q[0, hidden]
    LU = np.empty((12, 12))
    piv = np.empty(12, dtype=np.int64)
    work = np.empty((2, 12, 12))
    for delta in (1e-3, -2e-4, 1e-6):
        th = BS._refine_q3(S[0], truth + delta, 3, 0.05, LU, piv, work)
        assert abs(th - truth) < 1e-3 * abs(delta)
    # an unsafe (non-decreasing) correction is never taken: refining the exact root stays put
    th = BS._refine_q3(S[0], truth, 3, 0.05, LU, piv, work)
    assert abs(th - truth) < 1e-9


def test_a_chain_whose_elimination_is_always_singular_is_refused_at_construction():
    # six parallel axes: a redundant planar arm, no isolated solutions
    origins = np.stack([se3.make_transform(np.eye(3), [0.2, 0.0, 0.0]) for _ in range(6)])
    chain = Chain(
        joint_names=tuple(f"j{i}" for i in range(6)),
        joint_types=(JointType.REVOLUTE,) * 6,
        axes=np.tile([0.0, 0.0, 1.0], (6, 1)),
        origins=origins,
        T_last_tip=np.eye(4),
        lower=-np.pi * np.ones(6),
        upper=np.pi * np.ones(6),
        velocity_limits=np.ones(6),
        acceleration_limits=np.ones(6),
        jerk_limits=np.ones(6),
    )
    with pytest.raises(UnsupportedGeometryError, match="singular for every"):
        General6R(chain)


@pytest.mark.parametrize("name", ["ur5", "arx_x5"])
def test_special_6r_geometries_are_solved_through_the_role_choice(name):
    chain = robots.load(name)
    solver = General6R(chain)
    q = chain.random_q(np.random.default_rng(16), 100)
    assert solver.solve(fk(chain, q), q0=q).success.all()


def test_candidates_keep_the_chain_kinematic_margin():
    import dataclasses

    margin = 0.3
    base = random_6r(5)
    chain = dataclasses.replace(
        base, lower=-2.0 * np.ones(6), upper=2.0 * np.ones(6), kinematic_margin=margin
    )
    q = np.random.default_rng(6).uniform(-2.0, 2.0, size=(60, 6))
    q_all, valid = General6R(chain).candidates(fk(chain, q))
    good = q_all[valid]
    assert good.shape[0] > 20
    # written out: every valid answer at least 0.3 rad inside the +-2 rad limits
    assert np.all(np.abs(good) <= 2.0 - margin + 1e-12)


def test_selection_is_the_nearest_turn_of_any_solution_within_the_limits():
    """The analytic pipeline's selection: among every solution and each of its whole-turn
    shifts within the limits, the one nearest the seed (unit weights). Reference: solutions
    from the independent multistart search, each joint's turn chosen by brute force."""
    chain = robots.load("ur5")  # joints over +-2 pi: a solution has several turns in range
    solver = General6R(chain)
    rng = np.random.default_rng(11)
    q_true = chain.random_q(rng, 3)
    seeds = chain.random_q(rng, 3)
    T = fk(chain, q_true)
    res = solver.solve(T, q0=seeds)
    assert res.success.all()
    ok, _, _ = certify(chain, res.q, T, 1e-6, 1e-6)
    assert ok.all()
    turns = 2 * np.pi * np.arange(-3, 4)
    for i in range(3):
        sols = multistart_solutions(chain, T[i], rng, starts=300)
        assert len(sols) >= 1
        best = np.inf
        for s in sols:
            x = s[:, None] + turns[None, :]  # (6, turns)
            inside = (x >= chain.lower[:, None]) & (x <= chain.upper[:, None])
            dd = np.where(inside, (x - seeds[i][:, None]) ** 2, np.inf).min(axis=1)
            best = min(best, float(np.sqrt(dd.sum())))
        got = float(np.linalg.norm(res.q[i] - seeds[i]))
        assert got == pytest.approx(best, abs=1e-6)
