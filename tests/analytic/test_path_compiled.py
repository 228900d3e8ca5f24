"""The compiled path loop selects exactly what the frame-by-frame path loop selects."""

from __future__ import annotations

import numpy as np
import pytest

import ikstack.robots as robots
from ikstack.ik import IKStatus, certify
from ikstack.ik.analytic import AnalyticIK


def wavy_path(chain, rng, n):
    """A smooth in-limit joint path with a few unreachable frames spliced in."""
    lo = chain.lower + 0.1
    hi = chain.upper - 0.1
    start = rng.uniform(lo, hi)
    t = np.linspace(0.0, 1.0, n)[:, None]
    amp = rng.uniform(0.2, 0.8, chain.dof)
    q = np.clip(start + amp * np.sin(2 * np.pi * rng.uniform(0.5, 2.0, chain.dof) * t), lo, hi)
    T = chain.fk(q)
    far = rng.choice(n, size=max(1, n // 25), replace=False)
    T[far, :3, 3] *= 5.0  # out of reach: these frames fail and hold the previous pose
    return q, T


@pytest.mark.parametrize("name, samples", [("ur5", 128), ("iiwa14", 8), ("panda", 32)])
@pytest.mark.parametrize("max_step", [None, 0.3])
def test_compiled_path_selects_the_same_frames_as_the_frame_loop(name, samples, max_step):
    chain = robots.load(name)
    rng = np.random.default_rng(7)
    q, T = wavy_path(chain, rng, 150)
    w = rng.uniform(0.5, 2.0, chain.dof)
    ik = AnalyticIK(chain, num_samples=samples, max_joint_step=max_step, weights=w)
    a = ik.solve_path(T, q[0])
    b = ik.solve_path(T, q[0], compiled=False)
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.success, b.success)
    np.testing.assert_array_equal(a.status, b.status)
    np.testing.assert_array_equal(a.position_error, b.position_error)
    np.testing.assert_array_equal(a.rotation_error, b.rotation_error)
    assert a.method == b.method
    assert (~a.success).any() and a.success.mean() > 0.5  # both outcomes exercised
    assert (a.status[~a.success] != IKStatus.SUCCESS).all()


def test_compiled_path_holds_the_previous_pose_and_certifies_every_success():
    chain = robots.load("ur5")
    rng = np.random.default_rng(3)
    q, T = wavy_path(chain, rng, 200)
    r = AnalyticIK(chain).solve_path(T, q[0])
    ok, _, _ = certify(chain, r.q, T, 1e-6, 1e-6)
    np.testing.assert_array_equal(ok, r.success)
    fails = np.flatnonzero(~r.success)
    fails = fails[fails > 0]
    np.testing.assert_array_equal(r.q[fails], r.q[fails - 1])
    assert np.isfinite(r.q).all()


def test_compiled_path_hands_a_frame_certify_rejects_to_the_frame_loop():
    # a position tolerance at the round-off level: the compiled gate and certify can disagree
    chain = robots.load("ur5")
    rng = np.random.default_rng(5)
    q, T = wavy_path(chain, rng, 120)
    ik = AnalyticIK(chain, position_tolerance=2e-16, rotation_tolerance=1e-6)
    a = ik.solve_path(T, q[0])
    b = ik.solve_path(T, q[0], compiled=False)
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.status, b.status)
    np.testing.assert_array_equal(a.success, b.success)


@pytest.mark.parametrize("lock_weight", [0.0, 1e-3, 50.0])
def test_compiled_locked_joint_path_skips_no_winning_lock_sample(lock_weight):
    # the compiled loop prunes lock samples by the locked joint's distance alone; with any
    # weight on that joint the selections stay those of the full candidate set
    chain = robots.load("panda")
    rng = np.random.default_rng(11)
    q, T = wavy_path(chain, rng, 100)
    w = np.ones(7)
    w[6] = lock_weight
    ik = AnalyticIK(chain, num_samples=48, weights=w)
    a = ik.solve_path(T, q[0])
    b = ik.solve_path(T, q[0], compiled=False)
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.status, b.status)


def test_without_a_seed_max_joint_step_binds_between_frames_not_to_the_middle_of_the_limits():
    chain = robots.load("panda")
    t = np.linspace(0.0, 1.0, 40)[:, None]
    q0 = np.array([1.6, 0.9, -1.4, -0.9, 1.5, 2.9, 1.2])  # > 0.5 rad from mid-limits
    Q = q0 + 0.15 * np.sin(2 * np.pi * t * np.arange(1, 8) / 5)
    T = chain.fk(Q)
    ik = AnalyticIK(chain, max_joint_step=0.5)
    free = ik.solve_path(T)  # no seed: the first solved frame starts the path
    assert free.success.all()
    assert np.abs(np.diff(free.q, axis=0)).max() <= 0.5
    pinned = ik.solve_path(T, q0=chain.middle())  # an explicit q0 binds the first frame
    assert not pinned.success[0] and pinned.status[0] == IKStatus.STEP_LIMIT
