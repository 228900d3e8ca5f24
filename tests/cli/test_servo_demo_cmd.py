"""``ikstack servo-demo`` reaches its target and prints a trace."""

from __future__ import annotations

import json

from ikstack.cli.main import main


def test_servo_demo_reaches_hold_on_panda(capsys):
    assert main(["servo-demo", "--robot", "panda", "--steps", "300", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["final_action"] == "HOLD"
    assert out["position_error"][-1] < 1e-3
    assert len(out["q"]) == 300


def test_servo_demo_human_trace_and_bad_target(capsys):
    assert main(["servo-demo", "--robot", "ur5", "--steps", "50", "--every", "10"]) == 0
    assert "final:" in capsys.readouterr().out
    assert main(["servo-demo", "--robot", "ur5", "--target-q", "0", "1"]) == 2
    assert "has 2 values" in capsys.readouterr().err
