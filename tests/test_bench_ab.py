"""The A/B benchmark tool's pure logic: reading figures, the verdict rule, the table.

No benchmark runs here (speed is measured by the tool itself, never asserted in tests).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_ab", ROOT / "tools" / "bench_ab.py")
assert _spec is not None and _spec.loader is not None
ab = importlib.util.module_from_spec(_spec)
sys.modules["bench_ab"] = ab  # dataclasses look their module up while the class is built
_spec.loader.exec_module(ab)

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
    flat = ab.flatten(DOC)
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
    bench = ab.Bench(
        "x.py",
        ab._figs("rows/*/*_us", "+results/*/per_s"),
        exclude=("rows/*/peer_us",),
    )
    got = ab.figures(DOC, bench)
    assert got == {
        "rows / ur5 best / single_us": (5.0, True),
        "rows / ur5 all / single_us": (7.0, True),
        "rows / ur5 all #2 / single_us": (8.0, True),
        "rows / 3 / single_us": (9.0, True),
        "results / held at J6/J7 / per_s": (1000.0, False),
    }


def test_the_results_file_a_run_wrote():
    bench = ab.Bench("bench_x.py", ())
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
    return ab.Row("t", lower, list(base), list(head))


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
    assert ab.verdict(_row(base, head, lower)) == expected


def test_verdict_with_the_median_and_another_bound():
    row = _row((10.0, 12.0, 12.0), (10.0, 12.5, 12.5))  # best equal, median +4.2%
    assert ab.verdict(row, stat="median") == "ok"
    assert ab.verdict(row, bound=0.02, stat="median") == "slower, noisy"


def test_table_has_one_line_per_figure_with_the_ratios():
    rows = [
        ab.Row("rows / ur5 / single_us", True, [2.0, 2.1], [2.2, 2.4], committed=1.1),
        ab.Row("a|b / per_s", False, [100.0], [90.0]),
    ]
    lines = ab.table(rows).splitlines()
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
    bench = ab.Bench("x.py", ab._figs("rows/*/single_us"))
    slow = json.loads(json.dumps(DOC).replace("5.0", "6.0"))
    rows = {r.name: r for r in ab.collect(bench, [DOC, DOC], [slow], committed=DOC)}
    r = rows["rows / ur5 best / single_us"]
    assert (r.base, r.head, r.committed) == ([5.0, 5.0], [6.0], 5.0)


def test_every_benchmark_script_is_measured_or_skipped_with_a_reason():
    scripts = [p.name for p in (ROOT / "benchmarks").glob("*.py")]
    assert ab.unlisted(scripts) == []
    assert ab.unlisted([*scripts, "bench_new.py"]) == ["bench_new.py"]
    assert all(why for why in ab.SKIPPED.values())
    assert all((ROOT / "benchmarks" / s).exists() for s in ab.SKIPPED)


@pytest.mark.parametrize("bench", ab.BENCHES, ids=lambda b: b.script)
def test_every_figure_pattern_finds_a_figure_in_the_committed_results(bench):
    path = ROOT / "benchmarks" / "results" / (bench.committed or bench.out)
    doc = json.loads(path.read_text())
    assert (ROOT / "benchmarks" / bench.script).exists()
    for m in bench.metrics:
        one = ab.Bench(bench.script, (m,), exclude=bench.exclude)
        assert ab.figures(doc, one), f"{bench.script}: {m.pattern} matches nothing in {path.name}"


def test_the_listing_names_every_script(capsys):
    assert ab.main(["--list"]) == 0
    listing = capsys.readouterr().out
    for p in (ROOT / "benchmarks").glob("*.py"):
        assert f"| {p.name} |" in listing
