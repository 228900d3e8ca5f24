"""``ikstack validate``: does this model support Jacobian IK on FK-sampled targets?"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ikstack.cli.common import add_chain_arguments, add_old_flag, model_given, resolve_old_flag
from ikstack.errors import InputError
from ikstack.vocabulary import FK_KINEMATICS

#: what ``--kinematics`` may name (``--engine`` is its deprecated spelling)
KINEMATICS = FK_KINEMATICS


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "validate",
        help="the Jacobian-IK model check",
        description="Sample reachable targets by FK from random in-limit joints, solve each from "
        "the neutral pose with damped least squares on a finite-difference Jacobian "
        "of the model's own FK, and pass when enough targets are reached. Exit code: "
        "0 pass, 1 fail, 3 skipped (gripper, no end effector).",
    )
    p.add_argument(
        "model",
        nargs="?",
        help="bundled robot name or model file (the same as --robot, --urdf or --mjcf)",
    )
    add_chain_arguments(p)
    p.add_argument(
        "--kinematics",
        choices=KINEMATICS,
        default=None,
        help="whose kinematics to check: ikstack (default) or mujoco (the 'mujoco' "
        "extra; the default for --mjcf)",
    )
    p.add_argument(
        "--engine",
        choices=KINEMATICS,
        default=None,
        dest="old_engine",
        help="deprecated spelling of --kinematics (--engine means local/ray in `ikstack solve`)",
    )
    p.add_argument("--end-effector", help="MuJoCo site or body of the end effector")
    p.add_argument("--targets", type=int, default=5, help="FK-sampled targets")
    p.add_argument("--iterations", type=int, default=150, help="DLS iterations per target")
    p.add_argument("--damping", type=float, default=0.05, help="DLS damping lambda")
    p.add_argument("--position-tolerance", type=float, default=0.05, help="[m]")
    p.add_argument(
        "--rotation-tolerance-deg",
        "--orientation-tolerance-deg",
        type=float,
        dest="orientation_tolerance_deg",
        default=10.0,
        help="[deg] (--orientation-tolerance-deg: its former name)",
    )
    p.add_argument("--min-pass-rate", type=float, default=0.40)
    p.add_argument(
        "--eps",
        type=float,
        default=None,
        help="finite-difference step [rad] (default 1e-5; 1e-3 for float32 models)",
    )
    p.add_argument(
        "--max-step",
        type=float,
        default=None,
        help="scale every DLS step so no joint moves more than this [rad or m] "
        "(default: none, plain DLS; reported when set)",
    )
    p.add_argument(
        "--rng",
        type=int,
        default=None,
        help="random seed of the target sampling (default 0; --seed: its former name, deprecated)",
    )
    add_old_flag(p, "--seed", "--rng", type=int)
    p.add_argument(
        "--json",
        nargs="?",
        const=True,
        default=False,
        metavar="PATH",
        help="print the report as JSON on stdout (SI units; keys carry the unit). "
        "Deprecated: --json PATH (use --json-out PATH) and --json - (use --json)",
    )
    p.add_argument(
        "--json-out",
        metavar="PATH",
        help="also write the JSON report with each target's history to PATH",
    )
    p.add_argument("--plot", metavar="PNG", help="plot each target's error (viz extra)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def run(args: argparse.Namespace) -> int:
    from ikstack.validate import check_jacobian_ik, format_table, load_fk_model, progress_bar

    _old_json(args)
    resolve_old_flag(args, "validate", "--seed", "--rng", default=0)
    model, kinematics = _model(args)
    fk_model = load_fk_model(
        model, kinematics=kinematics, base=args.base, tip=args.tip, end_effector=args.end_effector
    )
    show = not args.no_progress and sys.stderr.isatty() and not args.json
    report = check_jacobian_ik(
        fk_model,
        num_targets=args.targets,
        max_iterations=args.iterations,
        damping=args.damping,
        position_tolerance=args.position_tolerance,
        rotation_tolerance_deg=args.orientation_tolerance_deg,
        min_pass_rate=args.min_pass_rate,
        eps=args.eps,
        rng=args.rng,
        max_step=args.max_step,
        progress=progress_bar() if show else None,
    )
    if args.json_out:
        Path(args.json_out).write_text(report.to_json(history=True))
    if args.json:
        print(report.to_json())
    else:
        print(format_table(report))
        if args.json_out:
            print(f"JSON report written to {args.json_out}")
    if args.plot:
        from ikstack.validate import plot_errors

        plot_errors(report, args.plot)
    return report.exit_code


def _model(args: argparse.Namespace) -> tuple[str, str]:
    """The model to check and whose kinematics: the positional MODEL or one of --robot,
    --urdf, --mjcf (an MJCF file is checked with MuJoCo unless --kinematics says otherwise)."""
    given = model_given(args)
    if args.model and given:
        raise InputError(f"give the model once: MODEL ({args.model}) or --{given[0]}, not both")
    if len(given) > 1:
        raise InputError(
            f"give one of --robot, --urdf or --mjcf; got {', '.join('--' + g for g in given)}"
        )
    if args.old_engine is not None:
        if args.kinematics is not None and args.kinematics != args.old_engine:
            raise InputError(
                f"--engine {args.old_engine} and --kinematics {args.kinematics} "
                "disagree; give --kinematics only"
            )
        print(
            "ikstack validate: note: --engine is deprecated here; use --kinematics "
            f"{args.old_engine}",
            file=sys.stderr,
        )
    kinematics = args.kinematics or args.old_engine
    if args.model:
        return args.model, kinematics or "ikstack"
    if not given:
        raise InputError("choose a model: MODEL, --robot NAME, --urdf FILE or --mjcf FILE")
    if given[0] == "robot" and (args.base or args.tip):
        raise InputError("--base/--tip go with --urdf or --mjcf; a bundled robot has its own chain")
    default = "mujoco" if given[0] == "mjcf" else "ikstack"
    return str(getattr(args, given[0])), kinematics or default


def _old_json(args: argparse.Namespace) -> None:
    """The previous release's ``--json PATH`` (``-``: stdout), with a note on stderr:
    ``--json`` is now a flag and ``--json-out PATH`` writes the file."""
    if not isinstance(args.json, str):
        return
    value = args.json
    if args.model is None and not model_given(args) and value != "-":
        args.model, args.json = value, True  # `validate --json MODEL`: the flag, then the model
        return
    if value == "-":
        args.json = True
        print(
            "ikstack validate: note: --json - is deprecated; --json alone prints the report",
            file=sys.stderr,
        )
        return
    if args.json_out is not None:
        raise InputError(f"--json {value} and --json-out {args.json_out}: give --json-out only")
    args.json, args.json_out = False, value
    print(
        f"ikstack validate: note: --json PATH is deprecated; use --json-out {value}",
        file=sys.stderr,
    )
