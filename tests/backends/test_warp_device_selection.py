"""Selection and certification on the Warp device equal the CPU path: the same masks, the same
selected joint values (within 1e-9), statuses and errors; the device gate agrees with
:func:`ikstack.ik.certify` on every success it returns."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from ikstack.ik import IKStatus, certify
from ikstack.ik.analytic import AnalyticIK
from ikstack.robots import load

pytest.importorskip("warp")
from ikstack.backends.warp.analytic import WarpAnalyticIK  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analytic"))
from analytic_arms import random_arm  # noqa: E402

N = 150


def _targets(chain, n=N, seed=4):
    rng = np.random.default_rng(seed)
    T = chain.fk(chain.random_q(rng, n))
    T[:4, :3, 3] *= 50.0  # unreachable
    return T, chain.random_q(rng, n)


def _same(rw, rc, return_all=False):
    np.testing.assert_array_equal(rw.success, rc.success)
    np.testing.assert_array_equal(rw.status, rc.status)
    assert np.abs(rw.q - rc.q).max() <= 1e-9
    assert np.abs(rw.position_error - rc.position_error).max() <= 1e-12
    assert np.abs(rw.rotation_error - rc.rotation_error).max() <= 1e-12
    if return_all:
        np.testing.assert_array_equal(rw.valid_all, rc.valid_all)
        assert np.abs(rw.q_all - rc.q_all).max() <= 1e-9


@pytest.mark.parametrize("name,opts", [
    ("ur5", {}),
    ("ur5", {"weights": [3.0, 2.0, 1.0, 0.5, 0.5, 0.1], "max_joint_step": 1.5}),
    ("iiwa14", {"num_samples": 8}),
    ("iiwa14", {"num_samples": 8, "max_joint_step": 2.0}),
    ("panda", {"num_samples": 8, "weights": [1, 1, 1, 1, 1, 1, 4.0]}),
    ("arx_x5", {}),
])
def test_device_selection_equals_the_cpu_path(name, opts):
    chain = load(name)
    T, seed = _targets(chain)
    w = WarpAnalyticIK(chain, chunk_size=64, **opts)
    assert w.device_selection
    c = AnalyticIK(chain, **opts)
    for return_all in (False, True):
        _same(w.solve(T, seed, return_all=return_all), c.solve(T, seed, return_all=return_all),
              return_all)


@pytest.mark.parametrize("structure", ["spherical_wrist", "spherical_shoulder",
                                       "three_parallel_reversed", "srs_offset_elbow"])
def test_random_arms_select_on_the_device_like_the_cpu_path(structure):
    chain = random_arm(structure, np.random.default_rng(11))
    opts = {"num_samples": 8, "weights": np.linspace(2.0, 0.5, chain.dof), "max_joint_step": 2.5}
    T, seed = _targets(chain)
    _same(WarpAnalyticIK(chain, **opts).solve(T, seed, return_all=True),
          AnalyticIK(chain, **opts).solve(T, seed, return_all=True), True)


def test_failure_statuses_limits_and_step_are_decided_as_on_the_cpu():
    chain = load("ur5")
    rng = np.random.default_rng(9)
    Q = chain.random_q(rng, N)
    T = chain.fk(Q)
    seed = chain.clip(Q + rng.normal(0.0, 0.3, Q.shape))
    opts = {"max_joint_step": 0.4}  # some nearest branches jump further: STEP_LIMIT
    rw, rc = WarpAnalyticIK(chain, **opts).solve(T, seed), AnalyticIK(chain, **opts).solve(T, seed)
    _same(rw, rc)
    assert (rc.status == IKStatus.STEP_LIMIT).any() and rc.success.any()


def test_device_certification_agrees_with_certify_on_every_success():
    for name, opts in (("ur5", {}), ("iiwa14", {"num_samples": 8}),
                       ("panda", {"num_samples": 8})):
        chain = load(name)
        T, seed = _targets(chain, seed=8)
        w = WarpAnalyticIK(chain, **opts)
        r = w.solve(T, seed)
        ok, perr, rerr = certify(chain, r.q, T, 1e-6, 1e-6)
        np.testing.assert_array_equal(ok, r.success)
        # the device's FK agrees with the compiled CPU FK to rounding
        assert np.abs(perr - r.position_error).max() <= 1e-12
        assert np.abs(rerr - r.rotation_error).max() <= 1e-12
        ra = w.solve(T, seed, return_all=True)
        okc, _, _ = certify(chain, ra.q_all, T[:, None], 1e-6, 1e-6)
        assert not (ra.valid_all & ~okc).any()
        # the host can certify the device's selections itself: the same answers
        rh = WarpAnalyticIK(chain, certify="host", **opts).solve(T, seed)
        _same(rh, r)


def test_chains_with_constraints_or_near_mode_select_on_the_host():
    chain = load("marvin_left")  # SRS with a coupled joint-6/7 constraint
    w = WarpAnalyticIK(chain, num_samples=8)
    assert not w.device_selection
    T, seed = _targets(chain, 60)
    _same(w.solve(T, seed), AnalyticIK(chain, num_samples=8).solve(T, seed))


def test_bad_certify_option_is_an_input_error():
    from ikstack.errors import InputError

    with pytest.raises(InputError, match="certify"):
        WarpAnalyticIK(load("ur5"), certify="gpu")
