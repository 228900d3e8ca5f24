"""Plots of solved episodes (``ikstack solve --plot``; the ``viz`` extra: matplotlib)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ikstack.errors import MissingExtraError
from ikstack.jobs.episode import SolvedEpisode


def _pyplot(headless: bool) -> Any:
    try:
        import matplotlib

        if headless:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtraError("matplotlib", "viz") from None
    return plt


def plot_solved_episode(
    solved: SolvedEpisode, path: str | os.PathLike[str] | None = None, title: str = ""
) -> Any:
    """Joint traces (one line per joint, legend) and per-frame FK error of a solved episode;
    frames that failed certification are marked.

    Returns the matplotlib ``Figure`` (saved to ``path`` when given).
    """
    plt = _pyplot(path is not None)
    t = solved.timestamps - solved.timestamps[0]
    fig, (ax_q, ax_e) = plt.subplots(2, 1, sharex=True, figsize=(9, 6.5), constrained_layout=True)
    for j, name in enumerate(solved.joint_names):
        ax_q.plot(t, solved.q[:, j], label=name)
    ax_q.set_ylabel("joint position [rad or m]")
    ax_q.legend(fontsize=7, ncol=2, loc="best")
    ax_e.semilogy(t, np.maximum(solved.position_error, 1e-16), label="position error [m]")
    ax_e.semilogy(t, np.maximum(solved.rotation_error, 1e-16), label="rotation error [rad]")
    bad = ~solved.success
    if bad.any():
        ax_e.plot(
            t[bad],
            np.maximum(solved.position_error[bad], 1e-16),
            "rx",
            label=f"failed frames ({int(bad.sum())})",
        )
    ax_e.set_xlabel("t [s]")
    ax_e.set_ylabel("FK error per frame")
    ax_e.legend(fontsize=7, loc="best")
    n = len(solved)
    fig.suptitle(
        f"{title or 'episode'}: {int(solved.success.sum())}/{n} frames certified", fontsize=9
    )
    if path is not None:
        fig.savefig(path)
        plt.close(fig)
    return fig


def plot_summary_episodes(
    per_episode: list[dict[str, Any]], folder: str | os.PathLike[str]
) -> list[str]:
    """One PNG per solved episode of a job summary (``per_episode`` entries with ``name`` and
    ``output``) into ``folder``; returns the files written."""
    from pathlib import Path

    from ikstack.jobs.formats import read_solved

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for e in per_episode:
        solved = read_solved(e["output"])
        target = out / (str(e["name"]).replace("/", "__") + ".png")
        plot_solved_episode(solved, target, title=str(e["name"]))
        written.append(str(target))
    return written
