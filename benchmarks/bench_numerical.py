"""Numerical IK on TRAC-IK's protocol, beside Robotics Toolbox's C++ ``ik_LM`` and ikpy.

Protocol (TRAC-IK, Beeson and Ames 2015): per arm, FK-sampled targets from uniform in-limit
joints (Marvin: also within its J6/J7 constraint), tolerance 1e-5 (position [m] and rotation
[rad]), every solve seeded at the middle of the limits. A solve counts as a success only when
its answer, checked by ikstack's FK, is within limits and within 1e-5 on both errors, whatever
the solver itself reports.

Solvers:
- ikstack ``LevenbergMarquardt`` (Chan damping, 30 iterations a search, 100 restarts), one call
  per target ("single") and one call for all targets ("batched", per-target time = total / N).
- Robotics Toolbox ``ETS.ik_LM`` (C++, Chan damping, ilimit 30, slimit 100), its tolerance set
  on the squared error ``E = 1/2 e^T e`` to 5e-11 (= 1/2 (1e-5)^2, so a reported success
  implies |e| <= 1e-5; the often-quoted 1.25e-9 leaves 20-30 % of its answers above 1e-5).
- ikpy ``inverse_kinematics_frame`` (scipy least squares), on a subset: it takes milliseconds.

Timing: singles are timed ``--repeats`` times and each target keeps its fastest time (ikstack
and ik_LM alike); a batch keeps its fastest run. The table compares means (a batch has only a
mean per target). Where the batch's time goes ("breakdown" in the JSON):

- ``compiled_per_target_us``: the batch on one thread, per target: the compiled search and
  gate, with no per-call Python;
- ``single_overhead_us``: what one ``solve`` call costs beyond its compiled work (a target its
  seed already solves, single call less its per-target time in a one-thread batch);
- ``speedup_bound``: ``cores x single mean / compiled``: a batch saves each target the call
  overhead and spreads the compiled work over the cores, nothing more;
- ``compiled_us_needed_for_10x``: the compiled work per target below which a batch on these
  cores would be ten times faster per target than singles (``cores x overhead / (10 - cores)``).

Usage: ``python benchmarks/bench_numerical.py [--quick] [--n N] [--arms panda iiwa14 ...]``.
Writes ``benchmarks/results/bench_numerical.json`` (``-quick.json`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import warnings
from pathlib import Path

import numba
import numpy as np

import ikstack
import ikstack.robots as robots
from ikstack.ik import certify
from ikstack.ik.numerical import LevenbergMarquardt
from ikstack.kinematics import fk

TOL = 1e-5
RTB_TOL = 0.5 * TOL**2
ARMS = {  # name: (URDF for the peers, tip link)
    "panda": ("panda.urdf", "panda_link8"),
    "iiwa14": ("iiwa14.urdf", "iiwa_link_ee"),
    "rizon4": ("rizon4.urdf", "flange"),
    "marvin_left": ("marvin_left.urdf", "flange"),
}


def _targets(chain, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = np.empty((0, chain.dof))
    while q.shape[0] < n:
        c = chain.random_q(rng, n)
        if chain.constraints:
            c = c[chain.constraints_satisfied(c)]
        q = np.concatenate([q, c])
    q = q[:n]
    return q, fk(chain, q)


def _stats(times_s: np.ndarray) -> dict:
    us = np.asarray(times_s) * 1e6
    return {
        "median_us": float(np.median(us)),
        "p95_us": float(np.percentile(us, 95)),
        "mean_us": float(np.mean(us)),
    }


def _score(chain, Q: np.ndarray, T: np.ndarray) -> float:
    ok, _, _ = certify(chain, Q, T, TOL, TOL, limit_tolerance=1e-12)
    return float(ok.mean())


def run_ikstack(chain, T: np.ndarray, repeats: int, batch_repeats: int) -> dict:
    """Singles timed ``repeats`` times, the batch on all cores and on one core
    ``batch_repeats`` times (a target's single time is its fastest; a batch's the fastest run:
    the machine may be shared, and other load only ever adds time)."""
    solver = LevenbergMarquardt(chain, position_tolerance=TOL, rotation_tolerance=TOL)
    mid = chain.middle()
    solver.solve(T[:2], q0=mid)  # compile / load caches outside the clock
    solver.solve(T[:200], q0=mid)
    solver.solve(T[0], q0=mid)
    n = T.shape[0]
    times = np.full(n, np.inf)
    Q = np.empty((n, chain.dof))
    ok = np.empty(n, dtype=bool)
    for _ in range(repeats):
        for i in range(n):
            t0 = time.perf_counter()
            r = solver.solve(T[i], q0=mid)
            times[i] = min(times[i], time.perf_counter() - t0)
            Q[i] = r.q[0]
            ok[i] = r.success[0]
    # Python overhead of one query: a target whose seed already solves it (no iteration), less
    # the compiled work of that one evaluation, measured the same way in a batch
    q_hit = chain.random_q(np.random.default_rng(1), 1)[0]
    T_hit = fk(chain, q_hit)
    trivial = min(_timed(lambda: solver.solve(T_hit, q0=q_hit)) for _ in range(2000))
    T_hits = np.repeat(T_hit[None], 2000, axis=0)
    batch_s = np.inf
    for _ in range(batch_repeats):
        t0 = time.perf_counter()
        rb = solver.solve(T, q0=mid)
        batch_s = min(batch_s, time.perf_counter() - t0)
    threads = numba.get_num_threads()
    serial_s = serial_cpu = np.inf
    numba.set_num_threads(1)
    try:
        for _ in range(batch_repeats):
            t0, c0 = time.perf_counter(), time.process_time()
            solver.solve(T, q0=mid)
            serial_s = min(serial_s, time.perf_counter() - t0)
            serial_cpu = min(serial_cpu, time.process_time() - c0)
        trivial_batch = (
            min(_timed(lambda: solver.solve(T_hits, q0=q_hit)) for _ in range(20)) / 2000
        )
    finally:
        numba.set_num_threads(threads)
    single = _stats(times)
    batch_us = batch_s / n * 1e6
    serial_us = serial_s / n * 1e6
    overhead_us = (trivial - trivial_batch) * 1e6
    return {
        "single": {**single, "success": float(ok.mean()), "success_checked": _score(chain, Q, T)},
        "batched": {
            "per_target_us": batch_us,
            "total_s": batch_s,
            "threads": threads,
            "success": float(rb.success.mean()),
            "success_checked": _score(chain, rb.q, T),
            "iterations_mean": float(rb.iterations.mean()),
            "iterations_p99": float(np.percentile(rb.iterations, 99)),
            "restarts_mean": float(rb.restarts.mean()),
            "restarted_share": float((rb.restarts > 0).mean()),
        },
        "breakdown": {
            "compiled_per_target_us": serial_us,
            "compiled_per_target_cpu_us": serial_cpu / n * 1e6,
            "single_overhead_us": overhead_us,
            "speedup_mean_over_mean": single["mean_us"] / batch_us,
            "parallel_efficiency": serial_us / (batch_us * threads),
            "speedup_bound": threads * single["mean_us"] / serial_us,
            "compiled_us_needed_for_10x": threads * overhead_us / max(10 - threads, 1e-9),
        },
    }


def _timed(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def run_rtb(chain, T: np.ndarray, urdf: str, tip: str, repeats: int) -> dict:
    try:
        import roboticstoolbox as rtb
    except ImportError:
        return {"error": "roboticstoolbox-python is not installed"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ets = rtb.Robot.URDF(str(robots.data_path(urdf))).ets(end=tip)
    mid = chain.middle()
    ets.ik_LM(T[0], q0=mid, tol=RTB_TOL, ilimit=30, slimit=100)
    n = T.shape[0]
    times = np.empty(n)
    Q = np.empty((n, chain.dof))
    reported = np.empty(n, dtype=bool)
    times[:] = np.inf
    for _ in range(repeats):
        for i in range(n):
            t0 = time.perf_counter()
            s = ets.ik_LM(T[i], q0=mid, tol=RTB_TOL, ilimit=30, slimit=100)
            times[i] = min(times[i], time.perf_counter() - t0)
            Q[i] = s.q
            reported[i] = s.success
    return {
        "single": {
            **_stats(times),
            "success": float(reported.mean()),
            "success_checked": _score(chain, Q, T),
        }
    }


def _urdf_path(urdf: str, base: str, tip: str) -> list[str]:
    """ikpy's element list ``[link, joint, link, ...]`` from ``base`` to ``tip``."""
    import xml.etree.ElementTree as ET

    root = ET.parse(str(robots.data_path(urdf))).getroot()
    parent_of = {
        j.find("child").get("link"): (j.get("name"), j.find("parent").get("link"))
        for j in root.iter("joint")
    }
    path = [tip]
    while path[-1] != base:
        joint, parent = parent_of[path[-1]]
        path += [joint, parent]
    return path[::-1]


def run_ikpy(chain, T: np.ndarray, urdf: str, tip: str) -> dict:
    try:
        from ikpy.chain import Chain as IkpyChain
    except ImportError:
        return {"error": "ikpy is not installed"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            path = _urdf_path(urdf, chain.base, tip)
            ic = IkpyChain.from_urdf_file(str(robots.data_path(urdf)), base_elements=path)
        except Exception as exc:  # ikpy raises plain exceptions on URDFs it cannot walk
            return {"error": f"ikpy could not load {urdf}: {exc}"}
        names = [lk.name for lk in ic.links]
        if path[-2] in names:  # ikpy keeps walking past the tip; cut the chain there
            links = ic.links[: names.index(path[-2]) + 1]
            ic = IkpyChain(links, active_links_mask=[False] * len(links))
            names = names[: len(links)]
        active = [nm in chain.joint_names for nm in names]
        ic = IkpyChain(ic.links, active_links_mask=active, name=chain.name)
        if sum(active) != chain.dof:
            return {"error": f"ikpy chain has {sum(active)} active joints, expected {chain.dof}"}
        mid_full = np.zeros(len(names))
        idx = [i for i, a in enumerate(active) if a]
        mid_full[idx] = chain.middle()
        n = T.shape[0]
        times = np.empty(n)
        Q = np.empty((n, chain.dof))
        for i in range(n):
            t0 = time.perf_counter()
            sol = ic.inverse_kinematics_frame(
                T[i], initial_position=mid_full, orientation_mode="all"
            )
            times[i] = time.perf_counter() - t0
            Q[i] = np.asarray(sol)[idx]
    return {"single": {**_stats(times), "success_checked": _score(chain, Q, T), "n": n}}


def _versions() -> dict:
    import numba

    v = {
        "ikstack": ikstack.__version__,
        "numpy": np.__version__,
        "numba": numba.__version__,
        "python": platform.python_version(),
    }
    for mod in ("roboticstoolbox", "ikpy"):
        try:
            m = __import__(mod)
            v[mod] = getattr(m, "__version__", "?")
        except ImportError:
            v[mod] = None
    return v


def _machine() -> dict:
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "numba_threads": int(os.environ.get("NUMBA_NUM_THREADS", os.cpu_count() or 1)),
    }


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="200 targets, 20 for ikpy")
    ap.add_argument("--n", type=int, default=None, help="targets per arm (default 10000)")
    ap.add_argument("--ikpy-n", type=int, default=None, help="targets for ikpy (default 200)")
    ap.add_argument("--arms", nargs="+", default=list(ARMS), choices=list(ARMS))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="timing passes of the singles, fastest kept (default 3; 1 with --quick)",
    )
    ap.add_argument(
        "--batch-repeats",
        type=int,
        default=None,
        help="timing passes of each batch, fastest kept (default 10; 1 with --quick)",
    )
    ap.add_argument(
        "--out",
        default=None,
        help="result file (default results/bench_numerical.json, -quick.json with --quick)",
    )
    args = ap.parse_args(argv)
    n = args.n or (200 if args.quick else 10_000)
    n_ikpy = args.ikpy_n or (20 if args.quick else 200)
    repeats = args.repeats or (1 if args.quick else 3)
    batch_repeats = args.batch_repeats or (1 if args.quick else 10)
    load_before = os.getloadavg()

    rows = {}
    for name in args.arms:
        urdf, tip = ARMS[name]
        chain = robots.load(name)
        _, T = _targets(chain, n, args.seed)
        rows[name] = {
            "n": n,
            "ikstack": run_ikstack(chain, T, repeats, batch_repeats),
            "rtb_ik_LM": run_rtb(chain, T, urdf, tip, repeats),
            "ikpy": run_ikpy(chain, T[:n_ikpy], urdf, tip),
        }
        print(f"  {name}: done", flush=True)

    result = {
        "benchmark": "bench_numerical",
        "protocol": {
            "targets": "FK of uniform in-limit joints",
            "tolerance": TOL,
            "seed": "middle of limits",
            "success": "ikstack FK check: within limits and both errors <= 1e-5",
            "rtb_tol_squared_error": RTB_TOL,
            "n": n,
            "n_ikpy": n_ikpy,
            "timing_repeats": repeats,
            "batch_timing_repeats": batch_repeats,
        },
        "versions": _versions(),
        "machine": {
            **_machine(),
            "loadavg_1min_before_after": [load_before[0], os.getloadavg()[0]],
        },
        "arms": rows,
    }
    print(format_table(result))
    name = "bench_numerical-quick.json" if args.quick else "bench_numerical.json"
    out = Path(args.out) if args.out else Path(__file__).parent / "results" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(f"wrote {out}")
    return result


def format_table(result: dict) -> str:
    hdr = (
        f"{'arm':<12} {'solver':<22} {'success':>8} {'median us':>10} {'mean us':>9} "
        f"{'p95 us':>9} {'vs ik_LM':>9}"
    )
    lines = [
        f"numerical IK, TRAC-IK protocol: N = {result['protocol']['n']} per arm "
        f"(ikpy: {result['protocol']['n_ikpy']}), tol 1e-5, seeded at mid-limits; "
        "'vs ik_LM' compares means",
        hdr,
        "-" * len(hdr),
    ]
    nan = float("nan")
    for arm, r in result["arms"].items():
        rtb = r["rtb_ik_LM"].get("single")
        ref = rtb["mean_us"] if rtb else None
        ik = r["ikstack"]
        b = ik["batched"]
        entries = [
            ("ikstack LM single", ik["single"]),
            (
                f"ikstack LM batched ({b['threads']}t)",
                {
                    "success_checked": b["success_checked"],
                    "median_us": nan,
                    "mean_us": b["per_target_us"],
                    "p95_us": nan,
                },
            ),
            ("rtb ik_LM (C++)", rtb),
            ("ikpy", r["ikpy"].get("single")),
        ]
        for label, s in entries:
            if s is None:
                err = r["rtb_ik_LM" if "rtb" in label else "ikpy"].get("error", "n/a")
                lines.append(f"{arm:<12} {label:<22} {err}")
                continue
            ratio = f"{s['mean_us'] / ref:8.2f}x" if ref else f"{'-':>9}"
            lines.append(
                f"{arm:<12} {label:<22} {s['success_checked'] * 100:7.2f}% "
                f"{s['median_us']:10.1f} {s['mean_us']:9.1f} {s['p95_us']:9.1f} {ratio}"
            )
        k = ik["breakdown"]
        lines.append(
            f"{arm:<12} single/batched mean {k['speedup_mean_over_mean']:.1f}x; bound "
            f"{b['threads']} cores x single {ik['single']['mean_us']:.1f} / compiled "
            f"{k['compiled_per_target_us']:.1f} us (CPU time "
            f"{k['compiled_per_target_cpu_us']:.1f}) = {k['speedup_bound']:.1f}x (parallel "
            f"efficiency {k['parallel_efficiency'] * 100:.0f}%); Python overhead per single "
            f"query {k['single_overhead_us']:.1f} us; 10x needs compiled <= "
            f"{k['compiled_us_needed_for_10x']:.1f} us/target"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
