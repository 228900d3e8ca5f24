"""``ikstack ik``: inverse kinematics of one pose, every solution or the nearest to a joint
guess (``--q0``)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ikstack.cli.common import (
    add_chain_arguments,
    add_deg_flag,
    add_json_flag,
    add_old_flag,
    angles_in,
    chain_from_args,
    check_numbers,
    joints_text,
    print_json,
    resolve_old_flag,
)
from ikstack.errors import InputError, UnsupportedGeometryError
from ikstack.vocabulary import METHODS

if TYPE_CHECKING:
    import numpy as np

    from ikstack.ik import IKResult
    from ikstack.model import Chain


#: rows ``ik --all`` prints before summarising (``--every-row`` prints them all)
SHOWN = 8


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "ik",
        help="inverse kinematics of a pose",
        description="Joint solutions reaching a TCP pose, each certified by FK.",
    )
    add_chain_arguments(p)
    p.add_argument(
        "--pose",
        nargs=7,
        type=float,
        required=True,
        metavar=("X", "Y", "Z", "QW", "QX", "QY", "QZ"),
        help="target position [m] and quaternion (w, x, y, z) in the base frame",
    )
    p.add_argument(
        "--q0",
        nargs="+",
        type=float,
        help="joint guess: the solution nearest to it is returned [rad or m; deg with --deg]; "
        "default mid-limits (--seed: its former name, deprecated)",
    )
    add_old_flag(p, "--seed", "--q0", nargs="+", type=float)
    add_deg_flag(p, "--q0")
    p.add_argument(
        "--method",
        default="auto",
        help="auto (analytic where the family allows, else numerical), "
        + ", ".join(m for m in METHODS if m != "auto"),
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="the whole valid solution set (analytic: closed form, or the algebraic "
        "general mode for 6R/7R arms without one), summarised with the first "
        f"{SHOWN} rows; --json lists every solution",
    )
    p.add_argument(
        "--every-row", action="store_true", help="with --all: print every solution, not the summary"
    )
    add_json_flag(p)
    return p


def _solve_all(chain: Chain, T: np.ndarray, q0: np.ndarray | None) -> IKResult:
    """Every analytic solution: of the closed-form family, or of the algebraic mode (general 6R
    elimination, locked-joint 7R) for revolute 6R/7R chains no closed form covers."""
    from ikstack.ik.analytic import AnalyticIK, classify

    c = classify(chain)
    mode = c.suggested_mode
    if mode is None:
        raise UnsupportedGeometryError(
            f"--all lists the analytic solution set, and no analytic mode covers "
            f"{chain.name or 'this chain'}: {c.reason}"
        )
    solver = AnalyticIK(chain, mode=mode)
    return solver.solve(T[None], q0=q0, return_all=True)


def pose_target(pose: list[float]) -> np.ndarray:
    """``--pose X Y Z QW QX QY QZ`` as a transform; a quaternion that is not unit length is
    normalised with a note on stderr, a zero one is refused."""
    import numpy as np

    from ikstack.spatial import from_pose

    quat = np.array(pose[3:], dtype=float)
    norm = float(np.linalg.norm(quat))
    if norm < 1e-9:
        raise InputError("--pose quaternion (QW QX QY QZ) is zero; give a rotation, e.g. 1 0 0 0")
    if abs(norm - 1.0) > 1e-9:
        shown = " ".join(f"{v:g}" for v in quat)
        print(
            f"ikstack ik: note: --pose quaternion ({shown}) has norm {norm:.9g}; normalised "
            "to unit length",
            file=sys.stderr,
        )
    return from_pose(pose[:3], quat / norm)


def run(args: argparse.Namespace) -> int:
    check_numbers(args, finite=("pose", "q0", "seed"))
    q0_flag = resolve_old_flag(args, "ik", "--seed", "--q0")

    from ikstack.ik import fk_errors, solve_ik

    chain = chain_from_args(args)
    T = pose_target(args.pose)
    q0 = None
    if args.q0 is not None:
        q0 = angles_in(args.q0, args, chain, q0_flag)
    sols: list[dict] = []
    if args.all:
        res = _solve_all(chain, T, q0)
    else:
        res = solve_ik(chain, T[None], q0=q0, method=args.method)
    if args.all and res.q_all is not None and res.valid_all is not None:
        valid = res.q_all[0][res.valid_all[0]]
        if len(valid):
            pe, re = fk_errors(chain, valid, T)
            sols = [
                {
                    "q": q,
                    "position_error_m": float(a),
                    "rotation_error_rad": float(b),
                    "position_error": float(a),
                    "rotation_error": float(b),
                }
                for q, a, b in zip(valid, pe, re, strict=True)
            ]
    pe0, re0 = float(res.position_error[0]), float(res.rotation_error[0])
    # SI with unit-suffixed keys; "position_error" and "rotation_error" are the previous
    # release's names (same values), kept for one release
    out = {
        "robot": chain.name,
        "method": res.method,
        "success": bool(res.success[0]),
        "reason": res.reason(0),
        "q": res.q[0],
        "position_error_m": pe0,
        "rotation_error_rad": re0,
        "position_error": pe0,
        "rotation_error": re0,
        "solutions": sols,
    }
    if args.json:
        print_json(out)
    else:
        print_human(chain, out, res.q[0], args)
    return 0 if out["success"] else 1


def print_human(chain: Chain, out: dict, q: np.ndarray, args: argparse.Namespace) -> None:
    """The result in mm and deg; ``--all`` summarises the set unless ``--every-row``."""
    import numpy as np

    print(
        f"{chain.name}: {'solved' if out['success'] else 'FAILED'} with {out['method']}"
        f" ({out['reason']})"
    )
    print(f"  q = {joints_text(chain, q)}")
    print(
        f"  FK error: {out['position_error_m'] * 1e3:.3g} mm, "
        f"{np.degrees(out['rotation_error_rad']):.3g} deg"
    )
    if not args.all:
        return
    sols = out["solutions"]
    print(f"  {len(sols)} valid solutions", end="")
    if sols:
        pe = max(s["position_error_m"] for s in sols) * 1e3
        re = np.degrees(max(s["rotation_error_rad"] for s in sols))
        print(f"; worst FK error {pe:.1e} mm, {re:.1e} deg", end="")
    print(":" if sols else "")
    shown = sols if args.every_row else sols[:SHOWN]
    for s in shown:
        print(
            f"    {joints_text(chain, s['q'])}  err {s['position_error_m'] * 1e3:.1e} mm "
            f"{np.degrees(s['rotation_error_rad']):.1e} deg"
        )
    if len(shown) < len(sols):
        print(
            f"    ... {len(sols) - len(shown)} more (--every-row prints them all, --json "
            "lists them)"
        )
