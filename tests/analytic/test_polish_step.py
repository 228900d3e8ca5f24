"""The near-mode polish's pieces (shared with the Warp backend, which runs code generated from
them) against NumPy and SciPy: the pose error, the stop test and the damped Gauss-Newton step."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ikstack.ik.analytic._polish import _converged, _err6, _gn_step


def _pose(rng: np.random.Generator) -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = Rotation.random(random_state=rng).as_matrix()
    T[:3, 3] = rng.normal(size=3)
    return T


@pytest.mark.parametrize("angle", [0.0, 1e-9, 0.3, 2.0, 3.1])
def test_pose_error_is_the_translation_and_rotation_vector_to_the_target(angle):
    rng = np.random.default_rng(1)
    T = _pose(rng)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    Tt = np.eye(4)
    Tt[:3, :3] = Rotation.from_rotvec(angle * axis).as_matrix() @ T[:3, :3]
    Tt[:3, 3] = T[:3, 3] + rng.normal(scale=1e-2, size=3)
    e = np.empty(6)
    cost = _err6(T, Tt, e)
    rv = Rotation.from_matrix(Tt[:3, :3] @ T[:3, :3].T).as_rotvec()
    np.testing.assert_allclose(e[:3], Tt[:3, 3] - T[:3, 3], rtol=0, atol=1e-15)
    np.testing.assert_allclose(e[3:], rv, rtol=0, atol=1e-12)
    assert cost == pytest.approx(np.linalg.norm(e[:3]) + np.linalg.norm(rv), abs=1e-12)


@pytest.mark.parametrize("gap", [1e-4, 1e-6, 1e-9, 0.0])
def test_pose_error_rotation_vector_holds_its_axis_near_and_at_pi(gap):
    # pi - gap: an axis read off the skew part of R_t R^T (twice the sine times the axis) is
    # round-off over the sine here, 1e-16 / gap; SciPy's log map reads it off the symmetric part
    rng = np.random.default_rng(2)
    for _ in range(50):
        T = _pose(rng)
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        Tt = np.eye(4)
        Tt[:3, :3] = Rotation.from_rotvec((np.pi - gap) * axis).as_matrix() @ T[:3, :3]
        Tt[:3, 3] = T[:3, 3]
        e = np.empty(6)
        cost = _err6(T, Tt, e)
        rv = Rotation.from_matrix(Tt[:3, :3] @ T[:3, :3].T).as_rotvec()
        if gap == 0.0 and np.linalg.norm(e[3:] + rv) < np.linalg.norm(e[3:] - rv):
            rv = -rv  # at pi both signs of the axis are the same rotation
        np.testing.assert_allclose(e[3:], rv, rtol=0, atol=1e-12)
        assert cost == pytest.approx(np.linalg.norm(rv), abs=1e-12)
        assert np.linalg.norm(e[3:]) <= np.pi * (1 + 1e-15)


def test_stop_test_is_a_hundredth_of_both_tolerances():
    e = np.array([3e-11, 4e-11, 0.0, 0.0, 0.0, 5e-11])  # |e_p| = 5e-11, |e_r| = 5e-11
    assert _converged(e, 5e-9, 5e-9)
    assert not _converged(e, 4.9e-9, 5e-9)
    assert not _converged(e, 5e-9, 4.9e-9)


@pytest.mark.parametrize("dof", [5, 6])
@pytest.mark.parametrize("max_dq", [10.0, 1e-3])
def test_step_solves_the_damped_normal_equations_and_caps_every_joint(dof, max_dq):
    rng = np.random.default_rng(dof)
    J = rng.normal(size=(6, dof))
    e = rng.normal(size=6)
    G = J.T @ J
    ref = np.linalg.solve(G + 1e-12 * np.trace(G) * np.eye(dof), J.T @ e)
    ref *= min(1.0, max_dq / np.abs(ref).max())
    A = np.full((dof, dof), np.nan)  # scratch: nothing is read before it is written
    dq = np.full(dof, np.nan)
    assert _gn_step(J, e, A, dq, max_dq)
    np.testing.assert_allclose(dq, ref, rtol=1e-8, atol=1e-12)
    assert np.abs(dq).max() <= max_dq * (1 + 1e-15)


def test_step_of_a_redundant_arm_meets_the_error():
    # 7 joints, 6 rows: J^T J is singular and the damping alone (1e-12 of its trace) makes it
    # positive definite, so only the row space's part of the step is well determined
    rng = np.random.default_rng(7)
    J = rng.normal(size=(6, 7))
    e = 1e-3 * rng.normal(size=6)
    dq = np.empty(7)
    assert _gn_step(J, e, np.empty((7, 7)), dq, 10.0)
    np.testing.assert_allclose(J @ dq, e, rtol=0, atol=1e-9)


def test_step_refuses_a_jacobian_without_rank():
    dof = 6
    assert not _gn_step(np.zeros((6, dof)), np.ones(6), np.empty((dof, dof)), np.empty(dof), 0.1)
