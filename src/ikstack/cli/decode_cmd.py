"""``ikstack decode``: decode a Cartesian action chunk into joint knots with a profile."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ikstack.cli.common import add_json_flag, print_json


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "decode",
        help="decode an action chunk into joint knots",
        description="Decode a chunk (.npz with T_base_tcp_<arm> (H, 4, 4) and q_observed_<arm> "
        "(dof,) per arm, optional t0) with an embodiment profile; the whole chunk is "
        "accepted or rejected. Writes <out>.npz (times, ok, q_<arm>) and <out>.json.",
    )
    p.add_argument("chunk", help="chunk .npz file")
    p.add_argument(
        "--profile",
        required=True,
        help="profile YAML file, or the name of a bundled profile "
        "(marvin_bimanual, marvin_bimanual_diff)",
    )
    p.add_argument(
        "-o",
        "--output",
        "--out",
        dest="out",
        metavar="OUTPUT",
        help="where the output goes: the prefix of OUTPUT.npz and OUTPUT.json "
        "(default: the chunk path without .npz, plus '.decoded'; --out is the "
        "previous spelling)",
    )
    add_json_flag(p, "the summary")
    return p


def lag_lines(summary: dict[str, Any]) -> list[str]:
    """One line per diff-decoded arm: its worst lag residuals and how many substeps exceeded
    the lag guard (under ``lag_policy: report`` these are kept, so an accepted chunk may lag)."""
    out = []
    for arm, lag in (summary.get("metadata", {}).get("diff_ik_lag") or {}).items():
        deg = lag.get("worst_euler_deg")
        n, steps = lag.get("exceedances", 0), lag.get("steps", 0)
        flag = "  LAG" if n else ""
        out.append(
            f"  arm {arm}: worst residual {lag.get('worst_position_mm', 0.0):.3f} mm"
            + (f", {deg:.3f} deg" if deg is not None else "")
            + f"; {n} of {steps} substeps over the lag guard{flag}"
        )
    return out


def run(args: argparse.Namespace) -> int:
    from ikstack.chunk import bundled_profile_path, decode_file

    prof = Path(args.profile)
    if not prof.exists() and prof.suffix not in (".yaml", ".yml"):
        prof = bundled_profile_path(args.profile)
    chunk = Path(args.chunk)
    out = Path(args.out) if args.out else chunk.with_name(chunk.stem + ".decoded")
    summary = decode_file(prof, chunk, out)
    if args.json:
        print_json(summary)
    else:
        status = "accepted" if summary["success"] else "REJECTED"
        print(
            f"chunk {chunk.name}: {status}, horizon {summary['horizon']} knots "
            f"(profile {summary.get('profile_name')})"
        )
        rej = summary.get("rejection")
        if rej:
            print(
                f"  rejected: arm {rej['arm']}, knot {rej['knot']}, reason {rej['status']}: "
                f"{rej['message']}"
            )
        for f in summary.get("failures", [])[:10]:
            print(
                f"  failure: arm {f['arm']} knot {f['knot']} substep {f['substep']}: {f['status']}"
            )
        for line in lag_lines(summary):
            print(line)
        print(f"  wrote {summary['outputs']['npz']} and {summary['outputs']['json']}")
    return 0 if summary["success"] else 1
