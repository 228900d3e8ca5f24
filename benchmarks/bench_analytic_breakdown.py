"""Where the time of ``AnalyticIK.solve(T, return_all=True)`` goes, per pose, on a 6R family.

Thread CPU time (``time.thread_time``: what the calling thread spent, so other processes on a
loaded machine do not count), best of many passes, on the calling thread only:

- ``candidates_us``: the family's 8 candidates per pose alone (the compiled generator);
- ``kernel_us``: the compiled return_all pass per pose (candidates, representatives, limits,
  the FK gate of every candidate, constraints, certificate, selection), outputs preallocated;
- ``solve_batch_us``: ``solve(T, return_all=True)`` on a batch under the parallel threshold;
- ``call_overhead_us``: one compiled call on zero targets (argument passing and the kernel's
  setup), ``kernel_one_us`` one call on one target, ``solve_one_us`` the public single call.

So ``kernel_us - candidates_us`` is the gate's share per pose and ``solve_one_us -
kernel_one_us`` the Python around a single call (input checks, one array per result field,
the result object).

Usage::

    python benchmarks/bench_analytic_breakdown.py [--out PATH]

Writes ``benchmarks/results/bench_analytic_breakdown.json`` (or ``--out``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import ikstack.robots as robots

# run as a script, this file's folder is on the path: the speed benchmark's helpers
from bench_analytic import RESULTS, in_limit_targets, irb6640, machine, versions
from ikstack.ik.analytic import AnalyticIK, _all6, _families6


def best_us(fn, per: int, passes: int = 40) -> float:  # noqa: ANN001
    fn()
    best = float("inf")
    for _ in range(passes):
        t = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t)
    return best / per * 1e6


def outputs(n: int) -> tuple[np.ndarray, ...]:
    return (
        np.empty((n, 8, 6)),
        np.empty((n, 8), dtype=np.bool_),
        np.empty((n, 6)),
        np.empty(n, dtype=np.bool_),
        np.empty(n),
        np.empty(n),
    )


def breakdown(name: str, chain, n: int = 200) -> dict[str, object]:  # noqa: ANN001
    ik = AnalyticIK(chain)
    _, T = in_limit_targets(chain, n, np.random.default_rng(0))
    T = np.ascontiguousarray(T)
    fl, il = ik._pack6
    S = ik._middle1
    fam = ik.family
    out = outputs(n)
    Sn = np.ascontiguousarray(np.broadcast_to(S, (n, 6)))
    row: dict[str, object] = {"arm": name, "family": ik.method, "poses": n}
    row["candidates_us"] = best_us(
        lambda: _families6.batch6(fam.kernel, T, Sn, out[0], out[1], False),
        n,
    )
    row["kernel_us"] = best_us(lambda: _all6.all_serial(S, T, fl, il, ik._kfam, out), n)
    row["solve_batch_us"] = best_us(lambda: ik.solve(T, return_all=True), n)
    one = outputs(1)
    singles = [np.ascontiguousarray(t[None]) for t in T[:50]]
    row["kernel_one_us"] = best_us(
        lambda: [_all6.all_serial(S, t, fl, il, ik._kfam, one) for t in singles], len(singles)
    )
    none = np.empty((0, 4, 4))
    zero = outputs(0)
    row["call_overhead_us"] = best_us(
        lambda: [_all6.all_serial(S, none, fl, il, ik._kfam, zero) for _ in range(50)], 50
    )
    flat = [t[0] for t in singles]
    row["solve_one_us"] = best_us(lambda: [ik.solve(t, return_all=True) for t in flat], len(flat))
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=RESULTS / "bench_analytic_breakdown.json")
    args = ap.parse_args()
    rows = [breakdown("ur5", robots.load("ur5")), breakdown("irb6640", irb6640())]
    keys = (
        "candidates_us",
        "kernel_us",
        "solve_batch_us",
        "call_overhead_us",
        "kernel_one_us",
        "solve_one_us",
    )
    print(f"{'arm':<9} " + " ".join(f"{k[:-3]:>16}" for k in keys) + "   [us, thread time]")
    for r in rows:
        print(f"{r['arm']:<9} " + " ".join(f"{r[k]:>16.2f}" for k in keys))
    res = {
        "benchmark": "bench_analytic_breakdown",
        "versions": versions(),
        "machine": machine(),
        "rows": rows,
    }
    out = args.out
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
