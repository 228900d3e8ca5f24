"""Targets at and near singular configurations, float32 and noisy rotations.

Targets are FK of configurations where ``det J`` vanishes (the shoulder, elbow and wrist
singularities, reached by moving joint 2, 3 or 5) and of configurations ``delta`` away from
them; answers are checked by a plain product-of-exponentials FK written here from the arm's
``H``/``P`` description (no ikstack kinematics), or by Pinocchio for the bundled URDF arm.
"""

from __future__ import annotations

import numpy as np
import pytest
from analytic_arms import industrial_hp, pinocchio_fk, singular_along

import ikstack.robots as robots
from ikstack.ik.analytic import AnalyticIK
from ikstack.ik.analytic.geometry import chain_from_hp

DELTAS = (0.0, 1e-12, 1e-9, 1e-6, 1e-3)
EX, EY, EZ = np.eye(3)
Z = np.zeros(3)


def rodrigues(k: np.ndarray, t: np.ndarray) -> np.ndarray:
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    s, c = np.sin(t)[:, None, None], np.cos(t)[:, None, None]
    return np.eye(3) + s * K + (1 - c) * (K @ K)


def fk_hp(H: np.ndarray, P: np.ndarray, q: np.ndarray) -> np.ndarray:
    """IK-Geo convention: p = p01 + R01 p12 + ... ; R = R01 R12 ... (identity end rotation)."""
    n = q.shape[0]
    R = np.tile(np.eye(3), (n, 1, 1))
    p = np.tile(P[0], (n, 1))
    for i in range(H.shape[0]):
        R = R @ rodrigues(H[i], q[:, i])
        p = p + np.einsum("nij,j->ni", R, P[i + 1])
    T = np.tile(np.eye(4), (n, 1, 1))
    T[:, :3, :3] = R
    T[:, :3, 3] = p
    return T


def layouts() -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]]:
    rng = np.random.default_rng(31)
    named = industrial_hp()
    out = {k: named[k] for k in ("puma560", "kuka_kr")}
    for s in ("spherical_wrist", "spherical_two_parallel", "spherical_shoulder", "three_parallel"):
        h = rng.normal(size=(6, 3))
        h /= np.linalg.norm(h, axis=1, keepdims=True)
        r = rng.normal(scale=0.3, size=(6, 3))
        if s in ("spherical_wrist", "spherical_two_parallel"):
            r[3] = r[4] = r[5] = rng.normal(scale=0.3, size=3)
        if s == "spherical_two_parallel":
            h[2] = h[1]
        if s == "spherical_shoulder":
            r[0] = r[1] = r[2] = rng.normal(scale=0.3, size=3)
        if s == "three_parallel":
            h[2] = h[3] = h[1]
        P = np.vstack([r[0], np.diff(r, axis=0), rng.normal(scale=0.3, size=3)])
        out[f"random_{s}"] = (h, P, None, None)
    return out


def singular_targets(chain, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lo = chain.lower + chain.kinematic_margin
    hi = chain.upper - chain.kinematic_margin
    rows = []
    for joint in (1, 2, 4):  # shoulder, elbow, wrist
        q0 = singular_along(chain, joint, rng.uniform(lo, hi, (n, 6)))
        for delta in DELTAS:
            q = q0.copy()
            q[:, joint] += delta * rng.choice([-1.0, 1.0], size=len(q))
            rows.append(q[chain.within_limits(q)])
    return np.concatenate(rows)


@pytest.mark.parametrize("name", list(layouts()))
def test_every_exact_family_recovers_targets_at_and_near_each_singularity(name):
    H, P, lo, hi = layouts()[name]
    chain = chain_from_hp(H, P, lower=lo, upper=hi, name=name)
    q = singular_targets(chain, 12, 5)
    assert len(q) >= 100
    T = fk_hp(H, P, q)
    ik = AnalyticIK(chain)
    r = ik.solve(T)
    assert r.success.all(), (np.flatnonzero(~r.success), np.bincount(r.status))
    ref = fk_hp(H, P, r.q)
    assert np.abs(ref[:, :3, 3] - T[:, :3, 3]).max() < 1e-6
    assert np.abs(ref[:, :3, :3] - T[:, :3, :3]).max() < 1e-6
    every = ik.solve(T, return_all=True)
    assert every.valid_all.any(axis=1).all()
    for i in np.flatnonzero(every.valid_all.any(axis=1))[:40]:
        good = every.q_all[i][every.valid_all[i]]
        assert np.abs(fk_hp(H, P, good)[:, :3, 3] - T[i, :3, 3]).max() < 1e-6


def test_free_joint1_of_a_limited_spherical_wrist_arm_respects_the_limits():
    # KUKA-KR-like arm with its real limits: at the shoulder singularity (the wrist centre on
    # the first axis) joint 1 is free; the seed's joint 1 can put joint 5 out of its limits,
    # the member keeping the seed's joint 5 does not. Every target at and near the shoulder
    # and elbow singularities is recovered (solve, return_all and the compiled path loop)
    H, P, lo, hi = layouts()["kuka_kr"]
    chain = chain_from_hp(H, P, lower=lo, upper=hi, name="kuka_kr")
    rng = np.random.default_rng(12)
    qlo = chain.lower + chain.kinematic_margin
    qhi = chain.upper - chain.kinematic_margin
    rows = []
    for joint in (1, 2):  # shoulder, elbow
        q0 = singular_along(chain, joint, rng.uniform(qlo, qhi, (160, 6)))
        for delta in DELTAS:
            q = q0.copy()
            q[:, joint] += delta * rng.choice([-1.0, 1.0], size=len(q))
            rows.append(q[chain.within_limits(q)])
    q = np.concatenate(rows)
    assert len(q) >= 1000
    T = fk_hp(H, P, q)
    ik = AnalyticIK(chain)
    r = ik.solve(T)
    assert r.success.all(), (np.flatnonzero(~r.success), np.bincount(r.status))
    assert chain.within_limits(r.q).all()
    ref = fk_hp(H, P, r.q)
    assert np.abs(ref[:, :3, 3] - T[:, :3, 3]).max() < 1e-6
    assert np.abs(ref[:, :3, :3] - T[:, :3, :3]).max() < 1e-6
    assert ik.solve(T, return_all=True).valid_all.any(axis=1).all()
    for i in range(0, len(T), 97):  # each target alone as a path from the middle of the limits
        assert ik.solve_path(T[i : i + 1]).success.all(), i


def test_ur5_wrist_singular_targets_match_pinocchio():
    pytest.importorskip("pinocchio")
    chain = robots.load("ur5")
    fk_pin = pinocchio_fk(None, str(robots.data_path("ur5.urdf")), "tool0", chain.joint_names)
    rng = np.random.default_rng(6)
    lo = chain.lower + chain.kinematic_margin
    hi = chain.upper - chain.kinematic_margin
    q = rng.uniform(lo, hi, (300, 6))
    q[:, 4] = rng.choice([0.0, 1e-12, -1e-9, 1e-6, -1e-3], size=300)  # wrist singular
    q[::3, 2] = rng.choice([0.0, 1e-9, -1e-6], size=100)  # and elbow straight

    T = fk_pin(q)
    r = AnalyticIK(chain).solve(T)
    assert r.success.all(), np.bincount(r.status)
    assert np.abs(fk_pin(r.q)[:, :3, 3] - T[:, :3, 3]).max() < 1e-6
    # float32: rounding moves a singular target off the singular set; most are still solved
    # (the sweep benchmark reports the share), and every success meets the gate
    r32 = AnalyticIK(chain).solve(T.astype(np.float32))
    assert r32.success.mean() >= 0.95
    assert np.abs(fk_pin(r32.q[r32.success])[:, :3, 3] - T[r32.success, :3, 3]).max() < 2e-6


def test_a_singular_wrist_returns_a_finite_representative_near_the_seed():
    chain = robots.load("ur5")
    q = np.array([0.4, -1.1, 1.3, -0.9, 0.0, 0.7])
    T = chain.fk(q)
    for seed6 in (-1.0, 0.7, 2.0):
        seed = q.copy()
        seed[5] = seed6
        r = AnalyticIK(chain).solve(T, q0=seed, return_all=True)
        assert r.success[0] and np.isfinite(r.q_all).all()
        # joint 6 of the one-parameter family is taken at the seed's value
        assert abs(r.q[0, 5] - seed6) < 1e-9


def test_spherical_wrist_representative_respects_narrow_wrist_limits():
    H, P, lo, hi = layouts()["puma560"]
    lo = lo.copy()
    hi = hi.copy()
    lo[3], hi[3] = -0.3, 0.3  # joint 4 narrow: the seed's joint 4 leaves joint 6 out of range
    lo[5], hi[5] = -0.3, 0.3
    chain = chain_from_hp(H, P, lower=lo, upper=hi)
    rng = np.random.default_rng(8)
    q = rng.uniform(lo + 0.01, hi - 0.01, (200, 6))
    q[:, 4] = 0.0
    T = fk_hp(H, P, q)
    r = AnalyticIK(chain).solve(T)  # seeded at the middle of the limits
    assert chain.within_limits(r.q).all()
    assert r.success.mean() >= 0.99, np.bincount(r.status)


@pytest.mark.parametrize("name", ["ur5", "arx_x5", "iiwa14", "panda", "marvin_left"])
def test_float32_targets_of_every_bundled_exact_arm(name):
    chain = robots.load(name)
    rng = np.random.default_rng(2)
    lo = chain.lower + chain.kinematic_margin
    hi = chain.upper - chain.kinematic_margin
    q = rng.uniform(lo, hi, (1200, chain.dof))
    q = q[chain.constraints_satisfied(q)][:300]
    T32 = chain.fk(q).astype(np.float32)
    r = AnalyticIK(chain, num_samples=32).solve(T32)
    assert r.success.all(), np.bincount(r.status)
    # judged against the float32 target as given, to its precision
    given = T32.astype(np.float64)
    perr = np.linalg.norm(chain.fk(r.q)[:, :3, 3] - given[:, :3, 3], axis=1)
    assert np.allclose(perr, r.position_error, atol=1e-12)
    assert r.rotation_error.max() < 1e-6 + 1e-6


@pytest.mark.parametrize("name", ["ur5", "iiwa14", "panda"])
def test_rotation_noise_within_the_input_check_is_solved_as_the_nearest_rotation(name):
    chain = robots.load(name)
    rng = np.random.default_rng(3)
    lo = chain.lower + chain.kinematic_margin
    hi = chain.upper - chain.kinematic_margin
    q = rng.uniform(lo, hi, (100, chain.dof))
    T = chain.fk(q)
    T[:, :3, :3] += rng.normal(scale=1e-8, size=(100, 3, 3))  # accepted: within 1e-6
    r = AnalyticIK(chain, num_samples=32).solve(T)
    assert r.success.all(), np.bincount(r.status)
    every = AnalyticIK(chain, num_samples=32).solve(T, return_all=True)
    assert every.success.all()


@pytest.mark.parametrize(
    "name, urdf, frame, samples",
    [("ur5", "ur5.urdf", "tool0", 128), ("panda", "panda.urdf", "panda_link8", 32)],
)
def test_float32_and_noisy_paths_are_solved_as_the_nearest_rotation(name, urdf, frame, samples):
    # the path loop (compiled and frame by frame) solves the nearest rotation like solve():
    # with a rotation tolerance below float32 rounding, and with rotation noise near the input
    # check's tolerance, every frame is found; FK by Pinocchio, judged against the given target
    pytest.importorskip("pinocchio")
    chain = robots.load(name)
    fk_pin = pinocchio_fk(None, str(robots.data_path(urdf)), frame, chain.joint_names)

    rng = np.random.default_rng(11)
    lo = chain.lower + chain.kinematic_margin
    hi = chain.upper - chain.kinematic_margin
    a, b = rng.uniform(lo, hi, (2, chain.dof))
    q = a + np.linspace(0.0, 1.0, 40)[:, None] * (b - a)
    assert chain.constraints_satisfied(q).all()
    T = fk_pin(q)
    # rotation noise scaled per frame to max |R^T R - I| ~ 0.8e-6 (the input check allows 1e-6)
    N = rng.normal(size=(40, 3, 3))
    sym = np.einsum("nji,njk->nik", T[:, :3, :3], N)
    scale = 0.8e-6 / np.abs(sym + np.swapaxes(sym, 1, 2)).max(axis=(1, 2))
    Tn = T.copy()
    Tn[:, :3, :3] += scale[:, None, None] * N
    for given, rtol in ((T.astype(np.float32), 1e-9), (Tn, 1e-6)):
        ref = np.asarray(given, dtype=np.float64)
        ik = AnalyticIK(chain, num_samples=samples, rotation_tolerance=rtol)
        for compiled in (True, False):
            r = ik.solve_path(given, q[0], compiled=compiled)
            assert r.success.all(), (compiled, np.bincount(r.status))
            Tq = fk_pin(r.q)
            assert np.abs(Tq[:, :3, 3] - ref[:, :3, 3]).max() < 1e-6
            # the deviation from the nearest rotation bounds what the solution can miss by
            assert np.abs(Tq[:, :3, :3] - ref[:, :3, :3]).max() < 5e-6
