"""Plots: solve --plot (joint traces with a legend, per-frame error), servo and validate legends."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ikstack.cli.main import main
from ikstack.jobs.episode import SolvedEpisode
from ikstack.robots import load

pytest.importorskip("matplotlib")


def _legend(ax) -> list[str]:
    leg = ax.get_legend()
    assert leg is not None, "the axes have no legend"
    return [t.get_text() for t in leg.get_texts()]


def test_solve_plot_writes_one_png_per_episode(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert (
        main(["solve", "--robot", "ur5", "sample:ur5", "-o", str(out), "--workers", "1", "--plot"])
        == 0
    )
    summary = json.loads((out / "summary.json").read_text())
    pngs = sorted((out / "plots").glob("*.png"))
    assert len(pngs) == summary["episodes"] == 3
    assert all(
        p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10_000 for p in pngs
    )


def test_episode_plot_legends_name_joints_and_mark_failures() -> None:
    from ikstack.viz.plots import plot_solved_episode

    chain = load("ur5")
    n = 20
    ok = np.ones(n, dtype=bool)
    ok[5] = False
    s = SolvedEpisode(
        np.arange(n) / 10.0,
        chain.joint_names,
        np.zeros((n, 6)),
        ok,
        np.full(n, 1e-9),
        np.full(n, 1e-8),
        np.zeros(n, dtype=np.int64),
    )
    fig = plot_solved_episode(s, title="ep")
    ax_q, ax_e = fig.axes
    assert _legend(ax_q) == list(chain.joint_names)
    assert _legend(ax_e) == ["position error [m]", "rotation error [rad]", "failed frames (1)"]


def test_servo_and_validate_plots_have_legends() -> None:
    from ikstack.servo.demo import plot_trace, run_demo
    from ikstack.validate import check_jacobian_ik, plot_errors

    chain = load("ur5")
    trace = run_demo(chain, chain.clip(chain.middle() + 0.2), steps=20)
    fig = plot_trace(trace, joint_names=chain.joint_names)
    assert _legend(fig.axes[0]) == list(chain.joint_names)
    assert _legend(fig.axes[1]) == list(chain.joint_names)
    assert _legend(fig.axes[2]) == ["position [m]", "rotation [rad]"]
    assert _legend(plot_trace(trace).axes[0])[0] == "q1"
    fig = plot_errors(check_jacobian_ik(chain, num_targets=2))
    for ax in fig.axes:
        assert "tolerance" in _legend(ax)
