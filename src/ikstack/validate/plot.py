"""Plots of a model check (the ``viz`` extra: matplotlib)."""

from __future__ import annotations

import os
from typing import Any

from ikstack.errors import MissingExtraError
from ikstack.validate.report import JacobianIKReport


def plot_errors(report: JacobianIKReport, path: str | os.PathLike[str] | None = None) -> Any:
    """Each target's position and rotation error over the iterations, with the tolerances.

    Args:
        report: a report whose targets carry their histories.
        path: write the figure there (format from the extension) when given.

    Returns:
        The matplotlib ``Figure``.

    Raises:
        MissingExtraError: matplotlib is not installed (``pip install 'ikstack[viz]'``).
    """
    try:
        import matplotlib

        if path is not None:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtraError("matplotlib", "viz") from None
    fig, (ax_p, ax_r) = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    for t in report.targets:
        its = range(len(t.history))
        style = "-" if t.success else "--"
        ax_p.semilogy(its, [max(h[0], 1e-12) for h in t.history], style, label=f"target {t.index}")
        ax_r.semilogy(its, [max(h[1], 1e-12) for h in t.history], style, label=f"target {t.index}")
    ax_p.axhline(report.config["position_tolerance"], color="k", lw=0.8, ls=":", label="tolerance")
    ax_r.axhline(
        report.config["rotation_tolerance_deg"], color="k", lw=0.8, ls=":", label="tolerance"
    )
    ax_p.set(xlabel="iteration", ylabel="position error [m]")
    ax_r.set(xlabel="iteration", ylabel="rotation error [deg]")
    # solid: reached within tolerance; dashed: not reached
    ax_p.legend(fontsize=7, title="solid: reached, dashed: not", title_fontsize=7)
    ax_r.legend(fontsize=7, title="solid: reached, dashed: not", title_fontsize=7)
    fig.suptitle(f"{report.model}: {report.status.value} ({report.reason})", fontsize=9)
    if path is not None:
        fig.savefig(path)
    return fig
