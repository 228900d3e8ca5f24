"""Warp numerical IK (the CPU path's LM ported to Warp) on the CPU device against the CPU path.

Usage: python benchmarks/bench_warp_numerical.py [--quick]

For Panda, iiwa14, UR5 and Marvin (coupled J6/J7) on random reachable targets (2,000; 200
with --quick) and the default options at 1e-6: success rates of both, the number of targets
whose status, iteration count or restart count differ, the largest joint difference between
successes, and throughput.
Writes benchmarks/results/bench_warp_numerical.json.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from ikstack.bench import format_table, write_report
from ikstack.ik.numerical import LevenbergMarquardt
from ikstack.robots import load


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    try:
        import warp  # noqa: F401
    except ImportError:
        print("warp-lang is not installed (extra 'warp'): nothing to measure")
        return 0
    from ikstack.backends.warp import WarpLevenbergMarquardt

    n = 200 if args.quick else 2000
    rows = []
    for name in ("panda", "iiwa14", "ur5", "marvin_left"):
        chain = load(name)
        rng = np.random.default_rng(2026)
        Q = chain.random_q(rng, 4 * n)
        T = chain.fk(Q[chain.constraints_satisfied(Q)][:n])
        opts = {"position_tolerance": 1e-6, "rotation_tolerance": 1e-6}
        c = LevenbergMarquardt(chain, **opts)
        w = WarpLevenbergMarquardt(chain, **opts)
        # warm up on the timed targets themselves: besides the kernels, the FK gate has one
        # compiled entry point below 64 rows, one from there and a parallel one from 512 rows,
        # each loaded on its first call (milliseconds); an 8-target warm-up left that load
        # inside the first timed call (Warp's, which ran first: 200 targets at ~22k/s instead
        # of ~50k/s)
        w.solve(T)
        c.solve(T)
        t0 = time.perf_counter()
        rw = w.solve(T)
        t1 = time.perf_counter()
        rc = c.solve(T)
        t2 = time.perf_counter()
        both = rw.success & rc.success
        rows.append(
            {
                "arm": name,
                "N": n,
                "success_cpu": float(rc.success.mean()),
                "success_warp_cpu": float(rw.success.mean()),
                "status_differs": int((rw.status != rc.status).sum()),
                "iterations_differ": int((rw.iterations != rc.iterations).sum()),
                "restarts_differ": int((rw.restarts != rc.restarts).sum()),
                "max_dq_successes": float(np.abs(rw.q - rc.q)[both].max()) if both.any() else 0.0,
                "warp_cpu_per_s": n / (t1 - t0),
                "cpu_path_per_s": n / (t2 - t1),
            }
        )
    cols = list(rows[0])
    print(format_table(rows, cols))
    out = write_report(
        "bench_warp_numerical",
        {"rows": rows, "quick": args.quick},
        packages=("ikstack", "numpy", "numba", "warp-lang"),
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
