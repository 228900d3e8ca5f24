"""Dying processes: a killed solve leaves no process behind and resumes to a clean run's bytes;
one bad episode does not stop the job; worker failures name their real cause; the parallel
chunk decoder replaces a killed worker; Warp jobs run in worker processes."""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from reliability_helpers import (
    children_of,
    group_processes,
    middle_factory,
    outputs,
    solved_factory,
)

import ikstack.jobs.path as jobs_path
from ikstack.cli.main import main
from ikstack.errors import WorkerError
from ikstack.jobs import SolveConfig, run_job, sample_path
from ikstack.jobs.progress import Progress
from ikstack.robots import load

HERE = Path(__file__).parent
SRC = HERE.parents[1] / "src"


def _episodes(folder: Path, n: int, frames: int = 20) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    src = sorted(sample_path("ur5").glob("*.csv"))[0].read_text().splitlines()
    for k in range(n):
        rows = src[1 + k : 1 + k + frames]
        (folder / f"ep{k:02d}.csv").write_text("\n".join([src[0], *rows]) + "\n")
    return folder


def _clean_run(inp: Path, out: Path) -> dict[str, bytes]:
    config = SolveConfig(load("ur5"), path_solver_factory=middle_factory)
    run_job(inp, out, config, workers=1, progress=Progress.silent(), min_success=0.0)
    return outputs(out)


def _start_job(inp: Path, out: Path, workers: int = 2) -> subprocess.Popen:
    script = (
        "from reliability_helpers import slow_factory\n"
        "from ikstack.jobs import SolveConfig, run_job, Progress\n"
        "from ikstack.robots import load\n"
        f"run_job({str(inp)!r}, {str(out)!r}, SolveConfig(load('ur5'), "
        f"path_solver_factory=slow_factory), workers={workers}, progress=Progress.silent(), "
        "min_success=0.0)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), str(HERE)]))
    return subprocess.Popen([sys.executable, "-c", script], env=env, start_new_session=True)


def _wait_mid_run(proc: subprocess.Popen, out: Path) -> None:
    """Until a pool worker runs and at least two outputs exist."""
    deadline = time.monotonic() + 180
    while True:
        assert proc.poll() is None, "the job ended before it could be killed"
        assert time.monotonic() < deadline, "the job never got going"
        workers = [
            p
            for p in children_of(proc.pid)
            if b"spawn_main" in Path(f"/proc/{p}/cmdline").read_bytes()
        ]
        if workers and len(outputs(out)) >= 2:
            return
        time.sleep(0.05)


def _wait_group_gone(pgid: int, seconds: float = 30.0) -> list[tuple[int, str]]:
    deadline = time.monotonic() + seconds
    left = group_processes(pgid)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = group_processes(pgid)
    return left


@pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="finding a job's processes reads /proc (Linux)"
)
@pytest.mark.parametrize("target", ["parent", "group"])
def test_kill_9_mid_run_leaves_no_process_and_the_rerun_equals_a_clean_run(tmp_path, target):
    inp = _episodes(tmp_path / "in", 24)
    clean = _clean_run(inp, tmp_path / "clean")
    out = tmp_path / "out"
    proc = _start_job(inp, out)
    try:
        _wait_mid_run(proc, out)
        if target == "parent":
            os.kill(proc.pid, signal.SIGKILL)
        else:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        left = _wait_group_gone(proc.pid)
        assert not left, f"processes left behind: {left}"
        snapshot = outputs(out)
        time.sleep(1.0)
        assert outputs(out) == snapshot, "a worker kept writing after its parent died"
    finally:
        for pid, _ in group_processes(proc.pid):
            os.kill(pid, signal.SIGKILL)
    assert len(snapshot) < 24 and not (out / "summary.json").exists()
    for name, data in snapshot.items():  # what exists is complete
        assert data == clean[name]
    config = SolveConfig(load("ur5"), path_solver_factory=middle_factory)
    s = run_job(inp, out, config, workers=1, progress=Progress.silent(), min_success=0.0)
    assert s.skipped == len(snapshot) and s.converted == 24 - len(snapshot)
    assert outputs(out) == clean  # byte for byte
    assert not [p for p in out.rglob("*") if p.name.endswith(".partial")]


@pytest.fixture
def solver(monkeypatch):
    """Set the job's default path solver to a stand-in factory."""

    def use(factory):
        monkeypatch.setattr(jobs_path, "default_path_solver_factory", factory)

    return use


def test_one_bad_episode_among_good_ones_does_not_stop_the_job(tmp_path, capsys, solver):
    solver(solved_factory)
    inp = _episodes(tmp_path / "in", 8)
    bad = inp / "ep02.csv"
    lines = bad.read_text().splitlines()
    lines[5] = lines[5].replace(",", ",,", 1)  # data row 4 gets a ninth field
    bad.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    assert main(["solve", "--robot", "ur5", str(inp), "-o", str(out), "--workers", "1"]) == 1
    text = capsys.readouterr().out
    assert sorted(outputs(out)) == [f"ep{k:02d}.csv" for k in range(8) if k != 2]
    s = json.loads((out / "summary.json").read_text())
    (err,) = s["episode_errors"]
    assert (err["name"], err["file"], err["row"], err["field"]) == ("ep02", str(bad), 4, None)
    assert "9 fields" in err["message"] and s["failed_episodes"] == ["ep02"]
    assert s["converted"] == 7 and s["frames_solved"] == 7 * 20 and not s["ok"]
    assert "episode ep02 failed" in text and "1 failed" in text
    # --fail-fast: today's behaviour, the job stops at the bad episode with its error
    out2 = tmp_path / "out2"
    assert (
        main(
            ["solve", "--robot", "ur5", str(inp), "-o", str(out2), "--workers", "1", "--fail-fast"]
        )
        == 2
    )
    assert "row 4" in capsys.readouterr().err
    assert sorted(outputs(out2)) == ["ep00.csv", "ep01.csv"]
    assert not (out2 / "summary.json").exists()


def test_min_success_sets_the_exit_code_from_the_share_of_solved_frames(tmp_path, capsys, solver):
    inp = _episodes(tmp_path / "in", 2)
    solver(middle_factory)  # no frame solved
    args = ["solve", "--robot", "ur5", str(inp), "--workers", "1"]
    assert main([*args, "-o", str(tmp_path / "a")]) == 1
    assert main([*args, "-o", str(tmp_path / "b"), "--min-success", "0"]) == 0
    assert "below --min-success" in capsys.readouterr().out
    solver(solved_factory)
    assert main([*args, "-o", str(tmp_path / "c"), "--min-success", "0.99"]) == 0


def test_a_sample_is_solved_with_its_own_robot_and_a_mismatch_needs_force(tmp_path, capsys, solver):
    solver(solved_factory)
    assert main(["solve", "sample:ur5", "-o", str(tmp_path / "a"), "--workers", "1"]) == 0
    assert json.loads((tmp_path / "a" / "summary.json").read_text())["robot"] == "ur5"
    assert main(["solve", "--robot", "panda", "sample:ur5", "-o", str(tmp_path / "b")]) == 2
    assert "--force-robot" in capsys.readouterr().err and not (tmp_path / "b").exists()
    assert (
        main(
            [
                "solve",
                "--robot",
                "panda",
                "sample:ur5",
                "-o",
                str(tmp_path / "c"),
                "--workers",
                "1",
                "--force-robot",
            ]
        )
        == 0
    )
    assert json.loads((tmp_path / "c" / "summary.json").read_text())["dof"] == 7


def test_a_chain_pickles_as_plain_data_after_use():
    import dataclasses

    from ikstack.ik import solve_ik

    chain = load("ur5")
    T = chain.fk([0.1] * 6)
    solve_ik(chain, T)  # derives compiled data, joint lines, tables and solvers
    copy = pickle.loads(pickle.dumps(chain))
    fields = {f.name for f in dataclasses.fields(chain)}
    assert set(vars(chain)) == fields and set(vars(copy)) == fields  # no cache on a chain
    assert copy.joint_names == chain.joint_names
    assert (copy.fk([0.1] * 6) == T).all()


def test_a_worker_failure_reaches_the_caller_with_its_real_cause(tmp_path, monkeypatch):
    inp = _episodes(tmp_path / "in", 6, frames=5)
    marker = tmp_path / "worker_failed"
    monkeypatch.setenv("IKSTACK_TEST_MARKER", str(marker))
    monkeypatch.setenv("IKSTACK_TEST_PARENT", str(os.getpid()))
    monkeypatch.syspath_prepend(str(HERE))
    config = SolveConfig(load("ur5"), path_solver_factory=_worker_breaks_factory)
    with pytest.raises(WorkerError) as info:
        run_job(inp, tmp_path / "out", config, workers=2, progress=Progress.silent())
    assert "RuntimeError: cannot build the solver in worker" in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)


def _worker_breaks_factory(config):
    """In a pool worker: fail to build; in the parent: solve slowly until the worker failed."""
    if str(os.getpid()) != os.environ["IKSTACK_TEST_PARENT"]:
        Path(os.environ["IKSTACK_TEST_MARKER"]).touch()
        raise RuntimeError(f"cannot build the solver in worker {os.getpid()}")
    inner = middle_factory(config)

    def path(T_path, seed):
        deadline = time.monotonic() + 120
        while not Path(os.environ["IKSTACK_TEST_MARKER"]).exists() and (
            time.monotonic() < deadline
        ):
            time.sleep(0.05)
        # the worker touches the marker just before it raises: give its error time to arrive
        # (this process takes every batch otherwise, and ends workers still starting)
        time.sleep(1.0)
        return inner(T_path, seed)

    return path


def test_the_parallel_decoder_names_a_killed_arm_and_starts_a_fresh_worker():
    from ikstack.chunk import ChunkRequest, bundled_profile_path, load_profile

    prof = load_profile(bundled_profile_path("marvin_bimanual_diff"))
    import numpy as np

    q0 = {
        "left": np.radians([10.0, 30.0, 0.0, -60.0, 0.0, 20.0, 10.0]),
        "right": np.radians([-10.0, 30.0, 0.0, -60.0, 0.0, -20.0, -10.0]),
    }
    arms = {a.name: a.chain for a in prof.arms}
    req = ChunkRequest({k: np.stack([arms[k].fk(q0[k])] * 4) for k in arms}, q0)
    with prof.parallel_decoder() as dec:
        assert dec.decode(req).success
        old = dict(dec.worker_pids)
        os.kill(old["right"], signal.SIGKILL)
        time.sleep(0.2)
        with pytest.raises(WorkerError, match="'right'"):
            dec.decode(req)
        assert dec.decode(req).success  # a fresh worker serves the next call
        assert dec.worker_pids["right"] != old["right"]
        assert dec.worker_pids["left"] == old["left"]
        # killed while a chunk is in flight: the same error, then a fresh worker
        pending = dec.submit(req)
        os.kill(dec.worker_pids["left"], signal.SIGKILL)
        try:
            pending.result()  # the worker may have answered before it died
        except WorkerError as exc:
            assert "'left'" in str(exc)
        else:
            with pytest.raises(WorkerError, match="'left'"):
                dec.decode(req)
        assert dec.decode(req).success


def test_warp_backend_runs_in_two_worker_processes(tmp_path):
    pytest.importorskip("warp")
    inp = _episodes(tmp_path / "in", 2, frames=10)
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(SRC))
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            "from ikstack.cli.main import main; import sys; sys.exit(main())",
            "solve",
            "--robot",
            "ur5",
            str(inp),
            "-o",
            str(out),
            "--backend",
            "warp",
            "--workers",
            "2",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    s = json.loads((out / "summary.json").read_text())
    assert s["frames_solved"] == 20 and s["workers"] == 2
