"""The single-target fast paths give the general (batched) path's result, number for number.

A (4, 4) float64 target takes a compiled path; the same target as a batch of one, (1, 4, 4),
takes the general numpy path. Every field of the result must be identical (bit for bit), on
reachable targets, unreachable ones, out-of-limit seeds and chains with coupled constraints.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

import ikstack.robots as robots
from ikstack.errors import NonFiniteError, NotRigidTransformError, ShapeError
from ikstack.ik import IKResult, certify, fk_errors, solve_ik
from ikstack.ik.analytic import AnalyticIK
from ikstack.ik.numerical import DampedLeastSquaresIK, LevenbergMarquardt, LimitMode
from ikstack.spatial import as_transforms, so3

FIELDS = ("q", "success", "position_error", "rotation_error", "status", "iterations", "restarts")


def assert_identical(a: IKResult, b: IKResult) -> None:
    assert a.method == b.method
    for f in FIELDS:
        x, y = getattr(a, f), getattr(b, f)
        assert x.shape == y.shape and x.dtype == y.dtype, f
        assert np.array_equal(x, y), (f, x, y)


def targets(chain, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """FK-sampled targets (half of them nudged off the exact pose), a quarter replaced by
    random poses far out of reach or with random orientations, and random seeds."""
    q = chain.random_q(rng, n)
    T = chain.fk(q)
    T[::2, :3, 3] += rng.normal(0.0, 1e-8, size=(len(T[::2]), 3))
    far = rng.random(n) < 0.25
    T[far, :3, :3] = so3.exp(rng.normal(size=(int(far.sum()), 3)))
    T[far, :3, 3] = rng.normal(0.0, 1.5, size=(int(far.sum()), 3))
    seeds = chain.random_q(rng, n) + rng.normal(0.0, 0.5, size=(n, chain.dof))
    return T, seeds


@pytest.mark.parametrize(
    "robot, mode, n",
    [
        ("ur5", "strict", 2000),
        ("iiwa14", "strict", 1000),
        ("panda", "strict", 300),
        ("marvin_left", "near", 1000),
    ],
)
def test_analytic_single_target_equals_batch_of_one(robot: str, mode: str, n: int) -> None:
    chain = robots.load(robot)
    rng = np.random.default_rng(7)
    ik = AnalyticIK(chain, mode=mode, num_samples=16)
    T, seeds = targets(chain, n, rng)
    solved = 0
    for i in range(n):
        seed = None if i % 3 == 0 else seeds[i]
        fast = ik.solve(T[i], q0=seed)
        general = ik.solve(T[i : i + 1], q0=None if seed is None else seed[None])
        assert_identical(fast, general)
        solved += int(fast.success[0])
    assert 0 < solved < n  # both reachable and unreachable targets were exercised


def test_analytic_fast_path_respects_max_joint_step() -> None:
    chain = robots.load("ur5")
    rng = np.random.default_rng(3)
    ik = AnalyticIK(chain, max_joint_step=0.3)
    T, seeds = targets(chain, 300, rng)
    for i in range(300):
        assert_identical(ik.solve(T[i], q0=seeds[i]), ik.solve(T[i : i + 1], q0=seeds[i]))


NUMERICAL = {
    "lm": lambda c: LevenbergMarquardt(c, max_restarts=3),
    "lm_sugihara_clamp": lambda c: LevenbergMarquardt(
        c, damping="sugihara", max_restarts=2, limits=LimitMode.CLAMP_STEP
    ),
    "dls_position": lambda c: DampedLeastSquaresIK(c, max_restarts=2, mask="position"),
}


@pytest.mark.parametrize("robot", ["ur5", "panda", "marvin_left"])
@pytest.mark.parametrize("config", sorted(NUMERICAL))
def test_numerical_single_target_equals_batch_of_one(robot: str, config: str) -> None:
    chain = robots.load(robot)
    rng = np.random.default_rng(11)
    ik = NUMERICAL[config](chain)
    T, seeds = targets(chain, 100, rng)
    solved = 0
    for i in range(100):
        seed = None if i % 2 else seeds[i]
        fast = ik.solve(T[i], q0=seed)
        general = ik.solve(T[i : i + 1], q0=None if seed is None else seed[None])
        assert_identical(fast, general)
        solved += int(fast.success[0])
    assert 0 < solved < 100


@pytest.mark.parametrize("robot", ["ur5", "iiwa14", "panda", "marvin_left"])
def test_compiled_certify_matches_the_numpy_gate_on_every_row(robot: str) -> None:
    """certify on (n, dof) rows equals certify row by row and the plain numpy formulas."""
    chain = robots.load(robot)
    rng = np.random.default_rng(5)
    q = chain.random_q(rng, 400)
    T = chain.fk(q + rng.normal(0.0, 3e-7, size=q.shape))
    q[::37, 1] = np.nan
    ok, pe, re = certify(chain, q, T, 1e-6, 1e-6)
    for i in range(0, 400, 7):
        oi, pi, ri = certify(chain, q[i], T[i], 1e-6, 1e-6)
        assert (bool(oi), float(pi), float(ri)) == (bool(ok[i]), float(pe[i]), float(re[i]))
    good = np.isfinite(q).all(axis=1)
    F = chain.fk(q[good])
    dp = np.linalg.norm(T[good, :3, 3] - F[:, :3, 3], axis=1)
    M = T[good, :3, :3] @ np.swapaxes(F[:, :3, :3], 1, 2)
    v = np.stack([M[:, 2, 1] - M[:, 1, 2], M[:, 0, 2] - M[:, 2, 0], M[:, 1, 0] - M[:, 0, 1]], 1)
    ang = np.arctan2(0.5 * np.linalg.norm(v, axis=1), 0.5 * (np.trace(M, axis1=1, axis2=2) - 1))
    np.testing.assert_allclose(pe[good], dp, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(re[good], ang, rtol=1e-6, atol=1e-15)
    assert not ok[~good].any() and np.isinf(pe[~good]).all()
    lim = chain.within_limits(np.where(good[:, None], q, 0.0)) & chain.constraints_satisfied(
        np.where(good[:, None], q, 0.0)
    )
    assert np.array_equal(ok, good & (pe <= 1e-6) & (re <= 1e-6) & lim)
    pe2, re2 = fk_errors(chain, q[good][:5], T[good][:5])
    assert np.array_equal(pe2, pe[good][:5]) and np.array_equal(re2, re[good][:5])


@pytest.mark.parametrize("solver", ["analytic", "numerical"])
def test_fast_path_raises_the_same_named_errors(solver: str) -> None:
    chain = robots.load("ur5")
    ik = AnalyticIK(chain) if solver == "analytic" else LevenbergMarquardt(chain)
    T = chain.fk(chain.middle())
    cases = []
    bad = T.copy()
    bad[1, 2] = np.nan
    cases.append((bad, NonFiniteError))
    bad = T.copy()
    bad[3, 0] = 1e-3
    cases.append((bad, NotRigidTransformError))
    bad = T.copy()
    bad[:3, :3] *= 1.001
    cases.append((bad, NotRigidTransformError))
    bad = T.copy()
    bad[:3, 0] *= -1.0
    cases.append((bad, NotRigidTransformError))
    cases.append((T[:3], ShapeError))
    for target, err in cases:
        with pytest.raises(err) as fast:
            ik.solve(target)
        with pytest.raises(err) as checker:  # the boundary checker's own message
            as_transforms(target, "T_base_tcp")
        assert str(fast.value) == str(checker.value)
    with pytest.raises(NonFiniteError):
        ik.solve(T, q0=np.full(6, np.nan))
    with pytest.raises(ShapeError):
        ik.solve(T, q0=np.zeros((6, 1)))


def test_a_target_within_round_off_of_the_rigid_tolerance_gets_the_numpy_verdict() -> None:
    chain = robots.load("ur5")
    ik = AnalyticIK(chain)
    T = chain.fk(chain.middle())
    T[3, 0] = 0.9995e-6  # inside the tolerance, but too close for the compiled check
    r = ik.solve(T)
    assert_identical(r, ik.solve(T[None]))


def test_solve_ik_reuses_one_solver_per_chain_and_matches_the_solver() -> None:
    chain = robots.load("ur5")
    rng = np.random.default_rng(2)
    T, seeds = targets(chain, 50, rng)
    ik = AnalyticIK(chain)
    for i in range(50):
        assert_identical(solve_ik(chain, T[i], q0=seeds[i]), ik.solve(T[i], q0=seeds[i]))
    from ikstack.ik import front

    built = [k for k in front._DOOR if k[0] == id(chain) and k[1][0] == "analytic"]
    assert built == [(id(chain), ("analytic", None))]


def test_fast_result_object_is_an_ordinary_ikresult() -> None:
    chain = robots.load("ur5")
    r = AnalyticIK(chain).solve(chain.fk(chain.middle()))
    assert isinstance(r, IKResult) and len(r) == 1 and r.success_rate == 1.0
    assert r.q_all is None and r.valid_all is None and r.reason(0) == r.reasons()[0]
    twin = dataclasses.replace(r)
    assert_identical(twin, r)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.method = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    "structure",
    [
        "spherical_wrist",
        "spherical_two_parallel",
        "spherical_two_intersecting",
        "three_parallel",
        "spherical_shoulder",
        "three_parallel_reversed",
    ],
)
def test_analytic_fast_path_on_random_arms_of_every_6r_structure(structure: str) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analytic"))
    from analytic_arms import random_arm

    rng = np.random.default_rng(17)
    chain = random_arm(structure, rng)
    ik = AnalyticIK(chain)
    T, seeds = targets(chain, 200, rng)
    for i in range(200):
        seed = None if i % 4 == 0 else seeds[i]
        assert_identical(
            ik.solve(T[i], q0=seed), ik.solve(T[i : i + 1], q0=None if seed is None else seed[None])
        )


@pytest.mark.parametrize("solver", ["analytic", "numerical"])
def test_read_only_and_non_contiguous_targets_take_the_fast_path_too(solver: str) -> None:
    chain = robots.load("ur5")
    ik = AnalyticIK(chain) if solver == "analytic" else LevenbergMarquardt(chain)
    T = chain.fk(chain.random_q(np.random.default_rng(4), 3))
    ro = T[0].copy()
    ro.flags.writeable = False
    fortran = np.asfortranarray(T[1])
    for target in (ro, fortran):
        assert_identical(ik.solve(target), ik.solve(np.ascontiguousarray(target)[None]))
    seed = np.asfortranarray(np.tile(chain.middle(), (2, 1)))[0]
    assert_identical(ik.solve(T[2], q0=seed), ik.solve(T[2:3], q0=seed.copy()))
