"""Warp numerical IK on the CPU: certified successes, determinism, failure statuses."""

from __future__ import annotations

import numpy as np
import pytest

from ikstack.ik import IKStatus, certify
from ikstack.robots import load

pytest.importorskip("warp")
from ikstack.backends.warp import numerical as wn  # noqa: E402


def sampled_targets(name, n, seed=3):
    chain = load(name)
    rng = np.random.default_rng(seed)
    Q = chain.random_q(rng, 4 * n)
    Q = Q[chain.constraints_satisfied(Q)][:n]
    return chain, chain.fk(Q)


@pytest.mark.parametrize("name", ["panda", "iiwa14", "ur5", "marvin_left"])
def test_solves_fk_sampled_targets_and_every_success_is_certified(name):
    chain, T = sampled_targets(name, 150)
    res = wn.solve(chain, T, position_tolerance=1e-6, rotation_tolerance=1e-6)
    assert res.success.mean() >= 0.95
    ok, _, _ = certify(chain, res.q, T, 1e-6, 1e-6)
    assert np.array_equal(ok, res.success)
    assert np.all(np.isfinite(res.q)) and np.all(chain.within_limits(res.q))


def test_same_rng_seed_gives_identical_results():
    chain, T = sampled_targets("panda", 40)
    a = wn.solve(chain, T, rng_seed=7)
    b = wn.solve(chain, T, rng_seed=7)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.iterations, b.iterations)


def test_unreachable_target_fails_with_a_status_and_a_finite_in_limit_q():
    chain = load("ur5")
    T = chain.fk(chain.middle())
    T[0, 3] += 5.0  # far out of reach
    res = wn.solve(chain, T, max_restarts=2, max_iterations=30)
    assert not res.success[0]
    assert res.status[0] == IKStatus.ITERATION_LIMIT
    assert np.all(np.isfinite(res.q)) and chain.within_limits(res.q[0])


def test_empty_batch():
    res = wn.solve(load("panda"), np.zeros((0, 4, 4)))
    assert len(res) == 0 and res.q.shape == (0, 7)
