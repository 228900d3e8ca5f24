"""``ikstack servo-demo`` reaches its target and prints a trace."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ikstack import robots
from ikstack.cli.main import main
from ikstack.kinematics import jacobian
from ikstack.servo.demo import REGULAR_CONDITION, regular_start


def test_servo_demo_reaches_hold_on_panda(capsys):
    assert main(["servo-demo", "--robot", "panda", "--steps", "300", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["final_action"] == "HOLD"
    assert out["position_error"][-1] < 1e-3
    assert len(out["q"]) == 300


@pytest.mark.parametrize("robot", ["ur5", "iiwa14", "scara"])
def test_servo_demo_starts_regular_and_reaches_its_default_target(robot, capsys):
    """UR5's middle of the limits (q = 0) is singular; the demo must not start there."""
    assert main(["servo-demo", "--robot", robot, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["reached"] and out["final_action"] == "HOLD"
    assert out["position_error"][-1] < 1e-3 and out["orientation_error"][-1] < 1e-2
    assert np.max(out["q"][0]) - np.min(out["q"][0]) > 0  # not the all-zero start


def test_regular_start_is_well_conditioned_where_the_middle_is_not():
    ur5 = robots.load("ur5")
    assert np.linalg.cond(jacobian(ur5, ur5.middle())) > 1e6  # the singular middle
    q = regular_start(ur5, 0.3)
    assert ur5.within_limits(q)
    assert np.linalg.cond(jacobian(ur5, q)) < REGULAR_CONDITION
    assert np.linalg.cond(jacobian(ur5, ur5.clip(q + 0.3))) < REGULAR_CONDITION


def test_servo_demo_human_trace_exit_1_when_not_reached_and_bad_target(capsys):
    assert main(["servo-demo", "--robot", "ur5", "--steps", "20", "--every", "10"]) == 1
    out = capsys.readouterr().out
    assert "final:" in out and "target not reached in 20 cycles" in out
    assert main(["servo-demo", "--robot", "ur5", "--target-q", "0", "1"]) == 2
    assert "has 2 values" in capsys.readouterr().err
