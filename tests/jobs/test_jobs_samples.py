"""The bundled sample dataset: present, well formed, in limits, and reproducible from code."""

from __future__ import annotations

import numpy as np
import pytest

from ikstack.jobs import find_episodes, read_episode, sample_path
from ikstack.jobs.samples import SAMPLE_HOMES, joint_path, write_samples
from ikstack.robots import load


@pytest.mark.parametrize("robot", ["ur5", "panda", "marvin_left"])
def test_each_sample_robot_has_three_episodes_of_200_frames(robot):
    _, files = find_episodes(sample_path(robot))
    assert [f.name for f in files] == [f"episode_{i:03d}.csv" for i in range(3)]
    for f in files:
        ep = read_episode(f)
        assert len(ep) == 200
        np.testing.assert_allclose(np.diff(ep.timestamps), 0.02, atol=1e-9)
        step = np.linalg.norm(np.diff(ep.T_base_tcp[:, :3, 3], axis=0), axis=1)
        assert step.max() < 0.02  # smooth: under 1 m/s at 50 Hz


def test_bundled_files_are_exactly_what_the_generator_writes(tmp_path):
    write_samples(tmp_path)
    for robot in SAMPLE_HOMES:
        for f in sorted(sample_path(robot).glob("*.csv")):
            assert (tmp_path / robot / f.name).read_bytes() == f.read_bytes(), f


def test_sample_joint_paths_respect_limits_and_coupled_constraints():
    chain = load("marvin_left")
    rng = np.random.default_rng(7)
    for _ in range(5):
        _, q = joint_path(chain, np.asarray(SAMPLE_HOMES["marvin_left"]), rng, 200, 50.0)
        assert chain.within_limits(q).all() and chain.constraints_satisfied(q).all()


def test_write_samples_takes_rng_and_seed_still_works_with_a_warning(tmp_path):
    from ikstack.errors import IKStackDeprecationWarning

    kw = dict(robots=("ur5",), episodes=1, frames=20)
    new = write_samples(tmp_path / "new", rng=3, **kw)
    with pytest.warns(IKStackDeprecationWarning, match=r"write_samples\(seed=\.\.\.\)"):
        old = write_samples(tmp_path / "old", seed=3, **kw)
    assert [p.read_bytes() for p in new] == [p.read_bytes() for p in old]
    other = write_samples(tmp_path / "other", rng=4, **kw)
    assert other[0].read_bytes() != new[0].read_bytes()
    # a Generator: every robot draws from it in turn
    gen = write_samples(tmp_path / "gen", rng=np.random.default_rng([3, 0]), **kw)
    assert gen[0].read_bytes() == new[0].read_bytes()
