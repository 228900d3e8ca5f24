"""``ikstack solve`` on LeRobot-format datasets the test writes (poses from Pinocchio's FK)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ikstack.cli.main import main
from ikstack.errors import InputError
from ikstack.jobs.lerobot import parse_pose_columns
from ikstack.robots.catalog import data_path

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pin = pytest.importorskip("pinocchio")

SPEC = "observation.state[0:3],observation.state[3:7]"
FRAMES = (40, 30, 25)  # episodes 0 and 1 share file-000, episode 2 is in file-001


def _pin_poses(q: np.ndarray) -> np.ndarray:
    """(T, 7) x y z qx qy qz qw of the UR5 tool0 frame, from Pinocchio."""
    model = pin.buildModelFromUrdf(str(data_path("ur5.urdf")))
    data = model.createData()
    fid = model.getFrameId("tool0")
    out = []
    for qi in q:
        pin.framesForwardKinematics(model, data, qi)
        out.append(pin.SE3ToXYZQUAT(data.oMf[fid]))
    return np.array(out)


def _ur5_fk_check(q: np.ndarray, pose: np.ndarray) -> tuple[float, float]:
    got = _pin_poses(q)
    pose = pose.copy()
    pose[:, 3:] /= np.linalg.norm(pose[:, 3:], axis=1, keepdims=True)  # float32-stored
    perr = float(np.abs(got[:, :3] - pose[:, :3]).max())
    dots = np.abs(np.sum(got[:, 3:] * pose[:, 3:], axis=1))
    rerr = float((2 * np.arccos(np.clip(dots, -1, 1))).max())
    return perr, rerr


def _ipc_bytes(table, column: str) -> bytes:
    """The Arrow IPC stream of one column (its values and validity, as stored)."""
    one = pa.table({column: table.column(column).combine_chunks()})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, one.schema) as w:
        w.write_table(one)
    return sink.getvalue().to_pybytes()


def make_dataset(root: Path) -> dict[int, np.ndarray]:
    """Three UR5 episodes in two data files (one holds two, rows of episode 1 shuffled)."""
    rng = np.random.default_rng(3)
    tables, truth = [], {}
    start = 0
    for e, n in enumerate(FRAMES):
        q0 = rng.uniform(-1.5, 1.5, 6)
        q0[2] = rng.uniform(0.6, 2.0)  # elbow away from straight
        s = np.linspace(0.0, 1.0, n)[:, None]
        q = q0 + 0.4 * np.sin(np.pi * s) * rng.uniform(-1, 1, 6)
        truth[e] = q
        pose = _pin_poses(q)
        grip = rng.uniform(0, 1, (n, 1))
        state = np.hstack([pose, grip]).astype(np.float32)
        tables.append(
            pa.table(
                {
                    "observation.state": pa.array(list(state), type=pa.list_(pa.float32())),
                    "action": pa.array(
                        list(rng.normal(size=(n, 7)).astype(np.float32)),
                        type=pa.list_(pa.float32()),
                    ),
                    "timestamp": pa.array(np.arange(n, dtype=np.float32) / 30),
                    "frame_index": pa.array(np.arange(n, dtype=np.int64)),
                    "episode_index": pa.array(np.full(n, e, dtype=np.int64)),
                    "index": pa.array(np.arange(start, start + n, dtype=np.int64)),
                    "task_index": pa.array(np.zeros(n, dtype=np.int64)),
                }
            )
        )
        start += n
    first = pa.concat_tables(tables[:2])
    perm = np.concatenate([np.arange(FRAMES[0]), FRAMES[0] + rng.permutation(FRAMES[1])])
    first = first.take(pa.array(perm))
    meta = {"huggingface": json.dumps({"info": {"features": {}}})}
    (root / "data" / "chunk-000").mkdir(parents=True)
    pq.write_table(first.replace_schema_metadata(meta), root / "data/chunk-000/file-000.parquet")
    pq.write_table(
        tables[2].replace_schema_metadata(meta), root / "data/chunk-000/file-001.parquet"
    )
    (root / "meta").mkdir()
    info = {
        "codebase_version": "v3.0",
        "robot_type": "ur5",
        "fps": 30,
        "total_episodes": 3,
        "total_frames": int(sum(FRAMES)),
        "data_path": "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
        "features": {
            "observation.state": {"dtype": "float32", "shape": [8]},
            "action": {"dtype": "float32", "shape": [7]},
        },
    }
    (root / "meta/info.json").write_text(json.dumps(info))
    (root / "meta/tasks.jsonl").write_text('{"task_index": 0, "task": "wave"}\n')
    (root / "videos").mkdir()
    (root / "videos/cam.mp4").write_bytes(b"\x00\x01fake video")
    return truth


def _solve(inp: Path, out: Path, *extra: str) -> int:
    return main(
        [
            "solve",
            "--robot",
            "ur5",
            str(inp),
            "-o",
            str(out),
            "--workers",
            "1",
            "--pose-columns",
            SPEC,
            "--quat-order",
            "xyzw",
            *extra,
        ]
    )


def test_lerobot_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inp, out = tmp_path / "ds", tmp_path / "out"
    make_dataset(inp)
    assert _solve(inp, out) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"] == 3 and summary["frames"] == sum(FRAMES)
    assert summary["success_rate"] == 1.0
    for rel in ("data/chunk-000/file-000.parquet", "data/chunk-000/file-001.parquet"):
        a, b = pq.read_table(inp / rel), pq.read_table(out / rel)
        assert b.column_names == a.column_names + ["ik.joint_positions"]
        for c in a.column_names:  # every input column kept as it was, byte for byte
            assert _ipc_bytes(b, c) == _ipc_bytes(a, c), c
            assert b.schema.field(c) == a.schema.field(c)
        assert b.schema.metadata == a.schema.metadata
        q = np.array(b.column("ik.joint_positions").to_pylist())
        assert q.shape == (a.num_rows, 6) and np.isfinite(q).all()
        state = np.array(a.column("observation.state").to_pylist(), dtype=np.float64)
        perr, rerr = _ur5_fk_check(q, state[:, :7])  # Pinocchio's FK of the written joints
        assert perr < 2e-6 and rerr < 2e-6
    for rel in ("meta/tasks.jsonl", "videos/cam.mp4"):
        assert (out / rel).read_bytes() == (inp / rel).read_bytes()
    info = json.loads((out / "meta/info.json").read_text())
    assert info["features"]["ik.joint_positions"]["shape"] == [6]
    assert info["features"]["ik.joint_positions"]["names"][0] == "shoulder_pan_joint"
    assert not list(out.rglob("*.partial"))
    capsys.readouterr()
    # resumable: a missing data file is assembled again, solved episodes are not re-solved
    before = (out / "data/chunk-000/file-001.parquet").read_bytes()
    (out / "data/chunk-000/file-001.parquet").unlink()
    assert _solve(inp, out) == 0
    assert "3 already done" in capsys.readouterr().out
    assert (out / "data/chunk-000/file-001.parquet").read_bytes() == before


def test_lerobot_errors_name_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inp, out = tmp_path / "ds", tmp_path / "out"
    make_dataset(inp)
    base = ["solve", "--robot", "ur5", str(inp), "-o", str(out), "--workers", "1"]
    assert main(base) != 0
    assert "--pose-columns" in capsys.readouterr().err
    assert main([*base, "--pose-columns", "observation.state[0:6]"]) != 0
    assert "selects 6 values" in capsys.readouterr().err
    assert main([*base, "--pose-columns", "observation.stat[0:7]"]) != 0
    assert "'observation.stat'" in capsys.readouterr().err
    # the gripper value taken as a quaternion component: not unit, named with file and row
    assert main([*base, "--pose-columns", "observation.state[0:3],observation.state[4:8]"]) != 0
    err = capsys.readouterr().err
    assert "file-000.parquet, row 0, field 'observation.state[4]'" in err and "norm" in err
    assert not (out / "data").exists()
    with pytest.raises(InputError, match="index 8 is outside"):
        parse_pose_columns("a[0:3],a[5:10]", "wxyz", {"a": 8})
    assert (
        parse_pose_columns("x,y,z,b[0:4]", "xyzw", {"x": 0, "y": 0, "z": 0, "b": 4}).label(3)
        == "b[0]"
    )
