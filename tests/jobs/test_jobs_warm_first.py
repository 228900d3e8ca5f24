"""From an empty compile cache the job compiles once, here, before any worker starts: workers
then load the compiled code instead of compiling the same kernels at the same time."""

from __future__ import annotations

import numpy as np
import pytest

from ikstack.jobs import SolveConfig, convert, engines
from ikstack.jobs.convert import EpisodeTask
from ikstack.robots import load


class _PoolStarted(Exception):
    pass


def test_this_process_solves_a_short_path_before_the_pool_starts(monkeypatch):
    events: list[object] = []

    def spy_solver(config):
        def solve(T, seed):
            events.append(("solve", T.shape, T.flags.c_contiguous, T.dtype, seed))

        return solve

    def fake_pool(*args, **kwargs):
        events.append("pool")
        raise _PoolStarted

    monkeypatch.setattr(convert, "_path_solver", spy_solver)
    monkeypatch.setattr(engines, "ProcessPoolExecutor", fake_pool)
    cfg = SolveConfig(load("ur5"))
    batches = [[EpisodeTask(f"e{i}", f"in{i}.csv", f"out{i}.csv")] for i in range(3)]
    with pytest.raises(_PoolStarted):
        engines.run_local(cfg, batches, 2, lambda stats: None)
    assert events == [("solve", (convert.WARM_FRAMES, 4, 4), True, np.float64, None), "pool"]


def test_the_warm_up_leaves_custom_solvers_alone(monkeypatch):
    calls = []
    monkeypatch.setattr(convert, "_path_solver", lambda config: calls.append(config))
    convert.warm_here(SolveConfig(load("ur5"), path_solver_factory=lambda c: None))
    assert calls == []
