"""Result objects print as one-line summaries, not as every array."""

from __future__ import annotations

import numpy as np

from ikstack.chunk.types import ArmDecodeResult, DecodedChunk
from ikstack.diffik.solver import DiffIKResult
from ikstack.ik import IKResult, IKStatus
from ikstack.servo import Action, ServoResult, ServoStatus
from ikstack.servo.commands import Reference
from ikstack.servo.demo import ServoTrace


def test_ikresult_repr_counts_share_method_worst_errors_and_failures():
    n = 1000
    ok = np.ones(n, dtype=bool)
    ok[[3, 7]] = False
    status = np.where(ok, int(IKStatus.SUCCESS), int(IKStatus.UNREACHABLE))
    perr = np.full(n, 1e-12)
    perr[5] = 3e-9
    perr[3] = 0.4  # a failure's error is not the worst of the successes
    r = IKResult(np.zeros((n, 6)), ok, perr, np.full(n, 2e-12), status, "analytic:three_parallel")
    text = repr(r)
    assert text == (
        "IKResult(1000 targets; 998 solved (99.8%); method 'analytic:three_parallel'; "
        "worst error 3.0e-09 m, 2.0e-12 rad; failed: 2 unreachable)"
    )
    assert len(text) < 200  # not the arrays


def test_other_results_are_one_line():
    ref = Reference(np.zeros(7), np.zeros(7))
    servo = ServoResult(Action.HOLD, ref, ServoStatus.GOAL_REACHED, position_error=2e-4)
    assert repr(servo).startswith(
        "ServoResult(HOLD, status GOAL_REACHED, 'ok', position error 2.0e-04"
    )
    assert repr(DiffIKResult(np.array([0.1, -0.5]))) == (
        "DiffIKResult(ok, 'ok', max |dq| 0.5, 0 iterations)"
    )
    arm = ArmDecodeResult("left", False, np.zeros((16, 7)), 4, 1, "joint_limit", "j3 at its limit")
    assert repr(arm) == (
        "ArmDecodeResult('left', joint_limit, 16 knots at knot 4 (substep 1): j3 at its limit)"
    )
    chunk = DecodedChunk(True, np.arange(16) * 0.02, {"left": np.zeros((16, 7))}, None, (), {})
    assert repr(chunk) == "DecodedChunk(accepted; 16 knots; arms left; chunk_id 0)"
    z = np.zeros(3)
    trace = ServoTrace(
        np.array([0.0, 0.01, 0.02]),
        np.zeros((3, 2)),
        np.zeros((3, 2)),
        z,
        z,
        np.array([0, 0, 1]),
        np.zeros(3, dtype=np.int64),
        z,
        ("ok",),
    )
    assert repr(trace).startswith("ServoTrace(3 cycles over 0.02 s; final HOLD;")
    for obj in (servo, arm, chunk, trace):
        assert "\n" not in repr(obj)
