"""The servo's ``kernel`` argument and ``IKSTACK_SERVO``: "native" is the C++ kernel; "numba"
(the retired compiled-Python kernel) warns and runs the C++ kernel; anything else is refused."""

from __future__ import annotations

import numpy as np
import pytest

import ikstack.robots as robots
from ikstack.errors import IKStackDeprecationWarning, InputError
from ikstack.servo import JointState, PoseCommand, Servo, ServoConfig


def _answer(servo, chain):
    q = chain.middle()
    T = chain.fk(q)
    T[:3, 3] += [0.01, 0.0, 0.0]
    return servo.step(JointState(q, np.zeros(chain.dof), 0), PoseCommand(T, 0), 0.001, 0)


def test_native_is_the_servo_class_by_argument_or_environment(monkeypatch):
    chain = robots.load("planar2")
    cfg = ServoConfig(task_axes=(0, 1))
    monkeypatch.delenv("IKSTACK_SERVO", raising=False)
    assert type(Servo(chain, cfg)) is Servo
    assert type(Servo(chain, cfg, kernel="native")) is Servo
    monkeypatch.setenv("IKSTACK_SERVO", "native")
    s = Servo(chain, cfg)
    assert isinstance(s, Servo) and s.kernel == "native"


def test_numba_warns_and_runs_the_same_kernel(monkeypatch):
    chain = robots.load("planar2")
    cfg = ServoConfig(task_axes=(0, 1))
    monkeypatch.delenv("IKSTACK_SERVO", raising=False)
    ref = _answer(Servo(chain, cfg), chain)
    with pytest.warns(IKStackDeprecationWarning, match="kernel 'numba'.*retired"):
        s = Servo(chain, cfg, kernel="numba")
    assert type(s) is Servo
    got = _answer(s, chain)
    assert got.action == ref.action and np.array_equal(got.reference.q, ref.reference.q)
    monkeypatch.setenv("IKSTACK_SERVO", "numba")
    with pytest.warns(
        IKStackDeprecationWarning, match="IKSTACK_SERVO environment variable 'numba'"
    ):
        assert type(Servo(chain, cfg)) is Servo


def test_the_old_class_name_is_a_deprecated_alias():
    import ikstack.servo.native as native

    with pytest.warns(IKStackDeprecationWarning, match="NativeServo is ikstack.servo.Servo"):
        assert native.NativeServo is Servo
    with pytest.raises(AttributeError):
        native.NoSuchThing  # noqa: B018


def test_other_backends_are_refused(monkeypatch):
    chain = robots.load("planar2")
    cfg = ServoConfig(task_axes=(0, 1))
    monkeypatch.setenv("IKSTACK_SERVO", "fortran")
    with pytest.raises(InputError, match="IKSTACK_SERVO"):
        Servo(chain, cfg)
    with pytest.raises(InputError, match="kernel must be 'native'; got 'fortran'"):
        Servo(chain, cfg, kernel="fortran")
