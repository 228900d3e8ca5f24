"""A generated corpus of corrupted episode files (CSV, NPZ, Parquet): every one is a
DatasetError naming the file, row and field, the job lists it in summary.json and converts the
good episodes beside it, and no output appears for it."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from dataset_corpus import ACCEPTED_CSV, dataset_cases, good_rows
from reliability_corpus import write_case
from reliability_helpers import middle_factory, outputs

import ikstack.jobs.path as jobs_path
from ikstack.cli.main import main
from ikstack.jobs import DatasetError, SolveConfig, read_episode, run_job
from ikstack.jobs.progress import Progress
from ikstack.robots import load

pytest.importorskip("pyarrow")

CASES = dataset_cases()


@pytest.fixture
def standin_solver(monkeypatch):
    """The job's default path solver replaced by a stand-in that needs no compiled code."""
    monkeypatch.setattr(jobs_path, "default_path_solver_factory", middle_factory)


def test_the_corpus_holds_at_least_40_corrupted_files_of_every_format():
    kinds = Counter(name.rsplit(".", 1)[1] for _, name, *_ in CASES)
    assert len(CASES) >= 40 and min(kinds.values()) >= 10, kinds
    assert len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_corrupted_episode_is_a_dataset_error_naming_file_row_and_field(case, tmp_path):
    cid, name, write, row, field, words = case
    path = write_case(tmp_path, name, write())
    with pytest.raises(DatasetError) as info:
        read_episode(path)
    e = info.value
    msg = str(e)
    assert "\n" not in msg and msg.startswith(str(path))
    assert (e.row, e.field) == (row, field), f"{cid}: {msg}"
    if row is not None:
        assert f"row {row}" in msg
    if field is not None:
        assert repr(field) in msg
    for w in words:
        assert w in msg, f"{cid}: {w!r} not in {msg!r}"


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_solve_on_a_corrupted_episode_writes_no_output_and_exits_1_with_one_line(
    case, tmp_path, capsys, standin_solver
):
    cid, name, write, row, field, words = case
    path = write_case(tmp_path / "in", name, write())
    out = tmp_path / "out"
    assert main(["solve", "--robot", "ur5", str(path), "-o", str(out), "--workers", "1"]) == 1
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err + cap.out
    assert [p.name for p in out.iterdir()] == ["summary.json"]  # no output, no partial file
    summary = json.loads((out / "summary.json").read_text())
    (err,) = summary["episode_errors"]
    assert (err["file"], err["row"], err["field"], err["type"]) == (
        str(path),
        row,
        field,
        "DatasetError",
    )
    assert summary["failed_episodes"] == [path.stem] and not summary["ok"]
    assert f"episode {path.stem} failed: {err['message']}" in cap.out


def test_fail_fast_stops_at_the_first_bad_episode_with_exit_code_2(
    tmp_path, capsys, standin_solver
):
    cid, name, write, row, field, words = CASES[0]
    path = write_case(tmp_path / "in", name, write())
    out = tmp_path / "out"
    assert (
        main(
            ["solve", "--robot", "ur5", str(path), "-o", str(out), "--workers", "1", "--fail-fast"]
        )
        == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"row {row}" in err[0] and str(path) in err[0]
    assert not (out / "summary.json").exists() and outputs(out) == {}


def test_the_whole_corpus_in_one_folder_converts_the_good_episodes(tmp_path):
    inp = tmp_path / "in"
    for cid, name, write, *_ in CASES:
        write_case(inp, f"{cid}.{name.rsplit('.', 1)[1]}", write())
    good = write_case(
        inp,
        "zz_good.csv",
        "timestamp,x,y,z,qw,qx,qy,qz\n"
        + "".join(",".join(f"{v:.9f}" for v in r) + "\n" for r in good_rows()),
    )
    out = tmp_path / "out"
    config = SolveConfig(load("ur5"), path_solver_factory=middle_factory)
    s = run_job(inp, out, config, workers=1, progress=Progress.silent(), min_success=0.0)
    assert list(outputs(out)) == [good.name]
    by_name = {e["name"]: e for e in s.episode_errors}
    assert len(by_name) == len(CASES) and not s.success
    for cid, _, _, row, field, _ in CASES:
        assert (by_name[cid]["row"], by_name[cid]["field"]) == (row, field), cid


@pytest.mark.parametrize("case", ACCEPTED_CSV, ids=[c[0] for c in ACCEPTED_CSV])
def test_odd_but_valid_csv_files_load(case, tmp_path):
    cid, write, rows = case
    ep = read_episode(write_case(tmp_path, "e.csv", write()))
    assert len(ep) == rows
