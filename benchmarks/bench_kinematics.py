"""FK and Jacobian: single-call latency and batched throughput, beside Pinocchio.

Usage: python benchmarks/bench_kinematics.py [--quick]

Pinocchio is called from Python the way users call it: one call per configuration (a Python
loop for batches). Ratios > 1 mean ikstack is faster.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import ikstack
from ikstack.bench import format_table, time_per_call, write_report
from ikstack.kinematics import fk, jacobian

try:
    import pinocchio as pin
except ImportError:  # pragma: no cover - optional peer
    pin = None


def erd_urdf(rel: str) -> str:
    from pathlib import Path

    base = Path(pin.__file__).resolve()
    for parent in base.parents:
        cand = parent / "share" / "example-robot-data" / "robots" / rel
        if cand.exists():
            return str(cand)
    raise FileNotFoundError(rel)


CASES = [
    ("ur5 (6R)", "ur_description/urdf/ur5_robot.urdf", "base_link", "tool0"),
    ("panda (7R)", "panda_description/urdf/panda.urdf", "panda_link0", "panda_link8"),
]


def bench_case(label, rel, base, tip, samples, batches, quick):
    """Rows for one robot: single calls and batches, ikstack beside Pinocchio."""
    rows = []
    path = erd_urdf(rel)
    chain = ikstack.load_urdf(path, base, tip)
    model = pin.buildModelFromUrdf(path)
    data = model.createData()
    fid = model.getFrameId(tip)
    rng = np.random.default_rng(0)
    q = chain.middle() + 0.1
    qp = pin.neutral(model)
    qp[: chain.dof] = q
    LWA = pin.LOCAL_WORLD_ALIGNED

    def pin_fk(qq=qp):
        pin.forwardKinematics(model, data, qq)
        return pin.updateFramePlacement(model, data, fid)

    def pin_jac(qq=qp):
        return pin.computeFrameJacobian(model, data, qq, fid, LWA)

    for op, ours, peer in (
        ("fk", lambda: fk(chain, q), pin_fk),
        ("jacobian", lambda: jacobian(chain, q), pin_jac),
    ):
        t_ours = time_per_call(ours, samples=samples, inner=20)
        t_pin = time_per_call(peer, samples=samples, inner=20)
        rows.append(
            {
                "robot": label,
                "op": op,
                "mode": "single call",
                "ikstack_us": t_ours.median * 1e6,
                "ikstack_p95_us": t_ours.p95 * 1e6,
                "pinocchio_us": t_pin.median * 1e6,
                "pinocchio_p95_us": t_pin.p95 * 1e6,
                "ratio": t_pin.median / t_ours.median,
            }
        )
    for n in batches:
        Q = chain.random_q(rng, n)
        Qp = np.tile(pin.neutral(model), (n, 1))
        Qp[:, : chain.dof] = Q
        for op, ours, peer in (("fk", fk, pin_fk), ("jacobian", jacobian, pin_jac)):
            reps = max(3, min(200, 200_000 // n)) if not quick else 3
            t_ours = time_per_call(lambda op=ours, Q=Q: op(chain, Q), samples=reps, warmup=2, per=n)
            m = min(max(n, 2000), 20_000)  # enough calls for a stable figure
            t0 = time.perf_counter()
            for k in range(m):
                peer(Qp[k % n])
            t_pin = (time.perf_counter() - t0) / m
            rows.append(
                {
                    "robot": label,
                    "op": op,
                    "mode": f"batch {n}",
                    "ikstack_us": t_ours.median * 1e6,
                    "ikstack_p95_us": t_ours.p95 * 1e6,
                    "pinocchio_us": t_pin * 1e6,
                    "pinocchio_p95_us": None,
                    "ratio": t_pin / t_ours.median,
                }
            )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="small sample counts (smoke test)")
    args = ap.parse_args()
    samples = 200 if args.quick else 5000
    batches = [1, 100, 10_000] if args.quick else [1, 100, 10_000, 100_000]
    rows: list[dict] = []
    for label, rel, base, tip in CASES:
        rows += bench_case(label, rel, base, tip, samples, batches, args.quick)
    cols = ["robot", "op", "mode", "ikstack_us", "ikstack_p95_us", "pinocchio_us", "ratio"]
    print("Per-configuration time [us]; ratio = pinocchio / ikstack (> 1: ikstack faster)")
    print(format_table(rows, cols))
    path = write_report(
        "bench_kinematics",
        {"rows": rows, "quick": args.quick},
        packages=("ikstack", "numpy", "numba", "pin"),
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
