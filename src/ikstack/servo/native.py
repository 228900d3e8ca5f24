"""Deprecated: the C++-backed servo is :class:`ikstack.servo.Servo` itself.

``NativeServo`` stays one release as an alias of :class:`~ikstack.servo.Servo` and goes in
the next.
"""

from __future__ import annotations

from typing import Any

from ikstack._deprecated import warn_deprecated


def __getattr__(name: str) -> Any:
    if name == "NativeServo":
        warn_deprecated(
            "ikstack.servo.native.NativeServo is ikstack.servo.Servo now (the C++ "
            "kernel is the only one); the alias goes in the next release"
        )
        from ikstack.servo.kernel import Servo

        return Servo
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
