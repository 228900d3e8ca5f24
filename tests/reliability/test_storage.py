"""Read-only and full output folders: one line naming the path, exit code 4, nothing
half-written, and the original error is never hidden by the cleanup.

Root ignores file permissions, so a read-only folder is a real read-only mount and a full
disk a tiny tmpfs; both need root and a kernel that lets this process mount (skipped with the
reason otherwise)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from reliability_helpers import middle_factory, outputs

import ikstack.jobs.path as jobs_path
from ikstack.cli.main import EXIT_STORAGE, main
from ikstack.errors import StorageError
from ikstack.jobs import read_solved, sample_path
from ikstack.jobs.formats import PARTIAL_SUFFIX, atomic_write


@contextmanager
def tmpfs(where: Path, size: str, read_only: bool = False):
    """A small tmpfs mounted at ``where`` (skips the test when this machine cannot mount)."""
    if os.geteuid() != 0:
        pytest.skip(
            "mounting a small filesystem needs root (and root ignores chmod, so a "
            "plain read-only folder would not be read-only for it)"
        )
    if shutil.which("mount") is None:
        pytest.skip("no mount command on this machine")
    where.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        if read_only:
            (where / "out").mkdir()
            subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


@pytest.fixture
def episodes(tmp_path):
    """Four short episodes (40 frames each) of the bundled UR5 sample."""
    inp = tmp_path / "in"
    inp.mkdir()
    src = sorted(sample_path("ur5").glob("*.csv"))[0].read_text().splitlines()
    for k in range(4):
        (inp / f"ep{k}.csv").write_text("\n".join([src[0], *src[1 + 10 * k : 41 + 10 * k]]) + "\n")
    return inp


@pytest.fixture
def standin_solver(monkeypatch):
    monkeypatch.setattr(jobs_path, "default_path_solver_factory", middle_factory)


def _one_error_line(capsys, command: str) -> str:
    """The error line on stderr (progress log lines of ``solve`` aside)."""
    cap = capsys.readouterr()
    lines = [ln for ln in cap.err.strip().splitlines() if not ln.startswith("solve: ")]
    assert len(lines) == 1 and lines[0].startswith(f"ikstack {command}: error: "), cap.err
    assert "Traceback" not in cap.err
    return lines[0]


def test_solve_into_a_read_only_folder_is_one_line_exit_4(
    tmp_path, episodes, capsys, standin_solver
):
    with tmpfs(tmp_path / "ro", "1m", read_only=True) as mnt:
        for out in (mnt / "out", mnt / "new" / "out"):
            rc = main(["solve", "--robot", "ur5", str(episodes), "-o", str(out), "--workers", "1"])
            line = _one_error_line(capsys, "solve")
            assert rc == EXIT_STORAGE
            assert "Read-only file system" in line and str(mnt) in line
        assert [p.name for p in mnt.rglob("*")] == ["out"]


def test_decode_and_validate_into_a_read_only_folder_exit_4(tmp_path, capsys):
    from ikstack.robots import load

    chunk = tmp_path / "c.npz"
    q0 = np.radians([10, 20, -10, -60, 10, 20, 10])
    arrays = {}
    for arm in ("left", "right"):
        T = load(f"marvin_{arm}_taccap").fk(q0)
        arrays[f"T_base_tcp_{arm}"] = np.stack([T] * 4)
        arrays[f"q_observed_{arm}"] = q0
    np.savez(chunk, **arrays)
    with tmpfs(tmp_path / "ro", "1m", read_only=True) as mnt:
        rc = main(
            [
                "decode",
                str(chunk),
                "--profile",
                "marvin_bimanual_diff",
                "-o",
                str(mnt / "out" / "decoded"),
            ]
        )
        line = _one_error_line(capsys, "decode")
        assert rc == EXIT_STORAGE and "Read-only file system" in line and str(mnt) in line
        rc = main(
            [
                "validate",
                "ur5",
                "--targets",
                "1",
                "--no-progress",
                "--json",
                str(mnt / "out" / "report.json"),
            ]
        )
        capsys.readouterr()  # the table went to stdout before the write failed
        assert rc == EXIT_STORAGE
        assert list((mnt / "out").iterdir()) == []


def test_a_full_disk_stops_the_job_with_one_line_and_only_complete_outputs(
    tmp_path, episodes, capsys, standin_solver
):
    clean = tmp_path / "clean"
    assert (
        main(
            [
                "solve",
                "--robot",
                "ur5",
                str(episodes),
                "-o",
                str(clean),
                "--workers",
                "1",
                "--min-success",
                "0",
            ]
        )
        == 0
    )
    capsys.readouterr()
    one = len((clean / "ep0.csv").read_bytes())
    with tmpfs(tmp_path / "full", "64k") as mnt:
        filler = mnt / "filler"
        with filler.open("wb") as f:  # leave room for about two outputs
            try:
                f.write(b"\0" * (64 * 1024 - int(2.5 * one)))
            except OSError:
                pass
        out = mnt / "out"
        rc = main(
            [
                "solve",
                "--robot",
                "ur5",
                str(episodes),
                "-o",
                str(out),
                "--workers",
                "1",
                "--min-success",
                "0",
            ]
        )
        line = _one_error_line(capsys, "solve")
        assert rc == EXIT_STORAGE and "No space left on device" in line and str(out) in line
        assert not list(out.rglob(f"*{PARTIAL_SUFFIX}"))
        assert not (out / "summary.json").exists()
        written = outputs(out)
        assert 0 < len(written) < 4
        for name, data in written.items():  # whatever exists is complete
            assert data == (clean / name).read_bytes()
            assert len(read_solved(out / name)) == 40
        filler.unlink()
        assert (
            main(
                [
                    "solve",
                    "--robot",
                    "ur5",
                    str(episodes),
                    "-o",
                    str(out),
                    "--workers",
                    "1",
                    "--min-success",
                    "0",
                ]
            )
            == 0
        )
        assert outputs(out) == outputs(clean)
        assert json.loads((out / "summary.json").read_text())["skipped"] == len(written)


def test_the_cleanup_never_hides_the_original_error(tmp_path, monkeypatch):
    target = tmp_path / "out.csv"

    def fail_write(tmp: Path) -> None:
        tmp.write_text("half")
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp))

    def fail_unlink(self, missing_ok=False):
        raise PermissionError(errno.EACCES, "Permission denied", str(self))

    monkeypatch.setattr(Path, "unlink", fail_unlink)
    with pytest.raises(StorageError) as info:
        atomic_write(target, fail_write)
    assert info.value.errno == errno.ENOSPC and "No space left on device" in str(info.value)
    assert not target.exists()
