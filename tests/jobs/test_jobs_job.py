"""The solve job: outputs checked against an independent FK, resumption, atomic outputs under a
real kill, bad inputs, and identical bytes from every engine."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from jobs_standin import standin_factory

from ikstack.jobs import DatasetError, SolveConfig, read_episode, read_solved, run_job
from ikstack.jobs.progress import Progress
from ikstack.robots import data_path, load

HERE = Path(__file__).parent
SRC = HERE.parents[1] / "src"


def _config(robot="ur5", **kw):
    return SolveConfig(load(robot), path_solver_factory=standin_factory, **kw)


def _quiet():
    return Progress.silent()


def _outputs(folder):
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "summary.json"
    }


def test_solved_joints_reproduce_the_poses_under_pinocchio(ur5_sample, tmp_path):
    pin = pytest.importorskip("pinocchio")
    out = tmp_path / "out"
    s = run_job(ur5_sample, out, _config(), workers=1, progress=_quiet())
    assert (s.episodes, s.converted, s.frames, s.frames_solved) == (3, 3, 600, 600)
    assert s.success_rate == 1.0 and s.failed_episodes == []
    assert json.loads((out / "summary.json").read_text()) == s.to_dict()
    model = pin.buildModelFromUrdf(str(data_path("ur5.urdf")))
    data = model.createData()
    fid = model.getFrameId("tool0")
    for name in ("episode_000", "episode_001", "episode_002"):
        ep = read_episode(ur5_sample / f"{name}.csv")
        solved = read_solved(out / f"{name}.csv")
        assert solved.joint_names == load("ur5").joint_names
        np.testing.assert_array_equal(solved.timestamps, ep.timestamps)
        for i in range(0, len(ep), 25):
            pin.framesForwardKinematics(model, data, solved.q[i])
            T = data.oMf[fid].homogeneous
            np.testing.assert_allclose(T, ep.T_base_tcp[i], atol=1e-6)


def test_rerun_skips_converted_episodes_unless_overwrite(ur5_sample, tmp_path):
    out = tmp_path / "out"
    run_job(ur5_sample, out, _config(), workers=1, progress=_quiet())
    stamps = {p.name: p.stat().st_mtime_ns for p in out.glob("episode_*.csv")}
    again = run_job(ur5_sample, out, _config(), workers=1, progress=_quiet())
    assert (again.converted, again.skipped, again.frames_solved) == (0, 3, 600)
    assert {p.name: p.stat().st_mtime_ns for p in out.glob("episode_*.csv")} == stamps
    (out / "episode_001.csv").unlink()
    partial = run_job(ur5_sample, out, _config(), workers=1, progress=_quiet())
    assert (partial.converted, partial.skipped) == (1, 2)
    assert [e["name"] for e in partial.per_episode if not e["skipped"]] == ["episode_001"]
    forced = run_job(ur5_sample, out, _config(), workers=1, overwrite=True, progress=_quiet())
    assert (forced.converted, forced.skipped) == (3, 0)


def test_with_fail_fast_a_bad_episode_stops_the_job_naming_file_row_and_field(ur5_sample, tmp_path):
    bad = ur5_sample / "episode_001.csv"
    lines = bad.read_text().splitlines()
    cells = lines[51].split(",")
    cells[0] = "-1"  # timestamp of data row 50 goes backwards
    lines[51] = ",".join(cells)
    bad.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    with pytest.raises(DatasetError, match=r"episode_001\.csv, row 50, field 'timestamp'"):
        run_job(ur5_sample, out, _config(fail_fast=True), workers=1, progress=_quiet())
    assert not (out / "episode_001.csv").exists()
    assert not [p for p in out.rglob("*") if p.name.endswith(".partial")]


def test_outputs_follow_the_input_format_and_folder_layout(ur5_sample, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    ep = read_episode(ur5_sample / "episode_000.csv")
    cols = np.loadtxt(ur5_sample / "episode_000.csv", delimiter=",", skiprows=1)[:40]
    names = ["timestamp", "x", "y", "z", "qw", "qx", "qy", "qz"]
    inp = tmp_path / "mixed"
    (inp / "sub").mkdir(parents=True)
    np.savez(inp / "sub" / "m.npz", timestamp=ep.timestamps[:40], T_base_tcp=ep.T_base_tcp[:40])
    pq.write_table(pa.table({n: cols[:, k] for k, n in enumerate(names)}), inp / "p.parquet")
    out = tmp_path / "out"
    s = run_job(inp, out, _config(), workers=1, progress=_quiet())
    assert s.frames_solved == 80
    assert sorted(_outputs(out)) == ["p.parquet", "sub/m.npz"]
    q_npz = read_solved(out / "sub" / "m.npz").q
    q_parquet = read_solved(out / "p.parquet").q
    np.testing.assert_allclose(q_npz, q_parquet, atol=1e-9)


def test_a_killed_run_leaves_only_complete_outputs_and_resumes(ur5_sample, tmp_path):
    out = tmp_path / "out"
    script = (
        "import sys; from jobs_standin import slow_factory\n"
        "from ikstack.jobs import SolveConfig, run_job, Progress\n"
        "from ikstack.robots import load\n"
        f"run_job({str(ur5_sample)!r}, {str(out)!r}, SolveConfig(load('ur5'), "
        "path_solver_factory=slow_factory), workers=1, progress=Progress.silent())\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), str(HERE)]))
    proc = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        deadline = time.monotonic() + 120
        while not (out / "episode_000.csv").exists():
            assert proc.poll() is None, "the job ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    done = sorted(p.name for p in out.glob("episode_*.csv"))
    assert 1 <= len(done) < 3
    for name in done:
        assert len(read_solved(out / name)) == 200
    assert not (out / "summary.json").exists()
    s = run_job(ur5_sample, out, _config(), workers=1, progress=_quiet())
    assert s.skipped == len(done) and s.converted == 3 - len(done) and s.frames_solved == 600
    assert not [p for p in out.rglob("*") if p.name.endswith(".partial")]


def test_local_pool_and_ray_write_identical_bytes(tmp_path):
    ray = pytest.importorskip("ray")
    src = tmp_path / "in"
    shutil.copytree(data_path("samples") / "marvin_left", src)
    for p in src.glob("*.csv"):  # keep the test short: 40 frames per episode
        p.write_text("\n".join(p.read_text().splitlines()[:41]) + "\n")
    cfg = _config("marvin_left")
    one = run_job(src, tmp_path / "one", cfg, workers=1, progress=_quiet())
    two = run_job(src, tmp_path / "two", cfg, workers=2, progress=_quiet())
    assert ray.is_initialized() is False
    viaray = run_job(src, tmp_path / "ray", cfg, engine="ray", workers=1, progress=_quiet())
    assert ray.is_initialized() is False  # the job shut down the runtime it started
    assert one.frames_solved == two.frames_solved == viaray.frames_solved == 120
    assert viaray.engine == "ray"
    ref = _outputs(tmp_path / "one")
    assert len(ref) == 3
    assert _outputs(tmp_path / "two") == ref
    assert _outputs(tmp_path / "ray") == ref


@pytest.mark.parametrize("recertify", [False, True])
def test_the_job_gate_rejects_claims_that_break_the_contract(ur5_sample, tmp_path, recertify):
    from jobs_standin import liar_factory

    for name in ("episode_001.csv", "episode_002.csv"):
        (ur5_sample / name).unlink()
    cfg = SolveConfig(load("ur5"), path_solver_factory=liar_factory, recertify=recertify)
    s = run_job(ur5_sample, tmp_path / "o", cfg, workers=1, progress=_quiet())
    out = read_solved(tmp_path / "o" / "episode_000.csv")
    assert np.isfinite(out.q).all() and np.isfinite(out.position_error).all()
    assert out.success.tolist()[:4] == [False, False, False, True]
    assert (out.status[:3] != 0).all() and s.frames_solved == 197
    assert load("ur5").within_limits(out.q[0])


def test_an_output_folder_inside_the_input_is_not_read_as_input(ur5_sample):
    out = ur5_sample / "solved"
    first = run_job(ur5_sample, out, _config(), workers=1, progress=_quiet())
    again = run_job(ur5_sample, out, _config(), workers=1, progress=_quiet())
    assert first.episodes == again.episodes == 3 and again.skipped == 3


def test_a_foreign_file_in_place_of_an_output_is_reported_not_trusted(ur5_sample, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "episode_001.csv").write_text("not,an,output\n")
    with pytest.raises(DatasetError, match=r"episode_001\.csv.*--overwrite"):
        run_job(ur5_sample, out, _config(), workers=1, progress=_quiet())
    s = run_job(ur5_sample, out, _config(), workers=1, overwrite=True, progress=_quiet())
    assert s.converted == 3 and s.frames_solved == 600
