"""Deprecated: the C++-backed servo is :class:`ikstack.servo.Servo` itself.

``NativeServo`` stays one release as an alias of :class:`~ikstack.servo.Servo` and goes in
the next.
"""

from __future__ import annotations

import warnings
from typing import Any


def __getattr__(name: str) -> Any:
    if name == "NativeServo":
        warnings.warn("ikstack.servo.native.NativeServo is ikstack.servo.Servo now (the C++ "
                      "kernel is the only one); the alias goes in the next release",
                      DeprecationWarning, stacklevel=2)
        from ikstack.servo.kernel import Servo
        return Servo
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
