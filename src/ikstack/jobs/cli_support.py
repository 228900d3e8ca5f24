"""Arguments and entry point of ``ikstack solve`` (the CLI registers them; nothing here
imports the CLI).

``ikstack solve --robot NAME|--urdf PATH [--base B --tip T] INPUT -o OUTPUT [--method ...]``
where INPUT is an episode file, a folder of episodes, ``sample:NAME`` (a bundled sample), or
omitted with ``--sample`` (the bundled sample of ``--robot``).
"""

from __future__ import annotations

import argparse
import math
from typing import TYPE_CHECKING, Any

from ikstack.errors import InputError
from ikstack.jobs.options import (
    BACKENDS,
    DEVICES,
    ENGINES,
    METHODS,
    SAMPLE_HOMES,
    SAMPLE_PREFIX,
    add_lerobot_arguments,
)

if TYPE_CHECKING:  # the solvers load in the functions below, not for --help
    from ikstack.jobs.job import SolveSummary
    from ikstack.jobs.path import PathSolverFactory
    from ikstack.jobs.progress import Progress
    from ikstack.model import Chain


def add_solve_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Register the ``solve`` options on ``parser`` (returned for chaining)."""
    arm = parser.add_mutually_exclusive_group()
    arm.add_argument(
        "--robot",
        help="bundled robot name (see `ikstack robots`); default for INPUT sample:NAME: NAME",
    )
    arm.add_argument("--urdf", help="URDF file of the arm")
    arm.add_argument("--mjcf", help="MJCF file of the arm")
    parser.add_argument(
        "--base", help="base link or body of the chain (with --urdf or --mjcf; default: the root)"
    )
    parser.add_argument(
        "--tip",
        help="tip link, body or site of the chain (with --urdf or --mjcf; default: the leaf)",
    )
    parser.add_argument(
        "input",
        nargs="?",
        help="episode file (.csv/.npz/.parquet), folder of episodes, or sample:ROBOT "
        f"(bundled samples: {', '.join(SAMPLE_HOMES)})",
    )
    parser.add_argument(
        "--sample", action="store_true", help="solve the bundled sample episodes of --robot"
    )
    parser.add_argument("-o", "--output", required=True, help="output folder")
    parser.add_argument(
        "--method",
        choices=METHODS,
        default="auto",
        help="auto: analytic where the arm's family allows, numerical otherwise",
    )
    parser.add_argument(
        "--max-joint-step",
        type=float,
        default=None,
        metavar="RAD",
        help="largest joint change between consecutive frames [rad; deg with --deg]",
    )
    parser.add_argument("--deg", action="store_true", help="--max-joint-step in degrees")
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="local",
        help="local process pool or a Ray cluster (extra 'ray')",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="local processes or local Ray CPUs (default: all cores)",
    )
    parser.add_argument(
        "--ray-address",
        default=None,
        help="Ray cluster to join (default: start a local Ray runtime)",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="solve episodes again even if their output exists"
    )
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="numpy",
        help="kinematics backend (warp needs the 'warp' extra)",
    )
    parser.add_argument(
        "--device", choices=DEVICES, default="cpu", help="device of the warp backend"
    )
    parser.add_argument(
        "--fail-fast",
        action="store_true",
        help="stop at the first episode that cannot be converted (default: "
        "convert the others, list it in summary.json, exit 1 at the end)",
    )
    parser.add_argument(
        "--min-success",
        type=float,
        default=1.0,
        metavar="RATE",
        help="exit 1 when the share of solved frames is below RATE, in [0, 1] "
        "(default 1: every frame)",
    )
    parser.add_argument(
        "--force-robot",
        action="store_true",
        help="solve a bundled sample with another robot than the one it was made for",
    )
    add_lerobot_arguments(parser)
    return parser


def sample_robot(options: Any) -> str | None:
    """The robot a bundled sample INPUT (``sample:NAME``) was made for, or None."""
    given = getattr(options, "input", None)
    if isinstance(given, str) and given.startswith(SAMPLE_PREFIX):
        return given[len(SAMPLE_PREFIX) :]
    return None


def chain_from_options(options: Any) -> Chain:
    """The chain named by ``--robot`` or ``--urdf|--mjcf`` with ``--base/--tip``; for
    ``sample:NAME`` the sample's robot, and another model only with ``--force-robot``."""
    from ikstack.jobs.samples import sample_path
    from ikstack.model import load_mjcf, load_urdf
    from ikstack.robots import load

    robot = getattr(options, "robot", None)
    urdf = getattr(options, "urdf", None)
    mjcf = getattr(options, "mjcf", None)
    base = getattr(options, "base", None)
    tip = getattr(options, "tip", None)
    made_for = sample_robot(options)
    if made_for is not None:
        sample_path(made_for)  # an unknown sample is named as such
    if made_for is not None and not getattr(options, "force_robot", False):
        if robot is None and urdf is None and mjcf is None:
            robot = made_for
        elif robot != made_for:
            chosen = (
                f"--robot {robot}"
                if robot is not None
                else f"--urdf {urdf}"
                if urdf is not None
                else f"--mjcf {mjcf}"
            )
            raise InputError(
                f"sample:{made_for} holds poses of {made_for}, not of {chosen}; "
                f"drop {chosen.split()[0]} to solve it with {made_for}, or add "
                "--force-robot to solve it anyway"
            )
    if sum(x is not None for x in (robot, urdf, mjcf)) != 1:
        raise InputError("give exactly one of --robot NAME or --urdf PATH or --mjcf PATH")
    if robot is not None:
        if base is not None or tip is not None:
            raise InputError(
                "--base/--tip go with --urdf or --mjcf; a bundled robot has its own chain"
            )
        return load(robot)
    if mjcf is not None:
        return load_mjcf(str(mjcf), base, tip)
    return load_urdf(str(urdf), base, tip)


def input_from_options(options: Any) -> str:
    """The input path: ``--sample``, ``sample:NAME`` or the INPUT argument."""
    from ikstack.jobs.samples import resolve_input, sample_path

    given = getattr(options, "input", None)
    if getattr(options, "sample", False):
        if given is not None:
            raise InputError("give either INPUT or --sample, not both")
        robot = getattr(options, "robot", None)
        if robot is None:
            raise InputError(
                f"--sample needs --robot (samples exist for {', '.join(SAMPLE_HOMES)})"
            )
        return str(sample_path(robot))
    if given is None:
        raise InputError("give an INPUT episode file or folder (or --sample)")
    return resolve_input(str(given))


def run_solve(
    options: Any,
    progress: Progress | None = None,
    path_solver_factory: PathSolverFactory | None = None,
) -> SolveSummary:
    """Run ``ikstack solve`` from parsed options (an argparse namespace or any object with
    the same attributes); returns the summary, also written to ``OUTPUT/summary.json``.

    ``path_solver_factory`` replaces the library's solvers (see :class:`SolveConfig`)."""
    min_success = float(getattr(options, "min_success", 1.0))
    if not 0.0 <= min_success <= 1.0:
        raise InputError(f"--min-success must be a share of frames in [0, 1]; got {min_success}")
    from ikstack.jobs.convert import SolveConfig
    from ikstack.jobs.job import run_job
    from ikstack.jobs.lerobot import is_lerobot_dataset, run_lerobot_from_options

    chain = chain_from_options(options)
    max_joint_step = getattr(options, "max_joint_step", None)
    if max_joint_step is not None and getattr(options, "deg", False):
        max_joint_step = math.radians(max_joint_step)
    config = SolveConfig(
        chain,
        method=getattr(options, "method", "auto"),
        max_joint_step=max_joint_step,
        backend=getattr(options, "backend", "numpy"),
        device=getattr(options, "device", "cpu"),
        path_solver_factory=path_solver_factory,
        fail_fast=bool(getattr(options, "fail_fast", False)),
    )
    input_path = input_from_options(options)
    if is_lerobot_dataset(input_path) or getattr(options, "pose_columns", None):
        return run_lerobot_from_options(input_path, options, config, progress)
    return run_job(
        input_path,
        options.output,
        config,
        engine=getattr(options, "engine", "local"),
        workers=getattr(options, "workers", None),
        ray_address=getattr(options, "ray_address", None),
        overwrite=bool(getattr(options, "overwrite", False)),
        progress=progress,
        min_success=min_success,
    )
