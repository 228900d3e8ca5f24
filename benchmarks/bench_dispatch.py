"""What a compiled call costs per argument: why single-target kernels take packed records.

A numerical solver's constant data (chain, constraint tables, search settings, FK gate: 25
fields) reach a compiled single-target call in three ways, timed here on an empty kernel:

- ``packed``: the two arrays of
  :data:`ikstack.ik.numerical._single_target.PACKING`, unpacked into the records inside the
  kernel (what the solver does);
- ``records``: the four named tuples themselves (numba types a named tuple field by field in
  Python on every call);
- ``fields``: every field as its own argument (the old kernel signatures).

what a single-target solve's FK gate (:class:`ikstack.ik._fixed_gate.FastGate`, its chain,
constraint and gate records) costs per call on one row, the gate's FK and checks included;
and what unpacking costs inside a kernel that does it on every call (the velocity QP's step):
its workspace (:data:`ikstack.diffik._qp_workspace.WORKSPACE`, 48 fields) unpacked with strided
views (what the step does) against reshaped ones, each kernel reading one element of every
multi-dimensional field.

Run: ``python benchmarks/bench_dispatch.py [--quick]``; writes
``benchmarks/results/bench_dispatch.json``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from numba import njit

from ikstack._records import Packing
from ikstack.bench import write_report
from ikstack.diffik import ActiveSetQPSolver
from ikstack.diffik._qp_workspace import WORKSPACE
from ikstack.ik._fixed_gate import FastGate
from ikstack.ik.numerical import LevenbergMarquardt
from ikstack.ik.numerical._single_target import PACKING
from ikstack.robots import load

_unpack = PACKING.unpack


@njit(cache=True)
def _packed(fl, il):  # pragma: no cover - compiled
    chain, cons, lm, gate = _unpack(fl, il)
    return chain.Rs[0, 0, 0] + lm.tol_p + gate.tol_r + cons.b.shape[0]


@njit(cache=True)
def _records(chain, cons, lm, gate):  # pragma: no cover - compiled
    return chain.Rs[0, 0, 0] + lm.tol_p + gate.tol_r + cons.b.shape[0]


_unpack_strided = WORKSPACE.unpack
RESHAPED = Packing(*WORKSPACE.records)  # the same layout, multi-dimensional fields reshaped
_unpack_reshaped = RESHAPED.unpack


@njit(cache=True)
def _qp_strided(fl, il):  # pragma: no cover - compiled
    _, ch, rows, _, w = _unpack_strided(fl, il)
    return (
        ch.Rs[0, 0, 0] + ch.ps[0, 0] + ch.R_end[0, 0] + rows.qtab[0, 0, 0, 0] + w.T[0, 0]
        + w.J[0, 0] + w.P[0, 0] + w.G[0, 0] + w.T_new[0, 0] + w.J_new[0, 0]
    )  # fmt: skip


@njit(cache=True)
def _qp_reshaped(fl, il):  # pragma: no cover - compiled
    _, ch, rows, _, w = _unpack_reshaped(fl, il)
    return (
        ch.Rs[0, 0, 0] + ch.ps[0, 0] + ch.R_end[0, 0] + rows.qtab[0, 0, 0, 0] + w.T[0, 0]
        + w.J[0, 0] + w.P[0, 0] + w.G[0, 0] + w.T_new[0, 0] + w.J_new[0, 0]
    )  # fmt: skip


def _fields_kernel(n: int):  # noqa: ANN202
    names = [f"a{i}" for i in range(n)]
    ns: dict = {}
    exec(f"def fields({', '.join(names)}):\n    return a0[0, 0, 0]\n", ns)  # noqa: S102
    return njit(ns["fields"])


def best_ns(f, args, n: int, reps: int) -> float:  # noqa: ANN001
    f(*args)
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            f(*args)
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer calls (smoke test)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "bench_dispatch.json"))
    args = ap.parse_args()
    n, reps = (20_000, 3) if args.quick else (200_000, 7)
    ik = LevenbergMarquardt(load("panda"))
    recs = (
        ik._chain_data,
        ik._cons_data,
        ik._settings,
        PACKING.unpack.py_func(*ik._pack)[3],
    )  # the gate record, as packed
    fields = [v for r in recs for v in r]
    fl, il = ik._pack
    rows = {
        "packed (2 arrays)": best_ns(_packed, (fl, il), n, reps),
        f"records (4 named tuples, {len(fields)} fields)": best_ns(_records, recs, n, reps),
        f"fields ({len(fields)} arguments)": best_ns(_fields_kernel(len(fields)), fields, n, reps),
    }
    gate = FastGate(ik.chain, 1e-6, 1e-6)
    q1 = ik.chain.random_q(np.random.default_rng(0), 1)
    rows["FastGate, one row (Panda)"] = best_ns(gate, (q1, ik.chain.fk(q1)), n, reps)
    ws = ActiveSetQPSolver(load("marvin_left"))._ws  # coupled joints: every field non-empty
    nf = sum(len(r.fields) for r in WORKSPACE.records)
    rows[f"QP workspace, strided unpack ({nf} fields)"] = best_ns(
        _qp_strided, (ws.fb, ws.ib), n, reps
    )
    rows[f"QP workspace, reshaped unpack ({nf} fields)"] = best_ns(
        _qp_reshaped, RESHAPED.pack(*WORKSPACE.views(ws.fb, ws.ib)), n, reps
    )
    print("| call of a compiled kernel | ns per call |\n|---|---:|")
    for k, v in rows.items():
        print(f"| {k} | {v:.0f} |")
    out = Path(args.out)
    written = write_report(
        out.stem,
        {"ns_per_call": rows, "quick": args.quick, "calls": n, "repeats": reps},
        folder=out.parent,
    )
    print(f"wrote {written}")


if __name__ == "__main__":
    main()
