"""Requests and results of action-chunk decoding."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ikstack._deprecated import renamed_attribute
from ikstack.errors import InputError
from ikstack.vocabulary import DecodeMethod as DecodeMethod  # re-exported: it lives there
from ikstack.vocabulary import StrEnum

Array = NDArray[np.float64]

#: timestamps closer than this are the same instant [s] (round-off of t0 + k * interval)
TIME_TOL_S = 1e-9


@dataclass(frozen=True)
class ChunkRequest:
    """One chunk of Cartesian TCP targets for several arms.

    Attributes:
        T_base_tcp: per arm name, (H, 4, 4) TCP targets in the arm's base frame, one per
            action knot (the same H for every arm).
        q_observed: per arm name, (dof,) the measured joint state [rad] that seeds the decode.
        t0: the observation time [s]; knot ``k`` is stamped ``t0 + (k + 1) * action_interval_s``.
        chunk_id: a caller's label, echoed in the result.
    """

    T_base_tcp: Mapping[str, Array]
    q_observed: Mapping[str, Array]
    t0: float = 0.0
    chunk_id: int = 0

    def horizon(self) -> int:
        """H, the number of knots (checked equal across arms)."""
        hs = {
            name: int(np.shape(T)[0]) if np.ndim(T) == 3 else -1
            for name, T in self.T_base_tcp.items()
        }
        if not hs:
            raise InputError("a chunk request needs at least one arm")
        if len(set(hs.values())) != 1 or -1 in hs.values():
            raise InputError(f"every arm needs (H, 4, 4) targets with the same H; got {hs}")
        if set(self.q_observed) != set(self.T_base_tcp):
            raise InputError(
                f"q_observed has arms {sorted(self.q_observed)} but targets have "
                f"{sorted(self.T_base_tcp)}"
            )
        if not math.isfinite(self.t0):
            raise InputError(f"t0 must be finite; got {self.t0}")
        return next(iter(hs.values()))


@dataclass(frozen=True)
class LagStats:
    """Lag-guard figures of one arm over a chunk (``diff_ik_lag`` in the chunk metadata).

    Attributes:
        worst_position_mm: largest flange position residual after an accepted substep [mm].
        worst_euler_deg: largest wrapped extrinsic-xyz Euler residual after an accepted
            substep [deg] (reported whether or not ``max_lag_deg`` guards it).
        exceedances: accepted substeps whose residual exceeded a guard (``report`` policy).
        steps: substeps solved (the failing one included).
    """

    worst_position_mm: float = 0.0
    worst_euler_deg: float = math.nan
    exceedances: int = 0
    steps: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready values."""
        return {
            "worst_position_mm": self.worst_position_mm,
            "worst_euler_deg": None if math.isnan(self.worst_euler_deg) else self.worst_euler_deg,
            "exceedances": self.exceedances,
            "steps": self.steps,
        }


class DecodeStatus(StrEnum):
    """Why an arm's decode succeeded or failed (a ``str``: ``DecodeStatus.OK == "ok"``)."""

    OK = "ok"
    QP_INFEASIBLE = "qp_infeasible"  #: an empty velocity box, or the QP solver did not solve it
    QP_FAILED = "qp_failed"  #: the QP solver returned a non-finite solution
    JOINT_LIMIT = "joint_limit"  #: the step (or every IK solution) left the adjusted limits
    COUPLED_JOINT = "coupled_joint"  #: a coupled-joint constraint is violated
    TRACKING_LAG = "tracking_lag"  #: residual over the lag guard (abort policy)
    IK_FAILED = "ik_failed"  #: no analytic solution met the FK tolerances
    BRANCH_JUMP = "branch_jump"  #: every valid solution jumps more than the branch check


@dataclass(frozen=True)
class ArmDecodeResult:
    """One arm's decode of a chunk.

    Attributes:
        arm: the arm's name.
        success: every knot decoded (``ok``, its former name, warns).
        q: (H, dof) joint knots [rad] (rows after a failure repeat the last good knot; never
            used when ``success`` is False).
        failed_knot, failed_substep: where it failed (-1 on success).
        status: :class:`DecodeStatus`, ``ok`` or the failure's reason (``joint_limit``,
            ``coupled_joint``, ``tracking_lag``, ``qp_failed``, ``ik_failed``, ``branch_jump``);
            a plain string given here is read as one (``reason``, its former name, warns).
        message: a readable explanation.
        lag: lag-guard figures (``diff`` method).
    """

    arm: str
    success: bool
    q: Array
    failed_knot: int = -1
    failed_substep: int = -1
    status: DecodeStatus = DecodeStatus.OK
    message: str = "ok"
    lag: LagStats = field(default_factory=LagStats)

    def __post_init__(self) -> None:
        if not isinstance(self.status, DecodeStatus):
            object.__setattr__(self, "status", DecodeStatus(self.status))

    ok = renamed_attribute("ok", "success")
    reason = renamed_attribute("reason", "status")

    def __repr__(self) -> str:
        """A one-line summary (``q`` is an attribute)."""
        where = (
            ""
            if self.success
            else (f" at knot {self.failed_knot} (substep {self.failed_substep}): {self.message}")
        )
        return (
            f"ArmDecodeResult({self.arm!r}, {'ok' if self.success else self.status}, "
            f"{len(self.q)} knots{where})"
        )


@dataclass(frozen=True)
class ChunkRejection:
    """Why a whole chunk was rejected: the first failing arm (in arm order), knot, substep
    (-1: none), ``status`` (a :class:`DecodeStatus`; ``reason``, its former name, warns) and
    ``message``."""

    arm: str
    knot: int
    substep: int
    status: DecodeStatus
    message: str

    reason = renamed_attribute("reason", "status")

    def __str__(self) -> str:
        return (
            f"chunk rejected: arm {self.arm!r}, knot {self.knot}"
            + (f" (substep {self.substep})" if self.substep >= 0 else "")
            + f": {self.status} ({self.message})"
        )


@dataclass(frozen=True)
class DecodedChunk:
    """A whole chunk, accepted or rejected as one.

    Attributes:
        success: every arm decoded every knot (``ok``, its former name, warns).
        times: (H,) knot timestamps [s].
        q: per arm, (H, dof) joint knots [rad]; empty when rejected (nothing partial escapes).
        rejection: the first failure when rejected, else None.
        failures: every arm's failure (an arm may fail while another succeeds).
        metadata: per-chunk figures (``ik_method`` and ``diff_ik_lag`` per arm, the interval,
            the horizon; ``ik_backend`` repeats ``ik_method`` under its former key for one
            release).
        chunk_id: echoed from the request.
    """

    success: bool
    times: Array
    q: dict[str, Array]
    rejection: ChunkRejection | None
    failures: tuple[ChunkRejection, ...]
    metadata: dict[str, Any]
    chunk_id: int = 0

    ok = renamed_attribute("ok", "success")

    @property
    def status(self) -> DecodeStatus:
        """``ok``, or the first failing arm's :class:`DecodeStatus`."""
        return DecodeStatus.OK if self.rejection is None else DecodeStatus(self.rejection.status)

    @property
    def message(self) -> str:
        """``"accepted"``, or why the chunk was rejected (one line)."""
        return "accepted" if self.success else str(self.rejection)

    def __repr__(self) -> str:
        """A one-line summary (the knots are attributes)."""
        arms = ", ".join(self.q) or "no arms"
        state = "accepted" if self.success else f"REJECTED ({self.rejection})"
        return (
            f"DecodedChunk({state}; {len(self.times)} knots; arms {arms}; chunk_id {self.chunk_id})"
        )


@dataclass(frozen=True)
class TimelineSegment:
    """Rows of a decoded chunk committed for execution from ``start_s`` on.

    Attributes:
        times: (K,) timestamps at or after the start [s].
        q: per arm, (K, dof) joint knots [rad].
        first_row: index of the first kept row in the decoded chunk.
    """

    times: Array
    q: dict[str, Array]
    first_row: int


def commit_to_timeline(chunk: DecodedChunk, start_s: float) -> TimelineSegment:
    """Commit a decoded chunk at execution time ``start_s`` [s].

    Rows that have expired (timestamp before ``start_s``) are dropped; the segment starts at the
    first row at or after ``start_s``. A rejected chunk commits nothing.

    Raises:
        InputError: ``start_s`` is not finite, or the chunk was rejected.
    """
    if not math.isfinite(start_s):
        raise InputError(f"start_s must be finite; got {start_s}")
    if not chunk.success:
        raise InputError(f"a rejected chunk cannot be committed ({chunk.rejection})")
    first = int(np.searchsorted(chunk.times, start_s - TIME_TOL_S, side="left"))
    return TimelineSegment(
        chunk.times[first:].copy(), {arm: q[first:].copy() for arm, q in chunk.q.items()}, first
    )
