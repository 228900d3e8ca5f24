"""The ``ikstack`` command and the numbered examples."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ikstack.cli.main import main
from ikstack.kinematics import fk
from ikstack.robots import load, names

ROOT = Path(__file__).resolve().parents[2]


def test_robots_lists_every_bundled_model(capsys):
    assert main(["robots"]) == 0
    out = capsys.readouterr().out
    for n in names():
        assert n in out


def test_robots_json_and_detail(capsys):
    assert main(["robots", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["name"] for r in rows} == set(names())
    assert main(["robots", "marvin_right"]) == 0
    assert "provenance" in capsys.readouterr().out


def test_fk_json_matches_the_library(capsys):
    q = [0.1, -1.2, 1.0, -0.5, 1.4, 0.3]
    assert main(["fk", "--robot", "ur5", "--q", *map(str, q), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert np.allclose(out["T_base_tcp"], fk(load("ur5"), np.array(q)), atol=1e-15)
    assert out["within_limits"] is True


def test_fk_degrees_and_human_output(capsys):
    assert main(["fk", "--robot", "planar2", "--q", "90", "0", "--deg"]) == 0
    out = capsys.readouterr().out
    assert "position   = [0.000, 1000.000, 0.000] mm" in out  # human output in mm


def test_fk_bad_input_is_a_clear_error_with_exit_code_2(capsys):
    assert main(["fk", "--robot", "ur5", "--q", "1", "2"]) == 2
    assert "has 6 joints" in capsys.readouterr().err
    assert main(["fk", "--robot", "nope"]) == 2
    assert "bundled robots" in capsys.readouterr().err
    assert main(["fk"]) == 2
    assert "choose a model" in capsys.readouterr().err


def test_fk_on_a_urdf_file(capsys):
    urdf = ROOT / "examples" / "planar2.urdf"
    assert (
        main(
            [
                "fk",
                "--urdf",
                str(urdf),
                "--base",
                "base",
                "--tip",
                "tool",
                "--q",
                "0",
                "0",
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["position"] == pytest.approx([1.0, 0.0, 0.0])


def test_console_script_runs_as_a_module():
    out = subprocess.run(
        [sys.executable, "-m", "ikstack.cli.main", "robots"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "ur5" in out.stdout


@pytest.mark.parametrize(
    "example", sorted((ROOT / "examples").glob("[0-9][0-9]_*.py")), ids=lambda p: p.name
)
def test_numbered_examples_run(example, capsys):
    runpy.run_path(str(example), run_name="__main__")
