"""Warp analytic IK (on its CPU device) at the edges, solution for solution with the CPU path:
targets at and near the shoulder (wrist centre on the first axis), elbow-straight and wrist
singularities, as float64 and rounded to float32, and a URDF whose offsets carry rounding.

Parity is strict: the same certified slot masks, joint values within 1e-9 and the same status
per target. Every Warp answer is also checked with Pinocchio's FK of a model built
independently (from the URDF, or from the arm's axis/offset description), against the target
as given.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import ikstack
import ikstack.robots as robots
from ikstack.ik import IKStatus
from ikstack.ik.analytic import AnalyticIK
from ikstack.ik.analytic.geometry import chain_from_hp

pytest.importorskip("warp")
pin = pytest.importorskip("pinocchio")
from ikstack.backends.warp.analytic import WarpAnalyticIK  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analytic"))
from analytic_arms import singular_along  # noqa: E402
from test_routing import rounded_urdf  # noqa: E402

EX, EY, EZ = np.eye(3)
Z3 = np.zeros(3)
#: (name, joint moved onto the singularity): wrist centre on axis 1, elbow straight, wrist
SINGULARITIES = (("shoulder", 1), ("elbow", 2), ("wrist", 4))
DELTAS = (0.0, 1e-9, 1e-6)
N = 16


def _pin_fk_from_hp(H, P):
    """Pinocchio FK of an arm described by unit axes ``H`` (6, 3) and offsets ``P`` (7, 3)
    (``p_0T = p_01 + R_01 p_12 + ... + R_06 p_6T``), built here without ikstack."""
    model = pin.Model()
    parent = 0
    for i in range(6):
        parent = model.addJoint(
            parent, pin.JointModelRevoluteUnaligned(*H[i]), pin.SE3(np.eye(3), P[i]), f"j{i + 1}"
        )
    data = model.createData()
    tip = pin.SE3(np.eye(3), P[6])

    def fk(q):
        pin.forwardKinematics(model, data, np.asarray(q, dtype=np.float64))
        return np.array((data.oMi[parent] * tip).homogeneous)

    return fk


def _kuka_kr():
    """A KUKA-KR-like spherical-wrist arm (axes 2 and 3 parallel, shoulder offset) whose
    joint 5 is limited to +-125 deg."""
    H = np.array([-EZ, EY, EY, -EX, EY, -EX])
    P = np.array([0.675 * EZ, 0.35 * EX, 1.15 * EZ, -0.041 * EZ + 1.2 * EX, Z3, Z3, 0.215 * EX])
    d = np.deg2rad
    chain = chain_from_hp(
        H,
        P,
        lower=d(np.array([-185, -140, -120, -350, -125, -350.0])),
        upper=d(np.array([185, 140, 168, 350, 125, 350.0])),
        name="kuka_kr",
    )
    return chain, _pin_fk_from_hp(H, P)


def _puma560():
    H = np.array([EZ, EY, EY, EZ, EY, EZ])
    P = np.array([0.67 * EZ, 0.15 * EY, 0.43 * EX, 0.43 * EZ - 0.02 * EY, Z3, Z3, 0.056 * EZ])
    d = np.deg2rad
    chain = chain_from_hp(
        H,
        P,
        lower=d(np.array([-160, -225, -45, -110, -100, -266.0])),
        upper=d(np.array([160, 45, 225, 170, 100, 266.0])),
        name="puma560",
    )
    return chain, _pin_fk_from_hp(H, P)


def _pin_fk_urdf(text_or_path, chain):
    model = (
        pin.buildModelFromXML(text_or_path)
        if isinstance(text_or_path, str)
        else pin.buildModelFromUrdf(str(text_or_path))
    )
    data = model.createData()
    fid = model.getFrameId(chain.tip)
    idx = [model.joints[model.getJointId(n)].idx_q for n in chain.joint_names]

    def fk(q):
        qp = pin.neutral(model)
        qp[idx] = q
        pin.framesForwardKinematics(model, data, qp)
        return np.array(data.oMf[fid].homogeneous)

    return fk


def _ur5(erd_dir):
    path = erd_dir / "ur_description/urdf/ur5_robot.urdf"
    chain = ikstack.load_urdf(path, "base_link", "tool0")
    return chain, _pin_fk_urdf(path, chain)


def _singular_targets(chain, pin_fk, seed=0):
    """FK (by Pinocchio) of configurations at and ``DELTAS`` away from each singularity."""
    rng = np.random.default_rng(seed)
    lo = np.maximum(chain.lower + chain.kinematic_margin, -np.pi)
    hi = np.minimum(chain.upper - chain.kinematic_margin, np.pi)
    qs = []
    for _, j in SINGULARITIES:
        q0 = singular_along(chain, j, rng.uniform(lo, hi, (N, 6)))
        for delta in DELTAS:
            q = q0.copy()
            q[:, j] += delta * rng.choice([-1.0, 1.0], size=len(q))
            qs.append(q[chain.within_limits(q)])
    q = np.concatenate(qs)
    return np.array([pin_fk(qi) for qi in q])


def _meets(pin_fk, q, T, tol=1e-6):
    """Pinocchio's FK of ``q`` reaches ``T`` as given: position within ``tol``, rotation
    entries within ``tol`` plus ``T``'s own distance from orthonormal (float32 rounding)."""
    R = np.asarray(T[:3, :3], dtype=np.float64)
    dev = np.abs(R.T @ R - np.eye(3)).max()
    F = pin_fk(q)
    return (
        np.linalg.norm(F[:3, 3] - np.asarray(T[:3, 3], np.float64)) <= tol
        and np.abs(F[:3, :3] - R).max() <= tol + 3.0 * dev
    )


def _assert_strict_parity(chain, pin_fk, T, **opts):
    w, c = WarpAnalyticIK(chain, chunk_size=64, **opts), AnalyticIK(chain, **opts)
    seed = chain.middle()
    for dtype in (np.float64, np.float32):
        Tt = T.astype(dtype)
        rw, rc = w.solve(Tt, seed, return_all=True), c.solve(Tt, seed, return_all=True)
        np.testing.assert_array_equal(rw.valid_all, rc.valid_all)
        assert np.abs(rw.q_all[rc.valid_all] - rc.q_all[rc.valid_all]).max() <= 1e-9
        assert np.all(np.isfinite(rw.q_all))
        np.testing.assert_array_equal(rw.status, rc.status)
        assert np.abs(rw.q - rc.q).max() <= 1e-9
        # the nearest-solution mode: the same status as the CPU path, and the selection the
        # CPU path's general gate makes (the valid slot nearest the seed)
        sw, sc = w.solve(Tt, seed), c.solve(Tt, seed)
        np.testing.assert_array_equal(sw.status, sc.status)
        assert np.abs(sw.q - rc.q).max() <= 1e-9
        assert sw.success.all(), f"{dtype.__name__}: {np.flatnonzero(~sw.success)}"
        for i in range(len(Tt)):
            assert _meets(pin_fk, sw.q[i], Tt[i]) and chain.within_limits(sw.q[i])
            for k in np.flatnonzero(rw.valid_all[i]):
                assert _meets(pin_fk, rw.q_all[i, k], Tt[i]), (dtype, i, k)


def test_ur5_singular_sweeps_equal_the_cpu_path_and_meet_pinocchio(erd_dir):
    chain, pin_fk = _ur5(erd_dir)
    _assert_strict_parity(chain, pin_fk, _singular_targets(chain, pin_fk))


@pytest.mark.parametrize("arm", [_kuka_kr, _puma560])
def test_spherical_wrist_singular_sweeps_equal_the_cpu_path_and_meet_pinocchio(arm):
    chain, pin_fk = arm()
    _assert_strict_parity(chain, pin_fk, _singular_targets(chain, pin_fk, seed=1))


@pytest.mark.parametrize("certify", ["device", "host"])
def test_float32_targets_are_solved_as_the_nearest_rotation(certify):
    # a rotation tolerance (1e-9) far below float32's rounding of the target (~5e-8 from
    # orthonormal): solving the rounded matrix itself misses it (86% failed before); the
    # nearest rotation is solved, and the answer judged against the target as given (the
    # geodesic error sees only the skew part of R_t R^T, which the projection leaves exact),
    # on the device or on the host
    chain, pin_fk = _kuka_kr()
    rng = np.random.default_rng(4)
    T = chain.fk(chain.random_q(rng, 60)).astype(np.float32)
    opts = {"rotation_tolerance": 1e-9}
    rw = WarpAnalyticIK(chain, certify=certify, **opts).solve(T)
    rc = AnalyticIK(chain, **opts).solve(T)
    np.testing.assert_array_equal(rw.status, rc.status)
    assert rw.success.all() and np.abs(rw.q - rc.q).max() <= 1e-9
    for i in range(len(T)):
        assert _meets(pin_fk, rw.q[i], T[i])


def test_limited_spherical_wrist_at_the_shoulder_singularity_frees_joint_1():
    # the wrist centre on the first axis with the seed's joint 1 far from the generating one:
    # joint 1 at the seed alone bends joint 5 past its +-125 deg; the free-joint member keeps
    # joint 5 at the seed's value (as the CPU path)
    chain, pin_fk = _kuka_kr()
    rng = np.random.default_rng(5)
    q = singular_along(chain, 1, chain.random_q(rng, 40))
    T = np.array([pin_fk(qi) for qi in q])
    seed = chain.clip(q + np.array([2.5, 0, 0, 0, 0, 0]))
    w, c = WarpAnalyticIK(chain), AnalyticIK(chain)
    rw, rc = w.solve(T, seed), c.solve(T, seed)
    np.testing.assert_array_equal(rw.status, rc.status)
    assert (rw.status == IKStatus.SUCCESS).all()
    ra, rca = w.solve(T, seed, return_all=True), c.solve(T, seed, return_all=True)
    np.testing.assert_array_equal(ra.valid_all, rca.valid_all)
    assert np.abs(rw.q - rca.q).max() <= 1e-9
    for i in range(len(T)):
        assert _meets(pin_fk, rw.q[i], T[i])


@pytest.mark.parametrize("name", ["panda", "iiwa14"])
def test_rounded_urdf_is_polished_on_the_device_like_the_cpu_path(name):
    # offsets rounded by 0.5 um: strict mode solves the exact surrogate, then polishes (on the
    # device) and certifies on the true chain; before, the Warp gate rejected the unpolished
    # candidates. The polish stops within 1e-2 of the tolerances (1e-8), so the two paths'
    # rounding (normal equations by Cholesky here, LU on the CPU) leaves polished joint values
    # equal to about that; masks and statuses are identical
    text = rounded_urdf(name)
    base = robots.load(name)
    chain = ikstack.load_urdf(text, base.base, base.tip)
    pin_fk = _pin_fk_urdf(text, chain)
    opts = {"num_samples": 8}
    w, c = WarpAnalyticIK(chain, chunk_size=32, **opts), AnalyticIK(chain, **opts)
    assert c.polish and w.device_selection
    rng = np.random.default_rng(1)
    T = np.array([pin_fk(qi) for qi in chain.random_q(rng, 40)])
    seed = chain.random_q(rng, 40)
    for Tt in (T, T.astype(np.float32)):
        for return_all in (False, True):
            rw = w.solve(Tt, seed, return_all=return_all)
            rc = c.solve(Tt, seed, return_all=return_all)
            # the CPU path also refines the lock samples of rows no slot certifies (the Warp
            # port does not): Warp's successes are the CPU's, the CPU may add refined rows
            ok = rw.status == IKStatus.SUCCESS
            assert (rc.status[ok] == IKStatus.SUCCESS).all()
            assert ok.mean() >= 0.95
            assert np.abs(rw.q - rc.q)[ok].max() <= 1e-7
            if return_all:
                same = rw.valid_all.any(axis=1)
                np.testing.assert_array_equal(rw.valid_all[same], rc.valid_all[same])
                assert np.abs(rw.q_all - rc.q_all)[same][rc.valid_all[same]].max() <= 1e-7
                for i, k in np.argwhere(rw.valid_all):
                    assert _meets(pin_fk, rw.q_all[i, k], Tt[i])
        r = w.solve(Tt, seed)
        assert r.success.mean() >= 0.9
        for i in np.flatnonzero(r.success):
            assert _meets(pin_fk, r.q[i], Tt[i]) and chain.within_limits(r.q[i])
    # a path in one launch: each frame polished from the previous selection
    q0 = chain.middle() + 0.2
    t = np.linspace(0.0, 1.0, 20)[:, None]
    path = np.array([pin_fk(qi) for qi in q0 + 0.6 * np.sin(3.0 * t) * np.ones(chain.dof)])
    pw, pc = w.solve_path(path, q0), c.solve_path(path, q0)
    np.testing.assert_array_equal(pw.status, pc.status)
    assert pw.success.all() and np.abs(pw.q - pc.q).max() <= 1e-7


def _pin_chain_from_hp(H, P):
    return chain_from_hp(H, P, name="random"), _pin_fk_from_hp(H, P)


def _random_hp(structure, seed):
    rng = np.random.default_rng(seed)
    h = rng.normal(size=(6, 3))
    h /= np.linalg.norm(h, axis=1, keepdims=True)
    r = rng.normal(scale=0.3, size=(6, 3))
    if structure == "spherical_wrist":
        r[3] = r[4] = r[5] = rng.normal(scale=0.3, size=3)
    if structure == "three_parallel":
        h[2] = h[3] = h[1]
    return h, np.vstack([r[0], np.diff(r, axis=0), rng.normal(scale=0.3, size=3)])


@pytest.mark.parametrize("structure", ["spherical_wrist", "three_parallel"])
def test_general_position_arms_at_singularities_match_the_cpu_path_to_root_conditioning(structure):
    # subproblems 5 and 6 (quartic roots: near-real pairs resolved at the extremum, monotone
    # polish) at singular targets: a double root's position is conditioned like sqrt(eps), and
    # the two paths' libm rounding may split it into a close pair on one side only, so slots
    # agree to 1e-4 (every valid slot of either side has a valid twin on the other); the
    # statuses are identical and every Warp answer meets Pinocchio's FK
    chain, pin_fk = _pin_chain_from_hp(*_random_hp(structure, 3))
    T = _singular_targets(chain, pin_fk, seed=2)
    w, c = WarpAnalyticIK(chain, chunk_size=64), AnalyticIK(chain)
    for dtype in (np.float64, np.float32):
        Tt = T.astype(dtype)
        rw, rc = w.solve(Tt, return_all=True), c.solve(Tt, return_all=True)
        np.testing.assert_array_equal(rw.status, rc.status)
        assert rw.success.mean() >= 0.97
        for i in range(len(Tt)):
            a, b = rw.q_all[i][rw.valid_all[i]], rc.q_all[i][rc.valid_all[i]]
            for x, y in ((a, b), (b, a)):
                for v in x:
                    assert (np.abs(np.angle(np.exp(1j * (y - v)))).max(axis=1) <= 1e-4).any()
            for v in a:
                assert _meets(pin_fk, v, Tt[i])


def test_srs_elbow_within_the_tangent_tolerance_past_full_reach_is_a_candidate_on_both():
    """iiwa14 targets 5 um beyond full reach (elbow straight): the elbow's subproblem is a
    least-squares one within the tangent tolerance (1e-5 m), a candidate on the CPU path; the
    device kept it too (it masked every least-squares elbow before the slots were one source).
    With a 1e-4 m position tolerance every target is solved, on both, by Pinocchio's FK."""
    chain = robots.load("iiwa14")
    pin_fk = _pin_fk_urdf(robots.data_path("iiwa14.urdf"), chain)
    rng = np.random.default_rng(1)
    q = chain.random_q(rng, 12)
    q[:, 3] = 0.0  # the elbow straight: the wrist centre at full reach
    T = np.array([pin_fk(qi) for qi in q])
    arm = AnalyticIK(chain).family.data
    for i in range(len(T)):  # 5 um further out along the shoulder-to-wrist line
        W = T[i, :3, 3] - T[i, :3, :3] @ arm.R7T.T @ arm.p7T
        T[i, :3, 3] += 5e-6 * (W - arm.S) / np.linalg.norm(W - arm.S)
    opts = {"num_samples": 4, "position_tolerance": 1e-4}
    w, c = WarpAnalyticIK(chain, device="cpu", chunk_size=16, **opts), AnalyticIK(chain, **opts)
    rw, rc = w.solve(T, q, return_all=True), c.solve(T, q, return_all=True)
    assert rw.success.all() and rc.success.all()
    np.testing.assert_array_equal(rw.valid_all, rc.valid_all)
    for i in range(len(T)):
        assert _meets(pin_fk, rw.q[i], T[i], tol=1e-4)
