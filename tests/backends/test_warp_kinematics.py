"""The Warp backend on the CPU: FK and Jacobians equal the compiled CPU path."""

from __future__ import annotations

import platform

import numpy as np
import pytest

from ikstack import InputError
from ikstack.backends import choose
from ikstack.kinematics import fk_jacobian
from ikstack.robots import load, names

pytest.importorskip("warp")
from ikstack.backends import warp as bw  # noqa: E402


@pytest.mark.parametrize("name", names())
def test_warp_cpu_fk_and_jacobian_equal_the_cpu_path(name):
    chain = load(name)
    Q = chain.random_q(np.random.default_rng(11), 257)
    T, J = bw.fk_jacobian(chain, Q, device="cpu")
    T0, J0 = fk_jacobian(chain, Q)
    assert np.abs(T - T0).max() <= 1e-12
    assert np.abs(J - J0).max() <= 1e-12
    assert np.abs(bw.fk(chain, Q) - T0).max() <= 1e-12


@pytest.mark.skipif(
    platform.machine().lower() not in ("x86_64", "amd64"),
    reason="where fused multiply-add is the default, compilers may contract differently",
)
@pytest.mark.parametrize("name", ["ur5", "panda", "rizon4", "scara"])
def test_warp_cpu_fk_and_jacobian_are_the_cpu_operations_to_the_bit(name):
    """Each joint's step, the TCP and each Jacobian column are generated from the CPU kernels'
    source, so on Warp's CPU device the numbers are the CPU path's, bit for bit (revolute and
    prismatic joints)."""
    chain = load(name)
    Q = chain.random_q(np.random.default_rng(5), 64)
    T, J = bw.fk_jacobian(chain, Q, device="cpu")
    T0, J0 = fk_jacobian(chain, Q)
    assert np.array_equal(T, T0)
    assert np.array_equal(J, J0)
    assert np.array_equal(bw.fk(chain, Q), T0)


def test_shapes_and_empty_batch():
    chain = load("ur5")
    assert bw.fk(chain, np.zeros((0, 6))).shape == (0, 4, 4)
    assert bw.jacobian(chain, np.zeros((2, 3, 6))).shape == (2, 3, 6, 6)
    assert bw.fk(chain, np.zeros(6)).shape == (4, 4)


def test_cuda_without_a_gpu_is_a_clear_error_not_a_fallback():
    import warp as wp

    if wp.is_cuda_available():
        pytest.skip("a GPU is present")
    with pytest.raises(bw.DeviceUnavailableError, match="no CUDA GPU"):
        bw.fk(load("ur5"), np.zeros(6), device="cuda")


def test_backend_registry_validates_names_and_devices():
    assert choose("warp", "cuda:0").device == "cuda:0"
    with pytest.raises(InputError, match="valid backends: 'numpy'"):
        choose("torch")
    with pytest.raises(InputError, match="runs on cpu"):
        choose("numpy", "cuda")
