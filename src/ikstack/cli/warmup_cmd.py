"""``ikstack warmup``: compile (or load from the cache) the kernels a robot's paths use.

For container images and CI: run it once after installing, and the first real run of each
path starts in about a second. Each path runs a tiny call on the robot: kinematics (one pose
and a batch), ``solve_ik`` (one pose and a batch), the continuous-path solver of ``ikstack
solve``, and one servo step with each built-in solver.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from ikstack.cli.common import add_chain_arguments, add_json_flag, chain_from_args, model_given
from ikstack.errors import InputError


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "warmup",
        help="compile the kernels ahead of the first run (images, CI)",
        description="Compile the kernels of a robot's paths (kinematics, solve_ik, the path "
        "solver of `ikstack solve`, one servo step) so that later runs load them "
        "from numba's cache. Default robot: ur5.",
    )
    add_chain_arguments(p)
    p.add_argument("--all", action="store_true", help="every bundled arm (not with a model)")
    p.add_argument("--no-servo", action="store_true", help="skip the servo paths")
    add_json_flag(p, "the time of each path")
    return p


def warmup_steps(chain: Any, servo: bool = True) -> list[tuple[str, Callable[[], object]]]:
    """The warm-up calls for ``chain``: ``(label, thunk)`` in order."""
    import numpy as np

    import ikstack
    from ikstack.jobs.path import library_path_solver

    rng = np.random.default_rng(0)
    q = chain.random_q(rng, 8)
    T = ikstack.fk(chain, q)
    steps: list[tuple[str, Callable[[], object]]] = [
        (
            "kinematics",
            lambda: (
                ikstack.fk(chain, q[0]),
                ikstack.jacobian(chain, q[0]),
                ikstack.jacobian(chain, q),
            ),
        ),
        ("solve_ik, one pose", lambda: ikstack.solve_ik(chain, T[:1])),
        ("solve_ik, batch", lambda: ikstack.solve_ik(chain, T)),
        ("path solver (ikstack solve)", lambda: library_path_solver(chain)(T[:4], q[0])),
    ]
    if servo:
        steps.append(("servo step (DLS, BoxQP)", lambda: _servo_steps(chain, q[0])))
    return steps


def _servo_steps(chain: Any, q: Any) -> None:
    import numpy as np

    from ikstack.diffik import BoxQPSolver, DLSVelocitySolver
    from ikstack.servo import JointState, PoseCommand, Servo, ServoConfig

    acc = np.where(
        np.isfinite(chain.acceleration_limits),
        chain.acceleration_limits,
        10.0 * np.where(np.isfinite(chain.velocity_limits), chain.velocity_limits, 1.0),
    )
    arm = chain.with_limits(acceleration=acc)
    q = arm.clip(q)
    target = arm.fk(q)
    for solver in (DLSVelocitySolver(), BoxQPSolver()):
        servo = Servo(arm, ServoConfig(), differential_ik=solver)
        servo.step(JointState(q, np.zeros(chain.dof), 0), PoseCommand(target, 0), 0.01, 0)


def run(args: argparse.Namespace) -> int:
    from ikstack import robots
    from ikstack.model import ChainRole

    if args.all and model_given(args):
        raise InputError("--all warms every bundled arm; give it without --robot, --urdf or --mjcf")
    if args.all:
        chains = [robots.load(name) for name in robots.names()]
    elif model_given(args):
        chains = [chain_from_args(args)]
    else:
        chains = [robots.load("ur5")]
    rows: list[dict[str, Any]] = []
    for chain in chains:
        name = chain.name
        if chain.role != ChainRole.ARM:
            rows.append({"robot": name, "path": None, "skipped": chain.role.value})
            if not args.json:
                print(f"{name}: skipped ({chain.role.value}, not an arm)")
            continue
        for label, thunk in warmup_steps(chain, servo=not args.no_servo):
            t0 = time.perf_counter()
            thunk()
            rows.append({"robot": name, "path": label, "seconds_s": time.perf_counter() - t0})
            if not args.json:
                print(f"{name}: {label} ready in {rows[-1]['seconds_s']:.1f} s", flush=True)
    if args.json:
        from ikstack.cli.common import print_json

        print_json(rows)
    return 0
