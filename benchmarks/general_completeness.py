"""Completeness of the general (elimination) mode against the closed-form families.

Usage: python benchmarks/general_completeness.py [--quick] [--n N]

For every exact-family 6R arm (the bundled ones, a PUMA 560 layout and one random arm of each 6R
structure), ``N`` in-limit FK targets are solved by the closed form (``AnalyticIK(chain)``) and by
the general mode (``AnalyticIK(chain, mode="general")``), both with ``return_all``. A closed-form
solution counts as found when a valid general-mode slot matches it within 1e-6 rad on every
joint (modulo 2 pi); ``missed`` is the number that none matches, ``missed_approx`` how many of
those are not exact solutions (the closed form's own FK error above 1e-9: a near-tangent
subproblem snapped to its least-squares point, passing the 1e-6 gate, where the exact roots are a
complex pair), ``missed_distinct`` how many of those are not joined to any valid general-mode
slot by a segment of configurations that all meet the 1e-6 FK gate (a miss that is not merely
another point of the same solution: at a nearly double root the gate admits a joint-space
region about the square root of the tolerance wide, and the two modes pick different points of
it), ``targets_short`` the number of targets with at least one miss, and ``general_extra`` the
valid general-mode slots matching no closed-form solution.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import ikstack.robots as robots
from ikstack.bench import format_table, write_report
from ikstack.ik import fk_errors
from ikstack.ik.analytic import AnalyticIK
from ikstack.ik.analytic.geometry import chain_from_hp
from ikstack.model import Chain

STRUCTURES = (
    "spherical_wrist",
    "spherical_two_parallel",
    "spherical_two_intersecting",
    "three_parallel",
    "spherical_shoulder",
    "three_parallel_reversed",
)
MATCH = 1e-6


def puma560() -> Chain:
    ex, ey, ez = np.eye(3)
    z = np.zeros(3)
    d = np.deg2rad
    return chain_from_hp(
        np.array([ez, ey, ey, ez, ey, ez]),
        np.array([0.67 * ez, 0.15 * ey, 0.43 * ex, 0.43 * ez - 0.02 * ey, z, z, 0.056 * ez]),
        lower=d(np.array([-160, -225, -45, -110, -100, -266.0])),
        upper=d(np.array([160, 45, 225, 170, 100, 266.0])),
        name="puma560",
    )


def random_arm(structure: str, rng: np.random.Generator) -> Chain:
    """A random 6R arm with ``structure`` imposed on random axes and offsets."""
    h = rng.normal(size=(6, 3))
    h /= np.linalg.norm(h, axis=1, keepdims=True)
    r = rng.normal(scale=0.3, size=(6, 3))
    if structure in ("spherical_wrist", "spherical_two_parallel", "spherical_two_intersecting"):
        r[3] = r[4] = r[5] = rng.normal(scale=0.3, size=3)
    if structure == "spherical_two_parallel":
        h[2] = h[1]
    if structure == "spherical_two_intersecting":
        r[1] = r[0]
    if structure == "three_parallel":
        h[2] = h[3] = h[1]
    if structure == "three_parallel_reversed":
        h[3] = h[4] = h[2]
    if structure == "spherical_shoulder":
        r[0] = r[1] = r[2] = rng.normal(scale=0.3, size=3)
    P = np.vstack([r[0], np.diff(r, axis=0), rng.normal(scale=0.3, size=3)])
    return chain_from_hp(h, P, name=f"random_{structure}")


def arms() -> dict[str, Chain]:
    out: dict[str, Chain] = {
        "ur5": robots.load("ur5"),
        "arx_x5": robots.load("arx_x5"),
        "puma560": puma560(),
    }
    rng = np.random.default_rng(5)
    for s in STRUCTURES:
        out[f"random_{s}"] = random_arm(s, rng)
    return out


def gaps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Worst joint gap (mod 2 pi) between every slot of ``a (N, K, 6)`` and of ``b (N, L, 6)``."""
    return np.abs(np.angle(np.exp(1j * (a[:, :, None, :] - b[:, None, :, :])))).max(axis=-1)


def joined(
    chain: Chain, a: np.ndarray, b: np.ndarray, T: np.ndarray, tol: float = 1e-6, steps: int = 16
) -> bool:
    """Whether ``a`` and ``b`` are one solution within the FK gate: every configuration on the
    straight segment between them (shortest way mod 2 pi, ``steps`` points) meets ``tol``."""
    d = np.angle(np.exp(1j * (b - a)))
    q = a + np.linspace(0.0, 1.0, steps + 1)[:, None] * d
    pe, re = fk_errors(chain, q, T[None])
    return bool(np.all(pe <= tol) and np.all(re <= tol))


def compare(chain: Chain, n: int, seed: int = 0, block: int = 1000) -> dict:
    rng = np.random.default_rng(seed)
    lo = chain.lower + chain.kinematic_margin
    hi = chain.upper - chain.kinematic_margin
    q = rng.uniform(lo, hi, (n, chain.dof))
    T = chain.fk(q)
    closed = AnalyticIK(chain)
    general = AnalyticIK(chain, mode="general")
    counts = dict.fromkeys(
        (
            "closed_form",
            "missed",
            "missed_approx",
            "missed_distinct",
            "targets_short",
            "general_extra",
        ),
        0,
    )
    dt = 0.0
    success = 0
    for k in range(0, n, block):
        Tb = T[k : k + block]
        rc = closed.solve(Tb, return_all=True)
        t0 = time.perf_counter()
        rg = general.solve(Tb, return_all=True)
        dt += time.perf_counter() - t0
        success += int(rg.success.sum())
        assert rc.q_all is not None and rc.valid_all is not None
        assert rg.q_all is not None and rg.valid_all is not None
        pair = (
            (gaps(rc.q_all, rg.q_all) < MATCH) & rc.valid_all[:, :, None] & rg.valid_all[:, None, :]
        )
        matched = pair.any(axis=2) & rc.valid_all
        # distinct closed-form solutions (at a singularity it may list one twice)
        same = (
            (gaps(rc.q_all, rc.q_all) < MATCH) & rc.valid_all[:, :, None] & rc.valid_all[:, None, :]
        )
        first = ~np.tril(same, k=-1).any(axis=2) & rc.valid_all
        miss = first & ~matched
        pe, re = fk_errors(chain, rc.q_all[miss], Tb[np.nonzero(miss)[0]])
        counts["closed_form"] += int(first.sum())
        counts["missed"] += int(miss.sum())
        counts["missed_approx"] += int(((pe > 1e-9) | (re > 1e-9)).sum())
        counts["targets_short"] += int(miss.any(axis=1).sum())
        for i, a in zip(*np.nonzero(miss), strict=True):
            if not any(
                joined(chain, rc.q_all[i, a], rg.q_all[i, b], Tb[i])
                for b in np.flatnonzero(rg.valid_all[i])
            ):
                counts["missed_distinct"] += 1
        counts["general_extra"] += int((rg.valid_all & ~pair.any(axis=1)).sum())
    return {
        "arm": chain.name,
        "targets": n,
        **counts,
        "general_found": counts["closed_form"] - counts["missed"],
        "general_success": success / n,
        "general_us": dt / n * 1e6,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    ap.add_argument("--n", type=int, default=None, help="targets per arm")
    args = ap.parse_args()
    n = args.n or (100 if args.quick else 10_000)
    rows = [compare(chain, n) for chain in arms().values()]
    print(
        format_table(
            rows,
            [
                "arm",
                "targets",
                "closed_form",
                "general_found",
                "missed",
                "missed_approx",
                "missed_distinct",
                "targets_short",
                "general_extra",
                "general_success",
                "general_us",
            ],
        )
    )
    path = write_report("general_completeness", {"quick": args.quick, "n": n, "rows": rows})
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
