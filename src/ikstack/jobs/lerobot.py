"""LeRobot-format datasets in ``ikstack solve``: TCP poses in list columns to a joint column.

A LeRobot-format dataset is a folder with ``meta/info.json`` and Parquet files under ``data/``
whose rows are frames, with ``episode_index``, ``frame_index`` and ``timestamp`` columns and
list columns such as ``observation.state`` or ``action``. A file may hold one episode or
several. ``--pose-columns`` says where the TCP pose is: seven values, position (x, y, z) [m]
then the orientation quaternion in ``--quat-order``, taken from items such as
``observation.state[0:3],observation.state[3:7]`` (a whole column, ``COL[i]`` or ``COL[a:b]``).

The output folder holds the same dataset with one new list column (default
``ik.joint_positions``, float64, one value per joint) in every data file; every other column
and every other file is copied unchanged, and ``meta/info.json`` gains the column's feature.
Each episode is solved by the ordinary job (``OUTPUT/ik/solved/episode_NNNNNN.npz`` holds its
per-frame success, FK errors and status), so a killed run resumes episode by episode; a data
file is written, atomically, once all its episodes are solved.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ikstack.errors import DatasetError, InputError, MissingExtraError
from ikstack.jobs.convert import SolveConfig
from ikstack.jobs.episode import (
    POSE_COLUMNS,
    QUATERNION_NORM_TOL,
    TIME_COLUMN,
    Array,
    check_finite_columns,
)
from ikstack.jobs.formats import atomic_write, read_solved, remove_partials
from ikstack.jobs.job import SUMMARY_NAME, SolveSummary, run_job
from ikstack.jobs.options import DEFAULT_JOINT_COLUMN, QUAT_ORDERS
from ikstack.jobs.progress import Progress

INFO = Path("meta") / "info.json"
EPISODE_COLUMN = "episode_index"
FRAME_COLUMN = "frame_index"
#: where the per-episode solve files live inside the output dataset
WORK_DIR = "ik"

_ITEM = re.compile(r"^\s*([^\[\]]+?)\s*(?:\[\s*(-?\d+)?\s*(?::\s*(-?\d+)?\s*)?\])?\s*$")


def is_lerobot_dataset(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder holding ``meta/info.json``."""
    p = Path(path)
    return p.is_dir() and (p / INFO).is_file()


@dataclass(frozen=True)
class PoseColumns:
    """Where the seven pose values of a frame come from: ``(column, index)`` pairs, position
    first, then the quaternion in ``quat_order``."""

    items: tuple[tuple[str, int | None], ...]
    quat_order: str = "wxyz"
    text: str = ""

    @property
    def columns(self) -> list[str]:
        return list(dict.fromkeys(c for c, _ in self.items))

    def label(self, k: int) -> str:
        c, i = self.items[k]
        return c if i is None else f"{c}[{i}]"


def parse_pose_columns(
    text: str, quat_order: str = "wxyz", widths: dict[str, int] | None = None
) -> PoseColumns:
    """Parse ``COL[a:b],COL[i],COL`` items into seven (column, index) pairs.

    ``widths`` gives the length of each list column (needed for a whole column or an open
    slice); a scalar column has width 0.

    Raises:
        InputError: malformed text, an unknown column, an index out of range, or not seven
            values in all.
    """
    if quat_order not in QUAT_ORDERS:
        raise InputError(
            f"--quat-order must be one of {', '.join(QUAT_ORDERS)}; got {quat_order!r}"
        )
    widths = widths or {}
    items: list[tuple[str, int | None]] = []
    for raw in _split(text):
        m = _ITEM.match(raw)
        if not m:
            raise InputError(f"--pose-columns item {raw!r} is not COL, COL[i] or COL[a:b]")
        col, a, b = m.group(1), m.group(2), m.group(3)
        has_slice = ":" in raw
        if widths and col not in widths:
            raise InputError(
                f"--pose-columns names column {col!r}, which the dataset does not "
                f"have; columns: {', '.join(widths)}"
            )
        w = widths.get(col, 0)
        if "[" not in raw:
            items.extend([(col, None)] if w == 0 else [(col, i) for i in range(w)])
            continue
        if w == 0 and widths:
            raise InputError(
                f"--pose-columns item {raw!r}: column {col!r} holds one number, not a list"
            )
        if has_slice:
            lo = int(a) if a is not None else 0
            hi = int(b) if b is not None else w
            idx = list(range(lo, hi))
        else:
            if a is None:
                raise InputError(f"--pose-columns item {raw!r} has an empty index")
            idx = [int(a)]
        for i in idx:
            if i < 0 or (widths and i >= w):
                raise InputError(
                    f"--pose-columns item {raw!r}: index {i} is outside column "
                    f"{col!r} of length {w}"
                )
        items.extend((col, i) for i in idx)
    if len(items) != 7:
        raise InputError(
            f"--pose-columns {text!r} selects {len(items)} values; a pose needs 7 "
            f"(x, y, z and a quaternion in {quat_order} order)"
        )
    return PoseColumns(tuple(items), quat_order, text)


def _split(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [s for s in out if s.strip()]


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtraError("pyarrow", "data") from None
    return pa, pq


def data_files(root: Path) -> list[Path]:
    """The dataset's Parquet data files, sorted (raises :class:`DatasetError` if none)."""
    files = sorted(
        p
        for p in (root / "data").rglob("*.parquet")
        if not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    if not files:
        raise DatasetError(
            root / "data",
            "a LeRobot-format dataset keeps its frames in Parquet files under data/; none found",
        )
    return files


def _list_widths(path: Path, schema: Any) -> dict[str, int]:
    pa, pq = _pyarrow()
    widths: dict[str, int] = {}
    first = None
    for f in schema:
        if pa.types.is_fixed_size_list(f.type):
            widths[f.name] = f.type.list_size
        elif pa.types.is_list(f.type) or pa.types.is_large_list(f.type):
            if first is None:
                first = pq.ParquetFile(path).read_row_group(0)
            col = first.column(f.name)
            widths[f.name] = len(col[0].as_py()) if len(col) else 0
        else:
            widths[f.name] = 0
    return widths


def _values(path: Path, table: Any, pose: PoseColumns) -> Array:
    """(rows, 7) float64 pose values in the order of ``pose.items``."""
    out = np.empty((table.num_rows, len(pose.items)))
    cache: dict[str, Array] = {}
    for k, (col, idx) in enumerate(pose.items):
        if col not in cache:
            c = table.column(col)
            if c.null_count:
                r = int(np.argmax(np.asarray(c.is_null().to_numpy(zero_copy_only=False))))
                raise DatasetError(path, "value is missing (null)", r, col)
            rows = c.to_pylist() if idx is not None else None
            if rows is not None:
                lens = {len(v) if v is not None else -1 for v in rows}
                if len(lens) != 1:
                    r = next(i for i, v in enumerate(rows) if v is None or len(v) != len(rows[0]))
                    raise DatasetError(
                        path,
                        f"list has {len(rows[r] or [])} values where the "
                        f"first row has {len(rows[0])}",
                        r,
                        col,
                    )
                try:
                    cache[col] = np.asarray(rows, dtype=np.float64).reshape(table.num_rows, -1)
                except (TypeError, ValueError):
                    raise DatasetError(
                        path, f"column has type {c.type}; numbers are required", field=col
                    ) from None
            else:
                try:
                    cache[col] = np.asarray(c.to_numpy(), dtype=np.float64).reshape(-1, 1)
                except (TypeError, ValueError, Exception):
                    raise DatasetError(
                        path, f"column has type {c.type}; a number is required", field=col
                    ) from None
        arr = cache[col]
        j = 0 if idx is None else idx
        if j >= arr.shape[1]:
            raise DatasetError(
                path, f"list has {arr.shape[1]} values; index {j} asked by --pose-columns", 0, col
            )
        out[:, k] = arr[:, j]
    return out


@dataclass(frozen=True)
class _EpisodeRows:
    index: int
    file: Path
    rows: np.ndarray  # row numbers in the file, in frame order


def _scan(
    root: Path, pose: PoseColumns, stage: Path, overwrite: bool
) -> tuple[list[_EpisodeRows], int]:
    """Validate every episode and stage it as an ikstack NPZ episode (atomically, once)."""
    pa, pq = _pyarrow()
    episodes: list[_EpisodeRows] = []
    seen: dict[int, Path] = {}
    frames = 0
    for f in data_files(root):
        try:
            table = pq.read_table(f)
        except Exception as exc:  # pyarrow's own error types for malformed files
            raise DatasetError(f, f"not a readable Parquet file ({exc})") from None
        for need in (EPISODE_COLUMN, FRAME_COLUMN, TIME_COLUMN):
            if need not in table.column_names:
                raise DatasetError(
                    f,
                    f"missing column {need!r}; a LeRobot-format data file "
                    f"has {EPISODE_COLUMN}, {FRAME_COLUMN} and {TIME_COLUMN}",
                    field=need,
                )
        for c in pose.columns:
            if c not in table.column_names:
                raise DatasetError(
                    f,
                    f"missing column {c!r} named by --pose-columns "
                    f"(found: {', '.join(table.column_names)})",
                    field=c,
                )
        if table.num_rows == 0:
            continue
        ep = np.asarray(table.column(EPISODE_COLUMN).to_numpy(), dtype=np.int64)
        fr = np.asarray(table.column(FRAME_COLUMN).to_numpy(), dtype=np.int64)
        t = np.asarray(table.column(TIME_COLUMN).to_numpy(), dtype=np.float64)
        vals = _values(f, table, pose)
        labels = tuple(pose.label(k) for k in range(7))
        check_finite_columns(f, vals, labels)
        for e in np.unique(ep):
            e = int(e)
            if e in seen:
                raise DatasetError(
                    f,
                    f"episode {e} also appears in {seen[e]}; an episode must live in one data file",
                    field=EPISODE_COLUMN,
                )
            seen[e] = f
            rows = np.flatnonzero(ep == e)
            rows = rows[np.argsort(fr[rows], kind="stable")]
            dup = np.flatnonzero(np.diff(fr[rows]) == 0)
            if dup.size:
                r = int(rows[dup[0] + 1])
                raise DatasetError(
                    f, f"episode {e} has frame_index {int(fr[r])} twice", r, FRAME_COLUMN
                )
            te = t[rows]
            back = np.flatnonzero(np.diff(te) < 0)
            if back.size:
                r = int(rows[back[0] + 1])
                raise DatasetError(
                    f,
                    f"timestamp {t[r]!r} s of episode {e} is earlier than its "
                    "previous frame's; timestamps must not go backwards",
                    r,
                    TIME_COLUMN,
                )
            if not np.isfinite(te).all():
                _bad_time(f, t, rows)
            v = vals[rows]
            quat = v[:, 3:] if pose.quat_order == "wxyz" else v[:, [6, 3, 4, 5]]
            norm = np.linalg.norm(quat, axis=1)
            bad = np.flatnonzero(np.abs(norm - 1.0) > QUATERNION_NORM_TOL)
            if bad.size:
                r = int(rows[bad[0]])
                raise DatasetError(
                    f,
                    f"quaternion ({pose.quat_order}) {v[bad[0], 3:].tolist()} has norm "
                    f"{norm[bad[0]]:.6g}; a rotation needs a unit quaternion (tolerance "
                    f"{QUATERNION_NORM_TOL:g}); check --pose-columns and --quat-order",
                    r,
                    pose.label(3),
                )
            frames += rows.size
            episodes.append(_EpisodeRows(e, f, rows))
            target = stage / f"episode_{e:06d}.npz"
            if overwrite or not target.exists():
                arrays = {TIME_COLUMN: te, **{c: v[:, k] for k, c in enumerate(POSE_COLUMNS[1:4])}}
                arrays.update({c: quat[:, k] for k, c in enumerate(POSE_COLUMNS[4:])})
                atomic_write(target, partial(_save_npz, arrays=arrays))
    if not episodes:
        raise DatasetError(root / "data", "no frames in any data file")
    return episodes, frames


def _bad_time(path: Path, t: Array, rows: np.ndarray) -> None:
    r = int(rows[np.argmax(~np.isfinite(t[rows]))])
    raise DatasetError(
        path, f"timestamp is {t[r]!r}; timestamps must be finite [s]", r, TIME_COLUMN
    )


def _save_npz(tmp: Path, arrays: dict[str, Array]) -> None:
    with tmp.open("wb") as fh:
        np.savez(fh, **arrays)  # type: ignore[arg-type]


def _write_table(pq: Any, table: Any, tmp: Path) -> None:
    pq.write_table(table, tmp)


def _copy(src: Path, tmp: Path) -> None:
    shutil.copyfile(src, tmp)


def run_lerobot_job(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    config: SolveConfig,
    pose_columns: str,
    quat_order: str = "wxyz",
    joint_column: str = DEFAULT_JOINT_COLUMN,
    engine: str = "local",
    workers: int | None = None,
    ray_address: str | None = None,
    overwrite: bool = False,
    progress: Progress | None = None,
) -> SolveSummary:
    """Solve a LeRobot-format dataset into a copy with a joint column (see the module doc).

    Raises:
        InputError: bad options (``--pose-columns``, ``--quat-order``, an existing column, the
            output inside the input).
        DatasetError: a malformed data file (names the file, row and column).
    """
    root = Path(input_path)
    out = Path(output_path)
    if not is_lerobot_dataset(root):
        raise InputError(f"{root}: not a LeRobot-format dataset (no {INFO})")
    if out.resolve() == root.resolve() or out.resolve().is_relative_to(root.resolve()):
        raise InputError(f"{out}: the output folder must lie outside the input dataset")
    try:
        info = json.loads((root / INFO).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetError(root / INFO, f"not readable JSON ({exc})") from None
    if not isinstance(info, dict):
        raise DatasetError(root / INFO, "must hold a JSON object")
    files = data_files(root)
    _, pq = _pyarrow()
    try:
        schema = pq.read_schema(files[0])
    except Exception as exc:
        raise DatasetError(files[0], f"not a readable Parquet file ({exc})") from None
    if joint_column in schema.names:
        raise InputError(
            f"the dataset already has a column {joint_column!r}; choose another with --joint-column"
        )
    pose = parse_pose_columns(pose_columns, quat_order, _list_widths(files[0], schema))
    work = out / WORK_DIR
    stage, solved = work / "input", work / "solved"
    stage.mkdir(parents=True, exist_ok=True)
    remove_partials(stage)
    episodes, _ = _scan(root, pose, stage, overwrite)
    summary = run_job(
        stage,
        solved,
        config,
        engine=engine,
        workers=workers,
        ray_address=ray_address,
        overwrite=overwrite,
        progress=progress,
    )
    _assemble(root, out, episodes, solved, config.chain.joint_names, joint_column, info, overwrite)
    final = replace(summary, input=str(root), output=str(out))
    atomic_write(out / SUMMARY_NAME, lambda tmp: tmp.write_text(final.to_json()))
    return final


def _assemble(
    root: Path,
    out: Path,
    episodes: list[_EpisodeRows],
    solved: Path,
    joint_names: tuple[str, ...],
    column: str,
    info: dict[str, Any],
    overwrite: bool,
) -> None:
    pa, pq = _pyarrow()
    by_file: dict[Path, list[_EpisodeRows]] = {}
    for e in episodes:
        by_file.setdefault(e.file, []).append(e)
    for f in data_files(root):
        target = out / f.relative_to(root)
        remove_partials(target.parent) if target.parent.is_dir() else None
        if target.exists() and not overwrite:
            continue
        table = pq.read_table(f)
        q = np.zeros((table.num_rows, len(joint_names)))
        for e in by_file.get(f, []):
            s = read_solved(solved / f"episode_{e.index:06d}.npz")
            if s.joint_names != joint_names or len(s) != e.rows.size:
                raise DatasetError(
                    solved / f"episode_{e.index:06d}.npz",
                    "does not match this dataset or chain; rerun with --overwrite",
                )
            q[e.rows] = s.q
        values = pa.array(q.reshape(-1), type=pa.float64())
        col = (
            pa.FixedSizeListArray.from_arrays(values, len(joint_names))
            if table.num_rows
            else pa.array([], type=pa.list_(pa.float64(), len(joint_names)))
        )
        new = table.append_column(pa.field(column, col.type), col)
        atomic_write(target, partial(_write_table, pq, new))
    for src in sorted(root.rglob("*")):
        rel = src.relative_to(root)
        if src.is_dir() or rel == INFO or (rel.parts[0] == "data" and src.suffix == ".parquet"):
            continue
        dst = out / rel
        if not dst.exists():
            atomic_write(dst, partial(_copy, src))
    new_info = dict(info)
    features = dict(new_info.get("features", {}) or {})
    features[column] = {"dtype": "float64", "shape": [len(joint_names)], "names": list(joint_names)}
    new_info["features"] = features
    atomic_write(out / INFO, lambda tmp: tmp.write_text(json.dumps(new_info, indent=4) + "\n"))


def run_lerobot_from_options(
    input_path: str, options: Any, config: SolveConfig, progress: Progress | None
) -> SolveSummary:
    """``ikstack solve`` on a LeRobot-format dataset, from parsed options."""
    spec = getattr(options, "pose_columns", None)
    if not is_lerobot_dataset(input_path):
        raise InputError(
            f"{input_path}: --pose-columns goes with a LeRobot-format dataset "
            f"(a folder with {INFO}); this input is not one"
        )
    if not spec:
        raise InputError(
            f"{input_path} is a LeRobot-format dataset: say where the TCP pose is "
            "with --pose-columns (e.g. 'observation.state[0:3],"
            "observation.state[3:7]') and --quat-order"
        )
    return run_lerobot_job(
        input_path,
        options.output,
        config,
        spec,
        quat_order=getattr(options, "quat_order", "wxyz"),
        joint_column=getattr(options, "joint_column", DEFAULT_JOINT_COLUMN),
        engine=getattr(options, "engine", "local"),
        workers=getattr(options, "workers", None),
        ray_address=getattr(options, "ray_address", None),
        overwrite=bool(getattr(options, "overwrite", False)),
        progress=progress,
    )
