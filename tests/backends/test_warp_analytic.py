"""Warp analytic IK on the CPU equals the compiled CPU path: joint values of every candidate
slot within 1e-9, certified masks and statuses identical; bounded, reusable scratch."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

from ikstack.errors import UnsupportedGeometryError
from ikstack.ik import IKStatus
from ikstack.ik.analytic import AnalyticIK
from ikstack.robots import load

pytest.importorskip("warp")
from ikstack.backends.warp import DeviceUnavailableError  # noqa: E402
from ikstack.backends.warp.analytic import WarpAnalyticIK  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analytic"))
from analytic_arms import random_arm  # noqa: E402

N = 200


def _targets(chain, n=N, seed=3):
    rng = np.random.default_rng(seed)
    T = chain.fk(chain.random_q(rng, n))
    # a few unreachable targets exercise the failure statuses
    T[:5, :3, 3] *= 50.0
    return T, chain.random_q(rng, n)


def _assert_parity(chain, family, **opts):
    T, seed = _targets(chain)
    w = WarpAnalyticIK(chain, device="cpu", chunk_size=64, **opts)
    assert w.family_name == family
    c = AnalyticIK(chain, **opts)
    assert w.K == c.K
    rw = w.solve(T, seed, return_all=True)
    rc = c.solve(T, seed, return_all=True)
    assert rw.q_all.shape == (N, c.K, chain.dof)
    # the CPU path refines a locked joint's samples where no slot certifies (the Warp port does
    # not): rows the grid certifies are equal, the others may gain certified CPU solutions
    same = rw.valid_all.any(axis=1)
    np.testing.assert_array_equal(rw.valid_all[same], rc.valid_all[same])
    assert np.abs(rw.q_all[same] - rc.q_all[same]).max() <= 1e-9
    assert np.all(np.isfinite(rw.q_all))
    sw, sc = w.solve(T, seed), c.solve(T, seed)
    assert not (sw.success & ~sc.success).any()
    np.testing.assert_array_equal(sw.status[sw.success], sc.status[sw.success])
    assert np.abs(sw.q[sw.success] - sc.q[sw.success]).max() <= 1e-9
    if family != "locked_joint7+spherical_shoulder":
        np.testing.assert_array_equal(sw.success, sc.success)
        np.testing.assert_array_equal(sw.status, sc.status)
    # sampled families (locked joint with few samples) may miss a reachable target
    assert sw.success[5:].mean() >= 0.9 and not sw.success[:5].any()
    assert (sw.status[:5] == IKStatus.UNREACHABLE).all()
    assert sw.method == "warp:" + sc.method


def test_ur5_three_parallel_equals_the_cpu_path():
    _assert_parity(load("ur5"), "three_parallel")


def test_iiwa14_srs_swivel_sampling_equals_the_cpu_path():
    _assert_parity(load("iiwa14"), "srs", num_samples=16)


@pytest.mark.parametrize(
    "structure,family",
    [
        ("spherical_wrist", "spherical_wrist"),  # subproblem 5 (general position variant)
        ("spherical_two_parallel", "spherical_wrist"),
        ("spherical_two_intersecting", "spherical_wrist"),
        ("spherical_shoulder", "spherical_shoulder"),  # the chain read backwards
        ("three_parallel_reversed", "three_parallel_reversed"),
        ("srs_offset_elbow", "srs"),
    ],
)
def test_random_structured_arms_equal_the_cpu_path(structure, family):
    _assert_parity(random_arm(structure, np.random.default_rng(7)), family, num_samples=8)


def test_panda_locked_joint_sampling_equals_the_cpu_path():
    _assert_parity(load("panda"), "locked_joint7+spherical_shoulder", num_samples=8)


def test_near_mode_polishes_the_device_candidates_on_the_host_like_the_cpu_path():
    # near mode: the device computes the surrogate's candidates, the host runs the CPU path's
    # polish, gate and selection on them (its seed-slot second pass). The polish on the device
    # (strict mode on a rounded chain) is test_warp_edges'
    # test_rounded_urdf_is_polished_on_the_device_like_the_cpu_path
    chain = random_arm("spherical_wrist", np.random.default_rng(5))
    origins = chain.origins.copy()
    origins[4, :3, 3] += 0.002  # wrist axes miss a common point by ~2 mm
    near = dataclasses.replace(chain, origins=origins)
    with pytest.raises(UnsupportedGeometryError, match="only near"):
        WarpAnalyticIK(near)
    assert not WarpAnalyticIK(near, device="cpu", mode="near").device_selection
    _assert_parity(near, "spherical_wrist", mode="near")


def test_a_family_without_a_port_is_refused_by_name_not_solved_elsewhere(monkeypatch):
    import ikstack.backends.warp.analytic as wa

    class Other:
        name, K, dof = "other_family", 4, 6

    class Patched(AnalyticIK):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            self.family = Other()

    monkeypatch.setattr(wa, "AnalyticIK", Patched)
    with pytest.raises(UnsupportedGeometryError, match="'other_family' is not in the warp"):
        WarpAnalyticIK(load("ur5"))


def test_no_family_is_the_cpu_path_error():
    with pytest.raises(UnsupportedGeometryError):
        WarpAnalyticIK(load("scara"))


def test_cuda_without_a_gpu_is_a_clear_error():
    import warp as wp

    if wp.is_cuda_available():
        pytest.skip("a GPU is present")
    with pytest.raises(DeviceUnavailableError, match="no CUDA GPU"):
        WarpAnalyticIK(load("ur5"), device="cuda")


def test_empty_batch_and_single_target_shapes():
    chain = load("ur5")
    w = WarpAnalyticIK(chain)
    r = w.solve(np.zeros((0, 4, 4)), return_all=True)
    assert r.q.shape == (0, 6) and r.q_all.shape == (0, 8, 6) and r.valid_all.shape == (0, 8)
    one = w.solve(chain.fk(chain.middle()))
    assert one.q.shape == (1, 6) and one.success[0]


def test_scratch_is_bounded_reused_and_results_are_not_overwritten():
    chain = load("ur5")
    w = WarpAnalyticIK(chain, chunk_size=32)
    w.prepare_buffers(10_000)  # capped at one chunk
    reserved = w.buffer_bytes
    assert reserved > 0
    T1, s1 = _targets(chain, 100, seed=1)
    T2, s2 = _targets(chain, 100, seed=2)
    r1 = w.solve(T1, s1, return_all=True)
    keep = (r1.q.copy(), r1.q_all.copy())
    for _ in range(3):
        w.solve(T2, s2, return_all=True)
        assert w.buffer_bytes == reserved
    np.testing.assert_array_equal(r1.q, keep[0])
    np.testing.assert_array_equal(r1.q_all, keep[1])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_at_wrist_singularities_warp_equals_the_cpu_path(dtype):
    # UR5 with q5 = 0: the singular wrist's representatives, tangent subproblem roots and (in
    # float32) the nearest rotation of the target, slot for slot as on the CPU path
    chain = load("ur5")
    rng = np.random.default_rng(3)
    Q = chain.random_q(rng, N)
    Q[:, 4] = 0.0
    T, seed = chain.fk(Q).astype(dtype), chain.random_q(rng, N)
    rw = WarpAnalyticIK(chain).solve(T, seed, return_all=True)
    rc = AnalyticIK(chain).solve(T, seed, return_all=True)
    assert rc.success.all()
    np.testing.assert_array_equal(rw.status, rc.status)
    np.testing.assert_array_equal(rw.valid_all, rc.valid_all)
    assert np.abs(rw.q_all - rc.q_all).max() <= 1e-9
    assert np.abs(rw.q - rc.q).max() <= 1e-9


def test_path_following_equals_the_cpu_path():
    chain = load("ur5")
    t = np.linspace(0.0, 1.0, 40)[:, None]
    q0 = np.array([0.3, -1.0, 1.2, -0.5, 1.1, 0.2])  # away from singularities
    path = chain.fk(q0 + 0.4 * np.sin(3.0 * t) * np.ones(6))
    rw = WarpAnalyticIK(chain, max_joint_step=0.3).solve_path(path, q0)
    rc = AnalyticIK(chain, max_joint_step=0.3).solve_path(path, q0)
    np.testing.assert_array_equal(rw.success, rc.success)
    assert rw.success.all()
    assert np.abs(rw.q - rc.q).max() <= 1e-9


def test_fast_arc_tangent_equals_the_cpu_kernels_bit_for_bit():
    """The ports' parity rests on identical arithmetic: Warp's fatan2 against the CPU one on
    random pairs, both signs of zero and the table's breakpoints."""
    from numba import njit

    from ikstack.backends.warp import _gen_tuple_math
    from ikstack.backends.warp.runtime import device, warp
    from ikstack.spatial._tuple_math import fatan2

    wp = warp()

    @wp.kernel
    def run_warp(
        y: wp.array(dtype=wp.float64),
        x: wp.array(dtype=wp.float64),
        out: wp.array(dtype=wp.float64),
    ):
        i = wp.tid()
        out[i] = _gen_tuple_math.fatan2(y[i], x[i])

    @njit(cache=False)
    def run_cpu(y, x, out):
        for i in range(y.shape[0]):
            out[i] = fatan2(y[i], x[i])

    rng = np.random.default_rng(2)
    y = np.concatenate([rng.normal(size=20_000), np.arange(17) / 16.0, [0.0, -0.0, 1e-300]])
    x = np.concatenate([rng.normal(size=20_000), np.ones(17), [-1.0, -1.0, -1e300]])
    dev = device("cpu")
    out = wp.zeros(len(y), dtype=wp.float64, device=dev)
    wp.launch(
        run_warp,
        dim=len(y),
        inputs=[
            wp.array(y, dtype=wp.float64, device=dev),
            wp.array(x, dtype=wp.float64, device=dev),
            out,
        ],
        device=dev,
    )
    ref = np.empty_like(y)
    run_cpu(y, x, ref)
    got = out.numpy()
    np.testing.assert_array_equal(got, ref)
    assert np.array_equal(np.signbit(got), np.signbit(ref))
