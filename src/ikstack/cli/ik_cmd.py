"""``ikstack ik``: inverse kinematics of one pose, every solution or the nearest to a seed."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ikstack.cli.common import add_chain_arguments, chain_from_args, check_numbers, print_json
from ikstack.errors import InputError, UnsupportedGeometryError

if TYPE_CHECKING:
    import numpy as np

    from ikstack.ik import IKResult
    from ikstack.model import Chain


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("ik", help="inverse kinematics of a pose",
                       description="Joint solutions reaching a TCP pose, each certified by FK.")
    add_chain_arguments(p)
    p.add_argument("--pose", nargs=7, type=float, required=True,
                   metavar=("X", "Y", "Z", "QW", "QX", "QY", "QZ"),
                   help="target position [m] and quaternion (w, x, y, z) in the base frame")
    p.add_argument("--seed", nargs="+", type=float, help="seed joints [rad]; default mid-limits")
    p.add_argument("--method", default="auto",
                   help="auto (analytic where the family allows, else numerical), analytic, "
                        "numerical, dls, lm")
    p.add_argument("--all", action="store_true", help="print every valid solution (analytic: closed form, or the "
                        "algebraic general mode for 6R/7R arms without one)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    return p


def _solve_all(chain: Chain, T: np.ndarray, seed: np.ndarray | None) -> IKResult:
    """Every analytic solution: of the closed-form family, or of the algebraic mode (general 6R
    elimination, locked-joint 7R) for revolute 6R/7R chains no closed form covers."""
    from ikstack.ik.analytic import AnalyticIK, classify

    c = classify(chain)
    mode = c.suggested_mode
    if mode is None:
        raise UnsupportedGeometryError(
            f"--all lists the analytic solution set, and no analytic mode covers "
            f"{chain.name or 'this chain'}: {c.reason}")
    solver = AnalyticIK(chain, mode=mode)
    return solver.solve(T[None], seed=seed, return_all=True)


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
        print(f"ikstack ik: note: --pose quaternion ({shown}) has norm {norm:.9g}; normalised "
              "to unit length", file=sys.stderr)
    return from_pose(pose[:3], quat / norm)


def run(args: argparse.Namespace) -> int:
    check_numbers(args, finite=("pose", "seed"))
    import numpy as np

    from ikstack.ik import fk_errors, solve_ik

    chain = chain_from_args(args)
    T = pose_target(args.pose)
    seed = None
    if args.seed is not None:
        seed = np.array(args.seed, dtype=float)
        if seed.shape != (chain.dof,):
            raise InputError(f"--seed has {seed.size} values; the chain has {chain.dof} joints")
    sols: list[dict] = []
    if args.all:
        res = _solve_all(chain, T, seed)
    else:
        res = solve_ik(chain, T[None], seed=seed, method=args.method)
    if args.all and res.q_all is not None and res.valid_all is not None:
        valid = res.q_all[0][res.valid_all[0]]
        if len(valid):
            pe, re = fk_errors(chain, valid, T)
            sols = [{"q": q, "position_error": float(a), "rotation_error": float(b)}
                    for q, a, b in zip(valid, pe, re, strict=True)]
    out = {"robot": chain.name, "method": res.method, "success": bool(res.success[0]),
           "reason": res.reason(0), "q": res.q[0], "position_error": float(res.position_error[0]),
           "rotation_error": float(res.rotation_error[0]), "solutions": sols}
    if args.json:
        print_json(out)
    else:
        print(f"{chain.name}: {'solved' if out['success'] else 'FAILED'} with {res.method}"
              f" ({out['reason']})")
        print(f"  q = [{', '.join(f'{v:.6f}' for v in res.q[0])}]")
        print(f"  FK error: {out['position_error']:.3g} m, {out['rotation_error']:.3g} rad")
        if args.all:
            print(f"  {len(sols)} valid solutions:")
            for s in sols:
                print(f"    [{', '.join(f'{v:+.5f}' for v in s['q'])}]  "
                      f"err {s['position_error']:.1e} m {s['rotation_error']:.1e} rad")
    return 0 if out["success"] else 1
