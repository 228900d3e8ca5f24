"""One prepared GPU check for the Warp backend: parity with the CPU path, then throughput.

Usage: python benchmarks/gpu_check.py [--device cuda] [--max-batch 1000000] [--quick]

Where no GPU is present it says so and exits 0. With a GPU it:
1. checks parity with the CPU path on fresh random configurations and targets (FK and
   Jacobians to 1e-12; numerical IK success rates side by side);
2. measures throughput (targets per second) for batches of 1,000 to 1,000,000: FK, Jacobians,
   Panda numerical IK, UR5 analytic all solutions (iiwa14 SRS with 128 swivel samples up to
   10,000: 1416 candidates a target), each after a parity check with the CPU path;
3. times 10,000 streaming single-target IK calls with previous-result seeds (median, p99);
4. records device memory before and after.
It prints a table and writes benchmarks/results/gpu_check.json (with the GPU's name).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from ikstack.bench import format_table, write_report
from ikstack.kinematics import fk_jacobian
from ikstack.robots import load


def analytic_rows(args: argparse.Namespace, rng: np.random.Generator, sizes: list[int],
                  rows: list[dict], parity: list[dict]) -> None:
    """UR5 analytic (all solutions) and iiwa14 SRS (128 swivel samples): parity with the CPU
    path on fresh random targets (joint values of matching slots, masks), then throughput of
    the raw device candidates and of the certified solve (gating and certify on the host)."""
    from ikstack.backends.warp import WarpAnalyticIK
    from ikstack.ik.analytic import AnalyticIK

    for name, return_all, label, cap in (
            ("ur5", True, "ur5 analytic (all solutions)", 1_000_000),
            ("iiwa14", False, "iiwa14 SRS, 128 swivel samples", 10_000)):
        chain = load(name)
        w = WarpAnalyticIK(chain, device=args.device, chunk_size=1 << 16 if name == "ur5"
                           else 512)
        c = AnalyticIK(chain)
        m = 200 if args.quick else 2000
        T = chain.fk(chain.random_q(rng, m))
        S = chain.random_q(rng, m)
        rw, rc = w.solve(T, S, return_all=True), c.solve(T, S, return_all=True)
        same = bool((rw.valid_all == rc.valid_all).all())
        dq = float(np.abs(rw.q_all - rc.q_all)[rc.valid_all].max()) if rc.valid_all.any() \
            else 0.0
        parity.append({"robot": name, "check": f"analytic {w.family_name}: masks identical / "
                       "max |dq| valid slots", "value": f"{same} / {dq:.2e}"})
        for n in [s for s in sizes if s <= cap]:
            Q = chain.random_q(rng, n)
            Tt = chain.fk(Q)
            w.prepare_buffers(n)
            w.candidates(Tt[:1000])
            t0 = time.perf_counter()
            w.candidates(Tt, Q)
            dt = time.perf_counter() - t0
            rows.append({"workload": f"{label}: device candidates + copy", "batch": n,
                         "targets_per_s": n / dt, "success": None})
            t0 = time.perf_counter()
            res = w.solve(Tt, Q, return_all=return_all)
            dt = time.perf_counter() - t0
            rows.append({"workload": f"{label}: certified (host gate)", "batch": n,
                         "targets_per_s": n / dt, "success": float(res.success.mean())})


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--max-batch", type=int, default=1_000_000)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    try:
        import warp as wp
    except ImportError:
        print("warp-lang is not installed (extra 'warp'): nothing to check")
        return 0
    wp.config.log_level = getattr(wp, "LOG_WARNING", 30)
    wp.init()
    if args.device.startswith("cuda") and not wp.is_cuda_available():
        print("no CUDA GPU on this machine: the GPU check is skipped (exit 0)")
        return 0
    from ikstack.backends import warp as bw
    from ikstack.backends.warp import numerical as wn

    dev = wp.get_device(args.device)
    gpu_name = getattr(dev, "name", str(dev))
    rows: list[dict] = []
    parity: list[dict] = []
    rng = np.random.default_rng(2026)

    def mem() -> float | None:
        """Device memory in use [MiB] (driver view: total - free)."""
        try:
            return float(dev.total_memory - dev.free_memory) / 2**20
        except Exception:
            return None

    mem_before = mem()
    # 1. parity
    for name in ("ur5", "panda", "iiwa14", "marvin_left", "rizon4s", "arx_x5"):
        chain = load(name)
        Q = chain.random_q(rng, 20_000)
        T, J = bw.fk_jacobian(chain, Q, device=args.device)
        T0, J0 = fk_jacobian(chain, Q)
        parity.append({"robot": name, "check": "fk/jacobian max |diff|",
                       "value": float(max(np.abs(T - T0).max(), np.abs(J - J0).max()))})
    chain = load("panda")
    Q = chain.random_q(rng, 2000 if args.quick else 20_000)
    Tt = chain.fk(Q)
    r_gpu = wn.solve(chain, Tt, device=args.device)
    r_cpu = wn.solve(chain, Tt[:1000], device="cpu")
    parity.append({"robot": "panda", "check": "numerical success rate gpu / cpu",
                   "value": f"{r_gpu.success.mean():.4f} / {r_cpu.success.mean():.4f}"})
    # 2. throughput
    sizes = [1000, 10_000, 100_000, 1_000_000]
    sizes = [s for s in sizes if s <= args.max_batch][: 2 if args.quick else None]
    for n in sizes:
        Q = chain.random_q(rng, n)
        for label, fn in (("fk", lambda Q=Q: bw.fk(chain, Q, device=args.device)),
                          ("jacobian", lambda Q=Q: bw.jacobian(chain, Q, device=args.device))):
            fn()
            wp.synchronize_device(dev)
            t0 = time.perf_counter()
            fn()
            wp.synchronize_device(dev)
            dt = time.perf_counter() - t0
            rows.append({"workload": f"panda {label}", "batch": n, "targets_per_s": n / dt,
                         "success": None})
        Tt = chain.fk(Q)
        wn.solve(chain, Tt[:1000], device=args.device)
        t0 = time.perf_counter()
        res = wn.solve(chain, Tt, device=args.device, position_tolerance=1e-5,
                       rotation_tolerance=1e-5)
        dt = time.perf_counter() - t0
        rows.append({"workload": "panda numerical IK (LM, restarts)", "batch": n,
                     "targets_per_s": n / dt, "success": float(res.success.mean())})
    analytic_rows(args, rng, sizes, rows, parity)
    # 3. streaming
    m = 1000 if args.quick else 10_000
    qs = chain.middle()
    path = chain.fk(qs + 0.3 * np.sin(np.linspace(0, 6, m))[:, None])
    lat = np.empty(m)
    for i in range(m):
        t0 = time.perf_counter()
        r = wn.solve(chain, path[i], seed=qs, device=args.device)
        lat[i] = time.perf_counter() - t0
        if r.success[0]:
            qs = r.q[0]
    rows.append({"workload": "panda streaming single-target IK", "batch": 1,
                 "targets_per_s": 1.0 / float(np.median(lat)),
                 "success": f"median {np.median(lat) * 1e6:.0f} us, p99 "
                            f"{np.percentile(lat, 99) * 1e6:.0f} us"})
    mem_after = mem()
    print(f"GPU: {gpu_name}")
    print(format_table(parity, ["robot", "check", "value"]))
    print(format_table(rows, ["workload", "batch", "targets_per_s", "success"]))
    path_out = write_report("gpu_check", {"gpu": gpu_name, "parity": parity, "rows": rows,
                                          "memory_mib_before": mem_before,
                                          "memory_mib_after": mem_after},
                            packages=("ikstack", "numpy", "numba", "warp-lang"))
    print(f"wrote {path_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
