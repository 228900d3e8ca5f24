"""IK at the edges: targets at and near singular configurations, and float32 targets.

Usage: python benchmarks/sweep_edges.py [--quick] [--n N]

Singular sweep: for every exact-family 6R arm (the bundled ones, three industrial spherical-wrist
layouts, one random arm of each 6R structure), configurations where ``det J`` vanishes are found
by moving one joint of in-limit samples (joint 2: shoulder, the wrist centre on the first axis;
joint 3: elbow straight; joint 5: wrist; mirrored for the reversed structures), then moved by
``delta`` (0, 1e-12 ... 1e-3 rad) along that joint. Each target is FK of such a configuration,
as float64 and rounded to float32; ``solve`` is the share :meth:`AnalyticIK.solve` recovers from
the middle of the limits, ``all`` the share with a valid slot in ``return_all``. ``warp`` and
``warp_all`` are the same shares from :class:`WarpAnalyticIK` on Warp's CPU device (None without
warp-lang), ``warp_same`` the share of targets whose Warp status, certified slot mask and slots
(within 1e-9) equal the CPU path's.

float32 sweep: in-limit FK samples of every bundled arm rounded to float32, solved by
``AnalyticIK`` where the arm has an exact family (strict; ``warp``: :class:`WarpAnalyticIK` on
Warp's CPU device, ``warp_same`` the share with the CPU path's status and selection within
1e-9) and by ``solve_ik`` (auto) everywhere, with the worst FK error against the float32 target
as given.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

import ikstack.robots as robots
from ikstack.bench import format_table, write_report
from ikstack.errors import MissingExtraError, UnsupportedGeometryError
from ikstack.ik import solve_ik
from ikstack.ik.analytic import AnalyticIK
from ikstack.ik.analytic.geometry import chain_from_hp
from ikstack.model import Chain

DELTAS = (0.0, 1e-12, 1e-9, 1e-6, 1e-3)
SINGULARITIES = (("shoulder", 1), ("elbow", 2), ("wrist", 4))


def industrial() -> dict[str, Chain]:
    ex, ey, ez = np.eye(3)
    z = np.zeros(3)
    d = np.deg2rad
    puma = chain_from_hp(
        np.array([ez, ey, ey, ez, ey, ez]),
        np.array([0.67 * ez, 0.15 * ey, 0.43 * ex, 0.43 * ez - 0.02 * ey, z, z, 0.056 * ez]),
        lower=d(np.array([-160, -225, -45, -110, -100, -266.0])),
        upper=d(np.array([160, 45, 225, 170, 100, 266.0])),
        name="puma560",
    )
    kr = chain_from_hp(
        np.array([-ez, ey, ey, -ex, ey, -ex]),
        np.array([0.675 * ez, 0.35 * ex, 1.15 * ez, -0.041 * ez + 1.2 * ex, z, z, 0.215 * ex]),
        lower=d(np.array([-185, -140, -120, -350, -125, -350.0])),
        upper=d(np.array([185, 140, 168, 350, 125, 350.0])),
        name="kuka_kr",
    )
    meet = chain_from_hp(
        np.array([ez, ey, ex, ez, ey, ez]),
        np.array([0.4 * ez, 0.1 * ex, z, 0.5 * ex + 0.3 * ez, z, z, 0.1 * ez]),
        name="second_meet",
    )
    return {"puma560": puma, "kuka_kr": kr, "second_meet": meet}


def random_arm(structure: str, rng: np.random.Generator) -> Chain:
    h = rng.normal(size=(6, 3))
    h /= np.linalg.norm(h, axis=1, keepdims=True)
    r = rng.normal(scale=0.3, size=(6, 3))
    if structure in ("spherical_wrist", "spherical_two_parallel"):
        r[3] = r[4] = r[5] = rng.normal(scale=0.3, size=3)
    if structure == "spherical_two_parallel":
        h[2] = h[1]
    if structure == "spherical_shoulder":
        r[0] = r[1] = r[2] = rng.normal(scale=0.3, size=3)
    if structure == "three_parallel":
        h[2] = h[3] = h[1]
    H = h
    P = np.vstack([r[0], np.diff(r, axis=0), rng.normal(scale=0.3, size=3)])
    return chain_from_hp(H, P, name=f"random_{structure}")


def singular_along(chain: Chain, joint: int, q: np.ndarray, grid: int = 48) -> np.ndarray:
    """Rows of ``q`` with ``joint`` moved to a root of ``det J`` within its limits."""
    lo = max(chain.lower[joint] + chain.kinematic_margin, -np.pi)
    hi = min(chain.upper[joint] - chain.kinematic_margin, np.pi)
    xs = np.linspace(lo, hi, grid)

    def det(vals: np.ndarray, rows: np.ndarray) -> np.ndarray:
        qq = q[rows].copy()
        qq[:, joint] = vals
        return np.linalg.det(chain.jacobian(qq))

    n = q.shape[0]
    D = np.stack([det(np.full(n, x), np.arange(n)) for x in xs], axis=1)
    change = np.sign(D[:, :-1]) * np.sign(D[:, 1:]) <= 0
    rows = np.flatnonzero(change.any(axis=1))
    k = change[rows].argmax(axis=1)
    a, b, fa = xs[k], xs[k + 1], D[rows, k]
    for _ in range(60):
        m = 0.5 * (a + b)
        fm = det(m, rows)
        left = np.sign(fa) * np.sign(fm) <= 0
        b, a, fa = np.where(left, m, b), np.where(left, a, m), np.where(left, fa, fm)
    out = q[rows].copy()
    out[:, joint] = 0.5 * (a + b)
    return out


def warp_solver(chain: Chain) -> Any:
    """:class:`WarpAnalyticIK` on Warp's CPU device, or None without warp-lang."""
    from ikstack.backends.warp.analytic import WarpAnalyticIK

    try:
        return WarpAnalyticIK(chain, device="cpu")
    except MissingExtraError:
        return None


def warp_cells(w: Any, T: np.ndarray, r: Any, ra: Any) -> dict:
    """The Warp columns of a cell: shares recovered and the share equal to the CPU path."""
    if w is None:
        return {"warp": None, "warp_all": None, "warp_same": None}
    rw = w.solve(T)
    rwa = w.solve(T, return_all=True)
    same = (
        (rwa.status == ra.status)
        & (rw.status == r.status)
        & (rwa.valid_all == ra.valid_all).all(axis=1)
        & (np.abs(rwa.q_all - ra.q_all) <= 1e-9).all(axis=(1, 2))
    )
    return {
        "warp": float(rw.success.mean()),
        "warp_all": float(rwa.valid_all.any(axis=1).mean()),
        "warp_same": float(same.mean()),
    }


def singular_rows(arms: dict[str, Chain], n: int) -> list[dict]:
    rows = []
    for name, chain in arms.items():
        ik = AnalyticIK(chain)
        w = warp_solver(chain)
        rng = np.random.default_rng(0)
        lo = chain.lower + chain.kinematic_margin
        hi = chain.upper - chain.kinematic_margin
        for sing, j in SINGULARITIES:
            q0 = singular_along(chain, j, rng.uniform(lo, hi, (n, 6)))
            for delta in DELTAS:
                q = q0.copy()
                q[:, j] += delta * rng.choice([-1.0, 1.0], size=len(q))
                q = q[chain.within_limits(q)]
                T = chain.fk(q)
                for dtype in (np.float64, np.float32):
                    Tt = T.astype(dtype)
                    r = ik.solve(Tt)
                    ra = ik.solve(Tt, return_all=True)
                    rows.append(
                        {
                            "arm": name,
                            "family": ik.family.name,
                            "singularity": sing,
                            "delta": delta,
                            "dtype": np.dtype(dtype).name,
                            "n": len(q),
                            "solve": float(r.success.mean()),
                            "all": float(ra.valid_all.any(axis=1).mean()),
                            "worst_rot_err": float(r.rotation_error[r.success].max(initial=0.0)),
                            **warp_cells(w, Tt, r, ra),
                        }
                    )
    return rows


def float32_rows(n: int) -> list[dict]:
    rows = []
    for name in robots.names():
        chain = robots.load(name)
        rng = np.random.default_rng(1)
        lo = chain.lower + chain.kinematic_margin
        hi = chain.upper - chain.kinematic_margin
        q = rng.uniform(lo, hi, (4 * n, chain.dof))
        q = q[chain.constraints_satisfied(q)][:n]
        T = chain.fk(q).astype(np.float32)
        row: dict = {"arm": name, "n": len(q), "analytic": None, "warp": None}
        if chain.dof in (6, 7) and all(chain.is_revolute):
            try:
                r = AnalyticIK(chain).solve(T)
                row["analytic"] = float(r.success.mean())
                row["analytic_worst_pos"] = float(r.position_error[r.success].max(initial=0))
                w = warp_solver(chain)
                if w is not None:
                    rw = w.solve(T)
                    row["warp"] = float(rw.success.mean())
                    row["warp_same"] = float(
                        ((rw.status == r.status) & (np.abs(rw.q - r.q) <= 1e-9).all(axis=1)).mean()
                    )
            except UnsupportedGeometryError:
                pass
        t0 = time.perf_counter()
        r = solve_ik(chain, T)
        row["solve_ik_s"] = time.perf_counter() - t0
        row["solve_ik"] = float(r.success.mean())
        row["solve_ik_method"] = r.method
        row["worst_pos_err"] = float(r.position_error[r.success].max(initial=0.0))
        row["worst_rot_err"] = float(r.rotation_error[r.success].max(initial=0.0))
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    ap.add_argument("--n", type=int, default=None, help="samples per cell")
    args = ap.parse_args()
    n = args.n or (60 if args.quick else 1000)
    arms: dict[str, Chain] = {"ur5": robots.load("ur5"), "arx_x5": robots.load("arx_x5")}
    arms.update(industrial())
    rng = np.random.default_rng(3)
    for s in ("spherical_wrist", "spherical_two_parallel", "spherical_shoulder", "three_parallel"):
        arms[f"random_{s}"] = random_arm(s, rng)
    sing = singular_rows(arms, n)
    print(
        format_table(
            sing,
            [
                "arm",
                "family",
                "singularity",
                "delta",
                "dtype",
                "n",
                "solve",
                "all",
                "warp",
                "warp_all",
                "warp_same",
                "worst_rot_err",
            ],
        )
    )
    f32 = float32_rows(n)
    print()
    print(
        format_table(
            f32,
            [
                "arm",
                "n",
                "analytic",
                "warp",
                "warp_same",
                "solve_ik",
                "solve_ik_method",
                "worst_pos_err",
                "worst_rot_err",
            ],
        )
    )
    path = write_report(
        "sweep_edges", {"quick": args.quick, "n": n, "singular": sing, "float32": f32}
    )
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
