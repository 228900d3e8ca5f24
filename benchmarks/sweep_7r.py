"""Analytic IK of 7R arms by sample count: success and time per target.

Usage: python benchmarks/sweep_7r.py [--quick] [--n N] [--general-n M] [--label LABEL]
[--samples 16,32,128]

For every bundled 7R arm with a closed-form family (Panda: a locked joint; iiwa14 and the Marvin
arms: SRS), a copy whose joint origins carry URDF rounding (every coordinate moved by +-0.5 um,
as a real URDF's printed decimals do), and elbow-nearly-straight targets (joint 4 at
``+-10^u``, ``u`` uniform in [-6, -1.5] rad), ``N`` targets are FK of configurations drawn
uniformly inside the limits the solvers keep (the limits less the chain's kinematic margin) that
satisfy the chain's coupled-joint constraints. Each is solved by ``AnalyticIK(chain,
num_samples=s)`` in one batch from the middle of the limits; ``success`` is the share solved
(every success is certified by FK inside the solver), ``us`` the batch time per target.
The general (algebraic) mode's locked-joint 7R solver (``AnalyticIK(chain, mode="general")``,
16 lock samples) is measured the same way on ``M`` targets per case (Flexiv Rizon 4 / 4s, which
no closed-form family fits, Panda, and the rounded iiwa14). ``--label`` names the run (e.g.
``before`` on the previous code) in the JSON file name.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import ikstack.robots as robots
from ikstack.bench import format_table, write_report
from ikstack.ik.analytic import AnalyticIK
from ikstack.model import Chain

ROUNDING = 0.5e-6  # [m] per coordinate of every joint origin


def rounded(chain: Chain, rng: np.random.Generator) -> Chain:
    o = chain.origins.copy()
    o[:, :3, 3] += rng.choice([-ROUNDING, ROUNDING], size=(chain.dof, 3))
    return chain.replace(origins=o, name=f"{chain.name}+0.5um")


def targets(chain: Chain, n: int, rng: np.random.Generator, straight: bool) -> np.ndarray:
    km = chain.kinematic_margin
    lo, hi = chain.lower + km, chain.upper - km
    out = np.empty((0, chain.dof))
    while len(out) < n:
        q = rng.uniform(lo, hi, (2 * n, chain.dof))
        if straight:
            q[:, 3] = rng.choice([-1.0, 1.0], 2 * n) * 10.0 ** rng.uniform(-6, -1.5, 2 * n)
        q = q[chain.within_limits(q, margin=km) & chain.constraints_satisfied(q)]
        out = np.vstack([out, q])
    return np.asarray(chain.fk(out[:n]))


def cases(rng: np.random.Generator) -> list[tuple[str, Chain, bool]]:
    out = []
    for name in ("panda", "iiwa14", "marvin_left", "marvin_right"):
        c = robots.load(name)
        r = rounded(c, rng)
        out += [(c.name, c, False), (r.name, r, False)]
        if name != "panda":  # Panda's elbow limit stops 0.07 rad short of straight
            out += [(f"{c.name} elbow~straight", c, True), (f"{r.name} elbow~straight", r, True)]
    return out


def general_cases(rng: np.random.Generator) -> list[tuple[str, Chain, bool]]:
    out = []
    for name in ("rizon4", "rizon4s", "panda"):
        c = robots.load(name)
        out.append((c.name, c, False))
        if name != "panda":
            out.append((f"{c.name} elbow~straight", c, True))
    # the exact iiwa14's elimination is singular for every role assignment (refused); a
    # rounded URDF of it is not
    r = rounded(robots.load("iiwa14"), rng)
    out += [(r.name, r, False), (f"{r.name} elbow~straight", r, True)]
    return out


def row(
    label: str, chain: Chain, straight: bool, n: int, samples: int, mode: str = "strict"
) -> dict[str, object]:
    T = targets(chain, n, np.random.default_rng(1), straight)
    ik = (
        AnalyticIK(chain, num_samples=samples)
        if mode == "strict"
        else AnalyticIK(chain, mode="general")
    )
    ik.solve(T[:16])  # compile / warm (the batch kernels too)
    t0 = time.perf_counter()
    r = ik.solve(T)
    dt = time.perf_counter() - t0
    return {
        "case": label,
        "family": ik.method.split(":", 1)[1],
        "samples": samples if mode == "strict" else 16,
        "targets": len(T),
        "success": float(r.success.mean()),
        "missed": int((~r.success).sum()),
        "us": dt / len(T) * 1e6,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    ap.add_argument("--n", type=int, default=None, help="targets per case")
    ap.add_argument(
        "--general-n", type=int, default=None, help="targets per general-mode case (0: skip)"
    )
    ap.add_argument("--label", default="", help="run label (JSON name suffix)")
    ap.add_argument("--samples", default="16,32,128", help="num_samples values")
    args = ap.parse_args()
    n = args.n or (100 if args.quick else 10_000)
    rows = [
        row(label, chain, straight, n, int(s))
        for label, chain, straight in cases(np.random.default_rng(0))
        for s in args.samples.split(",")
        if s
    ]
    gn = args.general_n if args.general_n is not None else (20 if args.quick else 2000)
    if gn:
        rows += [
            row(label, chain, straight, gn, 16, "general")
            for label, chain, straight in general_cases(np.random.default_rng(0))
        ]
    print(format_table(rows, ["case", "family", "samples", "targets", "success", "missed", "us"]))
    name = "sweep_7r" + (f"_{args.label}" if args.label else "")
    path = write_report(name, {"quick": args.quick, "n": n, "label": args.label, "rows": rows})
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
