"""AnalyticIK fast paths: the fused 6R kernel and the meeting-axes three-parallel variant give
the general path's answers."""

from __future__ import annotations

import numpy as np
import pytest
from analytic_arms import chain_from_lines, random_arm, random_rotation, unit

import ikstack.robots as robots
from ikstack.errors import NonFiniteError, NotRigidTransformError
from ikstack.ik import IKStatus, certify
from ikstack.ik.analytic import AnalyticIK
from ikstack.ik.analytic import _families6 as F6
from ikstack.ik.analytic.families import last_axes_meet


def three_parallel_meeting(rng: np.random.Generator):
    """A random arm with axes 2-4 parallel and axes 5 and 6 meeting (UR-like, not UR)."""
    h = unit(rng.normal(size=(6, 3)))
    r = rng.normal(scale=0.3, size=(6, 3))
    h[2] = h[1] * rng.choice([-1.0, 1.0])
    h[3] = h[1] * rng.choice([-1.0, 1.0])
    r[5] = r[4] + rng.normal() * 0.2 * h[4]  # axis 6 passes through a point of axis 5
    return chain_from_lines(h, r, random_rotation(rng), rng.normal(scale=0.3, size=3))


def mixed_targets(chain, rng, n):
    """In-reach targets, out-of-reach targets and seeds anywhere in the limits."""
    q = rng.uniform(chain.lower, chain.upper, size=(n, chain.dof))
    T = chain.fk(q)
    T[: n // 4, :3, 3] *= 50.0  # unreachable
    seeds = rng.uniform(chain.lower, chain.upper, size=(n, chain.dof))
    return T, seeds


def arms():
    rng = np.random.default_rng(5)
    yield "ur5", robots.load("ur5")
    yield "meeting", three_parallel_meeting(rng)
    for s in (
        "spherical_two_parallel",
        "spherical_wrist",
        "three_parallel",
        "spherical_shoulder",
        "three_parallel_reversed",
        "spherical_two_intersecting",
    ):
        yield s, random_arm(s, rng)


OPTIONS = {
    "default": {},
    "weights_step": {"weights": [3.0, 0.5, 1.0, 0.0, 2.0, 1.0], "max_joint_step": 2.5},
    # unequal weights on every joint: the parallel joints' weighted-sum bound
    "weights": {"weights": [0.7, 2.0, 0.3, 1.5, 1.0, 0.4]},
}


@pytest.mark.parametrize("options", list(OPTIONS))
@pytest.mark.parametrize("name, chain", list(arms()), ids=lambda v: v if isinstance(v, str) else "")
def test_fused_batch_and_single_calls_equal_the_general_path(name, chain, options):
    """Bit for bit: the fused kernel expands only the branches that can hold the nearest
    valid candidate, and must still select what the full enumeration selects."""
    ik = AnalyticIK(chain, **OPTIONS[options])
    assert ik._six
    rng = np.random.default_rng(7)
    T, seeds = mixed_targets(chain, rng, 300)
    S = ik._seeds(seeds, len(T))
    ref = ik._solve(np.ascontiguousarray(T), S, False)
    for r in (ik.solve(T, seeds), ik._solve_rows(T, seeds)):
        np.testing.assert_array_equal(r.q, ref.q)
        np.testing.assert_array_equal(r.success, ref.success)
        np.testing.assert_array_equal(r.status, ref.status)
        np.testing.assert_array_equal(r.position_error, ref.position_error)
        np.testing.assert_array_equal(r.rotation_error, ref.rotation_error)
    assert 0 < ref.success.sum() < len(T)
    for i in range(0, len(T), 37):
        one = ik.solve(T[i], seeds[i])
        np.testing.assert_array_equal(one.q[0], ref.q[i])
        assert one.status[0] == ref.status[i]
    # the default seed (middle of the limits) through the fused path too
    ref0 = ik._solve(np.ascontiguousarray(T), ik._seeds(None, len(T)), False)
    np.testing.assert_array_equal(ik.solve(T).q, ref0.q)


def test_fused_batch_successes_are_certified_and_failures_limit_projected():
    chain = robots.load("ur5")
    ik = AnalyticIK(chain)
    rng = np.random.default_rng(8)
    T, seeds = mixed_targets(chain, rng, 400)
    r = ik.solve(T, seeds)
    ok, _, _ = certify(chain, r.q, T, ik.position_tolerance, ik.rotation_tolerance)
    assert np.all(ok[r.success])
    assert np.all(np.isfinite(r.q))
    assert np.all(chain.within_limits(r.q[~r.success]))
    assert set(np.unique(r.status[~r.success])) <= {
        int(IKStatus.UNREACHABLE),
        int(IKStatus.JOINT_LIMITS),
    }


def test_fused_batch_rejects_bad_targets_like_the_general_path():
    ik = AnalyticIK(robots.load("ur5"))
    T = np.tile(np.eye(4), (300, 1, 1))
    T[:, :3, 3] = 0.3
    bad = T.copy()
    bad[150, 0, 0] = 2.0
    with pytest.raises(NotRigidTransformError):
        ik.solve(bad)
    bad = T.copy()
    bad[3, 1, 3] = np.nan
    with pytest.raises(NonFiniteError):
        ik.solve(bad)
    # a hair off rigid (within the tolerance, outside the kernel's stricter check): solved
    near = T.copy()
    near[10, 3, 3] = 1.0 + 0.9995e-6
    r = ik.solve(near)
    assert r.q.shape == (300, 6)
    assert np.all(np.isfinite(r.q))


def test_meeting_last_axes_variant_finds_the_subproblem6_solutions():
    """Joints 1 and 5 by two subproblems 4 (axes 5 and 6 meet) against the general
    subproblem-6 route: the same exact branches."""
    rng = np.random.default_rng(11)
    for chain in (robots.load("ur5"), three_parallel_meeting(rng), three_parallel_meeting(rng)):
        ik = AnalyticIK(chain)
        fam = ik.family
        assert fam.var == F6.LAST_MEET and last_axes_meet(fam.H, fam.P)
        q = rng.uniform(-np.pi, np.pi, size=(300, 6))
        T = np.ascontiguousarray(chain.fk(q))
        S = np.ascontiguousarray(rng.uniform(-np.pi, np.pi, size=(300, 6)))
        Qm, Vm = fam.solve(T, S)
        fam.var = F6.GENERAL
        try:
            Qg, Vg = fam.solve(T, S)
        finally:
            fam.var = F6.LAST_MEET
        np.testing.assert_array_equal(Vm.sum(axis=1), Vg.sum(axis=1))
        for i in range(len(T)):
            A, B = Qm[i][Vm[i]], Qg[i][Vg[i]]
            d = np.abs(np.angle(np.exp(1j * (A[:, None, :] - B[None, :, :])))).max(axis=2)
            assert d.min(axis=1).max() < 1e-7 and d.min(axis=0).max() < 1e-7
        ok, _, _ = certify(chain, Qm[Vm], np.repeat(T[:, None], 8, axis=1)[Vm], 1e-9, 1e-9)
        assert ok.mean() > 0.999


def test_general_three_parallel_arm_keeps_the_subproblem6_route():
    fam = AnalyticIK(random_arm("three_parallel", np.random.default_rng(3))).family
    assert fam.var == F6.GENERAL


@pytest.mark.parametrize(
    "name, n",
    [("iiwa14", 300), ("panda", 60), ("marvin_left", 60), ("rizon4", 20), ("ur5-near", 300)],
)
def test_other_families_rows_and_single_calls_equal_the_general_path(name, n):
    """The row kernel of the families without a fused 6R kernel (select, constraints,
    certificate per row; on all cores for 256 targets or more): a batch, and one target as a
    batch of one, give the general path's answers bit for bit."""
    chain = robots.load(name.split("-")[0])
    if name == "rizon4":
        ik = AnalyticIK(chain, mode="general", num_locks=8)
    else:
        ik = AnalyticIK(chain, mode="near" if name.endswith("near") else "strict")
    assert not ik._six
    rng = np.random.default_rng(3)
    T, seeds = mixed_targets(chain, rng, n)
    S = ik._seeds(seeds, len(T))
    ref = ik._solve(np.ascontiguousarray(T), S, False)
    assert 0 < ref.success.sum() < len(T)
    for r in (ik.solve(T, seeds), ik._solve_rows(T, seeds)):
        np.testing.assert_array_equal(r.q, ref.q)
        np.testing.assert_array_equal(r.success, ref.success)
        np.testing.assert_array_equal(r.status, ref.status)
        np.testing.assert_array_equal(r.position_error, ref.position_error)
        np.testing.assert_array_equal(r.rotation_error, ref.rotation_error)
    for i in range(0, len(T), max(1, len(T) // 6)):
        one = ik.solve(T[i], seeds[i])
        np.testing.assert_array_equal(one.q[0], ref.q[i])
        assert one.status[0] == ref.status[i]
