"""``ikstack solve``: convert episodes of TCP poses into joint trajectories."""

from __future__ import annotations

import argparse

from ikstack.jobs.cli_support import add_solve_arguments, run_solve


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "solve",
        help="convert TCP-pose episodes (CSV/NPZ/Parquet) to joint trajectories",
        description="Solve each episode as a continuous path (analytic where the arm's family "
        "allows, numerical otherwise), writing joint positions, per-frame success "
        "and FK error in the input's format plus OUTPUT/summary.json. An episode that "
        "cannot be read is listed there with its file, row and field, and the "
        "others are converted (exit 1 at the end; --fail-fast stops at once).",
    )
    add_solve_arguments(p)
    p.add_argument(
        "--json",
        action="store_true",
        help="print the summary as JSON on stdout (SI units; keys carry the unit, "
        "e.g. worst_position_error_m); OUTPUT/summary.json is written either way",
    )
    p.add_argument(
        "--plot",
        action="store_true",
        help="also write OUTPUT/plots/<episode>.png: joint traces and per-frame FK "
        "error (viz extra)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    summary = run_solve(args)
    if args.json:
        from ikstack.cli.common import print_json

        data = summary.to_dict()
        data["worst_position_error_m"] = data.get("worst_position_error")
        data["worst_rotation_error_rad"] = data.get("worst_rotation_error")
        print_json(data)
    else:
        print(summary.text())
    if getattr(args, "plot", False):
        from pathlib import Path

        from ikstack.viz.plots import plot_summary_episodes

        files = plot_summary_episodes(summary.per_episode, Path(summary.output) / "plots")
        if not args.json:
            print(f"{len(files)} plot(s) written to {Path(summary.output) / 'plots'}")
    return 0 if summary.success else 1
