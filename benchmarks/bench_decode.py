"""Cost of the velocity-QP step against OSQP's own update+solve, and of multi-arm chunk decodes.

Measured in one run on reachable Marvin chunks (TacCap tool, 30 Hz knots, 4 ms substeps):

* a chained ``OsqpQPSolver.step`` (build, OSQP update+warm start+solve, clip, FK, checks, lag
  guard) against the floor: OSQP's own ``update`` + ``warm_start`` + ``solve`` replayed on the
  same QPs, from Python, with the same settings (OSQP's defaults, as the published port runs
  them; target: within 1.5x);
* the same step on ikstack's active-set solver (``qp_solver: active_set``) and its bare solve;
* two-arm against one-arm decodes of H16 and H64 chunks in the persistent worker processes
  (target: within 1.3x: the arms run in parallel), and the two-arm decode in-process.

Run: ``python benchmarks/bench_decode.py [--quick]``; writes
``benchmarks/results/bench_decode.json``.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

import numpy as np
import osqp
import scipy.sparse as sp

from ikstack.bench import write_report
from ikstack.chunk import ArmSpec, ChunkDecoder, ChunkRequest, ParallelChunkDecoder
from ikstack.diffik import ActiveSetQPSolver, DiffQPConfig, OsqpQPSolver
from ikstack.diffik.active_set_qp import solve_dense_qp
from ikstack.robots import load
from ikstack.spatial import rotvec_to_matrix

INTERVAL = 1.0 / 30.0
Q0 = {
    "left": np.radians([10.0, 30, 0, -60, 0, 20, 10]),
    "right": np.radians([-10.0, 30, 0, -60, 0, -20, -10]),
}


def chunk(arms: dict, H: int, seed: int) -> ChunkRequest:
    rng = np.random.default_rng(seed)
    T = {}
    for name, chain in arms.items():
        T0 = chain.fk(Q0[name])
        s = np.linspace(1.0 / H, 1.0, H)
        d = rng.uniform(-1, 1, 3)
        d *= 0.02 / np.linalg.norm(d)
        Ts = np.repeat(T0[None], H, axis=0)
        Ts[:, :3, 3] += np.outer(s, d)
        Ts[:, :3, :3] = rotvec_to_matrix(np.outer(s, rng.uniform(-0.05, 0.05, 3))) @ T0[:3, :3]
        T[name] = Ts
    return ChunkRequest(T, {k: Q0[k] for k in arms})


def step_stream(arm, n: int):
    """Substep flange targets along a reachable path."""
    T0 = arm.fk(Q0["left"])
    out = []
    for k in range(n):
        t = 0.004 * (k + 1)
        T = T0.copy()
        T[0, 3] += 0.03 * math.sin(t)
        T[1, 3] += 0.03 * (1 - math.cos(t))
        out.append(T)
    return out


def bench_steps(n: int) -> dict:
    """Chained steps, each paired with its floor: the same QP's bare update+solve, timed right
    after it (pairing keeps the ratio honest on a machine whose load drifts)."""
    arm = load("marvin_left")
    targets = step_stream(arm, n)
    res: dict = {}
    for name, cls in (("osqp", OsqpQPSolver), ("active_set", ActiveSetQPSolver)):
        qp = cls(arm, DiffQPConfig(lag_policy="report"))
        qp.reset()
        qp.step(Q0["left"], targets[0], 0.004)  # compile and load caches
        qp.reset()
        bare = None
        if isinstance(qp, OsqpQPSolver):  # the same first QP and settings, set up bare
            d = qp.build(Q0["left"], targets[0], 0.004)
            v = qp._ws.work
            Pm, Am = qp._pattern
            bare = osqp.OSQP()
            bare.setup(
                sp.csc_matrix((v.Px.copy(), Pm.indices, Pm.indptr), shape=Pm.shape),
                d.c,
                sp.csc_matrix((v.Ax.copy(), Am.indices, Am.indptr), shape=Am.shape),
                v.l.copy(),
                v.u.copy(),
                **qp._settings,
            )
        x = np.zeros(7)
        q = Q0["left"].copy()
        times, floor, iters = [], [], []
        for T in targets:
            d = qp.build(q, T, 0.004)  # this step's QP (not timed)
            v = qp._ws.work
            Px, Ax, lo, hi = v.Px.copy(), v.Ax.copy(), v.l.copy(), v.u.copy()
            t0 = time.perf_counter()
            r = qp.step(q, T, 0.004)
            t1 = time.perf_counter()
            if bare is not None:
                bare.update(q=d.c, l=lo, u=hi, Px=Px, Ax=Ax)
                bare.warm_start(x=x)
                x = np.clip(bare.solve(raise_error=False).x, d.lower, d.upper)
            else:
                solve_dense_qp(d.P, d.c, d.lower, d.upper, d.G, d.h, x, 200)
            t2 = time.perf_counter()
            times.append(t1 - t0)
            floor.append(t2 - t1)
            q = r.q
            iters.append(r.iterations)
        res[name] = {
            "step_us_median": 1e6 * float(np.median(times)),
            "step_us_p95": 1e6 * float(np.percentile(times, 95)),
            "floor_us_median": 1e6 * float(np.median(floor)),
            "ratio_to_floor": float(np.median(np.array(times) / np.array(floor))),
            "iterations_mean": float(np.mean(iters)),
        }
    res["active_set_speedup_vs_osqp_step"] = (
        res["osqp"]["step_us_median"] / res["active_set"]["step_us_median"]
    )
    return res


def time_decodes(decoder, arms, H: int, reps: int) -> tuple[float, float, float]:
    """Median wall time [ms], median worker CPU time per arm [ms], and the median share of the
    decode during which both workers were running (1.0: fully concurrent; nan in-process)."""
    decoder.decode(chunk(arms, H, 0))  # warm
    ts, cpu, overlap = [], [], []
    for r in range(reps):
        req = chunk(arms, H, r + 1)
        t0 = time.perf_counter()
        if isinstance(decoder, ParallelChunkDecoder):
            pending = decoder.submit(req)
            out = pending.result()
            spans = list(pending.timings.values())
            cpu.append(np.mean([s[2] for s in spans]))
            if len(spans) == 2:
                (a0, a1, _), (b0, b1, _) = spans
                both = max(0.0, min(a1, b1) - max(a0, b0))
                overlap.append(both / (max(a1, b1) - min(a0, b0)))
        else:
            out = decoder.decode(req)
        ts.append(time.perf_counter() - t0)
        if not out.success:
            raise SystemExit(f"benchmark chunk rejected: {out.rejection}")
    med = float(np.median(overlap)) if overlap else math.nan
    return 1e3 * float(np.median(ts)), 1e3 * float(np.median(cpu)) if cpu else math.nan, med


def bench_decodes(reps: int, horizons: tuple[int, ...]) -> dict:
    arms = {"left": load("marvin_left_taccap"), "right": load("marvin_right_taccap")}
    cfg = DiffQPConfig(lag_policy="report")
    specs = [ArmSpec(n, c, "diff", cfg) for n, c in arms.items()]
    out: dict = {}
    two = ParallelChunkDecoder(specs, INTERVAL)
    one = ParallelChunkDecoder(specs[:1], INTERVAL)
    inline = ChunkDecoder(specs, INTERVAL)
    try:
        for H in horizons:
            t2, c2, ov = time_decodes(two, arms, H, reps)
            t1, c1, _ = time_decodes(one, {"left": arms["left"]}, H, reps)
            ti, _, _ = time_decodes(inline, arms, H, reps)
            out[f"H{H}"] = {
                "two_arm_workers_ms": t2,
                "one_arm_worker_ms": t1,
                "two_arm_inline_ms": ti,
                "two_over_one": t2 / t1,
                "worker_cpu_ms_two_arm": c2,
                "worker_cpu_ms_one_arm": c1,
                "concurrent_share": ov,
            }
    finally:
        two.close()
        one.close()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="few repetitions (smoke test)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "bench_decode.json"))
    args = ap.parse_args()
    steps = bench_steps(200 if args.quick else 3000)
    dec = bench_decodes(2 if args.quick else 15, (16,) if args.quick else (16, 64))
    print(f"{'step':<12} {'median us':>10} {'p95 us':>8} {'floor us':>9} {'ratio':>7} {'iters':>6}")
    for name in ("osqp", "active_set"):
        r = steps[name]
        print(
            f"{name:<12} {r['step_us_median']:>10.1f} {r['step_us_p95']:>8.1f} "
            f"{r['floor_us_median']:>9.1f} {r['ratio_to_floor']:>7.2f} "
            f"{r['iterations_mean']:>6.1f}"
        )
    print(
        f"active-set step is {steps['active_set_speedup_vs_osqp_step']:.2f}x faster than the "
        "OSQP step (floor = each solver's own solve; OSQP target ratio <= 1.5)"
    )
    print(
        f"{'decode':<8} {'2 arms ms':>10} {'1 arm ms':>9} {'2/1':>6} {'inline 2 ms':>12} "
        f"{'cpu/arm 2|1 ms':>15} {'concurrent':>10}"
    )
    for key, r in dec.items():
        print(
            f"{key:<8} {r['two_arm_workers_ms']:>10.1f} {r['one_arm_worker_ms']:>9.1f} "
            f"{r['two_over_one']:>6.2f} {r['two_arm_inline_ms']:>12.1f} "
            f"{r['worker_cpu_ms_two_arm']:>7.1f}|{r['worker_cpu_ms_one_arm']:<7.1f} "
            f"{r['concurrent_share']:>10.2f}"
        )
    print(
        f"(two-arm target: within 1.3x of one arm; {os.cpu_count()} CPUs here, load average "
        f"{os.getloadavg()[0]:.1f})"
    )
    out = Path(args.out)
    written = write_report(
        out.stem,
        {"steps": steps, "decodes": dec, "quick": args.quick, "load_average": os.getloadavg()},
        folder=out.parent,
        packages=("ikstack", "numpy", "scipy", "osqp"),
    )
    print(f"wrote {written}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
