"""A generated corpus of corrupted episode files (CSV, NPZ, Parquet) for the reliability
tests (each one built in a temporary folder by the tests; nothing here is checked in as data).

Each case is ``(id, file name, writer, row, field, words)``: the 0-based data row and the field
the :class:`~ikstack.jobs.DatasetError` must carry (None where the problem is the whole file).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable

import numpy as np

HEADER = "timestamp,x,y,z,qw,qx,qy,qz"


def good_rows(n: int = 8) -> np.ndarray:
    """(n, 8) rows of a valid episode: timestamps 0.02 s apart, reachable UR5-sized poses."""
    t = np.arange(n) * 0.02
    x = 0.4 + 0.01 * np.arange(n)
    ang = 0.05 * np.arange(n)
    q = np.column_stack([np.cos(ang / 2), np.zeros(n), np.sin(ang / 2), np.zeros(n)])
    return np.column_stack([t, x, np.full(n, 0.1), np.full(n, 0.4), q])


def csv_text(rows: np.ndarray | None = None, header: str = HEADER) -> str:
    rows = good_rows() if rows is None else rows
    return header + "\n" + "".join(",".join(f"{v:.9f}" for v in r) + "\n" for r in rows)


def _lines(text: str) -> list[str]:
    return text.splitlines()


def _edit_cell(row: int, col: int, value: str, text: str | None = None) -> str:
    lines = _lines(text if text is not None else csv_text())
    cells = lines[row + 1].split(",")
    cells[col] = value
    lines[row + 1] = ",".join(cells)
    return "\n".join(lines) + "\n"


def _npz(**arrays: object) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)  # type: ignore[arg-type]
    return buf.getvalue()


def _npz_cols(rows: np.ndarray | None = None, **over: object) -> bytes:
    rows = good_rows() if rows is None else rows
    cols: dict[str, object] = {c: rows[:, k] for k, c in enumerate(HEADER.split(","))}
    cols.update(over)
    return _npz(**{k: v for k, v in cols.items() if v is not None})


def _npz_matrices(T: np.ndarray, t: np.ndarray | None = None) -> bytes:
    return _npz(timestamp=np.arange(len(T)) * 0.02 if t is None else t, T_base_tcp=T)


def _matrices(n: int = 6) -> np.ndarray:
    T = np.tile(np.eye(4), (n, 1, 1))
    T[:, 0, 3] = 0.4
    return T


def _parquet(table_cols: dict[str, object]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(pa.table(table_cols), buf, compression="snappy")
    return buf.getvalue()


def _parquet_cols(rows: np.ndarray | None = None, **over: object) -> dict[str, object]:
    rows = good_rows() if rows is None else rows
    cols: dict[str, object] = {c: rows[:, k] for k, c in enumerate(HEADER.split(","))}
    cols.update(over)
    return {k: v for k, v in cols.items() if v is not None}


def _corrupt_page(data: bytes) -> bytes:
    """A Parquet file whose first data pages are overwritten (the footer stays readable)."""
    b = bytearray(data)
    for k in range(12, 200):
        b[k] = 0xFF
    return bytes(b)


def _zip_with(name: str, payload: bytes, base: bytes) -> bytes:
    """``base`` (an npz) with member ``name`` replaced by ``payload``."""
    src = zipfile.ZipFile(io.BytesIO(base))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for info in src.infolist():
            zf.writestr(info.filename, payload if info.filename == name else src.read(info))
    return out.getvalue()


def _pickled_npz() -> bytes:
    buf = io.BytesIO()
    cols = {c: good_rows()[:, k] for k, c in enumerate(HEADER.split(","))}
    cols["x"] = np.array([{"evil": 1}] * 8, dtype=object)
    np.savez(buf, allow_pickle=True, **cols)  # type: ignore[arg-type]
    return buf.getvalue()


Writer = Callable[[], "str | bytes"]
DatasetCase = tuple[str, str, Writer, "int | None", "str | None", list[str]]


def dataset_cases() -> list[DatasetCase]:
    """At least 40 corrupted episode files: CSV, NPZ and Parquet."""
    nan_rows = good_rows()
    nan_rows[3, 3] = np.nan
    back = good_rows()
    back[5, 0] = 0.01
    bad_q = good_rows()
    bad_q[2, 4] = 2.0
    zero_q = good_rows()
    zero_q[4, 4:] = 0.0
    text_cols = good_rows()
    T_nonrigid = _matrices()
    T_nonrigid[2, 0, 0] = 3.0
    T_inf = _matrices()
    T_inf[4, 1, 3] = np.inf
    good_csv = csv_text()
    cases: list[DatasetCase] = [
        # --- CSV
        (
            "csv_extra_field",
            "e.csv",
            lambda: _edit_cell(4, 7, "0.0,9"),
            4,
            None,
            ["row 4", "9 fields", "8"],
        ),
        (
            "csv_missing_field",
            "e.csv",
            lambda: (
                "\n".join(
                    ln if i != 3 else ln.rsplit(",", 1)[0] for i, ln in enumerate(_lines(good_csv))
                )
                + "\n"
            ),
            2,
            None,
            ["row 2", "7 fields"],
        ),
        (
            "csv_truncated_number",
            "e.csv",
            lambda: good_csv.rstrip("\n")[:-7],
            7,
            None,
            ["row 7", "truncated"],
        ),
        (
            "csv_truncated_mid_row",
            "e.csv",
            lambda: good_csv[: good_csv.rindex(",")],
            7,
            None,
            ["row 7", "fields"],
        ),
        ("csv_binary", "e.csv", lambda: bytes(range(256)) * 8, None, None, ["binary"]),
        ("csv_utf16", "e.csv", lambda: good_csv.encode("utf-16"), None, None, ["binary"]),
        (
            "csv_latin1_byte",
            "e.csv",
            lambda: (good_csv + "# caf\xe9\n").encode("latin-1"),
            None,
            None,
            ["line 10", "UTF-8"],
        ),
        (
            "csv_gzip",
            "e.csv",
            lambda: __import__("gzip").compress(good_csv.encode()),
            None,
            None,
            ["e.csv"],
        ),
        ("csv_empty", "e.csv", lambda: "", None, None, ["empty"]),
        ("csv_header_only", "e.csv", lambda: HEADER + "\n", None, None, ["no data rows"]),
        (
            "csv_missing_column",
            "e.csv",
            lambda: csv_text(good_rows()[:, :7], HEADER.rsplit(",", 1)[0]),
            None,
            "qz",
            ["'qz'"],
        ),
        (
            "csv_semicolons",
            "e.csv",
            lambda: good_csv.replace(",", ";"),
            None,
            "timestamp",
            ["missing"],
        ),
        ("csv_text_cell", "e.csv", lambda: _edit_cell(4, 1, "abc"), 4, "x", ["'abc'"]),
        ("csv_empty_cell", "e.csv", lambda: _edit_cell(6, 5, ""), 6, "qx", ["''"]),
        ("csv_quoted_text", "e.csv", lambda: _edit_cell(2, 2, '"twelve"'), 2, "y", ["'twelve'"]),
        ("csv_nan", "e.csv", lambda: _edit_cell(2, 2, "nan"), 2, "y", ["finite"]),
        ("csv_inf", "e.csv", lambda: _edit_cell(3, 3, "inf"), 3, "z", ["finite"]),
        ("csv_overflow", "e.csv", lambda: _edit_cell(1, 1, "1e400"), 1, "x", ["finite"]),
        ("csv_time_nan", "e.csv", lambda: _edit_cell(5, 0, "nan"), 5, "timestamp", ["finite"]),
        ("csv_time_backwards", "e.csv", lambda: csv_text(back), 5, "timestamp", ["earlier"]),
        ("csv_quaternion_not_unit", "e.csv", lambda: csv_text(bad_q), 2, "qw", ["norm"]),
        ("csv_quaternion_zero", "e.csv", lambda: csv_text(zero_q), 4, "qw", ["norm"]),
        (
            "csv_repeated_header",
            "e.csv",
            lambda: good_csv + HEADER + "\n",
            8,
            "timestamp",
            ["'timestamp'"],
        ),
        (
            "csv_header_extra_column",
            "e.csv",
            lambda: good_csv.replace(HEADER, HEADER + ",w"),
            0,
            None,
            ["8 fields", "9"],
        ),
        ("csv_hex_float", "e.csv", lambda: _edit_cell(0, 3, "0x1p-2"), 0, "z", ["'0x1p-2'"]),
        # --- NPZ
        ("npz_text_array", "e.npz", lambda: _npz_cols(x=np.array(["a"] * 8)), None, "x", ["text"]),
        (
            "npz_numeric_text",
            "e.npz",
            lambda: _npz_cols(y=text_cols[:, 2].astype(str)),
            None,
            "y",
            ["text"],
        ),
        (
            "npz_bytes_array",
            "e.npz",
            lambda: _npz_cols(z=np.array([b"1"] * 8)),
            None,
            "z",
            ["bytes"],
        ),
        (
            "npz_complex",
            "e.npz",
            lambda: _npz_cols(x=good_rows()[:, 1] + 1j),
            None,
            "x",
            ["complex"],
        ),
        ("npz_pickle", "e.npz", _pickled_npz, None, "x", ["pickle"]),
        (
            "npz_not_zip",
            "e.npz",
            lambda: b"PK\x03\x04" + bytes(range(200)),
            None,
            None,
            ["not a readable NPZ"],
        ),
        ("npz_random", "e.npz", lambda: bytes(range(256)) * 3, None, None, ["not a readable NPZ"]),
        ("npz_truncated", "e.npz", lambda: _npz_cols()[:300], None, None, ["not a readable NPZ"]),
        (
            "npz_member_garbage",
            "e.npz",
            lambda: _zip_with("x.npy", b"\x93NUMPY garbage", _npz_cols()),
            None,
            "x",
            [".npy"],
        ),
        (
            "npz_member_short",
            "e.npz",
            lambda: _zip_with("x.npy", _npy_of(good_rows()[:, 1])[:-16], _npz_cols()),
            None,
            "x",
            [".npy"],
        ),
        ("npz_missing_key", "e.npz", lambda: _npz_cols(qz=None), None, "qz", ["'qz'"]),
        (
            "npz_ragged",
            "e.npz",
            lambda: _npz_cols(y=good_rows()[:5, 2]),
            None,
            None,
            ["different lengths"],
        ),
        ("npz_nan", "e.npz", lambda: _npz_cols(nan_rows), 3, "z", ["finite"]),
        ("npz_backwards", "e.npz", lambda: _npz_cols(back), 5, "timestamp", ["earlier"]),
        ("npz_empty", "e.npz", lambda: _npz_cols(good_rows()[:0]), None, None, ["no data rows"]),
        (
            "npz_matrix_shape",
            "e.npz",
            lambda: _npz_matrices(np.zeros((6, 3, 4))),
            None,
            "T_base_tcp",
            ["shape"],
        ),
        (
            "npz_matrix_not_rigid",
            "e.npz",
            lambda: _npz_matrices(T_nonrigid),
            2,
            "T_base_tcp",
            ["T_base_tcp"],
        ),
        ("npz_matrix_inf", "e.npz", lambda: _npz_matrices(T_inf), 4, "T_base_tcp", ["finite"]),
        (
            "npz_matrix_text_time",
            "e.npz",
            lambda: _npz_matrices(_matrices(), np.array(["0"] * 6)),
            None,
            "timestamp",
            ["text"],
        ),
        # --- Parquet
        (
            "parquet_corrupt_page",
            "e.parquet",
            lambda: _corrupt_page(_parquet(_parquet_cols())),
            None,
            None,
            ["e.parquet"],
        ),
        (
            "parquet_truncated",
            "e.parquet",
            lambda: _parquet(_parquet_cols())[:-40],
            None,
            None,
            ["not a readable Parquet"],
        ),
        (
            "parquet_random",
            "e.parquet",
            lambda: bytes(range(256)) * 3,
            None,
            None,
            ["not a readable Parquet"],
        ),
        (
            "parquet_csv_inside",
            "e.parquet",
            lambda: good_csv,
            None,
            None,
            ["not a readable Parquet"],
        ),
        (
            "parquet_bad_footer",
            "e.parquet",
            lambda: _parquet(_parquet_cols())[:-4] + b"XXXX",
            None,
            None,
            ["not a readable Parquet"],
        ),
        (
            "parquet_missing_column",
            "e.parquet",
            lambda: _parquet(_parquet_cols(qy=None)),
            None,
            "qy",
            ["'qy'"],
        ),
        (
            "parquet_text_column",
            "e.parquet",
            lambda: _parquet(_parquet_cols(x=["a"] * 8)),
            None,
            "x",
            ["type"],
        ),
        (
            "parquet_null",
            "e.parquet",
            lambda: _parquet(_parquet_cols(y=[0.1, 0.1, 0.1, 0.1, None, 0.1, 0.1, 0.1])),
            4,
            "y",
            ["null"],
        ),
        ("parquet_nan", "e.parquet", lambda: _parquet(_parquet_cols(nan_rows)), 3, "z", ["finite"]),
        (
            "parquet_backwards",
            "e.parquet",
            lambda: _parquet(_parquet_cols(back)),
            5,
            "timestamp",
            ["earlier"],
        ),
        (
            "parquet_empty",
            "e.parquet",
            lambda: _parquet(_parquet_cols(good_rows()[:0])),
            None,
            None,
            ["no data rows"],
        ),
        (
            "parquet_quaternion",
            "e.parquet",
            lambda: _parquet(_parquet_cols(bad_q)),
            2,
            "qw",
            ["norm"],
        ),
    ]
    return cases


def _npy_of(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


#: inputs that look odd but are valid and must load (with the rows they hold)
ACCEPTED_CSV: list[tuple[str, Callable[[], bytes], int]] = [
    ("bom", lambda: b"\xef\xbb\xbf" + csv_text().encode(), 8),
    ("crlf", lambda: csv_text().replace("\n", "\r\n").encode(), 8),
    ("no_final_newline", lambda: csv_text().rstrip("\n").encode(), 8),
    (
        "extra_column",
        lambda: csv_text(np.column_stack([good_rows(), np.ones(8)]), HEADER + ",gripper").encode(),
        8,
    ),
    ("blank_line_at_end", lambda: (csv_text() + "\n").encode(), 8),
]
