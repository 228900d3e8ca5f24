"""Parity of ikstack's chunk decoder (velocity QP, diff backend) with an independent
re-implementation of the published Tianji differential-IK port.

The reference, ``tests/chunk/diffik_reference.py``, shares no ikstack code (numpy, SciPy and
OSQP only): its own modified-DH FK and Jacobian of the Marvin flange and the TacCap mount, its
own rotation vector, SciPy's extrinsic-xyz Euler residual, the QP assembled from the published
equations (inherited J6/J7 buffer, margin-shrunk velocity boxes, joint-limit avoidance) and
driven through OSQP as the port drives it (OSQP's defaults, polishing off, set up from the
first step after each per-chunk reset, primal warm start from the previous clipped velocity),
and the port's adapter (each knot's segment from the FK of the joints actually reached, split
into <= 4 ms substeps). ``tests/chunk/diffik_parity.py`` runs both on the same chunks.

Random two-arm H16 chunks at 30 Hz cycle through five kinds: nominal moves, fast (lag-tripping)
moves, J6/J7-pushing targets, starts inside the J6/J7 buffer or a joint margin, and knot
jumps. Each chunk is decoded under both lag policies. Per chunk: the verdict of each arm
(reason, knot, substep) and its exceedance count must agree; the joints after every accepted
substep are compared (max |difference| in deg, target 1e-4).

Variants: ``port`` (ikstack's defaults against the reference: the required parity),
``tight-vs-port`` (ikstack with OSQP eps 1e-9 against the port's defaults: how far the tighter
option departs from the port) and ``tight-vs-tight`` (both with eps 1e-9).

Run: ``python benchmarks/parity_diffik.py [--chunks 240] [--quick]``; writes
``benchmarks/results/parity_diffik.json`` and ``parity_diffik.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "chunk"))

import diffik_reference as ref  # noqa: E402
from diffik_parity import ChunkComparison, Side  # noqa: E402

from ikstack.bench import write_report  # noqa: E402

TIGHT = {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iter": 20000}
VARIANTS: dict[str, tuple[dict[str, Any], dict[str, Any], tuple[str, ...]]] = {
    "port": ({}, {}, ("abort", "report")),
    "tight-vs-port": (TIGHT, {}, ("report",)),
    "tight-vs-tight": (TIGHT, {"osqp_settings": TIGHT}, ("report",)),
}


def summarize(rows: list[ChunkComparison]) -> dict[str, Any]:
    finite = [r.max_joint_diff_deg for r in rows if r.max_joint_diff_deg != float("inf")]
    return {
        "chunks": len(rows),
        "verdicts_agree": sum(r.verdicts_agree for r in rows),
        "length_mismatches": sum(r.max_joint_diff_deg == float("inf") for r in rows),
        "max_joint_diff_deg": max(finite) if finite else None,
        "max_target_diff": max(r.max_target_diff for r in rows),
        "max_lag_mm_diff": max(r.max_lag_mm_diff for r in rows),
        "substeps_compared": sum(r.substeps_compared for r in rows),
        "reference_arm_verdicts": dict(Counter(v[0] for r in rows for v in r.reference.values())),
        "chunks_with_reported_lag": sum(
            any(e[1] > 0 for e in r.exceedances.values()) for r in rows
        ),
        "chunks_with_j67_row_binding": sum(r.j67_binding for r in rows),
        "ikstack_ms_per_chunk": 1e3 * sum(r.seconds_ikstack for r in rows) / len(rows),
        "reference_ms_per_chunk": 1e3 * sum(r.seconds_reference for r in rows) / len(rows),
    }


def run(n_chunks: int, seed: int, variants: list[str]) -> dict[str, Any]:
    chunks = ref.random_chunks(seed, n_chunks)
    out: dict[str, Any] = {
        "chunks": n_chunks,
        "seed": seed,
        "horizon": 16,
        "action_interval_s": 1 / 30,
        "substep_s": 0.004,
        "results": {},
        "disagreements": [],
    }
    for variant in variants:
        ik_kw, ref_kw, policies = VARIANTS[variant]
        for policy in policies:
            side = Side(policy, ik_kw, ref_kw)
            side.compare(*chunks[0])  # warm (compiled kernels)
            t0 = time.perf_counter()
            rows = [side.compare(kind, c) for kind, c in chunks]
            key = f"{variant} | {policy}"
            res = summarize(rows)
            res["by_kind"] = {k: summarize([r for r in rows if r.kind == k]) for k in ref.KINDS}
            res["seconds"] = time.perf_counter() - t0
            out["results"][key] = res
            for i, r in enumerate(rows):  # the disagreements, chunk by chunk
                if r.verdicts_agree:
                    continue
                out["disagreements"].append(
                    {
                        "variant": variant,
                        "policy": policy,
                        "chunk": i,
                        "kind": r.kind,
                        "agree": r.verdicts_agree,
                        "ikstack": r.ikstack,
                        "reference": r.reference,
                        "exceedances": r.exceedances,
                        "max_joint_diff_deg": None
                        if r.max_joint_diff_deg == float("inf")
                        else r.max_joint_diff_deg,  # None: different numbers of accepted substeps
                        "substeps": r.substeps_compared,
                    }
                )
            print(
                f"{key}: {res['verdicts_agree']}/{res['chunks']} agree, max |dq| "
                f"{res['max_joint_diff_deg']:.3e} deg ({res['seconds']:.0f} s)",
                flush=True,
            )
    return out


def table(res: dict[str, Any]) -> str:
    lines = [
        f"Parity with the independent port re-implementation: {res['chunks']} random two-arm "
        f"H16 chunks (seed {res['seed']}), 9 substeps of 3.7 ms per knot.",
        "",
        "| variant | policy | verdicts agree | max \\|dq\\| per substep [deg] | max target diff "
        "| substeps | reference arm verdicts | reported-lag chunks | J6/J7-row chunks "
        "| ikstack [ms/chunk] | reference [ms/chunk] |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, r in res["results"].items():
        variant, policy = key.split(" | ")
        verdicts = ", ".join(f"{k} {v}" for k, v in sorted(r["reference_arm_verdicts"].items()))
        dq = "n/a" if r["max_joint_diff_deg"] is None else f"{r['max_joint_diff_deg']:.2e}"
        lines.append(
            f"| {variant} | {policy} | {r['verdicts_agree']}/{r['chunks']} | {dq} "
            f"| {r['max_target_diff']:.1e} | {r['substeps_compared']} | {verdicts} "
            f"| {r['chunks_with_reported_lag']} | {r['chunks_with_j67_row_binding']} "
            f"| {r['ikstack_ms_per_chunk']:.1f} | {r['reference_ms_per_chunk']:.1f} |"
        )
    port = [(k, r) for k, r in res["results"].items() if k.startswith("port |")]
    if port:
        lines += [
            "",
            "By chunk kind (variant port):",
            "",
            "| policy | kind | chunks | verdicts agree | max \\|dq\\| [deg] "
            "| reference arm verdicts |",
            "|---|---|---|---|---|---|",
        ]
        for key, r in port:
            for kind, k in r["by_kind"].items():
                if not k["chunks"]:
                    continue
                verdicts = ", ".join(
                    f"{a} {b}" for a, b in sorted(k["reference_arm_verdicts"].items())
                )
                dq = "n/a" if k["max_joint_diff_deg"] is None else f"{k['max_joint_diff_deg']:.2e}"
                lines.append(
                    f"| {key.split(' | ')[1]} | {kind} | {k['chunks']} "
                    f"| {k['verdicts_agree']}/{k['chunks']} | {dq} | {verdicts} |"
                )
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunks", type=int, default=240, help="random two-arm chunks (240)")
    ap.add_argument("--seed", type=int, default=20260914)
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--quick", action="store_true", help="24 chunks, the port variant only")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "parity_diffik.json"))
    args = ap.parse_args()
    n = 24 if args.quick else args.chunks
    res = run(n, args.seed, ["port"] if args.quick else args.variants)
    res["quick"] = args.quick
    port = [r for k, r in res["results"].items() if k.startswith("port |")]
    ok = bool(port) and all(
        r["verdicts_agree"] == r["chunks"]
        and r["max_joint_diff_deg"] is not None
        and r["max_joint_diff_deg"] < 1e-4
        for r in port
    )
    res["pass"] = ok
    text = table(res)
    print()
    print(text)
    print(
        "PASS" if ok else "FAIL",
        "(port variant: every verdict agrees and joints within 1e-4 deg after every substep)",
    )
    out = Path(args.out)
    written = write_report(
        out.stem, res, folder=out.parent, packages=("ikstack", "numpy", "scipy", "osqp")
    )
    written.with_suffix(".md").write_text(text)
    print(f"wrote {written} and {written.with_suffix('.md')}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
