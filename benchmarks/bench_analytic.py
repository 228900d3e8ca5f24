"""Analytic IK: ikstack beside EAIK and ik-geo in the same run, like for like.

The peers' calls return every solution of a pose, so ikstack is timed doing the same work:
``solve(T, return_all=True)`` (every candidate, certified), one pose per call and batched,
against ik-geo's ``get_ik`` and EAIK's ``IK`` (and EAIK's ``IK_batched``); the ratios
``all_single_vs_<peer>`` (ikstack's single call over the peer's) and
``<peer>_single_over_all_batch<n>`` (the peer's single call over ikstack's per-pose batch
time) are the like-for-like figures. The best-solution call ``solve(T)`` (nearest valid
solution only: less work) is reported separately, as ``best_*``.

Per-pose time for a single call and for batches (1,000 and 100,000 poses) on UR5, a
spherical-wrist arm (ABB IRB 6640, IK-Geo's description) and iiwa14 (SRS, 128 swivel samples),
with solution counts and the worst FK error. Batches of the parallel threshold or more run on
numba's thread pool; they are also timed on one thread (``*_1thread``: the per-pose work
itself, which a pool waiting on a worker the scheduler of a loaded machine has not run cannot
show). ``--roundtrip`` instead runs
the FK -> IK -> FK statistic: 10,000 FK-sampled in-limit targets per arm, share recovered and
worst FK error.

Usage::

    python benchmarks/bench_analytic.py [--quick] [--roundtrip]

Writes ``benchmarks/results/bench_analytic.json`` (or ``analytic_roundtrip.json``; ``-quick.json``
with ``--quick``, so a smoke run never overwrites the recorded figures).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from importlib import metadata
from pathlib import Path

import numba
import numpy as np

import ikstack.robots as robots
from ikstack.ik.analytic import AnalyticIK, classify
from ikstack.ik.analytic.families import _pform
from ikstack.ik.analytic.geometry import chain_from_hp, chain_lines
from ikstack.model import Chain

RESULTS = Path(__file__).resolve().parent / "results"


def irb6640() -> Chain:
    """ABB IRB 6640 in IK-Geo's H/P description (spherical wrist, axes 2 and 3 parallel)."""
    ex, ey, ez = np.eye(3)
    H = np.array([ez, ey, ey, ex, ey, ex])
    P = np.array(
        [
            np.zeros(3),
            0.32 * ex + 0.78 * ez,
            1.075 * ez,
            1.1425 * ex + 0.2 * ez,
            np.zeros(3),
            np.zeros(3),
            0.2 * ex,
        ]
    )
    deg = np.pi / 180
    lo = np.array([-170, -70, -180, -300, -120, -360]) * deg
    hi = np.array([170, 85, 70, 300, 120, 360]) * deg
    return chain_from_hp(H, P, lower=lo, upper=hi, name="irb6640")


def versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for pkg in ("numpy", "numba", "eaik", "ik-geo", "ikstack"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def machine() -> dict[str, object]:
    return {
        "platform": platform.platform(),
        "processor": platform.processor(),
        "cpu_count": os.cpu_count(),
        "load_average": list(os.getloadavg()),
    }


def in_limit_targets(chain: Chain, n: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    lo = chain.lower + chain.kinematic_margin
    hi = chain.upper - chain.kinematic_margin
    lo = np.where(np.isfinite(lo), lo, -np.pi)
    hi = np.where(np.isfinite(hi), hi, np.pi)
    q = rng.uniform(lo, hi, size=(2 * n + 16, chain.dof))
    q = q[chain.constraints_satisfied(q)][:n]
    return q, chain.fk(q)


def per_call_us(fn, items, repeat: int = 5) -> float:
    """Per-call time [us]: the best of ``repeat`` passes over ``items`` (the same for every
    solver; the best pass is the least disturbed by other processes on a shared machine)."""
    fn(items[0])
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for it in items:
            fn(it)
        best = min(best, (time.perf_counter() - t) / len(items) * 1e6)
    return best


def batch_us(fn, n: int) -> float:  # noqa: ANN001
    """Per-pose time [us] of a batched call over ``n`` poses: the best of 50 calls (3 from
    10,000 poses), as for :func:`per_call_us` (a call under 1 ms is at the mercy of one
    scheduler tick on a shared machine)."""
    best = float("inf")
    for _ in range(50 if n < 10_000 else 3):
        t = time.perf_counter()
        fn()
        best = min(best, (time.perf_counter() - t) / n * 1e6)
    return best


def in_limits_mod_turns(chain: Chain, Q: np.ndarray) -> np.ndarray:
    """Whether some whole-turn shift of every joint lies within the (margin-reduced) limits."""
    lo = chain.lower + chain.kinematic_margin
    hi = chain.upper - chain.kinematic_margin
    ok = np.ones(Q.shape[:-1], dtype=bool)
    for j in range(chain.dof):
        hit = np.zeros_like(ok)
        for k in range(-2, 3):
            v = Q[..., j] + 2 * np.pi * k
            hit |= (v >= lo[j] - 1e-9) & (v <= hi[j] + 1e-9)
        ok &= hit
    return ok


def certified_count(chain: Chain, Q: np.ndarray, T: np.ndarray, tol: float = 1e-6) -> int:
    """Distinct solutions (mod whole turns) within the limits whose FK meets ``tol``."""
    if len(Q) == 0:
        return 0
    F = chain.fk(Q)
    pe = np.linalg.norm(F[:, :3, 3] - T[:3, 3], axis=-1)
    M = np.einsum("ij,nkj->nik", T[:3, :3], F[:, :3, :3])
    v = np.stack([M[:, 2, 1] - M[:, 1, 2], M[:, 0, 2] - M[:, 2, 0], M[:, 1, 0] - M[:, 0, 1]], 1)
    re = np.arctan2(np.linalg.norm(v, axis=1) / 2, (np.trace(M, axis1=1, axis2=2) - 1) / 2)
    keep = Q[(pe <= tol) & (re <= tol) & in_limits_mod_turns(chain, Q)]
    distinct: list[np.ndarray] = []
    for q in keep:
        if not any(np.abs(np.angle(np.exp(1j * (q - d)))).max() < 1e-6 for d in distinct):
            distinct.append(q)
    return len(distinct)


def fk_error(chain: Chain, Q: np.ndarray, T: np.ndarray) -> float:
    if len(Q) == 0:
        return float("nan")
    F = chain.fk(Q)
    pe = np.linalg.norm(F[..., :3, 3] - T[..., :3, 3], axis=-1)
    M = np.einsum("...ij,...kj->...ik", T[..., :3, :3], F[..., :3, :3])
    c = (np.trace(M, axis1=-2, axis2=-1) - 1) / 2
    v = (
        np.stack(
            [M[..., 2, 1] - M[..., 1, 2], M[..., 0, 2] - M[..., 2, 0], M[..., 1, 0] - M[..., 0, 1]],
            axis=-1,
        )
        / 2
    )
    return float(np.max(pe + np.arctan2(np.linalg.norm(v, axis=-1), c)))


# ----------------------------------------------------------------------------- peers
class Peer:
    """A peer's single-target IK: solutions (k, dof) and the FK error of each, our convention."""

    def __init__(self, chain: Chain, kind: str):
        H, P, R_end = _pform(chain_lines(chain))
        self.R_end = R_end
        self.kind = kind
        if kind == "ik-geo":
            import ik_geo

            fam = classify(chain).family
            family = {
                "three_parallel": "three_parallel_two_intersecting",
                "spherical_wrist": "spherical_two_parallel",
            }[str(fam)]
            self.bot = getattr(ik_geo.Robot, family)(H.tolist(), P.tolist())
        else:
            from eaik.IK_HP import HPRobot

            self.bot = HPRobot(H, P)

    def prepare(self, T: np.ndarray) -> list:
        Rs = T[:, :3, :3] @ self.R_end.T
        if self.kind == "ik-geo":
            # ik-geo's binding reads the 3x3 rotation column by column (checked by FK here)
            return [(np.ascontiguousarray(R.T), p) for R, p in zip(Rs, T[:, :3, 3], strict=True)]
        out = T.copy()
        out[:, :3, :3] = Rs
        return list(out)

    def call(self, item):  # noqa: ANN001
        if self.kind == "ik-geo":
            return self.bot.get_ik(item[0], item[1])
        return self.bot.IK(item)

    def solutions(self, res) -> np.ndarray:  # noqa: ANN001
        if self.kind == "ik-geo":
            q = [s for s, ls in res if not ls]
        else:
            Q = np.asarray(res.Q).reshape(-1, 6)
            q = list(Q[~np.asarray(res.is_LS, dtype=bool)]) if len(Q) else []
        return np.asarray(q, dtype=np.float64).reshape(-1, 6)

    def batched_us(self, items: list) -> float | None:
        if self.kind != "eaik":
            return None
        self.bot.IK_batched(items[:10])
        return batch_us(
            lambda: self.bot.IK_batched(items, num_worker_threads=os.cpu_count() or 1), len(items)
        )


# ----------------------------------------------------------------------------- speed
def bench_arm(
    name: str,
    chain: Chain,
    sizes: tuple[int, ...],
    n_single: int,
    rng: np.random.Generator,
    num_samples: int = 128,
) -> dict[str, object]:
    ik = AnalyticIK(chain, num_samples=num_samples)
    _, T = in_limit_targets(chain, max(sizes), rng)
    row: dict[str, object] = {"arm": name, "family": ik.method, "K": ik.K}
    singles = list(T[:n_single])
    ik.solve(T[:8])
    ik.solve(T[:8], return_all=True)
    row["ikstack_all_single_us"] = per_call_us(lambda t: ik.solve(t, return_all=True), singles)
    row["ikstack_single_us"] = per_call_us(ik.solve, singles)
    for n in sizes:
        ik.solve(T[: min(n, 64)], return_all=True)
        ik.solve(T[: max(n, 300)], return_all=True)  # the parallel kernel too
        row[f"ikstack_all_batch{n}_us"] = batch_us(lambda n=n: ik.solve(T[:n], return_all=True), n)
        threads = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            row[f"ikstack_all_batch{n}_1thread_us"] = batch_us(
                lambda n=n: ik.solve(T[:n], return_all=True), n
            )
        finally:
            numba.set_num_threads(threads)
        ik.solve(T[: min(n, 64)])
        row[f"ikstack_batch{n}_us"] = batch_us(lambda n=n: ik.solve(T[:n]), n)
        r = ik.solve(T[:n])
        row[f"ikstack_batch{n}_success"] = float(r.success.mean())
        err = (r.position_error + r.rotation_error)[r.success]
        row[f"ikstack_batch{n}_max_fk_error"] = float(err.max()) if err.size else float("nan")
    m = min(200, len(T))
    ra = ik.solve(T[:m], return_all=True)
    row["ikstack_solutions_mean"] = float(ra.valid_all.sum(axis=1).mean())
    row["ikstack_all_max_fk_error"] = fk_error(
        chain,
        ra.q_all[ra.valid_all],
        np.repeat(T[:m, None], ra.K if hasattr(ra, "K") else ra.q_all.shape[1], axis=1)[
            ra.valid_all
        ],
    )
    if chain.dof == 6:
        for kind in ("ik-geo", "eaik"):
            try:
                peer = Peer(chain, kind)
            except (ImportError, KeyError) as exc:
                row[f"{kind}_error"] = str(exc)
                continue
            items = peer.prepare(T[:n_single])
            row[f"{kind}_single_us"] = per_call_us(peer.call, items)
            sols = [peer.solutions(peer.call(it)) for it in peer.prepare(T[:m])]
            row[f"{kind}_solutions_mean"] = float(np.mean([len(s) for s in sols]))
            row[f"{kind}_solutions_in_limits_mean"] = float(
                np.mean([certified_count(chain, s, T[i]) for i, s in enumerate(sols)])
            )
            errs = [
                fk_error(chain, s, np.repeat(T[i : i + 1], len(s), axis=0))
                for i, s in enumerate(sols)
                if len(s)
            ]
            row[f"{kind}_max_fk_error"] = float(np.max(errs)) if errs else float("nan")
            for n in sizes:
                b = peer.batched_us(peer.prepare(T[:n]))
                if b is not None:
                    row[f"{kind}_batch{n}_us"] = b
    return row


def ratios(row: dict[str, object], sizes: tuple[int, ...]) -> dict[str, float]:
    """Like for like (every solution, both sides): ``all_single_vs_<peer>`` and
    ``<peer>_single_over_all_batch<n>``, and ``<peer>_batch_over_all_batch<n>`` against the
    peer's own batched call; then the best-solution call's figures, prefixed ``best_``."""
    out: dict[str, float] = {}
    for kind in ("ik-geo", "eaik"):
        key = f"{kind}_single_us"
        if key not in row:
            continue
        peer = float(row[key])  # type: ignore[arg-type]
        out[f"all_single_vs_{kind}"] = float(row["ikstack_all_single_us"]) / peer  # type: ignore[arg-type]
        for n in sizes:
            out[f"{kind}_single_over_all_batch{n}"] = peer / float(row[f"ikstack_all_batch{n}_us"])  # type: ignore[arg-type]
            out[f"{kind}_single_over_all_batch{n}_1thread"] = peer / float(
                row[f"ikstack_all_batch{n}_1thread_us"]
            )  # type: ignore[arg-type]
            pb = row.get(f"{kind}_batch{n}_us")
            if pb is not None:
                out[f"{kind}_batch_over_all_batch{n}"] = float(pb) / float(
                    row[f"ikstack_all_batch{n}_us"]
                )  # type: ignore[arg-type]
        out[f"best_single_vs_{kind}"] = float(row["ikstack_single_us"]) / peer  # type: ignore[arg-type]
        for n in sizes:
            out[f"best_{kind}_single_over_batch{n}"] = peer / float(row[f"ikstack_batch{n}_us"])  # type: ignore[arg-type]
    return out


def run_speed(quick: bool) -> dict[str, object]:
    rng = np.random.default_rng(0)
    sizes = (200, 2000) if quick else (1000, 100_000)
    n_single = 50 if quick else 1000
    rows = []
    for name, chain, ns in (
        ("ur5", robots.load("ur5"), 128),
        ("irb6640", irb6640(), 128),
        ("iiwa14", robots.load("iiwa14"), 128),
    ):
        n1 = n_single if chain.dof == 6 else max(20, n_single // 10)
        row = bench_arm(name, chain, sizes, n1, rng, ns)
        row["ratios"] = ratios(row, sizes)
        rows.append(row)
    return {
        "benchmark": "bench_analytic",
        "quick": quick,
        "versions": versions(),
        "machine": machine(),
        "rows": rows,
    }


def print_speed(res: dict[str, object]) -> None:
    rows = res["rows"]
    print(
        "like for like: every solution of a pose (ikstack solve(T, return_all=True), ik-geo "
        "get_ik, EAIK IK / IK_batched), per pose [us]"
    )
    print(
        f"{'arm':<9} {'ikstack 1':>9} {'ik-geo 1':>9} {'EAIK 1':>8} {'ratio':>6} "
        f"{'ikstack batch':>16} {'1 thread':>14} {'EAIK batch':>13} "
        f"{'ik-geo 1 / ikstack batch':>26} {'1 thread':>14}"
    )

    def sizes_of(r: dict, prefix: str, suffix: str) -> list[str]:  # type: ignore[type-arg]
        def size(k: str) -> str:
            return k[len(prefix) : len(k) - len(suffix)]

        keys = [k for k in r if k.startswith(prefix) and k.endswith(suffix) and size(k).isdigit()]
        return sorted(keys, key=lambda k: int(size(k)))

    for r in rows:  # type: ignore[attr-defined]
        nan = float("nan")
        rat = r["ratios"]

        def cells(keys: list[str], src: dict, fmt: str = "{:.2f}") -> str:  # type: ignore[type-arg]
            return " / ".join(fmt.format(src[k]) for k in keys) or "-"

        fx = "{:.1f}x"

        print(
            f"{r['arm']:<9} {r['ikstack_all_single_us']:>9.2f} "
            f"{r.get('ik-geo_single_us', nan):>9.2f} {r.get('eaik_single_us', nan):>8.2f} "
            f"{rat.get('all_single_vs_ik-geo', nan):>6.2f} "
            f"{cells(sizes_of(r, 'ikstack_all_batch', '_us'), r):>16} "
            f"{cells(sizes_of(r, 'ikstack_all_batch', '_1thread_us'), r):>14} "
            f"{cells(sizes_of(r, 'eaik_batch', '_us'), r):>13} "
            f"{cells(sizes_of(rat, 'ik-geo_single_over_all_batch', ''), rat, fx):>26} "
            f"{cells(sizes_of(rat, 'ik-geo_single_over_all_batch', '_1thread'), rat, fx):>14}"
        )
    print()
    print(
        "best solution only (ikstack solve(T): the nearest valid solution; less work than "
        "the peers' calls)"
    )
    print(
        f"{'arm':<9} {'family':<38} {'K':>5} {'single us':>10} {'ik-geo us':>10} "
        f"{'EAIK us':>9} {'batch us/pose':>22} {'EAIK batch':>11} "
        f"{'in-limit sols ik/geo/EAIK':>25} "
        f"{'max FK err':>10}"
    )
    for r in rows:  # type: ignore[attr-defined]
        # by batch size (a string sort would put 100000 before 1000)
        bkeys = sorted(
            (k for k in r if k.startswith("ikstack_batch") and k.endswith("_us")),
            key=lambda k: int(k.split("batch")[1].split("_")[0]),
        )
        batch = " / ".join(f"{r[k]:.2f}" for k in bkeys)
        ekeys = sorted(
            (k for k in r if k.startswith("eaik_batch")),
            key=lambda k: int(k.split("batch")[1].split("_")[0]),
        )
        eb = " / ".join(f"{r[k]:.2f}" for k in ekeys) or "-"
        nan = float("nan")
        sols = (
            f"{r['ikstack_solutions_mean']:.2f}/"
            f"{r.get('ik-geo_solutions_in_limits_mean', nan):.2f}/"
            f"{r.get('eaik_solutions_in_limits_mean', nan):.2f}"
        )
        print(
            f"{r['arm']:<9} {r['family']:<38} {r['K']:>5} {r['ikstack_single_us']:>10.1f} "
            f"{r.get('ik-geo_single_us', float('nan')):>10.1f} "
            f"{r.get('eaik_single_us', float('nan')):>9.1f} {batch:>22} {eb:>11} {sols:>25} "
            f"{r['ikstack_all_max_fk_error']:>10.1e}"
        )
        print("    ratios: " + ", ".join(f"{k}={v:.2f}" for k, v in r["ratios"].items()))


# ----------------------------------------------------------------------------- round trips
def roundtrip_cases(quick: bool):  # noqa: ANN201
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "analytic"))
    from analytic_arms import STRUCTURES_6R, random_arm

    yield "ur5", robots.load("ur5"), "strict", None
    yield "irb6640", irb6640(), "strict", None
    yield "iiwa14", robots.load("iiwa14"), "strict", None
    yield "panda", robots.load("panda"), "strict", None
    yield "marvin_left", robots.load("marvin_left"), "near", None
    yield "arx_x5", robots.load("arx_x5"), "near", None
    rng = np.random.default_rng(99)
    for s in (*STRUCTURES_6R, "srs", "locked_last"):
        yield f"random_{s}", random_arm(s, rng), "strict", "truth"


def run_roundtrip(quick: bool) -> dict[str, object]:
    n = 500 if quick else 10_000
    rows = []
    rng = np.random.default_rng(1)
    for name, chain, mode, seed_kind in roundtrip_cases(quick):
        ik = AnalyticIK(chain, mode=mode)
        if seed_kind == "truth":
            q = rng.uniform(-np.pi, np.pi, size=(n, chain.dof))
            T = chain.fk(q)
        else:
            q, T = in_limit_targets(chain, n, rng)
        seed = q if seed_kind == "truth" else None
        ik.solve(T, q0=seed)  # compiles whatever this arm's rows need (once per install)
        t = time.perf_counter()
        r = ik.solve(T, q0=seed)
        dt = (time.perf_counter() - t) / len(T) * 1e6
        err = r.position_error + r.rotation_error
        rows.append(
            {
                "arm": name,
                "method": r.method,
                "mode": mode,
                "seed": seed_kind or "middle of limits",
                "targets": len(T),
                "recovered": float(r.success.mean()),
                "worst_fk_error": float(err[r.success].max()) if r.success.any() else None,
                "worst_position_error_m": float(r.position_error[r.success].max()),
                "worst_rotation_error_rad": float(r.rotation_error[r.success].max()),
                "us_per_pose": dt,
            }
        )
        row = rows[-1]
        print(
            f"{name:<34} {row['method']:<48} {row['targets']:>6} "
            f"{row['recovered'] * 100:>8.3f}% {row['worst_fk_error']:>10.2e} "
            f"{dt:>9.1f} us"
        )
    return {
        "benchmark": "analytic_roundtrip",
        "quick": quick,
        "versions": versions(),
        "machine": machine(),
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ap.add_argument(
        "--roundtrip", action="store_true", help="FK -> IK -> FK statistic instead of timing"
    )
    args = ap.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.roundtrip:
        print(
            f"{'arm':<34} {'method':<48} {'n':>6} {'recovered':>9} {'worst err':>10} {'time':>12}"
        )
        res = run_roundtrip(args.quick)
        out = RESULTS / (
            "analytic_roundtrip-quick.json" if args.quick else "analytic_roundtrip.json"
        )
    else:
        res = run_speed(args.quick)
        print_speed(res)
        out = RESULTS / ("bench_analytic-quick.json" if args.quick else "bench_analytic.json")
    out.write_text(json.dumps(res, indent=2))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
