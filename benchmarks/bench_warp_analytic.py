"""Warp analytic IK on the CPU device against the compiled CPU path, in the same run.

Usage: python benchmarks/bench_warp_analytic.py [--quick]

For each bundled analytic arm: parity on random reachable targets (certified masks identical,
largest joint difference over every candidate slot, selected solutions and statuses) and
throughput of both paths, best solution and all solutions; ``selection`` says whether the
Warp solver selected and certified on the device or on the host (chains with coupled-joint
constraints). The GPU numbers
come from benchmarks/gpu_check.py where a GPU is present.
Writes benchmarks/results/bench_warp_analytic.json.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from ikstack.bench import format_table, write_report
from ikstack.ik.analytic import AnalyticIK
from ikstack.robots import load


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    try:
        from ikstack.backends.warp import WarpAnalyticIK
    except ImportError:  # pragma: no cover - the package is always importable
        return 0
    try:
        import warp  # noqa: F401
    except ImportError:
        print("warp-lang is not installed (extra 'warp'): nothing to measure")
        return 0
    rows = []
    arms = (
        ("ur5", 20_000),
        ("arx_x5", 20_000),
        ("iiwa14", 1000),
        ("marvin_left", 1000),
        ("panda", 1000),
    )
    for name, n in arms:
        n = n // 10 if args.quick else n
        chain = load(name)
        rng = np.random.default_rng(7)
        Q = chain.random_q(rng, n)
        T = chain.fk(Q)
        S = chain.random_q(rng, n)
        w = WarpAnalyticIK(chain, device="cpu", chunk_size=4096)
        c = AnalyticIK(chain)
        for return_all in (False, True):
            w.solve(T[:50], S[:50], return_all=return_all)  # compile / warm up
            c.solve(T[:50], S[:50], return_all=return_all)
            t0 = time.perf_counter()
            rw = w.solve(T, S, return_all=return_all)
            t1 = time.perf_counter()
            rc = c.solve(T, S, return_all=return_all)
            t2 = time.perf_counter()
            row = {
                "arm": name,
                "family": w.family_name,
                "K": w.K,
                "N": n,
                "mode": "all solutions" if return_all else "best",
                "warp_cpu_per_s": n / (t1 - t0),
                "cpu_path_per_s": n / (t2 - t1),
                "success_warp": float(rw.success.mean()),
                "success_cpu": float(rc.success.mean()),
                "max_dq_selected": float(np.abs(rw.q - rc.q).max()),
                "selection": "device" if w.device_selection else "host",
                "statuses_identical": bool((rw.status == rc.status).all()),
            }
            if return_all:
                row["masks_identical"] = bool((rw.valid_all == rc.valid_all).all())
                row["max_dq_all_slots"] = float(np.abs(rw.q_all - rc.q_all).max())
            rows.append(row)
    cols = [
        "arm",
        "family",
        "K",
        "N",
        "mode",
        "selection",
        "warp_cpu_per_s",
        "cpu_path_per_s",
        "success_warp",
        "success_cpu",
        "statuses_identical",
        "max_dq_selected",
        "masks_identical",
        "max_dq_all_slots",
    ]
    print(format_table(rows, cols))
    out = write_report(
        "bench_warp_analytic",
        {"rows": rows, "quick": args.quick},
        packages=("ikstack", "numpy", "numba", "warp-lang"),
    )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
