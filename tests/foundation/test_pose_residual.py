"""The compiled pose residual and rotation angle (``M = R_t R^T``, its cosine, axial vector and
angle; the FK gate's errors and the numerical search's rotation vector) against SciPy's
rotations, near 0 and near pi too, on exact and on float32-rounded (not quite orthonormal)
poses; and the public NumPy error (:func:`ikstack.spatial.position_rotation_error`, its own
vectorized form) against the same reference."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import ikstack.robots as robots
from ikstack.ik import fk_errors
from ikstack.ik._gate import fk_error_one, fk_errors_rows, pose_residual
from ikstack.ik.numerical._kernels import _pose_error
from ikstack.spatial import position_rotation_error
from ikstack.spatial._tuple_math import rel_rotation, rotation_angle

#: relative angles [rad]: at and near 0, ordinary, near and at pi
ANGLES = [0.0, 1e-12, 1e-8, 1e-4, 0.3, 1.5, 3.0, np.pi - 1e-4, np.pi - 1e-8, np.pi]


def _pairs(n_axes: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Poses ``T`` and targets ``Tt`` whose rotations differ by each of :data:`ANGLES` about
    random axes (``Tt``'s rotation ``exp(angle axis) R``)."""
    rng = np.random.default_rng(seed)
    T, Tt = [], []
    for angle in ANGLES:
        for _ in range(n_axes):
            axis = rng.normal(size=3)
            axis /= np.linalg.norm(axis)
            R = Rotation.random(random_state=rng).as_matrix()
            A = np.eye(4)
            B = np.eye(4)
            A[:3, :3] = R
            A[:3, 3] = rng.normal(size=3)
            B[:3, :3] = Rotation.from_rotvec(angle * axis).as_matrix() @ R
            B[:3, 3] = A[:3, 3] + rng.normal(scale=10.0 ** rng.integers(-9, 1), size=3)
            T.append(A)
            Tt.append(B)
    return np.array(T), np.array(Tt)


def _f32(X: np.ndarray) -> np.ndarray:
    """The poses rounded to float32 and back: rotations off orthonormal by ~1e-8."""
    return X.astype(np.float32).astype(np.float64)


def _reference(T: np.ndarray, Tt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SciPy's rotation vector of ``R_t R^T`` (projected onto a rotation where the inputs are
    not exact) and plain NumPy's position error."""
    rv = Rotation.from_matrix(Tt[:, :3, :3] @ np.swapaxes(T[:, :3, :3], 1, 2)).as_rotvec()
    return rv, np.linalg.norm(Tt[:, :3, 3] - T[:, :3, 3], axis=1)


@pytest.mark.parametrize("noisy", [False, True], ids=["exact", "float32"])
def test_residual_and_angle_agree_with_scipy(noisy):
    T, Tt = _pairs()
    if noisy:
        T, Tt = _f32(T), _f32(Tt)
    rv, dp = _reference(T, Tt)
    ang = np.linalg.norm(rv, axis=1)
    # the exact poses are rotations to round-off; float32 rounding moves M by ~1e-7
    tol = 1e-6 if noisy else 1e-12
    for i in range(T.shape[0]):
        M = np.array(rel_rotation(Tt[i], T[i])).reshape(3, 3)
        assert np.abs(M - Tt[i, :3, :3] @ T[i, :3, :3].T).max() <= 1e-15
        perr, c, vx, vy, vz = pose_residual(T[i], Tt[i])
        assert perr == pytest.approx(dp[i], rel=1e-15, abs=1e-300)
        # M's cosine and axial vector: cos(angle) and 2 sin(angle) axis
        assert c == pytest.approx(np.cos(ang[i]), abs=tol)
        axis = rv[i] / ang[i] if ang[i] > 0.0 else np.zeros(3)
        assert np.allclose([vx, vy, vz], 2.0 * np.sin(ang[i]) * axis, rtol=0.0, atol=2 * tol)
        a, s = rotation_angle(c, vx, vy, vz)
        assert s == pytest.approx(np.sin(ang[i]), abs=tol)
        assert a == pytest.approx(ang[i], abs=tol)
        assert fk_error_one(T[i], Tt[i]) == (perr, a)
        # the numerical search's rotation vector (its quaternion route holds at pi too)
        e = np.empty(6)
        _pose_error(Tt[i], T[i], e)
        assert np.allclose(e[:3], Tt[i, :3, 3] - T[i, :3, 3], rtol=0.0, atol=1e-15)
        err = np.abs(e[3:] - rv[i]).max()
        if ang[i] > np.pi - 1e-6:  # the axis's sign at pi is a choice
            err = min(err, np.abs(e[3:] + rv[i]).max())
        assert err <= tol, (i, ANGLES[i // 6], e[3:], rv[i])
    # the batch kernel behind ikstack.ik.fk_errors, and the public NumPy form
    pe, re = np.empty(T.shape[0]), np.empty(T.shape[0])
    fk_errors_rows(T, Tt, pe, re)
    assert np.allclose(re, ang, rtol=0.0, atol=tol)
    assert np.allclose(pe, dp, rtol=1e-15, atol=0.0)
    pn, rn = position_rotation_error(Tt, T)
    assert np.allclose(rn, ang, rtol=0.0, atol=tol)
    assert np.allclose(pn, dp, rtol=1e-15, atol=0.0)


def test_fk_errors_of_a_chain_agree_with_scipy():
    chain = robots.load("ur5")
    rng = np.random.default_rng(1)
    q = chain.random_q(rng, 60)
    F = chain.fk(q)
    Tt = F.copy()
    angles = np.resize(ANGLES, 60)
    axes = rng.normal(size=(60, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    Tt[:, :3, :3] = Rotation.from_rotvec(angles[:, None] * axes).as_matrix() @ F[:, :3, :3]
    Tt[:, :3, 3] += rng.normal(scale=1e-3, size=(60, 3))
    rv, dp = _reference(F, Tt)
    perr, rerr = fk_errors(chain, q, Tt)
    assert np.allclose(rerr, np.linalg.norm(rv, axis=1), rtol=0.0, atol=1e-12)
    assert np.allclose(perr, dp, rtol=1e-14, atol=0.0)
