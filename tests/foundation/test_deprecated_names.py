"""Public names that nothing in ikstack uses any more: each still works for one release and
warns (IKStackDeprecationWarning, a DeprecationWarning) that it goes in the next."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import ikstack
from ikstack import robots
from ikstack.errors import IKStackDeprecationWarning


def test_rotvec_to_quat_warns_and_matches_scipy():
    from ikstack.spatial.so3 import rotvec_to_quat

    rv = np.random.default_rng(0).normal(size=(5, 3))
    rv[0] = 0.0
    with pytest.warns(IKStackDeprecationWarning, match="rotvec_to_quat"):
        q = rotvec_to_quat(rv)
    ref = Rotation.from_rotvec(rv).as_quat()[:, [3, 0, 1, 2]]  # xyzw -> wxyz
    ref = np.where(ref[:, :1] < 0, -ref, ref)
    np.testing.assert_allclose(q, ref, atol=1e-12)


def test_line_distance_warns_and_measures_skew_and_parallel_lines():
    from ikstack.ik.analytic.geometry import line_distance

    x, y, z = np.eye(3)
    with pytest.warns(IKStackDeprecationWarning, match="line_distance"):
        assert line_distance(x, np.zeros(3), y, np.array([0.0, 0.0, 0.7])) == pytest.approx(0.7)
    with pytest.warns(IKStackDeprecationWarning):
        assert line_distance(x, np.zeros(3), x, np.array([5.0, 0.3, 0.4])) == pytest.approx(0.5)


def test_chain_joint_index_warns():
    chain = robots.load("ur5")
    with pytest.warns(IKStackDeprecationWarning, match="joint_index"):
        assert chain.joint_index(chain.joint_names[2]) == 2
    with (
        pytest.warns(IKStackDeprecationWarning),
        pytest.raises(ikstack.InputError, match="unknown joint"),
    ):
        chain.joint_index("nope")


def test_qp_config_with_source_warns():
    from ikstack.diffik import DiffQPConfig

    with pytest.warns(IKStackDeprecationWarning, match="with_source"):
        cfg = DiffQPConfig().with_source("arm.yaml")
    assert cfg.source == "arm.yaml"


def test_servo_command_alias_warns():
    from ikstack.servo import JointJogCommand, PoseCommand, TwistCommand, commands

    with pytest.warns(IKStackDeprecationWarning, match="Command"):
        alias = commands.Command
    assert alias == PoseCommand | TwistCommand | JointJogCommand
    with pytest.raises(AttributeError):
        _ = commands.NoSuchName


def test_box_qp_from_task_into_warns():
    from ikstack.diffik import box_qp

    with pytest.warns(IKStackDeprecationWarning, match="box_qp_from_task_into"):
        f = box_qp.box_qp_from_task_into
    assert f is box_qp._box_qp_from_task_into


def test_timing_as_us_warns():
    from ikstack.bench import Timing

    t = Timing(median=1e-6, p95=2e-6, p99=3e-6, mean=1.5e-6, samples=10)
    with pytest.warns(IKStackDeprecationWarning, match="as_us"):
        us = t.as_us()
    assert us == pytest.approx({"median": 1.0, "p95": 2.0, "p99": 3.0, "mean": 1.5})


@pytest.mark.parametrize(
    "old, new",
    [
        ("BACKENDS", "KERNELS"),
        ("DEPRECATED_BACKENDS", "DEPRECATED_KERNELS"),
        ("BACKEND_ENV", "KERNEL_ENV"),
        ("resolve_backend", "kernel_name"),
        ("check_arguments", "check_arguments"),
    ],
)
def test_the_servo_backend_module_is_now_arguments_and_its_names_warn(old, new):
    import ikstack.servo.arguments as arguments
    import ikstack.servo.backend as former
    from ikstack import vocabulary

    with pytest.warns(IKStackDeprecationWarning, match=f"ikstack.servo.arguments.{new}"):
        assert getattr(former, old) is getattr(arguments, new)
    assert arguments.KERNELS is vocabulary.SERVO_KERNELS == ("native",)
