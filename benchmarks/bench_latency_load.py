"""Single-target latency under load: one IK call per target, on a quiet machine and with one
busy-loop process per core competing for the CPUs (what a robot's other processes do).

A single call never enters numba's thread pool (whose threads would each wait for a time slice
on a busy machine), so its latency under load should stay within a small factor of the quiet
one. Paths: the analytic families (6R, SRS 7R, locked-joint 7R), near mode, the general
locked-joint mode, and the numerical solvers.

Usage::

    python benchmarks/bench_latency_load.py [--quick]

Writes ``benchmarks/results/bench_latency_load.json`` (``-quick.json`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

import ikstack.robots as robots
from ikstack.ik import solve_ik
from ikstack.ik.analytic import AnalyticIK

RESULTS = Path(__file__).resolve().parent / "results"


def _busy(stop) -> None:  # noqa: ANN001
    x = 0
    while not stop.is_set():
        for _ in range(10_000):
            x += 1


def cases():  # noqa: ANN201
    ur5, panda, iiwa, rizon = (robots.load(n) for n in ("ur5", "panda", "iiwa14", "rizon4"))
    ik = AnalyticIK(ur5)
    yield "ur5 analytic", ur5, ik.solve
    yield "ur5 analytic return_all", ur5, lambda t: ik.solve(t, return_all=True)
    yield "panda analytic (locked joint)", panda, AnalyticIK(panda).solve
    yield "iiwa14 analytic (srs)", iiwa, AnalyticIK(iiwa).solve
    yield "rizon4 analytic general", rizon, AnalyticIK(rizon, mode="general").solve
    yield "panda auto (LM)", panda, lambda t: solve_ik(panda, t)
    yield "iiwa14 dls", iiwa, lambda t: solve_ik(iiwa, t, method="dls")


def latencies(fn, T: np.ndarray) -> np.ndarray:  # noqa: ANN001
    fn(T[0])
    out = np.empty(len(T))
    for i, Ti in enumerate(T):
        t = time.perf_counter()
        fn(Ti)
        out[i] = (time.perf_counter() - t) * 1e6
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20 targets per path")
    args = ap.parse_args(argv)
    n = 20 if args.quick else 200
    rng = np.random.default_rng(0)
    rows = []
    print(
        f"{'path':<32} {'quiet median us':>15} {'quiet p90':>10} {'loaded median':>14} "
        f"{'loaded p90':>11} {'median ratio':>13}"
    )
    cores = os.cpu_count() or 1
    for name, chain, fn in cases():
        q = chain.random_q(rng, 4 * n)
        T = chain.fk(q[chain.constraints_satisfied(q)][:n])
        quiet = latencies(fn, T)
        stop = mp.Event()
        procs = [mp.Process(target=_busy, args=(stop,), daemon=True) for _ in range(cores)]
        for p in procs:
            p.start()
        time.sleep(0.2)
        try:
            loaded = latencies(fn, T)
        finally:
            stop.set()
            for p in procs:
                p.join()
        r = {
            "path": name,
            "targets": n,
            "quiet_median_us": float(np.median(quiet)),
            "quiet_p90_us": float(np.percentile(quiet, 90)),
            "loaded_median_us": float(np.median(loaded)),
            "loaded_p90_us": float(np.percentile(loaded, 90)),
        }
        r["median_ratio"] = r["loaded_median_us"] / r["quiet_median_us"]
        rows.append(r)
        print(
            f"{name:<32} {r['quiet_median_us']:>15.1f} {r['quiet_p90_us']:>10.1f} "
            f"{r['loaded_median_us']:>14.1f} {r['loaded_p90_us']:>11.1f} "
            f"{r['median_ratio']:>13.2f}",
            flush=True,
        )
    res = {
        "benchmark": "bench_latency_load",
        "busy_processes": cores,
        "python": sys.version.split()[0],
        "machine": {
            "platform": platform.platform(),
            "cpu_count": cores,
            "load_average_at_end": list(os.getloadavg()),
        },
        "rows": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / ("bench_latency_load-quick.json" if args.quick else "bench_latency_load.json")
    out.write_text(json.dumps(res, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
