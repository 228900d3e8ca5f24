"""The seeded path loop: continuity, max_joint_step, failed frames, and the library lookup."""

from __future__ import annotations

import numpy as np
import pytest
from jobs_standin import CALLS, gn_frame

from ikstack.errors import IKStackDeprecationWarning, InputError
from ikstack.ik import IKStatus
from ikstack.jobs import read_episode, sample_path
from ikstack.jobs.path import solve_episode
from ikstack.kinematics import fk
from ikstack.robots import load
from ikstack.spatial import position_rotation_error


@pytest.fixture(scope="module")
def panda_path():
    return load("panda"), read_episode(sample_path("panda") / "episode_000.csv").T_base_tcp[:60]


def test_seeded_loop_solves_a_smooth_path_continuously(panda_path):
    chain, T = panda_path
    r = solve_episode(chain, T, frame_solver=gn_frame)
    assert r.success.all()
    assert (r.status == IKStatus.SUCCESS).all()
    steps = np.abs(np.diff(r.q, axis=0)).max()
    assert steps < 0.1  # 50 Hz samples of a slow motion: no branch flips
    perr, rerr = position_rotation_error(T, fk(chain, r.q))
    np.testing.assert_allclose(r.position_error, perr)
    assert perr.max() < 1e-6 and rerr.max() < 1e-5


@pytest.mark.parametrize("chunk", [1, 4])
def test_a_jump_beyond_max_joint_step_fails_and_holds_the_last_solution(panda_path, chunk):
    chain, T = panda_path
    far = fk(chain, chain.middle() + np.array([1.2, 0.3, -0.8, 0.4, 1.0, -0.3, 0.9]))
    path = np.concatenate([T[:10], far[None], T[10:15]])
    r = solve_episode(chain, path, max_joint_step=0.2, frame_solver=gn_frame, chunk=chunk)
    assert r.success[:10].all()
    assert not r.success[10] and r.status[10] == IKStatus.STEP_LIMIT
    np.testing.assert_array_equal(r.q[10], r.q[9])
    assert r.position_error[10] > 1e-3  # the error column reports the held joint vector
    assert r.success[11:].all()  # the path resumes from the last certified solution
    free = solve_episode(chain, path, frame_solver=gn_frame)
    assert free.success[10]


def test_an_unreachable_first_frame_gives_a_finite_in_limit_failure(panda_path):
    chain, T = panda_path
    bad = T[:3].copy()
    bad[0, :3, 3] += 10.0  # 10 m away
    r = solve_episode(chain, bad, frame_solver=gn_frame)
    assert not r.success[0] and r.success[1:].all()
    assert np.isfinite(r.q).all() and chain.within_limits(r.q[0])
    assert r.position_error[0] > 9.0


def test_q0_starts_the_path_and_seed_still_works_with_a_warning(panda_path):
    chain, T = panda_path
    q0 = solve_episode(chain, T[:1], frame_solver=gn_frame).q[0]
    r = solve_episode(chain, T[:5], q0=q0, frame_solver=gn_frame)
    np.testing.assert_allclose(r.q[0], q0, atol=1e-6)
    with pytest.warns(IKStackDeprecationWarning, match=r"solve_episode\(seed=\.\.\.\)"):
        old = solve_episode(chain, T[:5], seed=q0, frame_solver=gn_frame)
    np.testing.assert_array_equal(old.q, r.q)
    with pytest.raises(InputError, match="both 'seed' and 'q0'"):
        solve_episode(chain, T[:5], q0=q0, seed=q0, frame_solver=gn_frame)


def test_unknown_method_is_rejected(panda_path):
    chain, T = panda_path
    with pytest.raises(InputError, match="auto, analytic, numerical"):
        solve_episode(chain, T, method="magic", frame_solver=gn_frame)


def test_chunked_tracking_matches_frame_by_frame_with_fewer_calls(panda_path):
    chain, T = panda_path
    q0 = solve_episode(chain, T[:1], frame_solver=gn_frame).q[0]
    CALLS["n"] = 0
    one = solve_episode(chain, T, q0=q0, frame_solver=gn_frame)
    calls_one = CALLS["n"]
    CALLS["n"] = 0
    many = solve_episode(chain, T, q0=q0, frame_solver=gn_frame, chunk=16)
    assert many.success.all() and one.success.all()
    assert CALLS["n"] < calls_one / 4
    # frames of a chunk start from an older seed, so they may differ slightly in redundancy
    assert np.abs(np.diff(many.q, axis=0)).max() < 0.1
    assert np.abs(many.q - one.q).max() < 0.05


def test_chunk_must_be_positive(panda_path):
    chain, T = panda_path
    with pytest.raises(InputError, match="chunk"):
        solve_episode(chain, T, frame_solver=gn_frame, chunk=0)
