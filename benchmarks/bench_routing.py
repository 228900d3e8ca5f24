"""The routing table of ``solve_ik(method="auto")``: for every bundled arm and a copy of it whose
joint origins carry URDF-level rounding (each coordinate moved by +-0.5 um), the family the
classifier finds, the method ``auto`` runs (:func:`ikstack.ik.route`), its success and time per
target on FK-sampled targets inside the limits less the kinematic margin (single calls), beside
the alternatives: the analytic mode of the family (if any) and Levenberg-Marquardt.

Usage::

    python benchmarks/bench_routing.py [--quick] [--n N]

Writes ``benchmarks/results/bench_routing.json`` (``bench_routing-quick.json`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

import ikstack.robots as robots
from ikstack.errors import UnsupportedGeometryError
from ikstack.ik import route, solve_ik
from ikstack.ik.analytic import AnalyticIK, classify
from ikstack.model import Chain

RESULTS = Path(__file__).resolve().parent / "results"
ROUNDING = 0.5e-6  # [m] per coordinate of every joint origin


def rounded(chain: Chain, rng: np.random.Generator) -> Chain:
    o = chain.origins.copy()
    o[:, :3, 3] += rng.choice([-ROUNDING, ROUNDING], size=(chain.dof, 3))
    return chain.replace(origins=o, name=f"{chain.name}+0.5um")


def targets(chain: Chain, n: int, rng: np.random.Generator) -> np.ndarray:
    """FK of configurations inside the limits every solver keeps (the limits less the chain's
    kinematic margin) that meet its coupled-joint constraints: a configuration within the
    margin of a limit may have no solution the solvers may return (Marvin's 5 degrees: 3 to 5%
    of raw-limit samples), which would count against every method alike."""
    km = chain.kinematic_margin
    lo = np.where(np.isfinite(chain.lower), chain.lower + km, -np.pi)
    hi = np.where(np.isfinite(chain.upper), chain.upper - km, np.pi)
    q = rng.uniform(lo, hi, (4 * n + 16, chain.dof))
    q = q[chain.constraints_satisfied(q)][:n]
    return chain.fk(q)


def timed(fn, T: np.ndarray, passes: int) -> tuple[float, float]:  # noqa: ANN001
    """(success share, best-pass time per target [us]) of single calls ``fn(T[i])``."""
    fn(T[0])
    best = float("inf")
    ok = np.zeros(len(T), dtype=bool)
    for _ in range(passes):
        t = time.perf_counter()
        for i, Ti in enumerate(T):
            ok[i] = fn(Ti).success[0]
        best = min(best, (time.perf_counter() - t) / len(T) * 1e6)
    return float(ok.mean()), best


def row(chain: Chain, n: int, passes: int, rng: np.random.Generator) -> dict[str, object]:
    T = targets(chain, n, rng)
    cls = classify(chain)
    r = route(chain)
    out: dict[str, object] = {
        "arm": chain.name,
        "dof": chain.dof,
        "family": cls.family,
        "deviation": cls.deviation,
        "polish": cls.polish,
        "needs_near": cls.needs_near,
        "auto": r.method + (f":{r.mode}" if r.mode else ""),
        "candidates": r.candidates,
        "expected_analytic_us": r.analytic_us,
        "expected_numerical_us": r.numerical_us,
        "reason": r.reason,
        "targets": len(T),
    }
    out["auto_method"] = solve_ik(chain, T[0]).method
    out["auto_success"], out["auto_us"] = timed(lambda t: solve_ik(chain, t), T, passes)
    out["lm_success"], out["lm_us"] = timed(lambda t: solve_ik(chain, t, method="lm"), T, passes)
    if cls.family is not None:
        mode = "near" if cls.needs_near else "strict"
        try:
            ik = AnalyticIK(chain, mode=mode)
            out["analytic_method"] = ik.method
            out["analytic_success"], out["analytic_us"] = timed(ik.solve, T, passes)
        except UnsupportedGeometryError as exc:  # pragma: no cover - reported
            out["analytic_error"] = str(exc)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 targets, one pass")
    ap.add_argument("--n", type=int, default=None, help="targets per arm (default 100)")
    args = ap.parse_args(argv)
    n = args.n or (10 if args.quick else 100)
    passes = 1 if args.quick else 3
    rng = np.random.default_rng(0)
    rows = []
    hdr = (
        f"{'arm':<24} {'family':<34} {'dev':>8} {'auto':<18} {'K':>5} {'auto ok':>7} "
        f"{'auto us':>9} {'LM ok':>6} {'LM us':>8} {'analytic':<44} {'ok':>5} {'us':>9}"
    )
    print(hdr)
    for name in robots.names():
        base = robots.load(name)
        if base.role.value != "arm":
            continue
        for chain in (base, rounded(base, rng)):
            r = row(chain, n, passes, rng)
            rows.append(r)
            print(
                f"{r['arm']:<24} {str(r['family']):<34} {r['deviation']:>8.1e} "
                f"{r['auto']:<18} {r['candidates']:>5} {r['auto_success']:>7.3f} "
                f"{r['auto_us']:>9.1f} {r['lm_success']:>6.3f} {r['lm_us']:>8.1f} "
                f"{str(r.get('analytic_method', '-')):<44} "
                f"{r.get('analytic_success', float('nan')):>5.3f} "
                f"{r.get('analytic_us', float('nan')):>9.1f}",
                flush=True,
            )
    res = {
        "benchmark": "bench_routing",
        "rounding_m": ROUNDING,
        "targets_per_arm": n,
        "passes": passes,
        "python": sys.version.split()[0],
        "machine": {
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "load_average": list(os.getloadavg()),
        },
        "rows": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / ("bench_routing-quick.json" if args.quick else "bench_routing.json")
    out.write_text(json.dumps(res, indent=2, default=float))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
