"""The generated Warp rotation vector (``_gen_tuple_math.rotation_vector``, the device search's
pose error) against SciPy on Warp's CPU device: near 0, ordinary, near and at pi, and NaN
entries giving NaN (no ``max`` floor that could turn NaN into a number)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

pytest.importorskip("warp")


def test_the_device_rotation_vector_agrees_with_scipy_and_keeps_nan():
    from ikstack.backends.warp import _gen_tuple_math
    from ikstack.backends.warp.runtime import device, warp

    wp = warp()

    @wp.kernel
    def run_warp(M: wp.array(dtype=wp.mat33d), out: wp.array(dtype=wp.vec3d)):
        i = wp.tid()
        out[i] = _gen_tuple_math.rotation_vector(M[i])

    rng = np.random.default_rng(4)
    axes = rng.normal(size=(400, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    axes[::4] = np.eye(3)[np.arange(100) % 3]  # at pi: the x, y and z branches
    angles = np.concatenate(
        [
            10.0 ** rng.uniform(-9, -4, 100),
            rng.uniform(0.0, np.pi, 100),
            np.pi - 10.0 ** rng.uniform(-9, -4, 100),
            np.full(100, np.pi),
        ]
    )
    R = Rotation.from_rotvec(axes * angles[:, None]).as_matrix()
    # one NaN entry in each position, of rotations about skew axes (a zero numerator would
    # make the NaN out of 0 / 0 whatever the divisor)
    skew = Rotation.from_rotvec([[1e-6, 2e-6, -1e-6], [0.3, -0.2, 0.5], [0.0, 3.0, 0.1]])
    nan = np.repeat(skew.as_matrix().reshape(3, 1, 9), 9, axis=1)
    nan[:, np.arange(9), np.arange(9)] = np.nan
    M = np.concatenate([R, nan.reshape(27, 3, 3)])
    dev = device("cpu")
    out = wp.zeros(len(M), dtype=wp.vec3d, device=dev)
    wp.launch(
        run_warp, dim=len(M), inputs=[wp.array(M, dtype=wp.mat33d, device=dev), out], device=dev
    )
    got = out.numpy()
    ref = Rotation.from_matrix(R).as_rotvec()
    err = np.abs(got[: len(R)] - ref).max(axis=1)
    at_pi = angles > np.pi - 1e-6
    err[at_pi] = np.minimum(err[at_pi], np.abs(got[: len(R)] + ref).max(axis=1)[at_pi])
    assert (err <= 1e-15 + 1e-14 * angles).all(), err.max()
    assert np.isnan(got[len(R) :]).all()
