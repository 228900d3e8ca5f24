"""Whole-chunk decoding for several arms, in the calling process, with atomic accept/reject."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ikstack._deprecated import renamed_attribute
from ikstack.chunk.arm_decoder import (
    DEFAULT_IK_VALIDATION_DT_S,
    AnalyticDecodeConfig,
    ArmDecodeConfig,
    ArmDecoder,
)
from ikstack.chunk.types import (
    ArmDecodeResult,
    ChunkRejection,
    ChunkRequest,
    DecodedChunk,
    DecodeMethod,
)
from ikstack.diffik.qp_config import DiffQPConfig
from ikstack.errors import ConfigError, InputError
from ikstack.model import Chain

Array = NDArray[np.float64]


@dataclass(frozen=True)
class ArmSpec:
    """A picklable recipe for one arm's decoder (what a worker process builds).

    Attributes:
        name: the arm's name.
        chain: the arm with its mounted tool as TCP.
        method: :class:`DecodeMethod`: ``"analytic"`` (default, as in the published port) or
            ``"diff"`` (``backend``, its former name, warns when read).
        diff_config: QP tuning of the diff method.
        analytic: settings of the analytic method.
        ik_validation_dt_s: the diff method's longest substep [s].
    """

    name: str
    chain: Chain
    method: str = DecodeMethod.ANALYTIC
    diff_config: DiffQPConfig = field(default_factory=DiffQPConfig)
    analytic: AnalyticDecodeConfig = field(default_factory=AnalyticDecodeConfig)
    ik_validation_dt_s: float = DEFAULT_IK_VALIDATION_DT_S

    backend = renamed_attribute("backend", "method")

    @property
    def config(self) -> ArmDecodeConfig:
        """The decoder's settings as one :class:`ArmDecodeConfig` (checked)."""
        return ArmDecodeConfig(
            self.method, self.analytic, self.diff_config, self.ik_validation_dt_s
        )

    def build(self) -> ArmDecoder:
        """The arm's decoder."""
        return ArmDecoder(self.name, self.chain, self.config)


def check_arm_names(arms: Sequence[ArmSpec]) -> tuple[str, ...]:
    """The arms' names in order (ConfigError unless there is at least one and they are unique)."""
    names = tuple(a.name for a in arms)
    if not names or len(set(names)) != len(names):
        raise ConfigError(f"arm names must be unique and at least one; got {list(names)}")
    return names


def check_interval(action_interval_s: float) -> float:
    """``action_interval_s`` as a positive float [s] (ConfigError otherwise)."""
    if (
        isinstance(action_interval_s, bool)
        or not isinstance(action_interval_s, (int, float))
        or not math.isfinite(action_interval_s)
        or action_interval_s <= 0
    ):
        raise ConfigError(
            f"action_interval_s must be a positive number of seconds; got {action_interval_s!r}"
        )
    return float(action_interval_s)


def check_request(request: ChunkRequest, arm_names: Sequence[str]) -> int:
    """Validate a request against the arms; return H."""
    H = request.horizon()
    if set(request.T_base_tcp) != set(arm_names):
        raise InputError(
            f"the chunk has arms {sorted(request.T_base_tcp)}; the decoder has {sorted(arm_names)}"
        )
    return H


def merge_results(
    request: ChunkRequest,
    results: Mapping[str, ArmDecodeResult],
    arm_order: Sequence[str],
    action_interval_s: float,
    methods: Mapping[str, str],
) -> DecodedChunk:
    """Merge per-arm results atomically: any failure rejects the whole chunk. ``methods``: each
    arm's :class:`DecodeMethod` (the metadata's ``ik_method``; ``ik_backend``, its former key,
    repeats it for one release)."""
    H = request.horizon()
    times = request.t0 + action_interval_s * np.arange(1, H + 1, dtype=np.float64)
    failures = tuple(
        ChunkRejection(
            a,
            results[a].failed_knot,
            results[a].failed_substep,
            results[a].status,
            results[a].message,
        )
        for a in arm_order
        if not results[a].success
    )
    ik_method = {a: str(methods[a]) for a in arm_order}
    meta = {
        "ik_method": ik_method,
        "ik_backend": dict(ik_method),
        "diff_ik_lag": {a: results[a].lag.to_dict() for a in arm_order if methods[a] == "diff"},
        "action_interval_s": action_interval_s,
        "horizon": H,
    }
    if failures:
        return DecodedChunk(False, times, {}, failures[0], failures, meta, request.chunk_id)
    q = {a: results[a].q.copy() for a in arm_order}
    return DecodedChunk(True, times, q, None, (), meta, request.chunk_id)


class ChunkDecoder:
    """Decodes chunks for several arms one after another in the calling process.

    Use :class:`~ikstack.chunk.parallel.ParallelChunkDecoder` to decode the arms in parallel
    persistent worker processes (the results are identical).

    Args:
        arms: the arms' recipes (names must be unique).
        action_interval_s: the fixed policy action interval [s].
    """

    def __init__(self, arms: Sequence[ArmSpec], action_interval_s: float):
        self.arm_names = check_arm_names(arms)
        self.specs = tuple(arms)
        self.action_interval_s = check_interval(action_interval_s)
        self.decoders = {a.name: a.build() for a in arms}

    def decode(self, request: ChunkRequest) -> DecodedChunk:
        """Decode every arm from the request's observed state; accept or reject as one."""
        check_request(request, self.arm_names)
        results = {
            name: self.decoders[name].decode(
                request.q_observed[name], request.T_base_tcp[name], self.action_interval_s
            )
            for name in self.arm_names
        }
        return merge_results(
            request,
            results,
            self.arm_names,
            self.action_interval_s,
            {s.name: s.method for s in self.specs},
        )
