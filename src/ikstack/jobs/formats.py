"""Episode readers and writers for CSV, NPZ and Parquet (schema in :mod:`.episode`).

Readers validate everything a solver relies on and raise :class:`~.episode.DatasetError` naming
the file, row and field. Writers are atomic (:func:`atomic_write`) and deterministic: the same
solved episode always gives the same bytes, whichever process writes it.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import warnings
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ikstack.errors import (
    DatasetError,
    InputError,
    MissingExtraError,
    NotRigidTransformError,
    StorageError,
)
from ikstack.jobs.episode import (
    MATRIX_KEY,
    POSE_COLUMNS,
    QUATERNION_COLUMNS,
    QUATERNION_NORM_TOL,
    RESULT_COLUMNS,
    TIME_COLUMN,
    Array,
    Episode,
    SolvedEpisode,
    check_finite_columns,
    check_timestamps,
    joint_columns,
)
from ikstack.spatial import as_transforms, from_pose

#: file suffix -> format name
SUFFIXES = {".csv": "csv", ".npz": "npz", ".parquet": "parquet"}
#: suffix of the temporary files outputs are written to before their rename
PARTIAL_SUFFIX = ".partial"
#: fixed zip timestamp so NPZ outputs are byte-identical across runs
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def format_of(path: Path) -> str:
    """``"csv"``, ``"npz"`` or ``"parquet"`` from the suffix (raises :class:`InputError`)."""
    fmt = SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise InputError(
            f"{path}: unknown episode format {path.suffix!r}; "
            f"accepted suffixes: {', '.join(SUFFIXES)}"
        )
    return fmt


def _one_line(exc: BaseException) -> str:
    """A library's error text on one line (pyarrow's span several)."""
    return " ".join(str(exc).split())


def _pyarrow() -> tuple[Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtraError("pyarrow", "data") from None
    return pa, pq


# ------------------------------------------------------------------------------------ reading
def read_episode(path: str | os.PathLike[str], name: str | None = None) -> Episode:
    """Read and validate one input episode (format from the suffix).

    Raises:
        DatasetError: missing columns, unparsable or non-finite values, non-unit quaternions,
            non-rigid matrices, timestamps going backwards, or no rows; the message names the
            file, the 0-based data row and the field.
        MissingExtraError: a Parquet file without pyarrow installed (extra ``data``).
    """
    p = Path(path)
    fmt = format_of(p)
    name = name if name is not None else p.stem
    if fmt == "csv":
        cols = _read_csv_columns(p, POSE_COLUMNS)
        return _episode_from_columns(p, name, cols)
    if fmt == "npz":
        return _read_npz_episode(p, name)
    return _episode_from_columns(p, name, _read_parquet_columns(p, POSE_COLUMNS))


def _missing(path: Path, have: list[str], need: tuple[str, ...]) -> None:
    missing = [c for c in need if c not in have]
    if missing:
        raise DatasetError(
            path,
            f"missing column(s) {', '.join(map(repr, missing))}; an episode needs "
            f"{', '.join(need)} (found: {', '.join(have) or 'none'})",
            field=missing[0],
        )


def _csv_text(path: Path) -> str:
    """The file's text: UTF-8, a leading byte-order mark dropped.

    Raises:
        DatasetError: unreadable, binary (NUL bytes) or not UTF-8 (names the line).
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DatasetError(path, f"cannot read: {exc.strerror}") from None
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise DatasetError(
            path,
            f"binary data (a NUL byte at offset {nul}, line {line}); a CSV episode is UTF-8 text",
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DatasetError(
            path,
            f"byte {data[exc.start]:#04x} at offset {exc.start} (line "
            f"{line}) is not UTF-8; a CSV episode is UTF-8 text",
        ) from None


def _check_csv_shape(path: Path, text: str, fields: int) -> None:
    """Raise :class:`DatasetError` at the first data row whose field count differs from the
    header's, or when the file ends inside a row whose last number looks cut short."""
    raw = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    ends = np.flatnonzero(raw == 10)
    if raw.size and raw[-1] != 10:
        ends = np.append(ends, raw.size)
    per_line = np.bincount(np.searchsorted(ends, np.flatnonzero(raw == 44)), minlength=ends.size)[
        : ends.size
    ]
    starts = np.concatenate([[0], ends[:-1] + 1])
    blank = (ends - starts) <= 1  # empty or a lone "\r"
    bad = (per_line != fields - 1) & ~blank
    bad[0] = False  # the header
    if bad.any():
        line = int(np.argmax(bad))
        row = int(np.count_nonzero(~blank[1:line]))
        raise DatasetError(
            path, f"has {int(per_line[line]) + 1} fields; the header has {fields}", row
        )
    if text.endswith("\n") or ends.size < 4:
        return
    lines = text.rstrip("\r").rsplit("\n", 21)[1:]
    digits = [sum(ch.isdigit() for ch in ln.rsplit(",", 1)[-1]) for ln in lines]
    if digits[-1] < min(digits[:-1]):
        row = int(np.count_nonzero(~blank[1:])) - 1
        raise DatasetError(
            path,
            f"the file ends inside its last row (no final newline) and the value "
            f"{lines[-1].rsplit(',', 1)[-1]!r} has fewer digits than the column's others: the "
            "file looks truncated",
            row,
        )


def _read_csv_columns(path: Path, need: tuple[str, ...] | list[str]) -> dict[str, Array]:
    need = tuple(need)
    text = _csv_text(path)
    header = next(csv.reader(io.StringIO(text)), None)
    if header is None:
        raise DatasetError(path, "file is empty; expected a header row with " + ", ".join(need))
    header = [h.strip() for h in header]
    _missing(path, header, need)
    idx = [header.index(c) for c in need]
    if '"' in text:  # quoted cells: the csv module splits the rows
        data = _read_csv_slow(path, text, header, need)
    else:
        _check_csv_shape(path, text, len(header))
        try:
            with warnings.catch_warnings():  # an empty body is reported below
                warnings.simplefilter("ignore", UserWarning)
                data = np.loadtxt(
                    io.StringIO(text),
                    delimiter=",",
                    skiprows=1,
                    usecols=idx,
                    ndmin=2,
                    dtype=np.float64,
                    comments=None,
                )
        except ValueError:  # a bad cell: the careful reader names it
            data = _read_csv_slow(path, text, header, need)
    if data.shape[0] == 0:
        raise DatasetError(path, "no data rows after the header")
    return {c: data[:, k] for k, c in enumerate(need)}


def _read_csv_slow(path: Path, text: str, header: list[str], need: tuple[str, ...]) -> Array:
    """Parse ``need`` cell by cell with the csv module; a bad cell raises a DatasetError."""
    idx = [header.index(c) for c in need]
    rows: list[list[float]] = []
    reader = csv.reader(io.StringIO(text))
    next(reader)
    for r, row in enumerate(reader):
        if not row:
            continue
        if len(row) != len(header):
            raise DatasetError(path, f"has {len(row)} fields; the header has {len(header)}", r)
        vals = []
        for c, k in zip(need, idx, strict=True):
            try:
                vals.append(float(row[k]))
            except ValueError:
                raise DatasetError(path, f"cannot read {row[k]!r} as a number", r, c) from None
        rows.append(vals)
    return np.array(rows, dtype=np.float64).reshape(-1, len(need))


def _read_parquet_columns(path: Path, need: tuple[str, ...] | list[str]) -> dict[str, Array]:
    _, pq = _pyarrow()
    need = tuple(need)
    try:
        names = list(pq.read_schema(path).names)
    except Exception as exc:  # pyarrow raises its own error types for malformed files
        raise DatasetError(path, f"not a readable Parquet file ({_one_line(exc)})") from None
    _missing(path, names, need)
    try:
        table = pq.read_table(path, columns=list(need))
    except Exception as exc:  # noqa: BLE001 - pyarrow's errors (OSError, ArrowInvalid, ...)
        raise DatasetError(
            path,
            f"a column of {', '.join(need)} cannot be read (corrupt or "
            f"unsupported data: {_one_line(exc)})",
        ) from None
    out: dict[str, Array] = {}
    for c in need:
        col = table.column(c)
        if col.null_count:
            r = int(np.argmax(np.asarray(col.is_null().to_numpy(zero_copy_only=False))))
            raise DatasetError(path, "value is missing (null)", r, c)
        try:
            out[c] = np.asarray(col.to_numpy(), dtype=np.float64)
        except (TypeError, ValueError):
            raise DatasetError(
                path, f"column has type {col.type}; a number is required", field=c
            ) from None
    if table.num_rows == 0:
        raise DatasetError(path, "no data rows")
    return out


#: parsed ``.npy`` headers (the bytes before the data) -> (dtype, shape, Fortran order); the
#: episodes of a dataset share a handful of headers, so each is parsed once per process
_NPY_HEADERS: dict[bytes, tuple[np.dtype[Any], tuple[int, ...], bool]] = {}
_NPY_MAGIC = b"\x93NUMPY"


def _npy_from_bytes(data: bytes) -> np.ndarray[Any, Any]:
    """The array in the bytes of one ``.npy`` member (``np.load`` semantics, no pickles).

    A header seen before is not parsed again and the array is a read-only view of ``data``;
    anything else goes through :func:`numpy.lib.format.read_array`, which raises its usual
    errors for malformed members.
    """
    if data[:6] == _NPY_MAGIC and len(data) >= 12:
        start = (
            10 + int.from_bytes(data[8:10], "little")
            if data[6] == 1
            else (12 + int.from_bytes(data[8:12], "little"))
        )
        known = _NPY_HEADERS.get(data[:start])
        if known is not None:
            dtype, shape, fortran = known
            count = math.prod(shape)
            if len(data) - start == count * dtype.itemsize:
                flat = np.frombuffer(data, dtype=dtype, count=count, offset=start)
                return flat.reshape(shape[::-1]).T if fortran else flat.reshape(shape)
    arr = np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)
    if data[:6] == _NPY_MAGIC and not arr.dtype.hasobject and len(data) >= 12:
        major = data[6]
        start = (
            10 + int.from_bytes(data[8:10], "little")
            if major == 1
            else (12 + int.from_bytes(data[8:12], "little"))
        )
        fortran = bool(arr.flags.f_contiguous and not arr.flags.c_contiguous)
        if major in (1, 2, 3):
            if len(_NPY_HEADERS) >= 256:  # many distinct shapes: start over
                _NPY_HEADERS.clear()
            _NPY_HEADERS[data[:start]] = (arr.dtype, tuple(arr.shape), fortran)
    return arr


def _npz_members(
    path: Path, keys: tuple[str, ...] | None = None
) -> tuple[list[str], dict[str, np.ndarray[Any, Any]]]:
    """The member names of an NPZ file (as ``np.load(...).files``) and the arrays of ``keys``
    (all ``.npy`` members when None; keys that are absent are left out).

    Raises:
        DatasetError: not a readable zip file, or a member that is not a readable array.
    """
    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            files = [n[:-4] if n.endswith(".npy") else n for n in names]
            want = files if keys is None else [k for k in keys if k in files]
            out = {}
            for k in want:
                if f"{k}.npy" not in names:
                    raise DatasetError(path, "is not an array", field=k)
                out[k] = _npz_member(path, k, zf.read(f"{k}.npy"))
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        if isinstance(exc, DatasetError):
            raise
        raise DatasetError(path, f"not a readable NPZ file ({_one_line(exc)})") from None
    return files, out


def _npz_member(path: Path, key: str, data: bytes) -> np.ndarray[Any, Any]:
    """One member's array; pickled objects are never loaded, and only numbers are accepted."""
    if data[:6] == _NPY_MAGIC and b"'|O'" in data[:256]:
        raise DatasetError(
            path,
            "holds pickled Python objects; an episode array holds numbers "
            "(ikstack never loads pickles)",
            field=key,
        )
    try:
        arr = _npy_from_bytes(data)
    except (ValueError, EOFError, OSError) as exc:
        raise DatasetError(
            path, f"is not a readable .npy array ({_one_line(exc)})", field=key
        ) from None
    if arr.dtype.kind not in "biuf":
        raise DatasetError(
            path,
            f"has dtype {arr.dtype} ({_KIND_NAMES.get(arr.dtype.kind, 'not numbers')}); "
            "an episode array holds real numbers",
            field=key,
        )
    return arr


_KIND_NAMES = {
    "U": "text",
    "S": "bytes",
    "c": "complex numbers",
    "O": "Python objects",
    "V": "raw records",
    "M": "dates",
    "m": "time spans",
}


def npz_rows(path: Path, key: str) -> int:
    """Rows of the array ``key`` of an NPZ file (raises :class:`DatasetError`)."""
    _, arrays = _npz_members(path, (key,))
    if key not in arrays:
        raise DatasetError(path, "missing", field=key)
    return int(arrays[key].shape[0])


def _read_npz_episode(path: Path, name: str) -> Episode:
    keys, arrays = _npz_members(path, (*POSE_COLUMNS, MATRIX_KEY))
    if MATRIX_KEY in keys:
        _missing(path, keys, (TIME_COLUMN, MATRIX_KEY))
        t = np.asarray(arrays[TIME_COLUMN], dtype=np.float64).reshape(-1)
        T = np.asarray(arrays[MATRIX_KEY], dtype=np.float64)
        return _episode_from_matrices(path, name, t, T)
    _missing(path, keys, POSE_COLUMNS)
    cols = {c: np.asarray(arrays[c], dtype=np.float64).reshape(-1) for c in POSE_COLUMNS}
    n = {c: v.shape[0] for c, v in cols.items()}
    if len(set(n.values())) != 1:
        raise DatasetError(path, f"columns have different lengths {n}")
    return _episode_from_columns(path, name, cols)


def _episode_from_columns(path: Path, name: str, cols: dict[str, Array]) -> Episode:
    t = cols[TIME_COLUMN]
    if t.shape[0] == 0:
        raise DatasetError(path, "no data rows")
    check_timestamps(path, t)
    pose = np.stack([cols[c] for c in POSE_COLUMNS[1:]], axis=1)
    check_finite_columns(path, pose, POSE_COLUMNS[1:])
    quat = pose[:, 3:]
    norm = np.linalg.norm(quat, axis=1)
    bad = np.abs(norm - 1.0) > QUATERNION_NORM_TOL
    if bad.any():
        r = int(np.argmax(bad))
        raise DatasetError(
            path,
            f"quaternion (qw, qx, qy, qz) = {quat[r].tolist()} has norm {norm[r]:.6g}; "
            f"a rotation needs a unit quaternion (tolerance {QUATERNION_NORM_TOL:g})",
            r,
            QUATERNION_COLUMNS[0],
        )
    T = from_pose(pose[:, :3], quat / norm[:, None])
    return Episode(name, t.copy(), T)


def _episode_from_matrices(path: Path, name: str, t: Array, T: Array) -> Episode:
    if T.ndim != 3 or T.shape[1:] != (4, 4) or T.shape[0] != t.shape[0]:
        raise DatasetError(
            path,
            f"{MATRIX_KEY} has shape {T.shape}; expected "
            f"({t.shape[0]}, 4, 4) to match {TIME_COLUMN}",
            field=MATRIX_KEY,
        )
    if t.shape[0] == 0:
        raise DatasetError(path, "no data rows")
    check_timestamps(path, t)
    flat = T.reshape(t.shape[0], 16)
    bad = ~np.isfinite(flat)
    if bad.any():
        r, k = (int(i) for i in np.argwhere(bad)[0])
        raise DatasetError(
            path,
            f"entry [{k // 4}, {k % 4}] is {flat[r, k]!r}; poses must be finite",
            r,
            MATRIX_KEY,
        )
    try:
        as_transforms(T, MATRIX_KEY)
    except NotRigidTransformError:
        for r in range(T.shape[0]):  # only on failure: find the first bad row for the message
            try:
                as_transforms(T[r], MATRIX_KEY)
            except NotRigidTransformError as exc:
                raise DatasetError(path, str(exc), r, MATRIX_KEY) from None
        raise
    return Episode(name, t.copy(), T.copy())


# ------------------------------------------------------------------------------------ writing
def atomic_write(path: Path, write: Callable[[Path], object]) -> None:
    """Call ``write(tmp)`` on a temporary sibling of ``path``, then rename it onto ``path``.

    The output either appears complete or not at all; a failed or killed writer leaves at most a
    hidden ``.<name>.<pid>.partial`` file, which :func:`remove_partials` clears.

    Raises:
        StorageError: the file cannot be written (full disk, read-only folder, permission);
            it names ``path`` (or the folder) and the system's reason.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}{PARTIAL_SUFFIX}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write(tmp)
        os.replace(tmp, path)
    except BaseException as exc:
        try:  # the cleanup may fail too (a read-only folder); the first error is the news
            tmp.unlink(missing_ok=True)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise StorageError.from_os_error(path, "write", exc) from exc
        raise


def remove_partials(folder: Path) -> int:
    """Delete leftover temporary files of killed runs under ``folder``; returns how many."""
    if not folder.is_dir():
        return 0
    n = 0
    for p in folder.rglob(f".*{PARTIAL_SUFFIX}"):
        p.unlink(missing_ok=True)
        n += 1
    return n


def write_solved(path: str | os.PathLike[str], solved: SolvedEpisode) -> None:
    """Write a solved episode atomically, in the format of ``path``'s suffix."""
    p = Path(path)
    fmt = format_of(p)
    writer = {"csv": _write_csv, "npz": _write_npz, "parquet": _write_parquet}[fmt]
    atomic_write(p, lambda tmp: writer(tmp, solved))


def _write_csv(tmp: Path, s: SolvedEpisode) -> None:
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(s.columns())
    floats = np.column_stack([s.timestamps, s.q]).tolist()
    succ = s.success.astype(np.int64).tolist()
    perr = s.position_error.tolist()
    rerr = s.rotation_error.tolist()
    stat = s.status.astype(np.int64).tolist()
    for i, row in enumerate(floats):
        # repr() of a Python float is the shortest text that reads back to the same float
        buf.write(",".join(map(repr, row)))
        buf.write(f",{succ[i]},{perr[i]!r},{rerr[i]!r},{stat[i]}\n")
    tmp.write_text(buf.getvalue())


#: ``.npy`` headers written before, by (dtype, shape) of the C-ordered array
_NPY_OUT_HEADERS: dict[tuple[str, tuple[int, ...]], bytes] = {}


def _npy_bytes(arr: np.ndarray[Any, Any]) -> bytes:
    """The bytes :func:`numpy.lib.format.write_array` writes for ``arr`` in C order; the header
    of a (dtype, shape) it wrote before is reused."""
    arr = np.ascontiguousarray(arr)
    key = (arr.dtype.str, tuple(arr.shape))
    head = _NPY_OUT_HEADERS.get(key)
    if head is not None:
        return head + arr.tobytes()
    b = io.BytesIO()
    np.lib.format.write_array(b, arr, allow_pickle=False)
    data = b.getvalue()
    if len(_NPY_OUT_HEADERS) >= 256:  # many distinct shapes: start over
        _NPY_OUT_HEADERS.clear()
    _NPY_OUT_HEADERS[key] = data[: len(data) - arr.nbytes]
    return data


def _write_npz(tmp: Path, s: SolvedEpisode) -> None:
    arrays = {
        TIME_COLUMN: s.timestamps,
        "joint_names": np.array(s.joint_names, dtype=np.str_),
        "q": s.q,
        "success": s.success.astype(np.bool_),
        "position_error": s.position_error,
        "rotation_error": s.rotation_error,
        "status": s.status.astype(np.int64),
    }
    out = io.BytesIO()  # one write to the file instead of several per member
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as zf:
        for key, arr in arrays.items():
            info = zipfile.ZipInfo(f"{key}.npy", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_STORED
            info.external_attr = 0o644 << 16
            zf.writestr(info, _npy_bytes(arr))
    tmp.write_bytes(out.getbuffer())


def _write_parquet(tmp: Path, s: SolvedEpisode) -> None:
    pa, pq = _pyarrow()
    data: dict[str, Any] = {TIME_COLUMN: pa.array(s.timestamps, pa.float64())}
    for k, c in enumerate(joint_columns(s.joint_names)):
        data[c] = pa.array(np.ascontiguousarray(s.q[:, k]), pa.float64())
    data["success"] = pa.array(s.success.astype(np.bool_), pa.bool_())
    data["position_error"] = pa.array(s.position_error, pa.float64())
    data["rotation_error"] = pa.array(s.rotation_error, pa.float64())
    data["status"] = pa.array(s.status.astype(np.int64), pa.int64())
    meta = {b"ikstack.joint_names": json.dumps(list(s.joint_names)).encode()}
    table = pa.table(data).replace_schema_metadata(meta)
    pq.write_table(table, tmp)


# ------------------------------------------------------------------------------ reading outputs
def read_solved(path: str | os.PathLike[str]) -> SolvedEpisode:
    """Read a solved episode written by :func:`write_solved`."""
    p = Path(path)
    fmt = format_of(p)
    if fmt == "npz":
        with np.load(p, allow_pickle=False) as z:
            return SolvedEpisode(
                np.asarray(z[TIME_COLUMN]),
                tuple(str(n) for n in z["joint_names"]),
                np.asarray(z["q"]),
                np.asarray(z["success"], dtype=bool),
                np.asarray(z["position_error"]),
                np.asarray(z["rotation_error"]),
                np.asarray(z["status"], dtype=np.int64),
            )
    if fmt == "csv":
        header = [h.strip() for h in next(csv.reader(io.StringIO(_csv_text(p))), [])]
        cols = _read_csv_columns(p, header)
    else:
        _, pq = _pyarrow()
        header = list(pq.read_schema(p).names)
        cols = _read_parquet_columns(p, header)
    joints = tuple(c[2:] for c in header if c.startswith("q_"))
    _missing(p, header, (TIME_COLUMN, *RESULT_COLUMNS))
    q = np.column_stack([cols[c] for c in joint_columns(joints)])
    return SolvedEpisode(
        cols[TIME_COLUMN],
        joints,
        q,
        cols["success"] != 0,
        cols["position_error"],
        cols["rotation_error"],
        cols["status"].astype(np.int64),
    )
