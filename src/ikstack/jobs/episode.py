"""Episodes of timestamped TCP poses, their solved joint trajectories, and the dataset schema.

Input schema (one episode per file; CSV, NPZ or Parquet):

========== ====== ===============================================================
column     unit   meaning
========== ====== ===============================================================
timestamp  s      sample time; never decreasing within an episode
x, y, z    m      TCP position in the chain's base frame
qw qx qy qz  -    TCP orientation, unit quaternion (w, x, y, z), base frame
========== ====== ===============================================================

Extra columns are ignored. An NPZ episode may instead hold ``timestamp`` and
``T_base_tcp`` (T, 4, 4) homogeneous transforms.

Output schema (same format as the input, one file per episode):

================== ====== ========================================================
column             unit   meaning
================== ====== ========================================================
timestamp          s      copied from the input
q_<joint name>     rad/m  one column per joint, base to tip
success            -      1 where the joint vector passed the FK certification
position_error     m      FK position error of the joint vector against the target
rotation_error     rad    FK geodesic rotation error against the target
status             -      :class:`ikstack.ik.IKStatus` code (0 = success)
================== ====== ========================================================

In NPZ outputs the joint columns are one ``q`` (T, dof) array beside ``joint_names``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ikstack.errors import DatasetError as DatasetError  # its old home

Array = NDArray[np.float64]

#: input columns, in order
TIME_COLUMN = "timestamp"
POSITION_COLUMNS = ("x", "y", "z")
QUATERNION_COLUMNS = ("qw", "qx", "qy", "qz")
POSE_COLUMNS = (TIME_COLUMN, *POSITION_COLUMNS, *QUATERNION_COLUMNS)
#: NPZ key of the optional (T, 4, 4) form
MATRIX_KEY = "T_base_tcp"
#: output columns after the joint columns
RESULT_COLUMNS = ("success", "position_error", "rotation_error", "status")
#: a quaternion is accepted when its norm is within this of 1 (then normalized)
QUATERNION_NORM_TOL = 1e-3


@dataclass(frozen=True)
class Episode:
    """One episode: ``timestamps`` (T,) [s] and TCP targets ``T_base_tcp`` (T, 4, 4)."""

    name: str
    timestamps: Array
    T_base_tcp: Array

    def __len__(self) -> int:
        return int(self.timestamps.shape[0])


@dataclass(frozen=True)
class SolvedEpisode:
    """A solved episode, as written to and read from output files.

    Attributes:
        timestamps: (T,) [s].
        joint_names: (dof,) base to tip.
        q: (T, dof) joint positions [rad or m]; finite everywhere.
        success: (T,) certified success per frame.
        position_error: (T,) [m]; rotation_error: (T,) [rad].
        status: (T,) :class:`ikstack.ik.IKStatus` codes.

    :attr:`message` is one line (frames certified, and the commonest failure).
    """

    timestamps: Array
    joint_names: tuple[str, ...]
    q: Array
    success: NDArray[np.bool_]
    position_error: Array
    rotation_error: Array
    status: NDArray[np.int64]

    def __len__(self) -> int:
        return int(self.timestamps.shape[0])

    @property
    def message(self) -> str:
        """``"n/T frames certified"``, with the commonest failure's reason when any failed."""
        from ikstack.ik.result import IKStatus

        n, ok = len(self), int(np.count_nonzero(self.success))
        text = f"{ok}/{n} frames certified"
        failed = np.asarray(self.status)[~np.asarray(self.success, dtype=bool)]
        if failed.size:
            codes, counts = np.unique(failed, return_counts=True)
            worst = IKStatus(int(codes[np.argmax(counts)]))
            text += f"; most failures: {worst.reason}"
        return text

    def columns(self) -> list[str]:
        """Flat column names of the CSV/Parquet form."""
        return [TIME_COLUMN, *joint_columns(self.joint_names), *RESULT_COLUMNS]


def joint_columns(joint_names: tuple[str, ...] | list[str]) -> list[str]:
    """Output column names of the joints: ``q_<name>``."""
    return [f"q_{n}" for n in joint_names]


def check_timestamps(path: object, t: Array) -> None:
    """Raise :class:`DatasetError` at the first non-finite or backwards timestamp."""
    bad = ~np.isfinite(t)
    if bad.any():
        r = int(np.argmax(bad))
        raise DatasetError(
            path, f"timestamp is {t[r]!r}; timestamps must be finite [s]", r, TIME_COLUMN
        )
    back = np.diff(t) < 0
    if back.any():
        r = int(np.argmax(back)) + 1
        raise DatasetError(
            path,
            f"timestamp {t[r]!r} s is earlier than the previous row's {t[r - 1]!r} s; "
            "timestamps must not go backwards",
            r,
            TIME_COLUMN,
        )


def check_finite_columns(path: object, values: Array, names: tuple[str, ...]) -> None:
    """Raise :class:`DatasetError` at the first non-finite entry of ``values`` (T, len(names))."""
    bad = ~np.isfinite(values)
    if bad.any():
        r, c = (int(i) for i in np.argwhere(bad)[0])
        raise DatasetError(path, f"value is {values[r, c]!r}; poses must be finite", r, names[c])
