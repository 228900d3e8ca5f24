"""``ikstack validate`` exit codes and reports; ``ikstack ik`` on every bundled arm."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ikstack.cli.main import main
from ikstack.kinematics import fk
from ikstack.robots import load, names
from ikstack.spatial import to_pose


def test_validate_passes_on_a_bundled_arm_with_exit_code_0(capsys):
    assert main(["validate", "iiwa14", "--no-progress"]) == 0
    assert "result: PASS" in capsys.readouterr().out


def test_validate_skips_a_gripper_with_exit_code_3(capsys):
    assert main(["validate", "parallel_gripper", "--no-progress"]) == 3
    assert "SKIPPED" in capsys.readouterr().out


def test_validate_fails_when_limits_trap_the_solver_with_exit_code_1(capsys):
    # one iteration cannot reach anything: the check must be able to fail
    assert main(["validate", "ur5", "--iterations", "1", "--no-progress"]) == 1
    assert "result: FAIL" in capsys.readouterr().out


def test_validate_json_report(tmp_path, capsys):
    assert main(["validate", "ur5", "--json", "-"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["status"] == "pass" and len(rep["targets"]) == 5
    assert rep["config"]["max_step"] is None  # plain DLS steps unless asked
    assert main(["validate", "panda", "--json", "-"]) == 1  # stretched neutral pose
    capsys.readouterr()
    assert main(["validate", "panda", "--max-step", "0.2", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["max_step"] == 0.2
    assert main(["validate", "no_such_robot"]) == 2
    assert "bundled robots" in capsys.readouterr().err


ARMS = [n for n in names() if load(n).role.value == "arm"]


@pytest.mark.parametrize("name", ARMS)
def test_ik_solves_a_reachable_pose_on_every_bundled_arm(name, capsys):
    chain = load(name)
    rng = np.random.default_rng(4)
    for _ in range(20):
        q = chain.random_q(rng)
        if chain.constraints_satisfied(q):
            break
    p, quat = to_pose(fk(chain, q))
    assert main(["ik", "--robot", name, "--pose", *map(str, p), *map(str, quat), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["success"]
    assert out["position_error"] < 1e-5 and out["rotation_error"] < 1e-5


def test_ik_unreachable_pose_exits_1_with_a_reason(capsys):
    assert (
        main(
            [
                "ik",
                "--robot",
                "ur5",
                "--pose",
                "5",
                "0",
                "0",
                "1",
                "0",
                "0",
                "0",
                "--method",
                "numerical",
            ]
        )
        == 1
    )
    assert "FAILED" in capsys.readouterr().out


IK_POSE = ["--pose", "0.3", "0.1", "0.4", "1", "0", "0", "0"]


def test_ik_q0_is_the_joint_guess_and_seed_its_deprecated_spelling(capsys):
    text = build_parser_help("ik")
    assert "--q0" in text and "--seed SEED" not in text  # --help shows the new name
    guess = ["0", "-1", "1", "0", "1", "0"]
    assert main(["ik", "--robot", "ur5", *IK_POSE, "--q0", *guess, "--json"]) == 0
    cap = capsys.readouterr()
    new = json.loads(cap.out)
    assert "deprecated" not in cap.err
    # the former flag still works one release: the same answer, a one-line note on stderr
    assert main(["ik", "--robot", "ur5", *IK_POSE, "--seed", *guess, "--json"]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["q"] == new["q"]
    assert notes(cap.err) == ["ikstack ik: note: --seed is deprecated; use --q0"]
    # an error in the old flag's values names the flag as the user spelled it
    assert main(["ik", "--robot", "ur5", *IK_POSE, "--seed", "1", "2"]) == 2
    assert "error: --seed has 2 values" in capsys.readouterr().err


def test_validate_rng_is_the_random_seed_and_seed_its_deprecated_spelling(capsys):
    text = build_parser_help("validate")
    assert "--rng" in text and "--seed SEED" not in text
    argv = ["validate", "ur5", "--targets", "2", "--iterations", "20", "--json"]
    main([*argv, "--rng", "3"])
    cap = capsys.readouterr()
    new = json.loads(cap.out)
    assert new["config"]["rng"] == 3 and notes(cap.err) == []
    main([*argv, "--seed", "3"])
    cap = capsys.readouterr()
    assert json.loads(cap.out)["targets"] == new["targets"]
    assert notes(cap.err) == ["ikstack validate: note: --seed is deprecated; use --rng"]
    main(argv)  # neither: rng 0, as before
    assert json.loads(capsys.readouterr().out)["config"]["rng"] == 0
    assert main([*argv, "--seed", "3", "--rng", "3"]) == 2
    assert "--seed is the former name of --rng" in capsys.readouterr().err


def notes(err: str) -> list[str]:
    """The lines of stderr that are notes (a first run also prints compile notices)."""
    return [line for line in err.splitlines() if ": note: " in line]


def build_parser_help(command: str) -> str:
    from ikstack.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices[command].format_help()
