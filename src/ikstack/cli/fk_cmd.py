"""``ikstack fk``: forward kinematics of one configuration."""

from __future__ import annotations

import argparse
import math

from ikstack.cli.common import (
    add_chain_arguments,
    add_deg_flag,
    add_json_flag,
    angles_in,
    chain_from_args,
    check_numbers,
    joints_text,
    print_json,
)


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "fk",
        help="forward kinematics of a configuration",
        description="Pose of the TCP (or tip) for joint positions q.",
    )
    add_chain_arguments(p)
    p.add_argument(
        "--q",
        nargs="+",
        type=float,
        metavar="Q",
        help="joint positions [rad or m; deg with --deg]; default: middle of the limits",
    )
    add_deg_flag(p, "--q")
    add_json_flag(p, "the pose")
    return p


def run(args: argparse.Namespace) -> int:
    check_numbers(args, finite=("q",))
    import numpy as np

    from ikstack.kinematics import fk_jacobian
    from ikstack.spatial import matrix_to_euler_xyz, to_pose

    chain = chain_from_args(args)
    if args.q is None:
        q = chain.middle()
    else:
        q = angles_in(args.q, args, chain, "--q")
    T, J = fk_jacobian(chain, q)
    p, quat = to_pose(T)
    sv = np.linalg.svd(J, compute_uv=False)
    cond = float(sv[0] / sv[-1]) if sv[-1] > 0 else math.inf
    within = bool(chain.within_limits(q))
    if args.json:
        # SI, unit-suffixed keys; q in rad or m; "position" is the previous release's name
        print_json(
            {
                "robot": chain.name,
                "frame": chain.tcp_frame,
                "base": chain.base,
                "q": q,
                "T_base_tcp": T,
                "position_m": p,
                "position": p,
                "quat_wxyz": quat,
                "jacobian_condition": cond,
                "within_limits": within,
            }
        )
        return 0
    eul = np.degrees(matrix_to_euler_xyz(T[:3, :3]))
    print(f"{chain.name}: {chain.base} -> {chain.tcp_frame}")
    print(f"  q          = {joints_text(chain, q)}" + ("" if within else "  (OUTSIDE LIMITS)"))
    print(f"  position   = [{p[0] * 1e3:.3f}, {p[1] * 1e3:.3f}, {p[2] * 1e3:.3f}] mm")
    print(f"  quat wxyz  = [{', '.join(f'{v:.6f}' for v in quat)}]")
    print(f"  euler xyz  = [{', '.join(f'{v:.3f}' for v in eul)}] deg")
    print(f"  Jacobian condition number: {cond:.3g}")
    print("  T_base_tcp (translation in m) =")
    for row in T:
        print("    [" + ", ".join(f"{v:+.6f}" for v in row) + "]")
    return 0
