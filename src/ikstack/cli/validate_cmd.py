"""``ikstack validate``: does this model support Jacobian IK on FK-sampled targets?"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "validate", help="the Jacobian-IK model check",
        description="Sample reachable targets by FK from random in-limit joints, solve each from "
                    "the neutral pose with damped least squares on a finite-difference Jacobian "
                    "of the model's own FK, and pass when enough targets are reached. Exit code: "
                    "0 pass, 1 fail, 3 skipped (gripper, no end effector).")
    p.add_argument("model", help="bundled robot name, URDF file, or MJCF file (--engine mujoco)")
    p.add_argument("--engine", choices=("ikstack", "mujoco"), default="ikstack",
                   help="whose kinematics to check (mujoco needs the 'mujoco' extra)")
    p.add_argument("--base", help="URDF base link")
    p.add_argument("--tip", help="URDF tip link")
    p.add_argument("--end-effector", help="MuJoCo site or body of the end effector")
    p.add_argument("--targets", type=int, default=5, help="FK-sampled targets")
    p.add_argument("--iterations", type=int, default=150, help="DLS iterations per target")
    p.add_argument("--damping", type=float, default=0.05, help="DLS damping lambda")
    p.add_argument("--position-tolerance", type=float, default=0.05, help="[m]")
    p.add_argument("--orientation-tolerance-deg", type=float, default=10.0, help="[deg]")
    p.add_argument("--min-pass-rate", type=float, default=0.40)
    p.add_argument("--eps", type=float, default=None,
                   help="finite-difference step [rad] (default 1e-5; 1e-3 for float32 models)")
    p.add_argument("--max-step", type=float, default=None,
                   help="scale every DLS step so no joint moves more than this [rad or m] "
                        "(default: none, plain DLS; reported when set)")
    p.add_argument("--seed", type=int, default=0, help="target sampling seed")
    p.add_argument("--json", metavar="PATH", help="also write the JSON report here ('-': stdout)")
    p.add_argument("--plot", metavar="PNG", help="plot each target's error (viz extra)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def run(args: argparse.Namespace) -> int:
    from ikstack.validate import check_jacobian_ik, format_table, load_backend, progress_bar

    backend = load_backend(args.model, engine=args.engine, base=args.base, tip=args.tip,
                           end_effector=args.end_effector)
    show = not args.no_progress and sys.stderr.isatty() and args.json != "-"
    report = check_jacobian_ik(
        backend, num_targets=args.targets, max_iterations=args.iterations, damping=args.damping,
        position_tolerance=args.position_tolerance,
        orientation_tolerance_deg=args.orientation_tolerance_deg,
        min_pass_rate=args.min_pass_rate, eps=args.eps, seed=args.seed, max_step=args.max_step,
        progress=progress_bar() if show else None)
    if args.json == "-":
        print(report.to_json())
    else:
        print(format_table(report))
        if args.json:
            Path(args.json).write_text(report.to_json(history=True))
            print(f"JSON report written to {args.json}")
    if args.plot:
        from ikstack.validate import plot_errors

        plot_errors(report, args.plot)
    return report.exit_code
