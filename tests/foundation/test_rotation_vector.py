"""The compiled rotation vector (``spatial._tuple_math.rotation_vector``, the log map behind the
numerical search's and the velocity QP's pose errors) against SciPy's
``Rotation.from_matrix(...).as_rotvec()``: random rotations, angles near and at 0, near and at
pi (each of the four quaternion branches taken), float32-rounded rotations re-orthonormalised,
and NaN entries."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ikstack.spatial._tuple_math import rotation_vector

AXES = np.eye(3)


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.normal(size=(n, 3))
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _rotations() -> np.ndarray:
    """Random rotations, and rotations about random and coordinate axes by angles at and near
    0 and pi (both signs of each axis)."""
    rng = np.random.default_rng(7)
    small = np.concatenate([10.0 ** rng.uniform(-9, -4, 300), [1e-9, 1e-6, 1e-4]])
    near_pi = np.pi - np.concatenate([10.0 ** rng.uniform(-9, -4, 300), [1e-9, 1e-6, 1e-4]])
    angles = np.concatenate([small, near_pi, np.full(60, np.pi), np.zeros(3)])
    axes = _unit(rng, angles.size)
    k = np.arange(angles.size)
    axes[k % 4 == 1] = AXES[k[k % 4 == 1] % 3]  # coordinate axes: at pi, one branch each
    axes[k % 8 == 3] = -AXES[k[k % 8 == 3] % 3]
    R = Rotation.from_rotvec(axes * angles[:, None]).as_matrix()
    R[-1] = np.eye(3)
    return np.concatenate([Rotation.random(400, random_state=rng).as_matrix(), R])


def _branch(R: np.ndarray) -> int:
    """Which quaternion entry is the largest (w, x, y, z; the first on a tie), from
    ``4 w^2 = 1 + tr R`` and ``4 x^2 = 1 + 2 R_00 - tr R`` etc."""
    d = np.diag(R)
    tr = d.sum()
    return int(np.argmax([1.0 + tr, *(1.0 + 2.0 * d - tr)]))


def _orthonormal(R: np.ndarray) -> np.ndarray:
    """The nearest rotation (SVD polar factor)."""
    U, _, Vt = np.linalg.svd(R)
    return U @ Vt


def _check(R: np.ndarray) -> tuple[float, list[int]]:
    """The largest error against SciPy relative to ``1e-15 + 1e-14 |rotvec|`` (the axis's sign
    free at pi), and how often each branch was taken."""
    ref = Rotation.from_matrix(R).as_rotvec()
    worst = 0.0
    hits = [0, 0, 0, 0]
    for i in range(R.shape[0]):
        got = np.array(rotation_vector(tuple(R[i].ravel())))
        hits[_branch(R[i])] += 1
        err = np.abs(got - ref[i]).max()
        if np.linalg.norm(ref[i]) > np.pi - 1e-6:
            err = min(err, np.abs(got + ref[i]).max())
        worst = max(worst, err / (1e-15 + 1e-14 * np.linalg.norm(ref[i])))
        assert np.linalg.norm(got) <= np.pi + 1e-15
    return worst, hits


@pytest.mark.parametrize("rounded", [False, True], ids=["exact", "float32-reorthonormalised"])
def test_rotation_vector_agrees_with_scipy_on_every_branch(rounded):
    R = _rotations()
    if rounded:
        R = np.array([_orthonormal(r) for r in R.astype(np.float32).astype(np.float64)])
    worst, hits = _check(R)
    assert worst <= 1.0, worst
    assert min(hits) >= 20, hits  # each of w, x, y, z was the largest entry


def test_rotation_vector_is_exactly_zero_at_the_identity_and_tiny_near_it():
    assert rotation_vector(tuple(np.eye(3).ravel())) == (0.0, 0.0, 0.0)
    w = np.array([3e-13, -1e-13, 2e-13])  # below the small-angle cut
    got = rotation_vector(tuple(Rotation.from_rotvec(w).as_matrix().ravel()))
    np.testing.assert_allclose(got, w, rtol=1e-3, atol=0.0)


def test_a_nan_entry_gives_nan():
    rng = np.random.default_rng(3)
    for R in (
        Rotation.random(random_state=rng).as_matrix(),
        Rotation.from_rotvec([1e-6, 2e-6, -1e-6]).as_matrix(),
        Rotation.from_rotvec([0.0, 3.0, 0.1]).as_matrix(),
        Rotation.from_rotvec([0.0, np.pi, 0.0]).as_matrix(),
        np.eye(3),
    ):
        for j in range(9):
            M = R.ravel().copy()
            M[j] = np.nan
            got = rotation_vector(tuple(M))
            assert np.isnan(got).all(), (j, got)
