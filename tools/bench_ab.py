"""A/B speed check: the benchmarks of a base revision against the working tree, in one run.

Run from the repository root::

    python tools/bench_ab.py                       # base: the commit that last changed
                                                   # benchmarks/results; every speed script
    python tools/bench_ab.py --base main~3 --rounds 5 bench_routing bench_servo
    python tools/bench_ab.py --list                # what is measured, what is skipped and why

How it measures:

- The base revision is checked out into a temporary git worktree (detached; with ``--keep``
  it stays, and the next ``--keep`` run at that base reuses its compiled caches). The compiled
  servo module ``src/ikstack/_native*.so`` (untracked, built at install) is the head's copy
  when the base's C++ sources and bindings (``NATIVE_SOURCES``) are the head's; otherwise the
  base's own module is built from the base tree (``pip wheel --no-deps`` of the base into a
  scratch folder, the module taken out of the wheel; nothing is installed) and kept in the
  base tree with the digest of its sources, so a ``--keep`` run reuses it. The working tree
  (head) runs from a temporary copy of ``benchmarks/`` next to links to the rest of the tree.
  So every script writes its JSON into a scratch folder: committed results are never touched.
- Each side runs with ``PYTHONPATH`` = a scratch ``sitecustomize`` that drops an editable
  install's import hook, then that side's ``src``; each side runs its own copy of the scripts
  (a script that differs between the two is flagged: it may measure different work). Where
  the base's own copy cannot run at the base (it is missing, or it fails at its imports) and
  the table declares why the head's copy measures the same work there (``Bench.head_on_base``),
  the head's copy runs on both sides, flagged "head script on base" (``--own-scripts``: never).
  Before measuring, the tool checks that ``import ikstack`` resolves to each side's ``src``.
- Runs alternate, so both sides see the same machine load: round 1 runs base then head,
  round 2 head then base, and so on (``--rounds``, default 3). Scripts run at their quick size
  (``--full``: the size the committed results were taken at). Each side's figure is the best
  of its rounds (``--stat median`` for the median).
- Only ikstack's own timings are compared (a peer library's timing is not this project's
  speed); the table ``BENCHES`` (``tools/bench_ab_table.py``) names, per script, its
  arguments and which figures of its JSON (``benchmarks/results/<script>.json``,
  ``-quick.json`` at the quick size) are timings, with whether lower is better. ``--list``
  prints it.

The verdict per figure, with ``worse = head/base`` for a time (``base/head`` for a rate):

- ``ok`` when ``worse <= 1 + bound`` (``--bound``, default 0.05), ``faster`` when it is below
  ``1 - bound``;
- ``REGRESSED`` when ``worse > 1 + bound`` and every head round is worse than every base round
  (the two ranges do not overlap): beyond the bound and beyond the run-to-run noise. A script
  with such a figure runs ``--confirm`` (default 2) more rounds and is judged on them all;
- ``slower, noisy`` when ``worse > 1 + bound`` but the ranges overlap (rerun on a quieter
  machine or with more ``--rounds``; ``--strict`` counts it as a regression).

A figure renamed since the base (the same work under a new name; ``Bench.renamed`` lists
each one, base name -> head name, and ``Bench.renamed_why`` says why it is the same work) is
judged against the base's figure of the old name, and the committed one of that name, when the
base lacks the head's name and the head lacks the old one; the table marks it and names the
base's figure below. A figure only one side has (new or dropped work) has no verdict.

Exit status: 0 when nothing regressed, 1 when a figure regressed, 2 when a script failed.
The last columns compare head with the committed results file where it holds the same figure;
at the quick size the committed (full-size) figure is only indicative, so no verdict uses it.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench_ab_table import BENCHES, SKIPPED, Bench, unlisted
from bench_ab_trees import ROOT, Side, git, prepare, remove_worktree
from bench_ab_verdict import BOUND, Row, collect, table, verdict


def written_results(bench: Bench, written: Iterable[str]) -> str | None:
    """Which of the files a run wrote holds its results: ``out``, else its smoke-run name
    (``<stem>-quick.json``), else the only file written."""
    names = set(written)
    stem = bench.out.removesuffix(".json")
    for name in (bench.out, f"{stem}-quick.json"):
        if name in names:
            return name
    return names.pop() if len(names) == 1 else None


def same_code(a: str, b: str) -> bool:
    """Whether two scripts hold the same code (layout and comments aside)."""
    try:
        return ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))
    except SyntaxError:
        return a == b


@dataclass
class Outcome:
    doc: object | None  # the results document, when the run wrote one
    note: str = ""  # why there is none
    failed: bool = False  # the script failed (exit status, timeout), not merely had no figures
    wall_s: float = 0.0
    cannot_start: bool = False  # the script is missing or failed at an import


def import_failed(stderr: str) -> bool:
    """Whether a Python traceback ends in a failed import (a name or module the library lacks)."""
    lines = stderr.strip().splitlines()
    return bool(lines) and lines[-1].startswith(("ImportError", "ModuleNotFoundError"))


def run_once(side: Side, bench: Bench, full: bool, python: str, timeout: float) -> Outcome:
    """Run one script on one side and read the results file it wrote."""
    args = bench.full if full else bench.quick
    script = side.root / "benchmarks" / bench.script
    if not script.exists():
        return Outcome(None, "not in this revision", cannot_start=True)
    folder = side.root / "benchmarks" / "results"

    def stamps() -> dict[str, tuple[int, int]]:
        return {p.name: (p.stat().st_mtime_ns, p.stat().st_size) for p in folder.glob("*.json")}

    before = stamps() if folder.exists() else {}
    t0 = time.perf_counter()
    try:
        r = subprocess.run(
            [python, str(script), *args],
            cwd=side.root,
            env=side.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return Outcome(None, f"timed out after {timeout:.0f} s", True, timeout)
    wall = time.perf_counter() - t0
    if r.returncode:
        tail = " ".join((r.stderr.strip() or r.stdout.strip()).splitlines()[-1:])
        return Outcome(None, f"exit {r.returncode}: {tail}", True, wall, import_failed(r.stderr))
    after = stamps() if folder.exists() else {}
    name = written_results(bench, (n for n, st in after.items() if before.get(n) != st))
    if name is None:  # e.g. an optional package is missing: the script says so and exits 0
        last = " ".join(r.stdout.strip().splitlines()[-1:])
        return Outcome(None, f"wrote no results ({last})", False, wall)
    return Outcome(json.loads((folder / name).read_text()), "", False, wall)


def _committed(bench: Bench) -> object | None:
    path = ROOT / "benchmarks" / "results" / (bench.committed or bench.out)
    return json.loads(path.read_text()) if path.exists() else None


def measure(
    bench: Bench, sides: tuple[Side, Side], ns: argparse.Namespace
) -> tuple[list[Row], list[str], bool]:
    """Alternate the two sides over the rounds: (rows, notes, whether a run failed).

    A side whose first run gives no results is not run again, except that a base whose own
    copy of the script cannot start there switches to the head's copy where the table says it
    measures the same work (``Bench.head_on_base``; not with ``ns.own_scripts``): the notes
    then begin with ``HEAD_ON_BASE``. When a figure comes out ``REGRESSED``, ``ns.confirm``
    more rounds run and the verdicts are taken over all rounds."""
    docs: dict[str, list[object]] = {"base": [], "head": []}
    notes: list[str] = []
    failed = False
    active = list(sides)

    def once(side: Side, rnd: int, total: int) -> Outcome:
        o = run_once(side, bench, ns.full, ns.python, ns.timeout)
        print(
            f"  round {rnd + 1}/{total} {side.name:4} {o.wall_s:6.1f} s {o.note or 'ok'}",
            file=sys.stderr,
            flush=True,
        )
        return o

    def play(rounds: range, total: int) -> None:
        nonlocal active, failed
        for rnd in rounds:
            for side in active if rnd % 2 == 0 else active[::-1]:
                o = once(side, rnd, total)
                alt = side.head_scripts
                if (
                    o.cannot_start
                    and rnd == 0
                    and alt
                    and bench.head_on_base
                    and not ns.own_scripts
                ):
                    notes.insert(0, f"{HEAD_ON_BASE}: its own copy there: {o.note}")
                    notes.insert(
                        1, f"why the head's copy measures the same work: {bench.head_on_base}"
                    )
                    active = [alt if s is side else s for s in active]
                    side, o = alt, once(alt, rnd, total)
                if o.doc is not None:
                    docs[side.name].append(o.doc)
                    continue
                failed |= o.failed
                notes.append(f"{side.name}: {o.note}")
                if rnd == 0:
                    active = [s for s in active if s is not side]

    committed = _committed(bench)
    play(range(ns.rounds), ns.rounds)
    rows = collect(bench, docs["base"], docs["head"], committed)
    if ns.confirm > 0 and len(active) == 2:
        if any(verdict(r, ns.bound, ns.stat) == "REGRESSED" for r in rows):
            total = ns.rounds + ns.confirm
            print(f"  a figure regressed: {ns.confirm} more rounds", file=sys.stderr)
            play(range(ns.rounds, total), total)
            rows = collect(bench, docs["base"], docs["head"], committed)
            notes.append(f"a figure regressed after {ns.rounds} rounds: {total} rounds run")
    return rows, notes, failed


#: the note that says the base side ran the head's copy of a script
HEAD_ON_BASE = "head script on base"


def _selected(ns: argparse.Namespace) -> list[Bench]:
    names = {n.removesuffix(".py") for n in ns.benchmarks}
    known = {b.script.removesuffix(".py") for b in BENCHES}
    bad = sorted(names - known)
    if bad:
        raise SystemExit(f"unknown benchmark(s): {', '.join(bad)} (see --list)")
    picked = [b for b in BENCHES if b.script.removesuffix(".py") in names]
    return picked or [b for b in BENCHES if not b.opt_in]


def _listing() -> str:
    lines = ["| script | arguments (quick) | figures | runs |", "|---|---|---|---|"]
    for b in BENCHES:
        figs = ", ".join(m.pattern + ("" if m.lower_is_better else " (rate)") for m in b.metrics)
        runs = f"only when named: {b.opt_in}" if b.opt_in else "by default"
        lines.append(f"| {b.script} | {' '.join(b.quick) or '-'} | {figs} | {runs} |")
    for s, why in sorted(SKIPPED.items()):
        lines.append(f"| {s} | - | - | skipped: {why} |")
    renamed = [b for b in BENCHES if b.renamed]
    if renamed:
        lines += ["", "Figures renamed since a base (judged against the base's old name):", ""]
    for b in renamed:
        lines.append(f"- {b.script}: {b.renamed_why}")
        lines += [f"  - {old} -> {new}" for old, new in b.renamed]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("benchmarks", nargs="*", help="scripts to run (default: every speed script)")
    ap.add_argument(
        "--base",
        default=None,
        help="base revision (default: the commit that last changed benchmarks/results)",
    )
    ap.add_argument("--rounds", type=int, default=3, help="runs per side, alternating (3)")
    ap.add_argument(
        "--confirm",
        type=int,
        default=2,
        help="rounds added to a benchmark where a figure regressed (2; 0: none)",
    )
    ap.add_argument("--stat", choices=("best", "median"), default="best")
    ap.add_argument("--bound", type=float, default=BOUND, help="allowed slowdown (0.05)")
    ap.add_argument("--strict", action="store_true", help="a noisy slowdown fails too")
    ap.add_argument("--full", action="store_true", help="the scripts' default (committed) sizes")
    ap.add_argument("--timeout", type=float, default=1800.0, help="per run [s] (1800)")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument(
        "--keep",
        action="store_true",
        help="keep the base worktree (and its compiled caches) for the next --keep run",
    )
    ap.add_argument(
        "--own-scripts",
        action="store_true",
        help="each side runs only its own copy of a script (no head script on base)",
    )
    ap.add_argument("--report", type=Path, default=None, help="also write the tables here")
    ap.add_argument("--list", action="store_true", help="what is measured and skipped, then exit")
    ns = ap.parse_args(argv)
    if ns.rounds < 1 or ns.confirm < 0:
        ap.error("--rounds must be at least 1 and --confirm at least 0")
    missing = unlisted(p.name for p in (ROOT / "benchmarks").glob("*.py"))
    if ns.list:
        print(_listing())
        return 0
    if missing:
        print(f"note: not in the tool's table: {', '.join(missing)}", file=sys.stderr)
    benches = _selected(ns)
    base = ns.base or git("log", "-1", "--format=%H", "--", "benchmarks/results")
    sha = git("rev-parse", "--verify", f"{base}^{{commit}}")
    if ns.keep:  # a fixed place, so that the next --keep run reuses the base's compiled caches
        work = Path(tempfile.gettempdir()) / f"bench_ab_{sha[:12]}"
        work.mkdir(exist_ok=True)
    else:
        work = Path(tempfile.mkdtemp(prefix="bench_ab_"))
    out: list[str] = [
        f"# Benchmarks A/B: base {sha[:10]} against the working tree",
        "",
        f"Rounds per side: {ns.rounds} (+{ns.confirm} where a figure regressed), alternating; "
        f"the {ns.stat} of each side's rounds; bound "
        f"{ns.bound:.0%}; {'full' if ns.full else 'quick'} sizes; load average at start "
        f"{os.getloadavg()[0]:.2f}.",
    ]
    regressed = noisy = failed = False
    try:
        sides = prepare(work, sha, ns.python)
        for bench in benches:
            print(f"{bench.script} ...", file=sys.stderr, flush=True)
            rows, notes, bad = measure(bench, sides, ns)
            head_script = ROOT / "benchmarks" / bench.script
            base_script = sides[0].root / "benchmarks" / bench.script
            args = " ".join(bench.full if ns.full else bench.quick)
            out += ["", f"## {bench.script} {args}".rstrip(), ""]
            on_base = any(n.startswith(HEAD_ON_BASE) for n in notes)
            if (
                not on_base
                and base_script.exists()
                and not same_code(base_script.read_text(), head_script.read_text())
            ):
                out.append("Note: the script's code differs between base and head.\n")
            if any(r.renamed_from is not None for r in rows):
                notes.append(f"renamed since the base ([r] below): {bench.renamed_why}")
            out += [f"- {n}" for n in notes] + ([""] if notes else [])
            if rows:
                out.append(table(rows, ns.bound, ns.stat))
            elif not notes:
                out.append("No timing figures found in its results.")
            verdicts = [verdict(r, ns.bound, ns.stat) for r in rows]
            regressed |= "REGRESSED" in verdicts
            noisy |= "slower, noisy" in verdicts
            failed |= bad
        out += ["", "## Skipped", ""]
        out += [f"- {s}: {why}" for s, why in sorted(SKIPPED.items())]
        out += [
            f"- {b.script}: {b.opt_in} (name it to run it)"
            for b in BENCHES
            if b.opt_in and b not in benches
        ]
    finally:
        if ns.keep:
            print(f"kept {work} (the next --keep run at this base reuses it)", file=sys.stderr)
        else:
            remove_worktree(work / "base")
            shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(out) + "\n"
    print(text)
    if ns.report:
        ns.report.write_text(text)
    if failed:
        return 2
    return 1 if regressed or (ns.strict and noisy) else 0


if __name__ == "__main__":
    raise SystemExit(main())
