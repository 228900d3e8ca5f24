"""The results' fast constructors build the same objects as their dataclass constructors.

``IKResult._trusted`` and ``ServoResult._trusted`` skip the dataclass ``__init__`` on the
solvers' hot paths; each names every field by hand, so these tests keep the lists equal to
the dataclasses' fields (a field added to a result and forgotten in its fast constructor
fails here).
"""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np

from ikstack.ik import IKResult, IKStatus
from ikstack.servo import Action, ServoResult, ServoStatus
from ikstack.servo.commands import Reference


def _params(fn: object) -> list[str]:
    return [p for p in inspect.signature(fn).parameters if p != "cls"]  # type: ignore[arg-type]


def test_ikresult_trusted_covers_every_field_and_equals_the_constructor():
    names = [f.name for f in dataclasses.fields(IKResult)]
    assert _params(IKResult._trusted) == names
    rng = np.random.default_rng(0)
    values = dict(
        q=rng.normal(size=(3, 6)),
        success=np.array([True, False, True]),
        position_error=rng.random(3),
        rotation_error=rng.random(3),
        status=np.array([0, int(IKStatus.UNREACHABLE), 0]),
        method="analytic:x",
        iterations=np.zeros(3, np.int64),
        restarts=np.ones(3, np.int64),
        q_all=rng.normal(size=(3, 8, 6)),
        valid_all=rng.random((3, 8)) > 0.5,
    )
    fast = IKResult._trusted(**values)
    slow = IKResult(**values)
    assert type(fast) is IKResult
    assert vars(fast).keys() == vars(slow).keys()
    for name in names:  # the very objects, not copies
        assert getattr(fast, name) is getattr(slow, name) is values[name]
    with np.testing.assert_raises(dataclasses.FrozenInstanceError):
        fast.method = "changed"  # type: ignore[misc]


def test_ikresult_reshaped_keeps_every_field():
    n = 6
    r = IKResult(
        q=np.arange(n * 2.0).reshape(n, 2),
        success=np.ones(n, bool),
        position_error=np.zeros(n),
        rotation_error=np.zeros(n),
        status=np.zeros(n, np.int64),
        method="m",
        iterations=np.arange(n),
        restarts=np.zeros(0, np.int64),
        q_all=np.zeros((n, 4, 2)),
        valid_all=np.ones((n, 4), bool),
    )
    s = r.reshaped((2, 3))
    assert s.q.shape == (2, 3, 2) and s.success.shape == (2, 3)
    assert s.iterations.shape == (2, 3) and s.restarts.shape == (0,)
    assert s.q_all.shape == (2, 3, 4, 2) and s.valid_all.shape == (2, 3, 4)
    assert s.method == "m"


def test_ikresult_concat_joins_every_field_in_order_under_the_given_method():
    rng = np.random.default_rng(0)

    def piece(n, every):
        return IKResult(
            q=rng.normal(size=(n, 2)),
            success=rng.random(n) < 0.5,
            position_error=rng.random(n),
            rotation_error=rng.random(n),
            status=rng.integers(0, 4, n),
            method="analytic:x",
            iterations=rng.integers(0, 9, n),
            restarts=rng.integers(0, 9, n),
            q_all=rng.normal(size=(n, 3, 2)) if every else None,
            valid_all=(rng.random((n, 3)) < 0.5) if every else None,
        )

    for every in (False, True):
        parts = [piece(3, every), piece(0, every), piece(2, every)]
        r = IKResult.concat(parts, "warp:analytic:x")
        assert r.method == "warp:analytic:x" and len(r) == 5
        for name in ("q", "success", "position_error", "rotation_error", "status"):
            want = np.vstack if name == "q" else np.hstack
            np.testing.assert_array_equal(getattr(r, name), want([getattr(p, name) for p in parts]))
        np.testing.assert_array_equal(r.iterations, [*parts[0].iterations, *parts[2].iterations])
        np.testing.assert_array_equal(r.restarts, [*parts[0].restarts, *parts[2].restarts])
        if every:
            np.testing.assert_array_equal(r.q_all, np.vstack([p.q_all for p in parts]))
            np.testing.assert_array_equal(r.valid_all, np.vstack([p.valid_all for p in parts]))
        else:
            assert r.q_all is None and r.valid_all is None
    one = piece(2, True)
    assert IKResult.concat([one], "analytic:x") is one
    relabelled = IKResult.concat([one], "warp:analytic:x")
    assert relabelled.method == "warp:analytic:x"
    np.testing.assert_array_equal(relabelled.q_all, one.q_all)


def test_servo_result_trusted_covers_every_field_and_equals_the_constructor():
    fields = [f.name for f in dataclasses.fields(ServoResult)]
    expected = fields[:1] + [f.name for f in dataclasses.fields(Reference)] + fields[2:]
    assert _params(ServoResult._trusted) == expected
    q, dq = np.arange(7.0), np.ones(7)
    args = (
        Action.HOLD,
        q,
        dq,
        ServoStatus.STALE_COMMAND | ServoStatus.JERK_RELAXED,
        "why",
        0.1,
        0.2,
        3.0,
        0.4,
        0.5,
        6,
    )
    fast = ServoResult._trusted(*args)
    slow = ServoResult(args[0], Reference(q, dq), *args[3:])
    assert type(fast) is ServoResult and type(fast.reference) is Reference
    assert fast == slow
    assert fast.reference.q is q and fast.reference.dq is dq
