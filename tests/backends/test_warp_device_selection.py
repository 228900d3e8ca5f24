"""Selection and certification on the Warp device equal the CPU path: the same masks, the same
selected joint values (within 1e-9), statuses and errors; the device gate agrees with
:func:`ikstack.ik.certify` on every success it returns."""

from __future__ import annotations

import dataclasses
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
from analytic_arms import TIE_WEIGHTS, assert_tie_rule, random_arm, tie_case  # noqa: E402

N = 150


def _targets(chain, n=N, seed=4):
    rng = np.random.default_rng(seed)
    T = chain.fk(chain.random_q(rng, n))
    T[:4, :3, 3] *= 50.0  # unreachable
    return T, chain.random_q(rng, n)


def _same(rw, rc, return_all=False):
    # the CPU path refines a locked joint's samples where no slot certifies (the Warp port does
    # not): a row Warp fails may be a certified CPU success; every other row is the same
    assert not (rw.success & ~rc.success).any()
    if rc.method.startswith("analytic:locked_joint"):
        keep = rw.success | ~rc.success
        rw, rc = _rows(rw, keep), _rows(rc, keep)
    np.testing.assert_array_equal(rw.success, rc.success)
    np.testing.assert_array_equal(rw.status, rc.status)
    assert np.abs(rw.q - rc.q).max() <= 1e-9
    assert np.abs(rw.position_error - rc.position_error).max() <= 1e-12
    assert np.abs(rw.rotation_error - rc.rotation_error).max() <= 1e-12
    if return_all:
        np.testing.assert_array_equal(rw.valid_all, rc.valid_all)
        assert np.abs(rw.q_all - rc.q_all).max(initial=0.0) <= 1e-9


def _rows(r, keep):
    fields = {f.name: getattr(r, f.name) for f in dataclasses.fields(r)}
    for k, v in fields.items():
        if isinstance(v, np.ndarray) and v.shape[:1] == keep.shape:
            fields[k] = v[keep]
    return type(r)(**fields)


@pytest.mark.parametrize(
    "name,opts",
    [
        ("ur5", {}),
        ("ur5", {"weights": [3.0, 2.0, 1.0, 0.5, 0.5, 0.1], "max_joint_step": 1.5}),
        ("iiwa14", {"num_samples": 8}),
        ("iiwa14", {"num_samples": 8, "max_joint_step": 2.0}),
        ("panda", {"num_samples": 8, "weights": [1, 1, 1, 1, 1, 1, 4.0]}),
        ("arx_x5", {}),
    ],
)
def test_device_selection_equals_the_cpu_path(name, opts):
    chain = load(name)
    T, seed = _targets(chain)
    w = WarpAnalyticIK(chain, chunk_size=64, **opts)
    assert w.device_selection
    c = AnalyticIK(chain, **opts)
    for return_all in (False, True):
        _same(
            w.solve(T, seed, return_all=return_all),
            c.solve(T, seed, return_all=return_all),
            return_all,
        )


@pytest.mark.parametrize(
    "structure",
    ["spherical_wrist", "spherical_shoulder", "three_parallel_reversed", "srs_offset_elbow"],
)
def test_random_arms_select_on_the_device_like_the_cpu_path(structure):
    chain = random_arm(structure, np.random.default_rng(11))
    opts = {"num_samples": 8, "weights": np.linspace(2.0, 0.5, chain.dof), "max_joint_step": 2.5}
    T, seed = _targets(chain)
    _same(
        WarpAnalyticIK(chain, **opts).solve(T, seed, return_all=True),
        AnalyticIK(chain, **opts).solve(T, seed, return_all=True),
        True,
    )


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
    for name, opts in (("ur5", {}), ("iiwa14", {"num_samples": 8}), ("panda", {"num_samples": 8})):
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


@pytest.mark.parametrize(
    "name,opts",
    [
        ("marvin_left", {"num_samples": 8}),  # SRS with a coupled joint-6/7 constraint
        ("marvin_right", {"num_samples": 8, "max_joint_step": 1.0}),
    ],
)
def test_coupled_constraints_are_gated_on_the_device_like_the_cpu_path(name, opts):
    chain = load(name)
    T, seed = _targets(chain, 120)
    w, c = WarpAnalyticIK(chain, **opts), AnalyticIK(chain, **opts)
    assert w.device_selection
    for return_all in (False, True):
        rw, rc = w.solve(T, seed, return_all=return_all), c.solve(T, seed, return_all=return_all)
        _same(rw, rc, return_all)
    assert (rc.status == IKStatus.CONSTRAINT).any() or name == "marvin_right"
    path, q0 = _path(chain, 20)
    _same(w.solve_path(path, chain.clip(q0)), c.solve_path(path, chain.clip(q0)))


def test_linear_constraints_and_undecidable_rows_match_the_cpu_path():
    from ikstack.model.constraints import LinearJointConstraint

    base = load("ur5")
    # joint 1 at most 0.5 (targets built exactly on that bound: too close to call on the
    # device, so those rows go to the host), joints 2 + 3 at most 1
    chain = dataclasses.replace(
        base,
        constraints=[
            LinearJointConstraint(
                np.array([[1.0, 0, 0, 0, 0, 0], [0, 1.0, 1.0, 0, 0, 0]]), np.array([0.5, 1.0])
            )
        ],
    )
    rng = np.random.default_rng(2)
    Q = chain.random_q(rng, N)
    Q[:20, 0] = 0.5
    T, seed = chain.fk(Q), chain.random_q(rng, N)
    w, c = WarpAnalyticIK(chain), AnalyticIK(chain)
    assert w.device_selection
    for return_all in (False, True):
        _same(
            w.solve(T, seed, return_all=return_all),
            c.solve(T, seed, return_all=return_all),
            return_all,
        )


def test_near_mode_selects_on_the_host():
    chain = random_arm("spherical_wrist", np.random.default_rng(5))
    origins = chain.origins.copy()
    origins[4, :3, 3] += 0.002
    near = dataclasses.replace(chain, origins=origins)
    assert not WarpAnalyticIK(near, mode="near").device_selection


def test_bad_certify_option_is_an_input_error():
    from ikstack.errors import InputError

    with pytest.raises(InputError, match="certify"):
        WarpAnalyticIK(load("ur5"), certify="gpu")


def _path(chain, frames=40):
    q0 = chain.middle() + 0.2
    t = np.linspace(0.0, 1.0, frames)[:, None]
    path = chain.fk(q0 + 0.6 * np.sin(3.0 * t) * np.linspace(1.0, 0.5, chain.dof))
    path[15:18, :3, 3] *= 40.0  # unreachable frames hold the previous pose
    return path, q0


@pytest.mark.parametrize(
    "name,opts",
    [
        ("ur5", {"max_joint_step": 0.3}),
        ("iiwa14", {"num_samples": 8, "max_joint_step": 0.5}),
        ("panda", {"num_samples": 8}),
        # an unweighted locked joint: every lock value is solved on every frame
        ("panda", {"num_samples": 8, "weights": [1, 1, 1, 1, 1, 1, 0.0]}),
    ],
)
def test_device_path_in_one_launch_equals_the_cpu_path(name, opts):
    chain = load(name)
    path, q0 = _path(chain)
    w, c = WarpAnalyticIK(chain, **opts), AnalyticIK(chain, **opts)
    for seed in (q0, None):  # None: the step bound binds from the first solved frame on
        rw, rc = w.solve_path(path, seed), c.solve_path(path, seed)
        _same(rw, rc)
        assert rw.success.mean() > 0.9 and not rw.success[15:18].any()
    ok, _, _ = certify(chain, rw.q, path, 1e-6, 1e-6)
    np.testing.assert_array_equal(ok, rw.success)


@pytest.mark.parametrize("arm", ["spherical_wrist", "panda"])
def test_many_paths_in_one_launch_equal_each_path_solved_alone(arm):
    # panda: each thread skips its own lock values (those that cannot beat its previous one)
    chain = load(arm) if arm == "panda" else random_arm(arm, np.random.default_rng(5))
    path, q0 = _path(chain, 25)
    paths = np.stack([path, path[::-1], path[::2].repeat(2, axis=0)[:25]])
    seeds = np.stack([q0, chain.middle(), q0 - 0.1])
    opts = {"max_joint_step": 1.0, "num_samples": 8}
    w, c = WarpAnalyticIK(chain, **opts), AnalyticIK(chain, **opts)
    for p, r in enumerate(w.solve_paths(paths, seeds)):
        _same(r, c.solve_path(paths[p], seeds[p]))


def test_near_mode_path_runs_the_cpu_loop_with_device_candidates():
    chain = random_arm("spherical_wrist", np.random.default_rng(5))
    origins = chain.origins.copy()
    origins[4, :3, 3] += 0.002
    near = dataclasses.replace(chain, origins=origins)
    path, q0 = _path(near, 15)
    w, c = WarpAnalyticIK(near, mode="near"), AnalyticIK(near, mode="near")
    _same(w.solve_path(path, q0), c.solve_path(path, q0))


def test_solve_paths_wants_paths_of_frames():
    from ikstack.errors import ShapeError

    with pytest.raises(ShapeError, match="targets"):
        WarpAnalyticIK(load("ur5")).solve_paths(np.broadcast_to(np.eye(4), (3, 4, 4)))


def test_the_joint_guess_is_q0_and_seed_still_works_with_a_warning():
    from ikstack.errors import IKStackDeprecationWarning, InputError

    chain = load("ur5")
    T, guess = _targets(chain, 8)
    w = WarpAnalyticIK(chain)
    new = w.solve(T, q0=guess)
    with pytest.warns(IKStackDeprecationWarning, match=r"WarpAnalyticIK\.solve\(seed="):
        old = w.solve(T, seed=guess)
    np.testing.assert_array_equal(new.q, old.q)
    path = T[4:]
    new = w.solve_path(path, q0=guess[0])
    with pytest.warns(IKStackDeprecationWarning, match=r"WarpAnalyticIK\.solve_path\(seed="):
        old = w.solve_path(path, seed=guess[0])
    np.testing.assert_array_equal(new.q, old.q)
    paths = np.stack([path, path[::-1]])
    new_all = w.solve_paths(paths, q0=guess[:2])
    with pytest.warns(IKStackDeprecationWarning, match=r"WarpAnalyticIK\.solve_paths\(seed="):
        old_all = w.solve_paths(paths, seed=guess[:2])
    for a, b in zip(new_all, old_all, strict=True):
        np.testing.assert_array_equal(a.q, b.q)
    with pytest.raises(InputError, match="both 'seed' and 'q0'"):
        w.solve(T, q0=guess, seed=guess)


@pytest.mark.parametrize("tight", [False, True])
def test_equally_near_valid_slots_select_the_lowest_on_the_device(tight):
    """The device's selection follows the tie rule written out from its definition
    (:func:`analytic_arms.nearest_valid`, not the CPU path): of the valid slots equally near
    the seed (a zero weight on most joints makes exact ties common), the lowest."""
    W = TIE_WEIGHTS[1]
    chain, T, S = tie_case(tight)
    w = WarpAnalyticIK(chain, weights=W)
    assert w.device_selection
    assert_tie_rule(w, T, S, W)
