"""Episode readers and writers: round trips in every format, and every bad-input case named by
file, row and field."""

from __future__ import annotations

import builtins
import time

import numpy as np
import pytest

from ikstack.errors import MissingExtraError
from ikstack.jobs import DatasetError, SolvedEpisode, read_episode, read_solved, write_solved
from ikstack.jobs.formats import atomic_write, remove_partials
from ikstack.kinematics import fk
from ikstack.robots import load
from ikstack.spatial import to_pose

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

COLS = ["timestamp", "x", "y", "z", "qw", "qx", "qy", "qz"]


def _poses(n=20, seed=0):
    chain = load("ur5")
    q = chain.random_q(np.random.default_rng(seed), n)
    T = fk(chain, q)
    p, quat = to_pose(T)
    t = np.arange(n) * 0.01
    return t, T, np.column_stack([t, p, quat])


def _write_csv(path, rows, cols=COLS, extra=None):
    lines = [",".join(cols + (["note"] if extra else []))]
    for r in rows:
        cells = [repr(float(v)) for v in r]
        lines.append(",".join(cells + (["x"] if extra else [])))
    path.write_text("\n".join(lines) + "\n")


def _write_parquet(path, rows, cols=COLS):
    pq.write_table(pa.table({c: rows[:, k] for k, c in enumerate(cols)}), path)


def _write_npz(path, rows, cols=COLS):
    np.savez(path, **{c: rows[:, k] for k, c in enumerate(cols)})


WRITERS = {"csv": _write_csv, "npz": _write_npz, "parquet": _write_parquet}


@pytest.mark.parametrize("fmt", ["csv", "npz", "parquet"])
def test_input_round_trip_recovers_poses_in_every_format(tmp_path, fmt):
    t, T, rows = _poses()
    path = tmp_path / f"ep.{fmt}"
    WRITERS[fmt](path, rows)
    ep = read_episode(path)
    assert ep.name == "ep"
    np.testing.assert_array_equal(ep.timestamps, t)
    np.testing.assert_allclose(ep.T_base_tcp, T, atol=1e-14)


def test_csv_extra_columns_are_ignored(tmp_path):
    _, T, rows = _poses()
    _write_csv(tmp_path / "ep.csv", rows, extra=True)
    np.testing.assert_allclose(read_episode(tmp_path / "ep.csv").T_base_tcp, T, atol=1e-14)


def test_npz_accepts_4x4_matrices(tmp_path):
    t, T, _ = _poses()
    np.savez(tmp_path / "m.npz", timestamp=t, T_base_tcp=T)
    np.testing.assert_array_equal(read_episode(tmp_path / "m.npz").T_base_tcp, T)


def _solved(n=15, dof=6, seed=1):
    rng = np.random.default_rng(seed)
    return SolvedEpisode(
        np.cumsum(rng.uniform(0.001, 0.1, n)),
        tuple(f"j{i}" for i in range(dof)),
        rng.normal(size=(n, dof)),
        rng.random(n) > 0.3,
        rng.random(n) * 1e-9,
        rng.random(n) * 1e-8,
        rng.integers(0, 8, n).astype(np.int64),
    )


@pytest.mark.parametrize("fmt", ["csv", "npz", "parquet"])
def test_output_round_trip_is_exact_in_every_format(tmp_path, fmt):
    s = _solved()
    write_solved(tmp_path / f"out.{fmt}", s)
    r = read_solved(tmp_path / f"out.{fmt}")
    assert r.joint_names == s.joint_names
    for name in ("timestamps", "q", "success", "position_error", "rotation_error", "status"):
        np.testing.assert_array_equal(getattr(r, name), getattr(s, name), err_msg=name)


@pytest.mark.parametrize("fmt", ["csv", "npz", "parquet"])
def test_outputs_are_byte_identical_when_written_at_different_times(tmp_path, fmt):
    s = _solved()
    write_solved(tmp_path / f"a.{fmt}", s)
    if fmt == "npz":
        time.sleep(2.1)  # zip entries carry a 2-second clock unless the writer pins it
    write_solved(tmp_path / f"b.{fmt}", s)
    assert (tmp_path / f"a.{fmt}").read_bytes() == (tmp_path / f"b.{fmt}").read_bytes()


# ------------------------------------------------------------------------------ bad inputs
@pytest.mark.parametrize("fmt", ["csv", "npz", "parquet"])
def test_missing_columns_are_named(tmp_path, fmt):
    _, _, rows = _poses()
    cols = [c for c in COLS if c not in ("qx", "z")]
    keep = [COLS.index(c) for c in cols]
    path = tmp_path / f"ep.{fmt}"
    WRITERS[fmt](path, rows[:, keep], cols)
    with pytest.raises(DatasetError, match=r"missing column\(s\) 'z', 'qx'") as ei:
        read_episode(path)
    assert ei.value.path == str(path) and ei.value.field == "z"
    assert str(path) in str(ei.value)


@pytest.mark.parametrize("fmt", ["csv", "npz", "parquet"])
def test_non_finite_pose_names_row_and_field(tmp_path, fmt):
    _, _, rows = _poses()
    rows[7, 2] = np.nan  # y
    path = tmp_path / f"ep.{fmt}"
    WRITERS[fmt](path, rows)
    with pytest.raises(DatasetError, match=r"row 7, field 'y'.*finite") as ei:
        read_episode(path)
    assert (ei.value.row, ei.value.field) == (7, "y")


@pytest.mark.parametrize("fmt", ["csv", "npz", "parquet"])
def test_non_unit_quaternion_is_rejected_as_non_rigid(tmp_path, fmt):
    _, _, rows = _poses()
    rows[4, 4:] *= 1.3
    path = tmp_path / f"ep.{fmt}"
    WRITERS[fmt](path, rows)
    with pytest.raises(DatasetError, match=r"row 4, field 'qw'.*unit quaternion"):
        read_episode(path)


def test_zero_quaternion_is_rejected(tmp_path):
    _, _, rows = _poses()
    rows[0, 4:] = 0.0
    _write_csv(tmp_path / "ep.csv", rows)
    with pytest.raises(DatasetError, match=r"row 0, field 'qw'.*norm 0"):
        read_episode(tmp_path / "ep.csv")


def test_non_rigid_matrix_names_its_row(tmp_path):
    t, T, _ = _poses()
    T = T.copy()
    T[11, :3, :3] *= 1.01
    np.savez(tmp_path / "m.npz", timestamp=t, T_base_tcp=T)
    with pytest.raises(DatasetError, match=r"m\.npz, row 11, field 'T_base_tcp'.*orthonormal"):
        read_episode(tmp_path / "m.npz")


def test_reflection_and_bad_last_row_are_rejected(tmp_path):
    t, T, _ = _poses()
    R = T.copy()
    R[3, :3, 0] *= -1
    np.savez(tmp_path / "r.npz", timestamp=t, T_base_tcp=R)
    with pytest.raises(DatasetError, match=r"row 3.*determinant -1"):
        read_episode(tmp_path / "r.npz")
    L = T.copy()
    L[5, 3, 0] = 0.5
    np.savez(tmp_path / "l.npz", timestamp=t, T_base_tcp=L)
    with pytest.raises(DatasetError, match=r"row 5.*last row"):
        read_episode(tmp_path / "l.npz")


def test_non_finite_matrix_entry_names_row(tmp_path):
    t, T, _ = _poses()
    T = T.copy()
    T[2, 1, 3] = np.inf
    np.savez(tmp_path / "m.npz", timestamp=t, T_base_tcp=T)
    with pytest.raises(DatasetError, match=r"row 2, field 'T_base_tcp'.*entry \[1, 3\]"):
        read_episode(tmp_path / "m.npz")


@pytest.mark.parametrize("fmt", ["csv", "npz", "parquet"])
def test_timestamps_going_backwards_are_rejected(tmp_path, fmt):
    _, _, rows = _poses()
    rows[9, 0] = rows[8, 0] - 0.001
    path = tmp_path / f"ep.{fmt}"
    WRITERS[fmt](path, rows)
    with pytest.raises(DatasetError, match=r"row 9, field 'timestamp'.*backwards"):
        read_episode(path)


def test_repeated_timestamps_are_accepted(tmp_path):
    _, _, rows = _poses()
    rows[5, 0] = rows[4, 0]
    _write_csv(tmp_path / "ep.csv", rows)
    assert len(read_episode(tmp_path / "ep.csv")) == 20


def test_unparsable_csv_cell_names_row_and_field(tmp_path):
    _, _, rows = _poses()
    _write_csv(tmp_path / "ep.csv", rows)
    lines = (tmp_path / "ep.csv").read_text().splitlines()
    cells = lines[4].split(",")
    cells[5] = "oops"  # qx of data row 3
    lines[4] = ",".join(cells)
    (tmp_path / "ep.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match=r"row 3, field 'qx'.*'oops'"):
        read_episode(tmp_path / "ep.csv")


def test_empty_and_header_only_files_are_rejected(tmp_path):
    (tmp_path / "e.csv").write_text("")
    with pytest.raises(DatasetError, match="empty"):
        read_episode(tmp_path / "e.csv")
    (tmp_path / "h.csv").write_text(",".join(COLS) + "\n")
    with pytest.raises(DatasetError, match="no data rows"):
        read_episode(tmp_path / "h.csv")


def test_parquet_null_is_named(tmp_path):
    _, _, rows = _poses()
    data = {c: pa.array(rows[:, k]) for k, c in enumerate(COLS)}
    data["x"] = pa.array([None if i == 6 else v for i, v in enumerate(rows[:, 1].tolist())])
    pq.write_table(pa.table(data), tmp_path / "ep.parquet")
    with pytest.raises(DatasetError, match=r"row 6, field 'x'.*null"):
        read_episode(tmp_path / "ep.parquet")


def test_parquet_without_pyarrow_names_the_extra(tmp_path, monkeypatch):
    _, _, rows = _poses()
    _write_parquet(tmp_path / "ep.parquet", rows)
    real = builtins.__import__

    def no_pyarrow(name, *a, **k):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(MissingExtraError, match=r"ikstack\[data\]"):
        read_episode(tmp_path / "ep.parquet")


def test_unknown_suffix_is_rejected(tmp_path):
    (tmp_path / "ep.json").write_text("{}")
    with pytest.raises(Exception, match=r"unknown episode format '\.json'"):
        read_episode(tmp_path / "ep.json")


# ------------------------------------------------------------------------------ atomicity
def test_a_writer_that_dies_leaves_no_output_and_no_partial(tmp_path):
    target = tmp_path / "out.csv"

    def dies(tmp):
        tmp.write_text("timestamp,q_j0\n0.0,")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, dies)
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_leftover_partials_of_a_killed_run_are_removed(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".ep.csv.123.partial").write_text("half")
    (tmp_path / "keep.csv").write_text("x")
    assert remove_partials(tmp_path) == 1
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["keep.csv"]


def test_quoted_csv_cells_are_read(tmp_path):
    _, T, rows = _poses()
    lines = [",".join(f'"{c}"' for c in COLS)]
    lines += [",".join(f'"{float(v)!r}"' for v in r) for r in rows]
    (tmp_path / "q.csv").write_text("\r\n".join(lines) + "\r\n")
    np.testing.assert_allclose(read_episode(tmp_path / "q.csv").T_base_tcp, T, atol=1e-14)


def test_a_short_csv_row_is_named(tmp_path):
    _, _, rows = _poses()
    _write_csv(tmp_path / "ep.csv", rows)
    lines = (tmp_path / "ep.csv").read_text().splitlines()
    lines[13] = ",".join(lines[13].split(",")[:5])  # data row 12 lost three fields
    (tmp_path / "ep.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match=r"ep\.csv, row 12: has 5 fields; the header has 8"):
        read_episode(tmp_path / "ep.csv")
