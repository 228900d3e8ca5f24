"""The A/B benchmark tool's table: which benchmark scripts it runs, with what arguments, which
figures of their results are timings (and which were renamed since a base), which scripts it
skips and why; and how a figure pattern picks figures out of a results document.

``tools/bench_ab.py`` runs the table; ``--list`` prints it.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: fields whose values name a row of a JSON list of records, in this order
LABEL_KEYS = ("arm", "robot", "case", "path", "op", "mode", "engine", "workers")


@dataclass(frozen=True)
class Metric:
    """JSON figures matched by ``pattern``: '/'-separated parts, each a shell-style pattern
    matched against one key (a dict key or a list row's label)."""

    pattern: str
    lower_is_better: bool = True


@dataclass(frozen=True)
class Bench:
    script: str  # it writes benchmarks/results/<its name>.json (<name>-quick.json at --quick)
    metrics: tuple[Metric, ...]
    quick: tuple[str, ...] = ("--quick",)
    full: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()  # patterns of matched figures to leave out (peers)
    opt_in: str = ""  # non-empty: run only when named on the command line; the reason
    committed: str = ""  # the committed results to compare with, when not <name>.json
    # non-empty: why the head's copy measures the same work at a base whose own copy cannot
    # run there (then the head's copy runs on both sides, flagged)
    head_on_base: str = ""
    # figures renamed since a base, (base name, head name), judged together (see
    # ``bench_ab_verdict.collect``), and why each pair measures the same work
    renamed: tuple[tuple[str, str], ...] = ()
    renamed_why: str = ""

    @property
    def out(self) -> str:
        return self.script.removesuffix(".py") + ".json"


def _figs(*patterns: str) -> tuple[Metric, ...]:
    """Figure patterns; a leading ``+`` marks a rate (higher is better)."""
    return tuple(Metric(p.lstrip("+"), lower_is_better=not p.startswith("+")) for p in patterns)


#: every speed script: its arguments and timing figures
BENCHES: tuple[Bench, ...] = (
    Bench("bench_analytic.py", _figs("rows/*/ikstack_*_us")),
    Bench("bench_analytic_breakdown.py", _figs("rows/*/*_us"), quick=()),  # a few seconds
    Bench("bench_decode.py", _figs("steps/*/step_us_median", "decodes/*/*_ms")),
    # (its FastGate (a30eebd) and QP workspace (c33c1b0) figures are new work, not renames)
    Bench("bench_dispatch.py", _figs("ns_per_call/*")),
    Bench(
        "bench_general6r.py",
        _figs("rows/*/single_us", "rows/*/batched_us"),
        renamed=(
            (
                "rows / rizon4 seed_local (400 slots) / single_us",
                "rows / rizon4 near_q0 (400 slots) / single_us",
            ),
            (
                "rows / rizon4 seed_local (400 slots) / batched_us",
                "rows / rizon4 near_q0 (400 slots) / batched_us",
            ),
            (
                "rows / rizon4s seed_local (400 slots) / single_us",
                "rows / rizon4s near_q0 (400 slots) / single_us",
            ),
            (
                "rows / rizon4s seed_local (400 slots) / batched_us",
                "rows / rizon4s near_q0 (400 slots) / batched_us",
            ),
        ),
        renamed_why=(
            "LockedJoint7R's lock search 'seed_local' is named 'near_q0' since 50229ef (the same "
            "search: 400 slots, the same lock samples); the script times the same solve calls "
            "(one target, a batch), passing the joint guess as q0= where it passed seed="
        ),
    ),
    Bench("bench_kinematics.py", _figs("rows/*/ikstack_us")),
    Bench("bench_latency_load.py", _figs("rows/*/quiet_median_us", "rows/*/loaded_median_us")),
    Bench(
        "bench_numerical.py",
        _figs(
            "arms/*/ikstack/single/median_us",
            "arms/*/ikstack/batched/per_target_us",
            "arms/*/ikstack/breakdown/compiled_per_target_us",
        ),
        quick=("--quick", "--arms", "panda", "marvin_left"),
    ),
    Bench("bench_routing.py", _figs("rows/*/auto_us", "rows/*/lm_us", "rows/*/analytic_us")),
    Bench("bench_servo.py", _figs("results/ikstack*/median_us", "marvin/*/median_us")),
    Bench(
        "bench_solve.py",
        _figs("+rows/*/frames_per_second", "+rows/*/frames_per_cpu_second"),
        quick=("--quick", "--no-ray"),
        exclude=("rows/*peer*/*",),
        head_on_base=(
            "a base copy that imports jobs.path.library_solvers_available (gone from the "
            "library since 0c891a3) cannot start; the head's copy runs the same jobs with the "
            "library's path solver (what that check chose whenever the library was installed) "
            "and only names its quick results file differently"
        ),
    ),
    Bench("bench_warp_analytic.py", _figs("+rows/*/warp_cpu_per_s", "+rows/*/cpu_path_per_s")),
    Bench("bench_warp_numerical.py", _figs("+rows/*/warp_cpu_per_s", "+rows/*/cpu_path_per_s")),
    Bench("parity_diffik.py", _figs("results/*/ikstack_ms_per_chunk")),
    Bench(
        "bench_cold_start.py",
        _figs("rows/*/runs/0/wall_s"),
        committed="bench_cold_start_final.json",
        opt_in="compile times from an empty cache, minutes per path (seconds with --quick)",
    ),
)

#: scripts in benchmarks/ that measure no speed, and why
SKIPPED: dict[str, str] = {
    "fuzz_servo.py": "a fuzz run (counts of violations), not a speed measurement",
    "general_completeness.py": "solution counts against a reference, not a speed measurement",
    "sweep_7r.py": "a success sweep over locked-joint values, not a speed measurement",
    "sweep_edges.py": "success at the workspace edges, not a speed measurement",
    "make_sample_dataset.py": "writes a sample dataset, measures nothing",
    "gpu_check.py": "needs a CUDA GPU (run it on one by hand)",
}


def unlisted(scripts: Iterable[str]) -> list[str]:
    """Scripts neither measured nor skipped with a reason (the tables must cover them all)."""
    known = {b.script for b in BENCHES} | set(SKIPPED)
    return sorted(s for s in scripts if s not in known)


# --------------------------------------------------------------------------- figures


def flatten(doc: object) -> dict[tuple[str, ...], float]:
    """Every number in a results document, keyed by its path.

    A list of records is keyed by each record's label (the values of ``LABEL_KEYS`` it holds,
    joined by spaces; its index when it holds none; ``#i`` appended to a repeated label). Booleans,
    lists of numbers and non-finite numbers are left out."""
    out: dict[tuple[str, ...], float] = {}

    def walk(x: object, path: tuple[str, ...]) -> None:
        if isinstance(x, Mapping):
            for k, v in x.items():
                walk(v, (*path, str(k)))
        elif isinstance(x, list):
            if not all(isinstance(v, Mapping) for v in x):
                return
            seen: set[str] = set()
            for i, v in enumerate(x):
                label = " ".join(str(v[k]) for k in LABEL_KEYS if k in v) or str(i)
                if label in seen:
                    label = f"{label} #{i}"
                seen.add(label)
                walk(v, (*path, label))
        elif isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x):
            out[path] = float(x)

    walk(doc, ())
    return out


def _matches(pattern: str, key: tuple[str, ...]) -> bool:
    parts = pattern.split("/")
    return len(parts) == len(key) and all(
        fnmatch.fnmatchcase(k, p) for p, k in zip(parts, key, strict=True)
    )


def figures(doc: object, bench: Bench) -> dict[str, tuple[float, bool]]:
    """The timing figures of one results document: name -> (value, lower_is_better)."""
    out: dict[str, tuple[float, bool]] = {}
    for key, value in flatten(doc).items():
        if any(_matches(p, key) for p in bench.exclude):
            continue
        for m in bench.metrics:
            if _matches(m.pattern, key):
                out[" / ".join(key)] = (value, m.lower_is_better)
                break
    return out
