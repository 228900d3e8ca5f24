"""SO(3)/SE(3): group axioms, exp/log round trips near 0 and pi, quaternions, rigid checks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from ikstack import NonFiniteError, NotRigidTransformError, ShapeError
from ikstack.errors import InputError
from ikstack.spatial import (
    as_transforms,
    euler_xyz_to_matrix,
    interpolate,
    inverse,
    make_transform,
    matrix_to_euler_xyz,
    matrix_to_quat,
    pose_error,
    quat_to_matrix,
    rpy_to_matrix,
    se3,
    so3,
)

finite = st.floats(-10.0, 10.0, allow_nan=False)
vec3 = arrays(np.float64, 3, elements=finite)


def unit(v):
    n = np.linalg.norm(v)
    return v / n if n > 1e-6 else np.array([0.0, 0.0, 1.0])


angles = st.one_of(
    st.floats(0.0, 1e-9),
    st.floats(1e-9, 1e-4),
    st.floats(0.0, np.pi),
    st.floats(np.pi - 1e-4, np.pi),
    st.just(np.pi),
    st.just(0.0),
)


def same_rotation_vector(w1, w2, atol=1e-9):
    """Rotation vectors equal, treating angle pi and -axis pi as the same rotation."""
    if np.allclose(w1, w2, atol=atol):
        return True
    th = np.linalg.norm(w1)
    return abs(th - np.pi) < 1e-6 and np.allclose(w1, -w2, atol=atol)


@settings(max_examples=300, deadline=None)
@given(vec3, angles)
def test_exp_log_round_trip_including_near_zero_and_pi(axis, angle):
    w = unit(axis) * angle
    R = so3.exp(w)
    assert np.allclose(R.T @ R, np.eye(3), atol=1e-12)
    assert np.linalg.det(R) == pytest.approx(1.0, abs=1e-12)
    assert same_rotation_vector(so3.log(R), w, atol=1e-9)


@settings(max_examples=200, deadline=None)
@given(vec3, vec3, vec3)
def test_group_axioms_associativity_identity_inverse(a, b, c):
    A, B, C = so3.exp(a), so3.exp(b), so3.exp(c)
    assert np.allclose((A @ B) @ C, A @ (B @ C), atol=1e-12)
    T = make_transform(A, b)
    assert np.allclose(T @ inverse(T), np.eye(4), atol=1e-10)
    assert np.allclose(inverse(inverse(T)), T, atol=1e-12)


@settings(max_examples=200, deadline=None)
@given(vec3, vec3, st.floats(0.0, np.pi))
def test_se3_exp_log_round_trip(v, axis, angle):
    xi = np.concatenate([v, unit(axis) * angle])
    T = se3.exp(xi)
    back = se3.log(T)
    if angle < np.pi - 1e-6:
        assert np.allclose(back, xi, atol=1e-8)
    assert np.allclose(se3.exp(back), T, atol=1e-9)


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, 4, elements=st.floats(-1, 1, allow_nan=False)))
def test_quaternion_round_trip_treats_q_and_minus_q_alike(q):
    if np.linalg.norm(q) < 1e-3:
        return
    q = q / np.linalg.norm(q)
    R = quat_to_matrix(q)
    q2 = matrix_to_quat(R)
    assert np.allclose(q2, q, atol=1e-9) or np.allclose(q2, -q, atol=1e-9)
    assert q2[0] >= 0
    assert np.allclose(quat_to_matrix(-q), R, atol=1e-12)


def test_log_is_accurate_at_exactly_pi_about_every_axis():
    for axis in np.eye(3).tolist() + [[1, 1, 0], [1, -1, 1]]:
        a = unit(np.array(axis, dtype=float))
        R = so3.exp(a * np.pi)
        w = so3.log(R)
        assert np.linalg.norm(w) == pytest.approx(np.pi, abs=1e-12)
        assert np.allclose(so3.exp(w), R, atol=1e-12)


def test_batched_functions_broadcast_leading_dimensions():
    rng = np.random.default_rng(0)
    w = rng.normal(size=(5, 4, 3))
    R = so3.exp(w)
    assert R.shape == (5, 4, 3, 3)
    assert so3.log(R).shape == (5, 4, 3)
    assert matrix_to_quat(R).shape == (5, 4, 4)
    T = make_transform(R, rng.normal(size=(5, 4, 3)))
    assert pose_error(T, T).shape == (5, 4, 6)
    assert np.allclose(pose_error(T, T), 0.0, atol=1e-12)


def test_pose_error_is_position_difference_and_geodesic_rotation_vector():
    T = make_transform(so3.exp([0.1, -0.2, 0.3]), [1.0, 2.0, 3.0])
    w = np.array([0.0, 0.0, 0.25])
    Tt = make_transform(so3.exp(w) @ T[:3, :3], [1.5, 2.0, 2.0])
    e = pose_error(Tt, T)
    assert np.allclose(e[:3], [0.5, 0.0, -1.0])
    assert np.allclose(e[3:], w, atol=1e-12)


def test_interpolation_endpoints_and_midpoint_are_geodesic():
    T0 = make_transform(np.eye(3), [0, 0, 0])
    T1 = make_transform(so3.exp([0, 0, np.pi / 2]), [1, 0, 0])
    for mode in ("decoupled", "screw"):
        assert np.allclose(interpolate(T0, T1, 0.0, mode), T0, atol=1e-12)
        assert np.allclose(interpolate(T0, T1, 1.0, mode), T1, atol=1e-12)
    mid = interpolate(T0, T1, 0.5)
    assert np.allclose(so3.log(mid[:3, :3]), [0, 0, np.pi / 4], atol=1e-12)
    assert np.allclose(mid[:3, 3], [0.5, 0, 0])
    with pytest.raises(InputError, match="valid modes"):
        interpolate(T0, T1, 0.5, "euler")


def test_rpy_matches_fixed_axis_convention():
    r, p, y = 0.3, -0.4, 1.1
    Rx = so3.exp([r, 0, 0])
    Ry = so3.exp([0, p, 0])
    Rz = so3.exp([0, 0, y])
    assert np.allclose(rpy_to_matrix([r, p, y]), Rz @ Ry @ Rx, atol=1e-14)


def test_euler_xyz_round_trip():
    rng = np.random.default_rng(1)
    e = rng.uniform([-3, -1.5, -3], [3, 1.5, 3], size=(100, 3))
    assert np.allclose(matrix_to_euler_xyz(euler_xyz_to_matrix(e)), e, atol=1e-10)


class TestRigidTransformCheck:
    def test_accepts_a_rigid_transform(self):
        T = make_transform(so3.exp([0.1, 0.2, 0.3]), [1, 2, 3])
        assert np.array_equal(as_transforms(T), T)

    def test_rejects_non_orthonormal_rotation_naming_it(self):
        T = np.eye(4)
        T[0, 0] = 1.1
        with pytest.raises(NotRigidTransformError, match="not orthonormal"):
            as_transforms(T, "T_base_tool")

    def test_rejects_a_reflection(self):
        T = np.diag([1.0, 1.0, -1.0, 1.0])
        with pytest.raises(NotRigidTransformError, match="reflection"):
            as_transforms(T)

    def test_rejects_bad_last_row(self):
        T = np.eye(4)
        T[3, 0] = 0.5
        with pytest.raises(NotRigidTransformError, match="last row"):
            as_transforms(np.stack([np.eye(4), T]))

    def test_rejects_nan(self):
        T = np.eye(4)
        T[1, 3] = np.nan
        with pytest.raises(NonFiniteError, match="NaN"):
            as_transforms(T)

    def test_rejects_wrong_shape(self):
        with pytest.raises(ShapeError, match=r"\(\.\.\., 4, 4\)"):
            as_transforms(np.eye(3))

    def test_names_the_bad_element_of_a_batch(self):
        T = np.tile(np.eye(4), (3, 1, 1))
        T[2, :3, :3] *= 2.0
        with pytest.raises(NotRigidTransformError, match=r"\[2\]"):
            as_transforms(T, "targets")


def test_zero_quaternion_is_an_error():
    with pytest.raises(InputError, match="zero norm"):
        quat_to_matrix([0, 0, 0, 0])
