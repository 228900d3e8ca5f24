"""``ikstack servo-demo``: run the servo kernel to a pose target and print a trace."""

from __future__ import annotations

import argparse
import threading
import time
from typing import TYPE_CHECKING, Any

from ikstack.cli.common import (
    add_chain_arguments,
    add_deg_flag,
    add_json_flag,
    angles_in,
    chain_from_args,
    check_numbers,
    print_json,
)
from ikstack.cli.view_cmd import add_view_arguments, serve
from ikstack.vocabulary import VELOCITY_SOLVERS

if TYPE_CHECKING:
    import numpy as np


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "servo-demo",
        help="servo a robot to a target and print the trace",
        description="Run the real-time servo kernel from a regular (non-singular) "
        "configuration near the middle of the limits to a target (by "
        "default the FK of that configuration offset by --offset rad "
        "on every joint) and print a trace. Exit code 0 when the "
        "servo ends holding at the target, 1 when it does not.",
    )
    add_chain_arguments(p)
    p.add_argument(
        "--target-q", nargs="+", type=float, help="target configuration [rad or m; deg with --deg]"
    )
    p.add_argument(
        "--offset",
        type=float,
        default=None,
        help="default target: middle of the limits plus this on every joint [rad; "
        "deg with --deg] (default 0.3 rad)",
    )
    add_deg_flag(p, "--target-q and --offset")
    p.add_argument("--solver", choices=VELOCITY_SOLVERS, default="dls")
    p.add_argument("--steps", type=int, default=400, help="cycles to run")
    p.add_argument("--dt", type=float, default=0.01, help="cycle time [s]")
    p.add_argument("--every", type=int, default=20, help="print every N-th cycle")
    p.add_argument("--plot", metavar="PNG", help="save a plot (needs the viz extra)")
    add_json_flag(p, "the trace")
    p.add_argument(
        "--view",
        action="store_true",
        help="animate the servo live in the browser viewer (needs the viz extra)",
    )
    add_view_arguments(p)
    p.add_argument(
        "--wait",
        type=float,
        default=60.0,
        metavar="S",
        help="with --view: wait this long for a browser before starting",
    )
    return p


def run(args: argparse.Namespace) -> int:
    check_numbers(
        args, positive=("dt",), finite=("offset", "target_q"), at_least_one=("steps", "every")
    )
    import numpy as np

    from ikstack.servo import Action, ServoStatus
    from ikstack.servo.demo import plot_trace, regular_start, run_demo

    chain = chain_from_args(args)
    offset = (
        0.3
        if args.offset is None
        else (float(np.radians(args.offset)) if args.deg else args.offset)
    )
    tq = None
    if args.target_q is not None:  # checked before anything computes (or compiles)
        tq = angles_in(args.target_q, args, chain, "--target-q")
    start = regular_start(chain, offset if tq is None else 0.0)
    if tq is None:
        tq = chain.clip(start + offset)
    viewer = None
    if args.view:
        from ikstack.viz import Viewer

        viewer = Viewer(chain, host=args.host, port=args.port, method="numerical")
        viewer.show_target(chain.fk(tq))
        print(f"viewer at {viewer.url}: waiting up to {args.wait:g} s for a browser", flush=True)
        viewer.wait_for_client(args.wait)
    trace = run_demo(
        chain,
        chain.fk(tq),
        steps=args.steps,
        solver_name=args.solver,
        dt=args.dt,
        q0=start,
        on_cycle=None if viewer is None else lambda k, q: animate(viewer, q, args.dt),
    )
    if args.plot:
        plot_trace(trace, args.plot, joint_names=chain.joint_names)
    final = Action(int(trace.action[-1])).name
    reached = final == "HOLD" and ServoStatus.GOAL_REACHED in ServoStatus(int(trace.status[-1]))
    if args.json:
        # SI with unit-suffixed keys; position_error and orientation_error (m, rad) are the
        # previous release's names, and orientation_error_rad the same as rotation_error_rad
        # (the library's word), kept one release
        print_json(
            {
                "robot": chain.name,
                "solver": args.solver,
                "t": trace.t,
                "t_s": trace.t,
                "q": trace.q,
                "dq": trace.dq,
                "position_error_m": trace.position_error,
                "rotation_error_rad": trace.rotation_error,
                "orientation_error_rad": trace.rotation_error,
                "position_error": trace.position_error,
                "orientation_error": trace.rotation_error,
                "action": [Action(int(a)).name for a in trace.action],
                "status": trace.status,
                "final_action": final,
                "messages": list(trace.messages),
                "reached": reached,
            }
        )
        return 0 if reached else 1
    print(f"{chain.name}: servo with {args.solver}, dt {args.dt} s, {args.steps} cycles")
    print(
        f"{'t [s]':>7} {'action':<7} {'pos err [mm]':>12} {'rot err [deg]':>13} "
        f"{'max |dq| [deg/s]':>16} {'cond':>8}  status"
    )
    dq_shown = np.where(chain.is_revolute, np.degrees(trace.dq), trace.dq * 1e3)  # mm/s
    for i in range(0, len(trace.t), max(1, args.every)):
        flags = ServoStatus(int(trace.status[i]))
        names = "|".join(f.name or "" for f in ServoStatus if f and f in flags) or "-"
        print(
            f"{trace.t[i]:7.2f} {Action(int(trace.action[i])).name:<7} "
            f"{trace.position_error[i] * 1e3:12.3e} {np.degrees(trace.rotation_error[i]):13.3e} "
            f"{np.abs(dq_shown[i]).max():16.3f} {trace.condition_number[i]:8.1f}  {names}"
        )
    print(
        f"final: {final}, position error {trace.position_error[-1] * 1e3:.2e} mm, "
        f"rotation error {np.degrees(trace.rotation_error[-1]):.2e} deg"
    )
    if args.plot:
        print(f"plot written to {args.plot}")
    if viewer is not None:
        stop = threading.Event()
        legs = threading.Thread(
            target=_shuttle, args=(viewer, chain, tq, trace.q[-1], args, stop), daemon=True
        )
        legs.start()
        try:
            serve(viewer, args.duration, args.once)
        finally:
            stop.set()
            legs.join(10)
    if not reached:
        print(f"target not reached in {args.steps} cycles (final action {final})")
    return 0 if reached else 1


def animate(viewer: Any, q: np.ndarray, dt: float, stop: threading.Event | None = None) -> None:
    """Draw one servo cycle and wait its period, so the browser shows it in real time."""
    if stop is not None and stop.is_set():
        return
    viewer.status = "servo running"
    viewer.set_q(q, move_target=False)
    time.sleep(dt)


def _shuttle(
    viewer: Any,
    chain: Any,
    tq: np.ndarray,
    q: np.ndarray,
    args: argparse.Namespace,
    stop: threading.Event,
) -> None:
    """Keep the live view moving: servo back to the start, then to the target, and so on."""
    from ikstack.servo.demo import regular_start, run_demo

    goals = [regular_start(chain, 0.0), tq]
    k = 0
    while not stop.is_set():
        goal = goals[k % 2]
        viewer.show_target(chain.fk(goal))
        tr = run_demo(
            chain,
            chain.fk(goal),
            steps=args.steps,
            solver_name=args.solver,
            q0=q,
            dt=args.dt,
            on_cycle=lambda _i, qi: animate(viewer, qi, args.dt, stop),
        )
        q = tr.q[-1]
        k += 1
