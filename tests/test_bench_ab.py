"""The A/B benchmark tool's pure logic: reading figures, the verdict rule, the table.

No benchmark runs here (speed is measured by the tool itself, never asserted in tests).
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the tool's modules import one another as the script's folder holds them
sys.path.insert(0, str(ROOT / "tools"))
ab = importlib.import_module("bench_ab")  # the command line and the runs
tab = importlib.import_module("bench_ab_table")  # the scripts, their figures
vd = importlib.import_module("bench_ab_verdict")  # rows, the verdict, the table
trees = importlib.import_module("bench_ab_trees")  # the base worktree and its servo module

DOC = {
    "benchmark": "x",
    "machine": {"cores": 2, "load_average": [1.0, 2.0, 3.0]},
    "quick": True,
    "rows": [
        {"arm": "ur5", "mode": "best", "single_us": 5.0, "peer_us": 3.0, "ok": True},
        {"arm": "ur5", "mode": "all", "single_us": 7.0, "nan_us": float("nan")},
        {"arm": "ur5", "mode": "all", "single_us": 8.0},
        {"single_us": 9.0},
    ],
    "results": {"held at J6/J7": {"median_us": 2.5, "per_s": 1000}},
}


def test_flatten_keys_rows_by_their_label():
    flat = tab.flatten(DOC)
    assert flat[("rows", "ur5 best", "single_us")] == 5.0
    assert flat[("rows", "ur5 all", "single_us")] == 7.0
    assert flat[("rows", "ur5 all #2", "single_us")] == 8.0  # a repeated label gets its index
    assert flat[("rows", "3", "single_us")] == 9.0  # no label field: the index
    assert flat[("results", "held at J6/J7", "median_us")] == 2.5  # '/' inside a key is kept
    assert flat[("machine", "cores")] == 2.0
    assert ("quick",) not in flat  # booleans are not figures
    assert ("rows", "ur5 best", "ok") not in flat
    assert ("rows", "ur5 all", "nan_us") not in flat
    assert not any(k[:2] == ("machine", "load_average") for k in flat)  # a list of numbers


def test_figures_match_part_by_part_and_leave_out_excluded():
    bench = tab.Bench(
        "x.py",
        tab._figs("rows/*/*_us", "+results/*/per_s"),
        exclude=("rows/*/peer_us",),
    )
    got = tab.figures(DOC, bench)
    assert got == {
        "rows / ur5 best / single_us": (5.0, True),
        "rows / ur5 all / single_us": (7.0, True),
        "rows / ur5 all #2 / single_us": (8.0, True),
        "rows / 3 / single_us": (9.0, True),
        "results / held at J6/J7 / per_s": (1000.0, False),
    }


def test_the_results_file_a_run_wrote():
    bench = tab.Bench("bench_x.py", ())
    assert bench.out == "bench_x.json"
    assert ab.written_results(bench, ["other.json", "bench_x.json"]) == "bench_x.json"
    assert ab.written_results(bench, ["other.json", "bench_x-quick.json"]) == "bench_x-quick.json"
    assert ab.written_results(bench, ["bench_x_final.json"]) == "bench_x_final.json"  # the only one
    assert ab.written_results(bench, ["a.json", "b.json"]) is None
    assert ab.written_results(bench, []) is None


def test_same_code_ignores_layout_and_comments():
    assert ab.same_code("f(a,b)  # x\n", "f(\n    a,\n    b,\n)\n")
    assert not ab.same_code("f(a, b)\n", "f(b, a)\n")


def _row(base, head, lower=True):
    return vd.Row("t", lower, list(base), list(head))


@pytest.mark.parametrize(
    ("base", "head", "lower", "expected"),
    [
        ((10.0, 11.0, 12.0), (10.4, 10.9, 13.0), True, "ok"),  # best 10 -> 10.4: +4%
        ((10.0, 10.1), (10.6, 11.0), True, "REGRESSED"),  # +6%, every head run slower
        ((10.0, 11.0), (10.6, 10.7), True, "slower, noisy"),  # +6%, the ranges overlap
        ((10.0,), (9.0,), True, "faster"),
        ((10.0,), (10.5,), True, "ok"),  # exactly at the bound
        ((100.0, 99.0), (94.0, 93.0), False, "REGRESSED"),  # a rate: lower is worse
        ((100.0, 80.0), (94.0, 93.0), False, "slower, noisy"),
        ((100.0,), (120.0,), False, "faster"),
        ((), (1.0,), True, "-"),  # a side without figures has no verdict
    ],
)
def test_verdict_rule(base, head, lower, expected):
    assert vd.verdict(_row(base, head, lower)) == expected


def test_verdict_with_the_median_and_another_bound():
    row = _row((10.0, 12.0, 12.0), (10.0, 12.5, 12.5))  # best equal, median +4.2%
    assert vd.verdict(row, stat="median") == "ok"
    assert vd.verdict(row, bound=0.02, stat="median") == "slower, noisy"


def test_table_has_one_line_per_figure_with_the_ratios():
    rows = [
        vd.Row("rows / ur5 / single_us", True, [2.0, 2.1], [2.2, 2.4], committed=1.1),
        vd.Row("a|b / per_s", False, [100.0], [90.0]),
    ]
    lines = vd.table(rows).splitlines()
    assert lines[0].split("|")[1:-1] == [
        " figure ",
        " base ",
        " head ",
        " head/base ",
        " verdict ",
        " committed ",
        " head/committed ",
    ]
    cells = [c.strip() for c in lines[2].split("|")[1:-1]]
    verdict = "REGRESSED (base 2-2.1, head 2.2-2.4)"
    assert cells == ["rows / ur5 / single_us", "2", "2.2", "1.1", verdict, "1.1", "2"]
    cells = [c.strip() for c in lines[3].split("|")[1:-1]]
    verdict = "REGRESSED (base 100-100, head 90-90)"
    assert cells == ["a/b / per_s (higher is better)", "100", "90", "0.9", verdict, "-", "-"]
    assert len(lines) == 4


def test_collect_gathers_rounds_per_side_and_the_committed_figure():
    bench = tab.Bench("x.py", tab._figs("rows/*/single_us"))
    slow = json.loads(json.dumps(DOC).replace("5.0", "6.0"))
    rows = {r.name: r for r in vd.collect(bench, [DOC, DOC], [slow], committed=DOC)}
    r = rows["rows / ur5 best / single_us"]
    assert (r.base, r.head, r.committed) == ([5.0, 5.0], [6.0], 5.0)


def _renamed_docs():
    """Synthetic results: the base's lock search named ``old``, the head's ``new``; one
    figure kept its name, one appears only at the head."""

    def doc(mode, extra=()):
        rows = [
            {"case": "arm fixed", "single_us": 10.0},
            {"case": f"arm {mode}", "single_us": 20.0},
        ]
        return {"rows": rows + [{"case": c, "single_us": 1.0} for c in extra]}

    return doc


RENAMED = tab.Bench(
    "x.py",
    tab._figs("rows/*/single_us"),
    renamed=(("rows / arm old / single_us", "rows / arm new / single_us"),),
    renamed_why="the search's new name",
)


def test_a_renamed_figure_is_judged_against_the_bases_old_name():
    doc = _renamed_docs()
    slow = json.loads(json.dumps(doc("new", ["arm added"])).replace("20.0", "30.0"))
    committed = doc("old")  # committed before the rename
    rows = {r.name: r for r in vd.collect(RENAMED, [doc("old")] * 2, [slow], committed)}
    assert set(rows) == {
        "rows / arm fixed / single_us",
        "rows / arm new / single_us",
        "rows / arm added / single_us",
    }  # no row left under the old name
    r = rows["rows / arm new / single_us"]
    assert (r.base, r.head, r.committed) == ([20.0, 20.0], [30.0], 20.0)
    assert r.renamed_from == "rows / arm old / single_us"
    assert vd.verdict(r) == "REGRESSED"
    assert rows["rows / arm fixed / single_us"].renamed_from is None
    added = rows["rows / arm added / single_us"]
    assert (added.base, vd.verdict(added)) == ([], "-")  # new work: no verdict
    lines = vd.table(rows.values()).splitlines()
    marked = [ln for ln in lines if "rows / arm new / single_us [r1]" in ln]
    assert len(marked) == 1 and "REGRESSED" in marked[0]
    assert lines[-1] == "[r1] judged against the renamed base figure: rows / arm old / single_us"
    assert sum("[r" in ln for ln in lines) == 2


def test_a_rename_applies_only_where_the_base_lacks_the_heads_name():
    doc = _renamed_docs()
    both = doc("new", ["arm old"])  # a base that already has the new name (and the old one)
    rows = {r.name: r for r in vd.collect(RENAMED, [both], [doc("new")], doc("new"))}
    assert rows["rows / arm new / single_us"].renamed_from is None
    assert rows["rows / arm new / single_us"].base == [20.0]
    assert rows["rows / arm old / single_us"].base == [1.0]  # its own row, head-less
    assert "[r" not in vd.table(rows.values())
    # the head still reports the old name: the two are separate figures
    rows = {r.name: r for r in vd.collect(RENAMED, [doc("old")], [both], None)}
    assert rows["rows / arm new / single_us"].renamed_from is None
    assert rows["rows / arm old / single_us"].base == [20.0]
    assert rows["rows / arm old / single_us"].head == [1.0]


@pytest.mark.parametrize("bench", [b for b in tab.BENCHES if b.renamed], ids=lambda b: b.script)
def test_every_rename_is_a_figure_of_its_benchmark_with_a_reason(bench):
    assert bench.renamed_why
    olds = [old for old, _ in bench.renamed]
    news = [new for _, new in bench.renamed]
    assert len(set(olds)) == len(olds) and len(set(news)) == len(news)
    assert not set(olds) & set(news)
    for name in olds + news:
        key = tuple(name.split(" / "))
        assert any(tab._matches(m.pattern, key) for m in bench.metrics), name
    path = ROOT / "benchmarks" / "results" / (bench.committed or bench.out)
    held = tab.figures(json.loads(path.read_text()), bench)
    assert all(old in held or new in held for old, new in bench.renamed), path.name


def test_every_benchmark_script_is_measured_or_skipped_with_a_reason():
    scripts = [p.name for p in (ROOT / "benchmarks").glob("*.py")]
    assert tab.unlisted(scripts) == []
    assert tab.unlisted([*scripts, "bench_new.py"]) == ["bench_new.py"]
    assert all(why for why in tab.SKIPPED.values())
    assert all((ROOT / "benchmarks" / s).exists() for s in tab.SKIPPED)


@pytest.mark.parametrize("bench", tab.BENCHES, ids=lambda b: b.script)
def test_every_figure_pattern_finds_a_figure_in_the_committed_results(bench):
    path = ROOT / "benchmarks" / "results" / (bench.committed or bench.out)
    doc = json.loads(path.read_text())
    assert (ROOT / "benchmarks" / bench.script).exists()
    for m in bench.metrics:
        one = tab.Bench(bench.script, (m,), exclude=bench.exclude)
        assert tab.figures(doc, one), f"{bench.script}: {m.pattern} matches nothing in {path.name}"


def test_the_listing_names_every_script(capsys):
    assert ab.main(["--list"]) == 0
    listing = capsys.readouterr().out
    for p in (ROOT / "benchmarks").glob("*.py"):
        assert f"| {p.name} |" in listing


# --------------------------------------------------------------------------- the servo module


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


SOURCES = {
    "CMakeLists.txt": "project(x)",
    "cpp/CMakeLists.txt": "add_library(core)",
    "cpp/src/servo.cpp": "int orientation_tolerance;",
    "cpp/include/servo.hpp": "struct C;",
    "bindings/servo.cpp": 'def_rw("orientation_tolerance")',
    "cpp/tests/test_servo.cpp": "TEST",
    "src/ikstack/servo.py": "x = 1",
}


def test_native_digest_follows_the_module_sources_only(tmp_path):
    a = _tree(tmp_path / "a", SOURCES)
    b = _tree(tmp_path / "b", SOURCES)
    assert trees.native_digest(a) == trees.native_digest(b)
    # what is not built into the module: C++ tests, Python sources
    _tree(b, {"cpp/tests/test_servo.cpp": "TEST 2", "src/ikstack/servo.py": "x = 2"})
    assert trees.native_digest(a) == trees.native_digest(b)
    for rel in ("bindings/servo.cpp", "cpp/src/servo.cpp", "cpp/include/servo.hpp"):
        c = _tree(tmp_path / rel.replace("/", "_"), {**SOURCES, rel: "renamed rotation_"})
        assert trees.native_digest(c) != trees.native_digest(a), rel
    d = _tree(tmp_path / "d", {**SOURCES, "bindings/extra.cpp": ""})  # a new file
    assert trees.native_digest(d) != trees.native_digest(a)
    e = _tree(tmp_path / "e", {**SOURCES, "cpp/src/moved.cpp": SOURCES["cpp/src/servo.cpp"]})
    (e / "cpp/src/servo.cpp").unlink()  # a renamed file, same contents
    assert trees.native_digest(e) != trees.native_digest(a)


@pytest.mark.parametrize(
    ("head", "base", "installed", "expected"),
    [
        ("h", "h", None, "copy"),  # same sources: the head's module
        ("h", "h", "old", "copy"),  # the head's module, even over an earlier base build
        ("h", "b", None, "build"),  # differing sources, nothing built yet
        ("h", "b", "h", "build"),  # the module there is the head's copy (an earlier run)
        ("h", "b", "b", "reuse"),  # built from these very sources by an earlier --keep run
        ("h", "b", "b0", "build"),  # built from other sources (the base tree moved)
    ],
)
def test_native_action(head, base, installed, expected):
    assert trees.native_action(head, base, installed) == expected


def test_base_native_builds_once_and_a_kept_tree_reuses_it(tmp_path, monkeypatch):
    head = _tree(tmp_path / "head", {**SOURCES, "src/ikstack/_native.abi3.so": "HEAD"})
    renamed = SOURCES["bindings/servo.cpp"].replace("orientation", "rotation")
    base = _tree(tmp_path / "base", {**SOURCES, "bindings/servo.cpp": renamed})
    monkeypatch.setattr(trees, "ROOT", head)
    built: list[Path] = []

    def fake_build(tree: Path, python: str, scratch: Path) -> Path:
        built.append(tree)
        out = tree / "src" / "ikstack" / "_native.abi3.so"
        out.write_text("BASE")
        return out

    monkeypatch.setattr(trees, "build_native", fake_build)
    so = base / "src" / "ikstack" / "_native.abi3.so"
    assert trees.base_native(base, "python", tmp_path / "w") == "build"
    assert so.read_text() == "BASE" and built == [base]
    assert trees.base_native(base, "python", tmp_path / "w") == "reuse"  # --keep: no second build
    assert so.read_text() == "BASE" and built == [base]
    so.unlink()  # the module is gone: the stamp alone does not vouch for it
    assert trees.base_native(base, "python", tmp_path / "w") == "build"
    # the base's sources become the head's: the head's module is copied over the built one
    _tree(base, {"bindings/servo.cpp": SOURCES["bindings/servo.cpp"]})
    assert trees.base_native(base, "python", tmp_path / "w") == "copy"
    assert so.read_text() == "HEAD" and len(built) == 2


def test_a_failed_build_leaves_no_stamp(tmp_path, monkeypatch):
    head = _tree(tmp_path / "head", SOURCES)
    base = _tree(tmp_path / "base", {**SOURCES, "cpp/src/servo.cpp": "changed"})
    monkeypatch.setattr(trees, "ROOT", head)
    (base / trees.NATIVE_STAMP).parent.mkdir(parents=True)
    (base / trees.NATIVE_STAMP).write_text("stale\n")

    def failing_build(tree: Path, python: str, scratch: Path) -> Path:
        raise SystemExit("no compiler")

    monkeypatch.setattr(trees, "build_native", failing_build)
    with pytest.raises(SystemExit):
        trees.base_native(base, "python", tmp_path / "w")
    assert not (base / trees.NATIVE_STAMP).exists()


# --------------------------------------------------------------------------- head script on base


def test_import_failed_reads_the_last_traceback_line():
    tb = "Traceback (most recent call last):\n  ...\n"
    assert ab.import_failed(tb + "ImportError: cannot import name 'x' from 'ikstack.jobs.path'")
    assert ab.import_failed(tb + "ModuleNotFoundError: No module named 'ikstack.gone'")
    assert not ab.import_failed(tb + "ValueError: bad")
    assert not ab.import_failed("ImportError: early\n" + tb + "RuntimeError: later")
    assert not ab.import_failed("")


def _ns(**kw):
    base = dict(full=False, python="python", timeout=1.0, rounds=2, confirm=0, bound=0.05)
    return ab.argparse.Namespace(**{**base, "stat": "best", "own_scripts": False, **kw})


def _fake_runs(monkeypatch, broken_root: Path):
    """run_once: a script that cannot start on ``broken_root``, 10 us on any other tree."""
    calls: list[Path] = []

    def fake(side, bench, full, python, timeout):
        calls.append(side.root)
        if side.root == broken_root:
            return ab.Outcome(None, "exit 1: ImportError: x", True, 0.1, cannot_start=True)
        return ab.Outcome({"rows": [{"arm": "a", "t_us": 10.0}]}, wall_s=0.1)

    monkeypatch.setattr(ab, "run_once", fake)
    return calls


def _sides(tmp_path):
    base = trees.Side("base", tmp_path / "base", {})
    base.head_scripts = trees.Side("base", tmp_path / "base_head_scripts", {})
    return base, trees.Side("head", tmp_path / "head", {})


def test_a_declared_script_runs_the_head_copy_on_the_base_flagged(tmp_path, monkeypatch):
    base, head = _sides(tmp_path)
    calls = _fake_runs(monkeypatch, base.root)
    bench = tab.Bench("b.py", tab._figs("rows/*/t_us"), head_on_base="same jobs")
    rows, notes, failed = ab.measure(bench, (base, head), _ns())
    assert not failed
    assert notes[0].startswith(ab.HEAD_ON_BASE) and "ImportError" in notes[0]
    assert "same jobs" in notes[1]
    assert [(r.base, r.head) for r in rows] == [([10.0, 10.0], [10.0, 10.0])]
    alt = tmp_path / "base_head_scripts"
    # the base's own copy once, then the head's copy on every base run; rounds alternate
    assert calls == [base.root, alt, head.root, head.root, alt]


@pytest.mark.parametrize("declared, own", [(False, False), (True, True)])
def test_no_head_copy_without_a_declared_reason_or_with_own_scripts(
    tmp_path, monkeypatch, declared, own
):
    base, head = _sides(tmp_path)
    calls = _fake_runs(monkeypatch, base.root)
    bench = tab.Bench("b.py", tab._figs("rows/*/t_us"), head_on_base="same" if declared else "")
    rows, notes, failed = ab.measure(bench, (base, head), _ns(own_scripts=own))
    assert failed and notes == ["base: exit 1: ImportError: x"]
    assert [(r.base, r.head) for r in rows] == [([], [10.0, 10.0])]
    assert calls == [base.root, head.root, head.root]


def test_a_base_failing_for_another_reason_keeps_its_failure(tmp_path, monkeypatch):
    base, head = _sides(tmp_path)

    def crash(side, bench, full, python, timeout):
        if side.root == base.root:
            return ab.Outcome(None, "exit 1: ValueError: bad", True, 0.1)
        return ab.Outcome({"rows": [{"arm": "a", "t_us": 10.0}]}, wall_s=0.1)

    monkeypatch.setattr(ab, "run_once", crash)
    bench = tab.Bench("b.py", tab._figs("rows/*/t_us"), head_on_base="same")
    _, notes, failed = ab.measure(bench, (base, head), _ns())
    assert failed and notes == ["base: exit 1: ValueError: bad"]
