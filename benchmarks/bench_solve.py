"""Throughput of ``ikstack solve``: frames per second for 1 and 2 local workers and for Ray.

Generates a dataset of smooth in-limit episodes (NPZ, default 1,000 episodes x 500 frames per
robot) for UR5 and Panda, converts it with the job on each engine, and compares with a bare
single-process loop doing the same read -> solve -> write without the job (the peer: what the
job's planning, validation, certification, atomic writes and process management cost).

Solver: by default (``--solver library``) the library's path solvers the job uses, i.e. the
analytic compiled path solver (``AnalyticIK.solve_path``) for UR5 and Panda. ``--solver newton``
runs a stand-in instead (a batched Newton iteration seeded at the posture the benchmark's paths
move around, certified by FK) that measures the job machinery and its scaling, not the
library's IK; ``--solver auto`` uses the library when its solvers are installed.

Usage: ``python benchmarks/bench_solve.py [--quick] [--robots ur5 panda] [--solver library]``
Writes ``benchmarks/results/bench_solve.json`` (``bench_solve-quick.json`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ikstack.ik import IKResult, IKStatus, certify
from ikstack.jobs import Progress, SolveConfig, read_episode, run_job
from ikstack.jobs.episode import SolvedEpisode
from ikstack.jobs.formats import write_solved
from ikstack.jobs.path import default_path_solver_factory
from ikstack.jobs.samples import SAMPLE_HOMES, joint_path
from ikstack.kinematics import fk, fk_jacobian
from ikstack.robots import load
from ikstack.spatial import pose_error, to_pose

RESULTS = Path(__file__).parent / "results" / "bench_solve.json"


# ---------------------------------------------------------------------------- stand-in solver
def newton_factory(config):
    """Batched damped Newton from the benchmark paths' home posture, certified by FK."""
    chain = config.chain
    home = np.asarray(SAMPLE_HOMES[chain.name], dtype=np.float64)

    def path(T_path, seed):
        n = T_path.shape[0]
        q = np.tile(home, (n, 1))
        eye = 1e-9 * np.eye(6)
        for _ in range(12):
            Tq, J = fk_jacobian(chain, q)
            e = pose_error(T_path, Tq)
            Jt = J.transpose(0, 2, 1)
            dq = (Jt @ np.linalg.solve(J @ Jt + eye, e[..., None]))[..., 0]
            q = chain.clip(q + dq)
        ok, pe, re = certify(chain, q, T_path, 1e-6, 1e-5)
        status = np.where(ok, int(IKStatus.SUCCESS), int(IKStatus.ITERATION_LIMIT))
        z = np.zeros(n, dtype=np.int64)
        return IKResult(q, ok, pe, re, status.astype(np.int64), "bench_newton", z, z.copy())

    return path


# ------------------------------------------------------------------------------------ dataset
def make_dataset(folder: Path, robot: str, episodes: int, frames: int, seed: int = 0) -> None:
    chain = load(robot)
    rng = np.random.default_rng(seed)
    home = np.asarray(SAMPLE_HOMES[robot], dtype=np.float64)
    folder.mkdir(parents=True, exist_ok=True)
    for e in range(episodes):
        t, q = joint_path(chain, home, rng, frames, 50.0)
        p, quat = to_pose(fk(chain, q))
        np.savez(
            folder / f"ep_{e:05d}.npz",
            timestamp=t,
            x=p[:, 0],
            y=p[:, 1],
            z=p[:, 2],
            qw=quat[:, 0],
            qx=quat[:, 1],
            qy=quat[:, 2],
            qz=quat[:, 3],
        )


def bare_loop(folder: Path, out: Path, chain, factory) -> tuple[float, float, int, int]:
    """The peer: read, solve and write each episode in one plain loop; also returns the time
    spent in the solver alone [s]."""
    solver = factory(SolveConfig(chain, path_solver_factory=factory))
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    frames = solved = 0
    solve_time = 0.0
    for f in sorted(folder.glob("*.npz")):
        ep = read_episode(f)
        ts = time.perf_counter()
        r = solver(ep.T_base_tcp, None)
        solve_time += time.perf_counter() - ts
        write_solved(
            out / f.name,
            SolvedEpisode(
                ep.timestamps,
                chain.joint_names,
                r.q,
                r.success,
                r.position_error,
                r.rotation_error,
                r.status,
            ),
        )
        frames += len(ep)
        solved += int(r.success.sum())
    return time.perf_counter() - t0, solve_time, frames, solved


def versions() -> dict[str, str]:
    out = {"python": platform.python_version()}
    for mod in ("numpy", "numba", "ray", "pyarrow", "ikstack"):
        try:
            out[mod] = str(importlib.import_module(mod).__version__)
        except Exception:
            out[mod] = "not installed"
    return out


def machine() -> dict[str, object]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "load_average_1_5_15_min_at_end": load,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20 episodes x 100 frames")
    ap.add_argument("--episodes", type=int, default=None)
    ap.add_argument("--frames", type=int, default=None)
    ap.add_argument("--robots", nargs="+", default=["ur5", "panda"])
    ap.add_argument("--solver", choices=["auto", "library", "newton"], default="library")
    ap.add_argument("--no-ray", action="store_true")
    args = ap.parse_args(argv)
    episodes = args.episodes or (20 if args.quick else 1000)
    frames = args.frames or (100 if args.quick else 500)
    use_library = args.solver in ("library", "auto")  # the library's solvers always ship
    factory = default_path_solver_factory if use_library else newton_factory
    solver_name = "library" if use_library else "bench_newton (stand-in)"
    have_ray = importlib.util.find_spec("ray") is not None and not args.no_ray
    rows = []
    work = Path(tempfile.mkdtemp(prefix="bench_solve_"))
    try:
        for robot in args.robots:
            chain = load(robot)
            data = work / robot / "in"
            make_dataset(data, robot, episodes, frames)
            factory(SolveConfig(chain, path_solver_factory=factory))(
                read_episode(next(data.glob("*.npz"))).T_base_tcp, None
            )  # compile kernels before timing
            dt, solve_s, n, ok = bare_loop(data, work / robot / "bare", chain, factory)
            rows.append(
                {
                    "robot": robot,
                    "engine": "bare loop (peer)",
                    "workers": 1,
                    "frames": n,
                    "success_rate": ok / n,
                    "seconds": dt,
                    "frames_per_second": n / dt,
                    "solver_frames_per_second": n / solve_s,
                }
            )
            runs = [("local", 1), ("local", 2)] + ([("ray", 2)] if have_ray else [])
            for engine, workers in runs:
                cfg = SolveConfig(chain, path_solver_factory=factory)
                s = run_job(
                    data,
                    work / robot / f"{engine}{workers}",
                    cfg,
                    engine=engine,
                    workers=workers,
                    progress=Progress.silent(),
                )
                rows.append(
                    {
                        "robot": robot,
                        "engine": engine,
                        "workers": workers,
                        "frames": s.frames,
                        "success_rate": s.success_rate,
                        "seconds": s.seconds,
                        "frames_per_second": s.frames_per_second,
                        "frames_per_cpu_second": s.frames / s.cpu_seconds,
                        "job_overhead_us_per_frame": 1e6 * (s.cpu_seconds - solve_s) / s.frames,
                    }
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for r in rows:
        base = next(
            x
            for x in rows
            if x["robot"] == r["robot"] and x["engine"] == "local" and x["workers"] == 1
        )
        r["scaling_vs_1_worker"] = r["frames_per_second"] / base["frames_per_second"]
    print(
        f"ikstack solve throughput: {episodes} episodes x {frames} frames per robot, "
        f"solver {solver_name}"
    )
    print(
        f"{'robot':<8} {'engine':<17} {'workers':>7} {'frames':>9} {'success':>8} "
        f"{'time [s]':>9} {'frames/s':>10} {'scaling':>8} {'per core':>9} {'overhead':>9}"
    )
    for r in rows:
        print(
            f"{r['robot']:<8} {r['engine']:<17} {r['workers']:>7} {r['frames']:>9,} "
            f"{100 * r['success_rate']:>7.2f}% {r['seconds']:>9.2f} "
            f"{r['frames_per_second']:>10,.0f} {r['scaling_vs_1_worker']:>7.2f}x "
            + (
                f"{r['frames_per_cpu_second']:>9,.0f} {r['job_overhead_us_per_frame']:>6.1f} us"
                if "frames_per_cpu_second" in r
                else f"{'solver alone: ':>9}{r['solver_frames_per_second']:,.0f} frames/s"
            )
        )
    print(
        "per core: frames per second of worker time; overhead: reading, gating and writing "
        "per frame (worker time minus the solver's time in the peer loop)"
    )
    info = machine()
    print(
        f"machine: {info['cores']} cores, load average {info['load_average_1_5_15_min_at_end']}"
        " (other processes share the cores: per-core numbers of 2 workers drop when the "
        "load is above cores - 2)"
    )
    # a smoke run never overwrites the recorded full run (as ikstack.bench.write_report does)
    out = RESULTS.with_name("bench_solve-quick.json") if args.quick else RESULTS
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {
                "benchmark": "bench_solve",
                "episodes": episodes,
                "frames": frames,
                "solver": solver_name,
                "quick": args.quick,
                "rows": rows,
                "versions": versions(),
                "machine": info,
                "argv": sys.argv[1:],
            },
            indent=2,
        )
        + "\n"
    )
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
