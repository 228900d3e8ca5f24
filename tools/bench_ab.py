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
  speed); the table ``BENCHES`` below names, per script, its arguments and which figures of
  its JSON (``benchmarks/results/<script>.json``, ``-quick.json`` at the quick size) are
  timings, with whether lower is better. ``--list`` prints it.

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
import fnmatch
import hashlib
import json
import math
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOUND = 0.05

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
    # figures renamed since a base, (base name, head name), judged together (see ``collect``),
    # and why each pair measures the same work
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


# --------------------------------------------------------------------------- verdict


@dataclass
class Row:
    name: str
    lower_is_better: bool
    base: list[float] = field(default_factory=list)
    head: list[float] = field(default_factory=list)
    committed: float | None = None
    renamed_from: str | None = None  # the base's name of the figure (``Bench.renamed``)


def summary(values: Sequence[float], lower_is_better: bool, stat: str = "best") -> float:
    if stat == "median":
        return statistics.median(values)
    return min(values) if lower_is_better else max(values)


def verdict(row: Row, bound: float = BOUND, stat: str = "best") -> str:
    """``ok``, ``faster``, ``slower, noisy``, ``REGRESSED`` (see the module notes), or ``-``
    when a side has no figure."""
    if not row.base or not row.head:
        return "-"
    lo = row.lower_is_better
    b, h = summary(row.base, lo, stat), summary(row.head, lo, stat)
    if b <= 0 or h <= 0:
        return "-"
    w = h / b if lo else b / h  # how many times worse head is (> 1: slower)
    if w < 1 - bound:
        return "faster"
    if w <= 1 + bound:
        return "ok"
    # every head round worse than every base round: the ranges do not overlap
    apart = min(row.head) > max(row.base) if lo else max(row.head) < min(row.base)
    return "REGRESSED" if apart else "slower, noisy"


def _num(x: float | None) -> str:
    if x is None or math.isnan(x):
        return "-"
    return f"{x:.4g}"


def table(rows: Iterable[Row], bound: float = BOUND, stat: str = "best") -> str:
    """One markdown table: figure, base, head, head/base, verdict, committed, head/committed;
    a figure judged against a renamed base figure is marked, the base's name below the table."""
    renames: list[str] = []
    lines = [
        "| figure | base | head | head/base | verdict | committed | head/committed |",
        "|---|---:|---:|---:|---|---:|---:|",
    ]
    for r in rows:
        lo = r.lower_is_better
        b = summary(r.base, lo, stat) if r.base else None
        h = summary(r.head, lo, stat) if r.head else None
        ratio = h / b if b and h is not None else None
        vs = h / r.committed if h is not None and r.committed else None
        name = r.name + ("" if lo else " (higher is better)")
        if r.renamed_from is not None:
            renames.append(r.renamed_from)
            name += f" [r{len(renames)}]"
        v = verdict(r, bound, stat)
        if v in ("REGRESSED", "slower, noisy"):  # the spreads the rule looked at
            v += f" (base {_num(min(r.base))}-{_num(max(r.base))}, "
            v += f"head {_num(min(r.head))}-{_num(max(r.head))})"
        lines.append(
            f"| {name.replace('|', '/')} | {_num(b)} | {_num(h)} | {_num(ratio)} | {v} | "
            f"{_num(r.committed)} | {_num(vs)} |"
        )
    if renames:
        lines.append("")
    for i, old in enumerate(renames, 1):
        lines.append(f"[r{i}] judged against the renamed base figure: {old.replace('|', '/')}")
    return "\n".join(lines)


def collect(
    bench: Bench,
    base_docs: Sequence[object],
    head_docs: Sequence[object],
    committed: object | None,
) -> list[Row]:
    """Rows of one benchmark from each side's results documents (one per round).

    A renamed figure (``Bench.renamed``: base name -> head name) is one row under the head's
    name, holding the base's figures of the old name, when the base has no figure of the
    head's name and the head none of the old name; its committed figure is the head's name's,
    else the old name's."""
    rows: dict[str, Row] = {}
    for side, docs in (("base", base_docs), ("head", head_docs)):
        for doc in docs:
            for name, (value, lo) in figures(doc, bench).items():
                row = rows.setdefault(name, Row(name, lo))
                getattr(row, side).append(value)
    for old, new in bench.renamed:
        row, was = rows.get(new), rows.get(old)
        if row is None or was is None or row.base or was.head:
            continue
        row.base, row.renamed_from = was.base, old
        del rows[old]
    if committed is not None:
        done = figures(committed, bench)
        for row in rows.values():
            got = done.get(row.name)
            if got is None and row.renamed_from is not None:
                got = done.get(row.renamed_from)
            if got is not None:
                row.committed = got[0]
    return list(rows.values())


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


def unlisted(scripts: Iterable[str]) -> list[str]:
    """Scripts neither measured nor skipped with a reason (the tables must cover them all)."""
    known = {b.script for b in BENCHES} | set(SKIPPED)
    return sorted(s for s in scripts if s not in known)


# --------------------------------------------------------------------------- running

SITECUSTOMIZE = """\
import sys
# an editable install's import hook would load ikstack from the installed tree, not PYTHONPATH
sys.meta_path[:] = [
    f for f in sys.meta_path
    if "editable" not in type(f).__module__ and "skbc" not in type(f).__module__
]
"""


def _git(*args: str) -> str:
    r = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return r.stdout.strip()


@dataclass
class Side:
    name: str
    root: Path  # a tree with benchmarks/ and src/
    env: dict[str, str]
    # this side's library with the head's copy of the scripts (the base side only)
    head_scripts: Side | None = None


def _remove_worktree(wt: Path) -> None:
    subprocess.run(["git", "worktree", "remove", "--force", str(wt)], cwd=ROOT, capture_output=True)
    shutil.rmtree(wt, ignore_errors=True)


# --------------------------------------------------------------------------- the servo module

#: what the compiled module ``ikstack._native`` is built from (the root CMakeLists builds the
#: C++ library of cpp/ and the bindings; cpp/'s tests, examples and benchmarks are not built)
NATIVE_SOURCES = ("CMakeLists.txt", "cpp/CMakeLists.txt", "cpp/include", "cpp/src", "bindings")
#: in the base tree (git-ignored build/): the digest of the sources its module was built from
NATIVE_STAMP = Path("build") / "bench_ab_native.txt"


def native_digest(root: Path) -> str:
    """One digest of the module's sources in a tree (paths and contents of ``NATIVE_SOURCES``)."""
    h = hashlib.sha256()
    for rel in NATIVE_SOURCES:
        top = root / rel
        files = sorted(top.rglob("*")) if top.is_dir() else [top]
        for f in files:
            if f.is_file():
                h.update(f.relative_to(root).as_posix().encode() + b"\0")
                h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


def native_action(head: str, base: str, installed: str | None) -> str:
    """How the base tree gets its servo module, from the digests of the head's and the base's
    sources and of the sources the module now in the base tree was built from (None: none):
    ``copy`` the head's (same sources), ``reuse`` the module there (built from the base's
    sources by an earlier ``--keep`` run) or ``build`` the base's own."""
    if head == base:
        return "copy"
    return "reuse" if installed == base else "build"


def _native_modules(folder: Path) -> list[Path]:
    return sorted(folder.glob("_native*.so")) + sorted(folder.glob("_native*.pyd"))


def build_native(tree: Path, python: str, scratch: Path) -> Path:
    """Build ``tree``'s own servo module: ``pip wheel --no-deps`` of the tree into ``scratch``
    (pip makes the build environment the project's build-system table asks for, as an
    install does; with the tree's build/ folder CMake's files stay in the tree for the next
    build), then the module is taken out of the wheel into the tree's ``src/ikstack``.
    Nothing is installed anywhere. Returns the module's path."""
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    cmd = [python, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "-w", str(scratch)]
    r = subprocess.run([*cmd, str(tree)], capture_output=True, text=True)
    wheels = sorted(scratch.glob("*.whl"))
    if r.returncode or not wheels:
        tail = "\n".join((r.stderr.strip() or r.stdout.strip()).splitlines()[-15:])
        raise SystemExit(f"building the base's servo module failed ({shlex.join(cmd)}):\n{tail}")
    dest = tree / "src" / "ikstack"
    with zipfile.ZipFile(wheels[0]) as z:
        names = [
            n
            for n in z.namelist()
            if n.startswith("ikstack/_native") and n.endswith((".so", ".pyd"))
        ]
        if len(names) != 1:
            raise SystemExit(f"{wheels[0].name}: expected one ikstack/_native module, got {names}")
        for old in _native_modules(dest):
            old.unlink()
        out = dest / Path(names[0]).name
        out.write_bytes(z.read(names[0]))
    shutil.rmtree(scratch, ignore_errors=True)
    return out


def base_native(tree: Path, python: str, scratch: Path) -> str:
    """Give the base tree its servo module (see ``native_action``); returns what was done."""
    stamp = tree / NATIVE_STAMP
    head_d, base_d = native_digest(ROOT), native_digest(tree)
    have = _native_modules(tree / "src" / "ikstack")
    installed = stamp.read_text().strip() if stamp.exists() and have else None
    action = native_action(head_d, base_d, installed)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    if action == "copy":
        for old in have:
            old.unlink()
        for so in _native_modules(ROOT / "src" / "ikstack"):
            shutil.copy2(so, tree / "src" / "ikstack" / so.name)
    elif action == "build":
        stamp.unlink(missing_ok=True)  # a failed build leaves no stamp that vouches for it
        print("building the base's servo module (its C++ or bindings differ) ...", file=sys.stderr)
        t0 = time.perf_counter()
        so = build_native(tree, python, scratch)
        print(f"  built {so.name} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    stamp.write_text(base_d + "\n")
    return action


# --------------------------------------------------------------------------- the two trees


def _overlay(dst: Path, scripts: Path, rest: Path) -> None:
    """A tree at ``dst``: a copy of ``scripts``'s benchmarks/ next to links to the rest of
    ``rest``'s entries (the scripts write their results into the copy)."""
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir()
    shutil.copytree(
        scripts / "benchmarks", dst / "benchmarks", ignore=shutil.ignore_patterns("__pycache__")
    )
    for entry in rest.iterdir():
        if entry.name != "benchmarks":
            (dst / entry.name).symlink_to(entry)


def prepare(work: Path, base: str, python: str) -> tuple[Side, Side]:
    """The two sides in ``work``: a worktree of ``base`` (kept from an earlier ``--keep`` run
    at the same commit, with its compiled caches) and a copy of the working tree's scripts."""
    site = work / "site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    wt = work / "base"
    head_of = ["git", "-C", str(wt), "rev-parse", "HEAD"]
    if not (wt / ".git").exists() or subprocess.getoutput(shlex.join(head_of)) != base:
        _remove_worktree(wt)
        _git("worktree", "add", "--force", "--detach", str(wt), base)  # force: a stale entry
    action = base_native(wt, python, work / "wheel")
    print(f"base servo module: {action}", file=sys.stderr)
    head = work / "head"
    _overlay(head, ROOT, ROOT)
    # the head's scripts on the base's tree, for a script whose base copy cannot run there
    _overlay(work / "base_head_scripts", ROOT, wt)

    def side(name: str, root: Path, src: Path) -> Side:
        return Side(name, root, dict(os.environ, PYTHONPATH=f"{site}{os.pathsep}{src}"))

    srcs = (wt / "src", ROOT / "src")
    sides = (side("base", wt, srcs[0]), side("head", head, srcs[1]))
    sides[0].head_scripts = side("base", work / "base_head_scripts", srcs[0])
    for s, src in zip(sides, srcs, strict=True):
        r = subprocess.run(
            [python, "-c", "import ikstack; print(ikstack.__file__)"],
            env=s.env,
            capture_output=True,
            text=True,
            cwd=s.root,
        )
        got = Path(r.stdout.strip() or "?").resolve()
        if not got.is_relative_to(src.resolve()):
            raise SystemExit(f"{s.name}: ikstack imports from {got}, not {src}: {r.stderr}")
    return sides


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
    base = ns.base or _git("log", "-1", "--format=%H", "--", "benchmarks/results")
    sha = _git("rev-parse", "--verify", f"{base}^{{commit}}")
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
            _remove_worktree(work / "base")
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
