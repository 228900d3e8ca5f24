"""Runs ikstack's chunk decoder and the independent reference (``diffik_reference``) side by side
on the same two-arm chunks and compares verdicts and every substep's joints.

Used by ``tests/chunk/test_diffik_parity.py`` (a small sweep) and
``benchmarks/parity_diffik.py`` (the full sweep).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import diffik_reference as ref
import numpy as np

from ikstack.chunk import ArmSpec, ChunkDecoder, ChunkRequest
from ikstack.diffik import DiffQPConfig
from ikstack.robots import load

INTERVAL_S = 1.0 / 30.0
#: ikstack's reasons under the reference's names (the J6/J7 row is ikstack's coupled joint)
REASON_NAMES = {"coupled_joint": "j67_interference", "qp_failed": "nonfinite"}


@dataclass
class ChunkComparison:
    kind: str
    policy: str
    verdicts_agree: bool
    ikstack: dict[str, tuple[str, int, int]]
    reference: dict[str, tuple[str, int, int]]
    max_joint_diff_deg: float
    substeps_compared: int
    max_lag_mm_diff: float
    max_target_diff: float
    exceedances: dict[str, tuple[int, int]]
    j67_binding: bool
    seconds_ikstack: float
    seconds_reference: float


class Side:
    """ikstack's decoder with a recorder on every QP substep, next to the reference."""

    def __init__(
        self, policy: str, ik_kw: dict[str, Any] | None = None, ref_kw: dict[str, Any] | None = None
    ):
        self.arms = {s: load(f"marvin_{s}_taccap") for s in ("left", "right")}
        cfg = DiffQPConfig(lag_policy=policy, **(ik_kw or {}))
        self.decoder = ChunkDecoder(
            [ArmSpec(s, c, "diff", cfg) for s, c in self.arms.items()], INTERVAL_S
        )
        self.records: dict[str, list[np.ndarray]] = {s: [] for s in self.arms}
        self.targets: dict[str, list[np.ndarray]] = {s: [] for s in self.arms}
        for s, dec in self.decoder.decoders.items():
            real = dec.qp.step_trusted

            def spy(q, T, dt, _real=real, _rec=self.records[s], _tg=self.targets[s]):
                r = _real(q, T, dt)
                _tg.append(T.copy())
                if r.success:
                    _rec.append(r.q.copy())
                return r

            dec.qp.step_trusted = spy  # type: ignore[method-assign]
        self.ref = {
            s: ref.RefDiffIK(s, ref.RefConfig(lag_policy=policy, **(ref_kw or {})))
            for s in self.arms
        }
        self.policy = policy

    def compare(
        self, kind: str, chunk: dict[str, tuple[np.ndarray, np.ndarray]]
    ) -> ChunkComparison:
        for r in (*self.records.values(), *self.targets.values()):
            r.clear()
        req = ChunkRequest(
            {s: T for s, (_, T) in chunk.items()}, {s: q for s, (q, _) in chunk.items()}
        )
        t0 = time.perf_counter()
        out = self.decoder.decode(req)
        t1 = time.perf_counter()
        refs = {s: ref.decode_arm(self.ref[s], q, T, INTERVAL_S) for s, (q, T) in chunk.items()}
        t2 = time.perf_counter()
        ik_v, ref_v, exc = {}, {}, {}
        fails = {f.arm: f for f in out.failures}
        worst_dq, n_sub, worst_lag, worst_tg, binding = 0.0, 0, 0.0, 0.0, False
        for s in chunk:
            f = fails.get(s)
            ik_v[s] = (
                ("ok", -1, -1)
                if f is None
                else (REASON_NAMES.get(f.status, f.status), f.knot, f.substep)
            )
            r = refs[s]
            ref_v[s] = (r.reason, r.knot, r.substep)
            mine = self.records[s]
            n = min(len(mine), len(r.substeps))
            if n:
                d = np.degrees(np.abs(np.array(mine[:n]) - np.array(r.substeps[:n])))
                worst_dq = max(worst_dq, float(d.max()))
            if len(mine) != len(r.substeps):
                worst_dq = math.inf
            tg = self.targets[s]
            m = min(len(tg), len(r.targets))
            if m:
                worst_tg = max(
                    worst_tg, float(np.abs(np.array(tg[:m]) - np.array(r.targets[:m])).max())
                )
            binding |= r.max_j67_gap_deg > -self.ref[s].j67_margin - 0.05
            n_sub += n
            lag = out.metadata["diff_ik_lag"][s]
            exc[s] = (lag["exceedances"], r.exceedances)
            if r.ok and f is None:
                worst_lag = max(worst_lag, abs(lag["worst_position_mm"] - r.worst_lag_mm))
        agree = ik_v == ref_v and all(a == b for a, b in exc.values())
        return ChunkComparison(
            kind,
            self.policy,
            agree,
            ik_v,
            ref_v,
            worst_dq,
            n_sub,
            worst_lag,
            worst_tg,
            exc,
            binding,
            t1 - t0,
            t2 - t1,
        )
