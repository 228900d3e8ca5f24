"""``ikstack robots``: the bundled models."""

from __future__ import annotations

import argparse
import math
from typing import Any

from ikstack.cli.common import print_json


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "robots",
        help="list the bundled robot models",
        description="List the bundled robot models: dof, family, limits, source.",
    )
    p.add_argument("name", nargs="?", help="show one model in detail")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    return p


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ikstack import robots

    if args.name:
        chain = robots.load(args.name)
        spec = robots.info(args.name)
        if args.json:
            print_json(
                {
                    "name": args.name,
                    "dof": chain.dof,
                    "joints": chain.joint_names,
                    "lower": chain.lower,
                    "upper": chain.upper,
                    "velocity_limits": chain.velocity_limits,
                    "family_hint": spec.family_hint,
                    "provenance": spec.provenance,
                }
            )
        else:
            print(chain.describe())
            print(f"  family: {spec.family_hint}")
            print(f"  provenance: {spec.provenance}")
        return 0
    rows: list[dict[str, Any]] = []
    for name in robots.names():
        spec = robots.info(name)
        chain = robots.load(name)
        span = np.where(chain.bounded, chain.upper - chain.lower, np.inf)
        rows.append(
            {
                "name": name,
                "dof": chain.dof,
                "role": chain.role.value,
                "family_hint": spec.family_hint,
                "min_range_deg": float(np.degrees(span[chain.is_revolute].min()))
                if chain.is_revolute.any()
                else None,
                "tcp": chain.tcp_frame,
                "summary": spec.summary,
            }
        )
    if args.json:
        print_json(rows)
        return 0
    print(f"{'name':<20} {'dof':>3}  {'role':<7} {'family':<46} {'min range':>10}  tcp")
    for r in rows:
        mr = r["min_range_deg"]
        mrs = "-" if mr is None else ("inf" if math.isinf(mr) else f"{mr:.0f} deg")
        print(
            f"{r['name']:<20} {r['dof']:>3}  {r['role']:<7} {r['family_hint']:<46} "
            f"{mrs:>10}  {r['tcp']}"
        )
    return 0
