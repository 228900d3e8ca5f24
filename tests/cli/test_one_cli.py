"""One command line: every command takes the model, ``--json``, ``--deg`` and ``-o`` the same way.

The tables below name every command of ``ikstack``; a new command must be added to them.
Parser-level rows build the parser only (no kernel); the behaviour rows run the cheap paths
(fk, ik, validate) and compare with a hand-computed planar arm or with the documented units.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ikstack.cli.main import COMMANDS, build_parser, main
from ikstack.robots import data_path

#: command -> the arguments it needs besides the model (parser-level rows)
NEEDS = {
    "fk": [],
    "ik": ["--pose", "0.3", "0", "0.3", "1", "0", "0", "0"],
    "solve": ["sample:ur5", "-o", "out"],
    "validate": [],
    "servo-demo": [],
    "view": [],
    "warmup": [],
    "export": ["-o", "arm.chain"],
}
#: commands without a model: their positional arguments
NO_MODEL = {"robots": [], "decode": ["c.npz", "--profile", "p.yaml"]}
#: commands with machine output (``--json`` a flag printing JSON on stdout)
JSON_COMMANDS = (
    "fk",
    "ik",
    "solve",
    "validate",
    "servo-demo",
    "decode",
    "robots",
    "warmup",
    "export",
)
#: command -> the options whose angles ``--deg`` turns into degrees
DEG = {
    "fk": ["--q", "10"],
    "ik": ["--q0", "10"],
    "servo-demo": ["--target-q", "10"],
    "solve": ["--max-joint-step", "10"],
}

MODELS = [
    (["--robot", "ur5"], {"robot": "ur5"}),
    (
        ["--urdf", "arm.urdf", "--base", "b", "--tip", "t"],
        {"urdf": "arm.urdf", "base": "b", "tip": "t"},
    ),
    (
        ["--mjcf", "arm.xml", "--base", "b", "--tip", "t"],
        {"mjcf": "arm.xml", "base": "b", "tip": "t"},
    ),
]


def parse(argv):
    args, extra = build_parser().parse_known_args(argv)
    assert not extra, extra
    return args


def test_the_tables_cover_every_command():
    assert set(NEEDS) | set(NO_MODEL) == set(COMMANDS)


@pytest.mark.parametrize("model,want", MODELS, ids=["robot", "urdf", "mjcf"])
@pytest.mark.parametrize("command", sorted(NEEDS))
def test_every_command_takes_the_model_the_same_way(command, model, want):
    args = parse([command, *model, *NEEDS[command]])
    for key, value in want.items():
        assert getattr(args, key) == value, (command, key)


@pytest.mark.parametrize("command", sorted(NEEDS))
def test_two_models_are_one_line_usage_error(command, capsys):
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args([command, "--robot", "ur5", "--urdf", "a.urdf", *NEEDS[command]])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--urdf" in err and "--robot" in err


@pytest.mark.parametrize("command", JSON_COMMANDS)
def test_json_is_a_flag_on_every_command_with_machine_output(command):
    pos = NEEDS.get(command, NO_MODEL.get(command, []))
    model = ["--robot", "ur5"] if command in NEEDS else []
    args = parse([command, *model, *pos, "--json"])
    assert args.json is True
    # a flag: the next word is not eaten as its value
    assert parse([command, "--json", *model, *pos]).json is True


@pytest.mark.parametrize("command", sorted(DEG))
def test_deg_wherever_angles_go_in(command):
    args = parse([command, "--robot", "ur5", *NEEDS[command], *DEG[command], "--deg"])
    assert args.deg is True


@pytest.mark.parametrize(
    "command,flag",
    [
        ("solve", "-o"),
        ("solve", "--output"),
        ("decode", "-o"),
        ("decode", "--output"),
        ("decode", "--out"),
    ],
)
def test_o_is_output_everywhere(command, flag):
    pos = NEEDS.get(command, NO_MODEL.get(command, []))
    pos = [a for a in pos if a not in ("-o", "out")]
    args = parse([command, *pos, flag, "dest"])
    assert (args.output if command == "solve" else args.out) == "dest"


def test_engine_means_local_or_ray_and_validate_says_kinematics():
    assert parse(["solve", *NEEDS["solve"], "--engine", "ray"]).engine == "ray"
    assert parse(["validate", "ur5", "--kinematics", "mujoco"]).kinematics == "mujoco"


# --- behaviour: the same model through --robot, --urdf and --mjcf ------------------------------

PLANAR_MJCF = """
<mujoco model="planar">
  <worldbody>
    <body name="l1">
      <joint name="j1" type="hinge" axis="0 0 1" range="-3 3" limited="true"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.02"/>
      <body name="l2" pos="0.4 0 0">
        <joint name="j2" type="hinge" axis="0 0 1" range="-3 3" limited="true"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
        <body name="tool" pos="0.3 0 0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def run_json(argv, capsys):
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


def test_fk_with_mjcf_and_deg_matches_the_planar_formula(tmp_path, capsys):
    path = tmp_path / "planar.xml"
    path.write_text(PLANAR_MJCF)
    code, out = run_json(
        ["fk", "--mjcf", str(path), "--tip", "tool", "--q", "30", "45", "--deg", "--json"], capsys
    )
    a, b = math.radians(30), math.radians(45)
    want = [0.4 * math.cos(a) + 0.3 * math.cos(a + b), 0.4 * math.sin(a) + 0.3 * math.sin(a + b), 0]
    assert code == 0
    np.testing.assert_allclose(out["position_m"], want, atol=1e-12)
    np.testing.assert_allclose(out["q"], [a, b], atol=1e-15)  # JSON in SI


def test_fk_urdf_and_robot_agree_and_human_output_is_mm(capsys):
    q = ["0.1", "-0.5", "0.7", "-1.0", "0.4", "0.2"]
    _, by_name = run_json(["fk", "--robot", "ur5", "--q", *q, "--json"], capsys)
    _, by_file = run_json(
        ["fk", "--urdf", str(data_path("ur5.urdf")), "--tip", "tool0", "--q", *q, "--json"], capsys
    )
    np.testing.assert_allclose(by_file["position_m"], by_name["position_m"], atol=1e-12)
    assert main(["fk", "--robot", "ur5", "--q", *q]) == 0
    text = capsys.readouterr().out
    mm = [1e3 * v for v in by_name["position_m"]]
    assert f"[{mm[0]:.3f}, {mm[1]:.3f}, {mm[2]:.3f}] mm" in text
    assert " deg," in text  # joint angles with their unit


def pose_of(robot, q):
    from ikstack.robots import load
    from ikstack.spatial import to_pose

    p, quat = to_pose(load(robot).fk(np.asarray(q, dtype=float)))
    return [str(v) for v in (*p, *quat)]


def test_ik_json_keys_carry_units_and_deg_q0_is_radians(capsys):
    q = [0.3, -0.4, 0.2, -1.5, 0.1, 1.2, 0.4]
    pose = pose_of("iiwa14", q)
    code, out = run_json(
        [
            "ik",
            "--robot",
            "iiwa14",
            "--pose",
            *pose,
            "--q0",
            *[str(math.degrees(v)) for v in q],
            "--deg",
            "--method",
            "numerical",
            "--json",
        ],
        capsys,
    )
    assert code == 0 and out["success"]
    assert out["position_error_m"] < 1e-5 and out["rotation_error_rad"] < 1e-5
    # seeded at the answer (given in degrees), the solver stays there
    np.testing.assert_allclose(out["q"], q, atol=1e-3)


def test_ik_all_summarises_unless_every_row(capsys):
    pose = pose_of("iiwa14", [0.3, -0.4, 0.2, -1.5, 0.1, 1.2, 0.4])
    argv = ["ik", "--robot", "iiwa14", "--pose", *pose, "--all"]
    assert main([*argv, "--json"]) == 0
    n = len(json.loads(capsys.readouterr().out)["solutions"])
    assert n > 20
    assert main(argv) == 0
    short = capsys.readouterr().out.splitlines()
    assert len(short) < 20 and f"{n} valid solutions" in short[3] and "mm" in short[2]
    assert main([*argv, "--every-row"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 4 + n


def test_validate_takes_the_model_option_json_flag_and_json_out(tmp_path, capsys):
    code, out = run_json(["validate", "--robot", "ur5", "--json"], capsys)
    assert code == 0 and out["model"] == "ur5"
    t = out["targets"][0]
    assert t["position_error_m"] == t["position_error"]
    assert t["orientation_error_rad"] == pytest.approx(math.radians(t["orientation_error_deg"]))
    assert main(["validate", "ur5", "--no-progress", "--json-out", str(tmp_path / "r.json")]) == 0
    text = capsys.readouterr().out
    assert "pos err [mm]" in text and "history" in (tmp_path / "r.json").read_text()


def test_validate_old_spellings_still_work_with_a_note(tmp_path, capsys):
    code, out = run_json(["validate", "ur5", "--json", "-", "--engine", "ikstack"], capsys)
    assert code == 0 and out["model"] == "ur5"
    # run_json read stdout; the notes went to stderr before it
    assert main(["validate", "ur5", "--no-progress", "--json", str(tmp_path / "old.json")]) == 0
    err = capsys.readouterr().err
    assert "--json-out" in err and (tmp_path / "old.json").exists()
    assert main(["validate", "ur5", "--engine", "ikstack", "--kinematics", "mujoco"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--kinematics" in err


def test_solve_json_prints_the_summary_in_si_with_unit_keys(tmp_path, capsys):
    code, out = run_json(
        ["solve", "sample:ur5", "-o", str(tmp_path / "o"), "--workers", "1", "--json"], capsys
    )
    written = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert code == 0 and out["success_rate"] == written["success_rate"] == 1.0
    assert out["worst_position_error_m"] == written["worst_position_error"] < 1e-9
    assert out["worst_rotation_error_rad"] == written["worst_rotation_error"] < 1e-9
