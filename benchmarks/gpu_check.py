"""One prepared GPU check for the Warp backend: parity with the CPU path, then throughput.

Usage: python benchmarks/gpu_check.py [--device cuda] [--max-batch 1000000] [--quick]

Where no GPU is present it says so and exits 0. With a GPU it:
1. checks parity with the CPU path on fresh random configurations and targets (FK and
   Jacobians to 1e-12; the numerical LM's success rates and statuses side by side);
2. measures throughput (targets per second) for batches of 1,000 to 1,000,000: FK, Jacobians,
   Panda numerical IK, UR5 analytic (iiwa14 SRS with 128 swivel samples up to 100,000: 1416
   candidates a target): raw candidates and the device-side selection and certification,
   and whole paths in one launch, each after a parity check with the CPU path;
3. times 10,000 streaming single-target IK calls with previous-result seeds (median, p99);
4. records device memory before and after.
It prints a table and writes benchmarks/results/gpu_check.json (with the GPU's name); a
``--quick`` run writes gpu_check-quick.json and a ``--device cpu`` run gpu_check-cpu*.json.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from ikstack.bench import format_table, write_report
from ikstack.kinematics import fk_jacobian
from ikstack.robots import load


def analytic_rows(
    args: argparse.Namespace,
    rng: np.random.Generator,
    sizes: list[int],
    rows: list[dict],
    parity: list[dict],
) -> None:
    """UR5 analytic and iiwa14 SRS (128 swivel samples): parity with the CPU path on fresh
    random targets (nearest-solution selections and statuses; every candidate's mask), then
    throughput of the raw device candidates and of the device-side selection and
    certification (only (N, dof) and the statuses come back), and of whole paths (one device
    thread a path)."""
    from ikstack.backends.warp import WarpAnalyticIK
    from ikstack.ik.analytic import AnalyticIK

    for name, label, cap in (
        ("ur5", "ur5 analytic", 1_000_000),
        ("iiwa14", "iiwa14 SRS, 128 swivel samples", 100_000),
    ):
        chain = load(name)
        w = WarpAnalyticIK(chain, device=args.device, chunk_size=1 << 16 if name == "ur5" else 4096)
        c = AnalyticIK(chain)
        m = 200 if args.quick else 2000
        T = chain.fk(chain.random_q(rng, m))
        S = chain.random_q(rng, m)
        rw, rc = w.solve(T, S), c.solve(T, S)
        same = bool((rw.status == rc.status).all())
        dq = float(np.abs(rw.q - rc.q).max())
        parity.append(
            {
                "robot": name,
                "check": f"analytic {w.family_name} (device selection): "
                "statuses identical / max |dq| selected",
                "value": f"{same} / {dq:.2e}",
            }
        )
        rw, rc = w.solve(T, S, return_all=True), c.solve(T, S, return_all=True)
        parity.append(
            {
                "robot": name,
                "check": "analytic all solutions: masks identical",
                "value": str(bool((rw.valid_all == rc.valid_all).all())),
            }
        )
        for n in [s for s in sizes if s <= cap]:
            Q = chain.random_q(rng, n)
            Tt = chain.fk(Q)
            w.prepare_buffers(n)
            w.solve(Tt[:1000], Q[:1000])
            t0 = time.perf_counter()
            w.candidates(Tt, Q)
            dt = time.perf_counter() - t0
            rows.append(
                {
                    "workload": f"{label}: device candidates + copy (N, K, dof)",
                    "batch": n,
                    "targets_per_s": n / dt,
                    "success": None,
                }
            )
            t0 = time.perf_counter()
            res = w.solve(Tt, Q)
            dt = time.perf_counter() - t0
            rows.append(
                {
                    "workload": f"{label}: device selection + certification (N, dof)",
                    "batch": n,
                    "targets_per_s": n / dt,
                    "success": float(res.success.mean()),
                }
            )
        # whole paths: one device thread loops over a path's frames
        n_paths, frames = (100, 50) if args.quick else (10_000, 100)
        q0 = chain.random_q(rng, n_paths)
        t = np.linspace(0.0, 1.0, frames)[None, :, None]
        paths = chain.fk(q0[:, None, :] + 0.3 * np.sin(3.0 * t))
        w.solve_paths(paths[:2], q0[:2])
        t0 = time.perf_counter()
        res_p = w.solve_paths(paths, q0)
        dt = time.perf_counter() - t0
        ok = float(np.mean([r.success.mean() for r in res_p]))
        rows.append(
            {
                "workload": f"{label}: {n_paths} paths x {frames} frames, one launch",
                "batch": n_paths * frames,
                "targets_per_s": n_paths * frames / dt,
                "success": ok,
            }
        )
        one = c.solve_path(paths[0], q0[0])
        parity.append(
            {
                "robot": name,
                "check": "solve_paths vs CPU solve_path: statuses identical / max |dq|",
                "value": f"{bool((one.status == res_p[0].status).all())} / "
                f"{float(np.abs(one.q - res_p[0].q).max()):.2e}",
            }
        )


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
        parity.append(
            {
                "robot": name,
                "check": "fk/jacobian max |diff|",
                "value": float(max(np.abs(T - T0).max(), np.abs(J - J0).max())),
            }
        )
    from ikstack.ik.numerical import LevenbergMarquardt

    for name in ("panda", "iiwa14", "ur5", "marvin_left"):
        chain = load(name)
        Qs = chain.random_q(rng, 8000)
        Tt = chain.fk(Qs[chain.constraints_satisfied(Qs)][:2000])
        opts = {"position_tolerance": 1e-6, "rotation_tolerance": 1e-6}
        r_gpu = wn.WarpLevenbergMarquardt(chain, device=args.device, **opts).solve(Tt)
        r_cpu = LevenbergMarquardt(chain, **opts).solve(Tt)
        parity.append(
            {
                "robot": name,
                "check": "numerical LM success rate gpu / cpu path; "
                "targets with different status / iterations / restarts",
                "value": f"{r_gpu.success.mean():.4f} / {r_cpu.success.mean():.4f}; "
                f"{int((r_gpu.status != r_cpu.status).sum())} / "
                f"{int((r_gpu.iterations != r_cpu.iterations).sum())} / "
                f"{int((r_gpu.restarts != r_cpu.restarts).sum())}",
            }
        )
    chain = load("panda")
    lm = wn.WarpLevenbergMarquardt(chain, device=args.device)
    # 2. throughput
    sizes = [1000, 10_000, 100_000, 1_000_000]
    sizes = [s for s in sizes if s <= args.max_batch][: 2 if args.quick else None]
    for n in sizes:
        Q = chain.random_q(rng, n)
        for label, fn in (
            ("fk", lambda Q=Q: bw.fk(chain, Q, device=args.device)),
            ("jacobian", lambda Q=Q: bw.jacobian(chain, Q, device=args.device)),
        ):
            fn()
            wp.synchronize_device(dev)
            t0 = time.perf_counter()
            fn()
            wp.synchronize_device(dev)
            dt = time.perf_counter() - t0
            rows.append(
                {"workload": f"panda {label}", "batch": n, "targets_per_s": n / dt, "success": None}
            )
        Tt = chain.fk(Q)
        lm.solve(Tt[:1000])
        t0 = time.perf_counter()
        res = lm.solve(Tt)
        dt = time.perf_counter() - t0
        rows.append(
            {
                "workload": "panda numerical IK (LM, restarts)",
                "batch": n,
                "targets_per_s": n / dt,
                "success": float(res.success.mean()),
            }
        )
    analytic_rows(args, rng, sizes, rows, parity)
    # 3. streaming
    m = 1000 if args.quick else 10_000
    qs = chain.middle()
    path = chain.fk(qs + 0.3 * np.sin(np.linspace(0, 6, m))[:, None])
    lat = np.empty(m)
    for i in range(m):
        t0 = time.perf_counter()
        r = lm.solve(path[i], q0=qs)
        lat[i] = time.perf_counter() - t0
        if r.success[0]:
            qs = r.q[0]
    rows.append(
        {
            "workload": "panda streaming single-target IK",
            "batch": 1,
            "targets_per_s": 1.0 / float(np.median(lat)),
            "success": f"median {np.median(lat) * 1e6:.0f} us, p99 "
            f"{np.percentile(lat, 99) * 1e6:.0f} us",
        }
    )
    mem_after = mem()
    print(f"GPU: {gpu_name}")
    print(format_table(parity, ["robot", "check", "value"]))
    print(format_table(rows, ["workload", "batch", "targets_per_s", "success"]))
    # only a full CUDA run is the recorded figure; a smoke or CPU-device run is named as such
    name = "gpu_check" if args.device.startswith("cuda") else f"gpu_check-{args.device}"
    path_out = write_report(
        name,
        {
            "gpu": gpu_name,
            "device": args.device,
            "quick": args.quick,
            "parity": parity,
            "rows": rows,
            "memory_mib_before": mem_before,
            "memory_mib_after": mem_after,
        },
        packages=("ikstack", "numpy", "numba", "warp-lang"),
    )
    print(f"wrote {path_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
