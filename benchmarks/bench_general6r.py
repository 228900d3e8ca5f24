"""General 6R elimination IK and locked-joint 7R IK (Rizon 4s): time and recovered share.

Usage: python benchmarks/bench_general6r.py [--quick]

Rows: construction time; per-pose time for one target per call and batched; the share of
FK-sampled in-limit targets recovered and the worst FK error of the returned solutions. For the
random 6R arm ik-geo's general 6R solver (a 2-D search) runs on the same targets (its solutions
checked with ikstack's FK gate at 1e-6, and at 1e-3 m / rad in ``peer_recovered_1e3``: its
search returns approximate roots); ratio = ik-geo / ikstack (> 1: ikstack faster). EAIK refuses
both arms (no closed-form family), so it is not listed. Rizon 4s: a fixed 16-lock grid on random
targets, and ``near_q0`` on continuous joint-space paths (each frame seeded by the previous).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import ikstack.robots as robots
from ikstack.bench import format_table, time_per_call, write_report
from ikstack.ik import certify
from ikstack.ik.analytic.general6r import General6R, LockedJoint7R
from ikstack.kinematics import fk
from ikstack.kinematics.forward import compile_chain
from ikstack.model import Chain, JointType
from ikstack.spatial import se3, so3

try:
    import ik_geo
except ImportError:  # pragma: no cover - optional peer
    ik_geo = None


def random_6r(seed: int) -> Chain:
    rng = np.random.default_rng(seed)
    origins = np.stack(
        [
            se3.make_transform(so3.exp(rng.normal(size=3)), 0.3 * rng.normal(size=3))
            for _ in range(6)
        ]
    )
    return Chain(
        joint_names=tuple(f"j{i}" for i in range(6)),
        joint_types=(JointType.REVOLUTE,) * 6,
        axes=rng.normal(size=(6, 3)),
        origins=origins,
        T_last_tip=np.eye(4),
        lower=-np.pi * np.ones(6),
        upper=np.pi * np.ones(6),
        velocity_limits=np.ones(6),
        acceleration_limits=np.ones(6),
        jerk_limits=np.ones(6),
        name="random 6R",
    )


def construction_s(make, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        make()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def batched_us(fn, n: int, reps: int) -> float:
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) / n)
    return float(np.median(times)) * 1e6


def ikgeo_robot(chain: Chain):
    """ik-geo's general 6R model of ``chain``: axes and offsets at zero, in the base frame."""
    c = compile_chain(chain)
    R, p = np.eye(3), np.zeros(3)
    h, pts = [], [np.zeros(3)]
    for i in range(6):
        p = p + R @ c.ps[i]
        R = R @ c.Rs[i]
        h.append(R[:, 2])
        pts.append(p.copy())
    p_tool = p + R @ c.p_end
    diffs = np.diff(np.vstack(pts + [p_tool]), axis=0)
    return ik_geo.Robot.gen_six_dof(np.array(h), diffs), R @ c.R_end


def bench_6r(n_targets: int, n_batch: int, n_peer: int, reps: int) -> list[dict]:
    chain = random_6r(0)
    General6R(chain)  # compile / load caches
    t_build = construction_s(lambda: General6R(chain), reps)
    solver = General6R(chain)
    rng = np.random.default_rng(1)
    q = chain.random_q(rng, n_targets)
    T = fk(chain, q)
    single = time_per_call(lambda: solver.solve(T[0]), samples=50 * reps, warmup=5)
    batch = batched_us(lambda: solver.solve(T[:n_batch], q0=q[:n_batch]), n_batch, reps)
    res = solver.solve(T, q0=q)
    worst = float(max(res.position_error[res.success].max(initial=0.0), 0.0))
    row = {
        "case": "random 6R",
        "construct_s": t_build,
        "single_us": single.median * 1e6,
        "batched_us": batch,
        "targets": n_targets,
        "recovered": res.success_rate,
        "worst_fk_m": worst,
        "worst_fk_rad": float(res.rotation_error[res.success].max()),
        "peer": None,
        "peer_us": None,
        "peer_recovered": None,
        "ratio": None,
    }
    if ik_geo is not None:
        robot, R_zero_tcp = ikgeo_robot(chain)
        Tp = T[:n_peer]
        t0 = time.perf_counter()
        # ik-geo takes the rotation transposed relative to ikstack's (row/column order)
        sols = [robot.get_ik((Tp[k, :3, :3] @ R_zero_tcp.T).T, Tp[k, :3, 3]) for k in range(n_peer)]
        peer_us = (time.perf_counter() - t0) / n_peer * 1e6
        free = chain.replace(lower=-np.inf * np.ones(6), upper=np.inf * np.ones(6))
        got = got_loose = 0
        for k, s in enumerate(sols):
            if s:
                qs = np.array([x[0] for x in s])
                got += bool(certify(free, qs, Tp[k], 1e-6, 1e-6)[0].any())
                got_loose += bool(certify(free, qs, Tp[k], 1e-3, 1e-3)[0].any())
        row.update(
            peer="ik-geo gen_six_dof",
            peer_us=peer_us,
            peer_recovered=got / n_peer,
            peer_recovered_1e3=got_loose / n_peer,
            ratio=peer_us / batch,
        )
    return [row]


def random_paths(chain: Chain, rng: np.random.Generator, n_paths: int, frames: int):
    lo, hi = chain.lower, chain.upper
    for _ in range(n_paths):
        q0 = rng.uniform(lo + 0.1 * (hi - lo), hi - 0.1 * (hi - lo))
        q1 = np.clip(q0 + rng.uniform(-0.6, 0.6, chain.dof), lo, hi)
        s = np.linspace(0.0, 1.0, frames)[:, None]
        yield q0, q0 + s * (q1 - q0)


def bench_rizon(
    n_targets: int, n_batch: int, n_paths: int, frames: int, reps: int, name: str = "rizon4s"
) -> list[dict]:
    chain = robots.load(name)
    LockedJoint7R(chain)
    t_build = construction_s(lambda: LockedJoint7R(chain), reps)
    solver = LockedJoint7R(chain)
    rng = np.random.default_rng(2)
    q = chain.random_q(rng, n_targets)
    T = fk(chain, q)
    rows = []
    for mode in ("fixed", "near_q0"):
        single = time_per_call(
            lambda mode=mode: solver.solve(T[0], q0=q[0], search=mode), samples=10 * reps, warmup=2
        )
        batch = batched_us(
            lambda mode=mode: solver.solve(T[:n_batch], q0=q[:n_batch], search=mode), n_batch, reps
        )
        row = {
            "case": f"{name} {mode} ({solver.candidates_for(mode)} slots)",
            "construct_s": t_build,
            "single_us": single.median * 1e6,
            "batched_us": batch,
        }
        if mode == "fixed":
            res = solver.solve(T, search="fixed")
            row.update(
                targets=n_targets,
                recovered=res.success_rate,
                worst_fk_m=float(res.position_error[res.success].max(initial=0.0)),
                worst_fk_rad=float(res.rotation_error[res.success].max(initial=0.0)),
            )
        else:
            ok = 0
            total = 0
            worst_p = worst_r = 0.0
            for q0, path in random_paths(chain, rng, n_paths, frames):
                r = solver.solve_path(fk(chain, path), q0=q0, search="near_q0")
                ok += int(r.success.sum())
                total += len(r)
                if r.success.any():
                    worst_p = max(worst_p, float(r.position_error[r.success].max()))
                    worst_r = max(worst_r, float(r.rotation_error[r.success].max()))
            row.update(
                targets=f"{total} path frames",
                recovered=ok / total,
                worst_fk_m=worst_p,
                worst_fk_rad=worst_r,
            )
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small sample counts (smoke test)")
    ap.add_argument("--skip-6r", action="store_true", help="only the locked-joint 7R rows")
    args = ap.parse_args()
    rows = []
    if args.quick:
        rows += [] if args.skip_6r else bench_6r(200, 100, 20, 2)
        for name in ("rizon4", "rizon4s"):
            rows += bench_rizon(50, 20, 2, 10, 2, name)
    else:
        rows += [] if args.skip_6r else bench_6r(10_000, 1000, 1000, 5)
        for name in ("rizon4", "rizon4s"):
            rows += bench_rizon(10_000, 200, 100, 100, 3, name)
    cols = [
        "case",
        "construct_s",
        "single_us",
        "batched_us",
        "targets",
        "recovered",
        "worst_fk_m",
        "worst_fk_rad",
        "peer",
        "peer_us",
        "peer_recovered",
        "peer_recovered_1e3",
        "ratio",
    ]
    print(
        "Per-pose time [us]; recovered = share of FK-sampled targets certified;"
        " ratio = peer / ikstack batched"
    )
    print(format_table(rows, cols))
    path = write_report(
        "bench_general6r",
        {"rows": rows, "quick": args.quick},
        packages=("ikstack", "numpy", "scipy", "numba", "ik-geo"),
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
