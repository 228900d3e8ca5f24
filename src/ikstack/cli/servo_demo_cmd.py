"""``ikstack servo-demo``: run the servo kernel to a pose target and print a trace."""

from __future__ import annotations

import argparse

from ikstack.cli.common import add_chain_arguments, chain_from_args, print_json
from ikstack.errors import InputError


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("servo-demo", help="servo a robot to a target and print the trace",
                       description="Run the real-time servo kernel from a regular (non-singular) "
                                   "configuration near the middle of the limits to a target (by "
                                   "default the FK of that configuration offset by --offset rad "
                                   "on every joint) and print a trace. Exit code 0 when the "
                                   "servo ends holding at the target, 1 when it does not.")
    add_chain_arguments(p)
    p.add_argument("--target-q", nargs="+", type=float, help="target configuration [rad]")
    p.add_argument("--offset", type=float, default=0.3,
                   help="default target: middle of the limits plus this on every joint [rad]")
    p.add_argument("--solver", choices=("dls", "box_qp"), default="dls")
    p.add_argument("--steps", type=int, default=400, help="cycles to run")
    p.add_argument("--dt", type=float, default=0.01, help="cycle time [s]")
    p.add_argument("--every", type=int, default=20, help="print every N-th cycle")
    p.add_argument("--plot", metavar="PNG", help="save a plot (needs the viz extra)")
    p.add_argument("--json", action="store_true", help="machine-readable trace")
    return p


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from ikstack.servo import Action, ServoStatus
    from ikstack.servo.demo import plot_trace, regular_start, run_demo

    chain = chain_from_args(args)
    start = regular_start(chain, args.offset if args.target_q is None else 0.0)
    if args.target_q is not None:
        tq = np.array(args.target_q, dtype=float)
        if tq.shape != (chain.dof,):
            raise InputError(f"--target-q has {tq.size} values; the chain has {chain.dof} joints")
    else:
        tq = chain.clip(start + args.offset)
    trace = run_demo(chain, chain.fk(tq), steps=args.steps, solver_name=args.solver, dt=args.dt,
                     q0=start)
    if args.plot:
        plot_trace(trace, args.plot)
    final = Action(int(trace.action[-1])).name
    reached = final == "HOLD" and ServoStatus.GOAL_REACHED in ServoStatus(int(trace.status[-1]))
    if args.json:
        print_json({"robot": chain.name, "solver": args.solver, "t": trace.t, "q": trace.q,
                    "dq": trace.dq, "position_error": trace.position_error,
                    "orientation_error": trace.orientation_error,
                    "action": [Action(int(a)).name for a in trace.action],
                    "status": trace.status, "final_action": final,
                    "messages": list(trace.messages), "reached": reached})
        return 0 if reached else 1
    print(f"{chain.name}: servo with {args.solver}, dt {args.dt} s, {args.steps} cycles")
    print(f"{'t [s]':>7} {'action':<7} {'pos err [m]':>12} {'rot err [rad]':>13} "
          f"{'max |dq|':>9} {'cond':>8}  status")
    for i in range(0, len(trace.t), max(1, args.every)):
        flags = ServoStatus(int(trace.status[i]))
        names = "|".join(f.name or "" for f in ServoStatus if f and f in flags) or "-"
        print(f"{trace.t[i]:7.2f} {Action(int(trace.action[i])).name:<7} "
              f"{trace.position_error[i]:12.3e} {trace.orientation_error[i]:13.3e} "
              f"{np.abs(trace.dq[i]).max():9.4f} {trace.condition_number[i]:8.1f}  {names}")
    print(f"final: {final}, position error {trace.position_error[-1]:.2e} m, "
          f"rotation error {trace.orientation_error[-1]:.2e} rad")
    if args.plot:
        print(f"plot written to {args.plot}")
    if not reached:
        print(f"target not reached in {args.steps} cycles (final action {final})")
    return 0 if reached else 1
