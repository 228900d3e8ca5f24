"""Every command on bad input: one line on stderr naming the argument, file, row or field, a
documented exit code, no traceback (unless --debug), and nothing written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ikstack.cli.main import EXIT_CODES, build_parser, main

SRC = Path(__file__).parents[2] / "src"
POSE = ["--pose", "0.4", "0.1", "0.4", "1", "0", "0", "0"]


def _chunk(path: Path, q_right: object) -> Path:
    from ikstack.robots import load

    arrays = {}
    q0 = np.radians([10, 20, -10, -60, 10, 20, 10])
    for arm in ("left", "right"):
        T = load(f"marvin_{arm}_taccap").fk(q0)
        arrays[f"T_base_tcp_{arm}"] = np.stack([T] * 4)
        arrays[f"q_observed_{arm}"] = q0 if arm == "left" else q_right
    np.savez(path, **arrays)
    return path


def _files(tmp: Path) -> dict[str, Path]:
    f = {
        "random": tmp / "random.npz",
        "text_q": tmp / "text_q.npz",
        "episode": tmp / "ep" / "e.csv",
        "bad_profile": tmp / "bad.yaml",
        "a_file": tmp / "a_file",
    }
    f["random"].write_bytes(np.random.default_rng(0).bytes(3000))
    _chunk(f["text_q"], np.array(["zero"] * 7))
    f["pickled"] = tmp / "pickled.npy"
    np.save(f["pickled"], np.array([{}], dtype=object), allow_pickle=True)
    f["episode"].parent.mkdir()
    f["episode"].write_text("timestamp,x,y,z,qw,qx,qy,qz\n0,0.4,0.1,0.4,1,0,0,0\n")
    f["bad_profile"].write_text("name: [unclosed\n")
    f["a_file"].write_text("x")
    return f


# (id, argv with {placeholders}, exit code, words the line must contain)
BAD = [
    ("no_command_option", ["fk", "--bogus"], 2, ["--bogus"]),
    ("fk_text_q", ["fk", "--robot", "ur5", "--q", "a", "b"], 2, ["--q", "'a'"]),
    (
        "fk_nan_q",
        ["fk", "--robot", "ur5", "--q", "1", "2", "3", "4", "5", "nan"],
        2,
        ["--q", "nan"],
    ),
    ("fk_wrong_count", ["fk", "--robot", "ur5", "--q", "1", "2"], 2, ["--q", "2 values"]),
    ("fk_no_model", ["fk"], 2, ["--robot", "--urdf"]),
    ("fk_two_models", ["fk", "--robot", "ur5", "--urdf", "x.urdf"], 2, ["--robot", "--urdf"]),
    ("fk_unknown_robot", ["fk", "--robot", "ur6"], 2, ["'ur6'"]),
    ("fk_missing_urdf", ["fk", "--urdf", "{tmp}/none.urdf"], 2, ["none.urdf"]),
    ("fk_urdf_is_random", ["fk", "--urdf", "{random}"], 2, ["random.npz", "line"]),
    (
        "ik_zero_quaternion",
        ["ik", "--robot", "ur5", "--pose", "0.4", "0", "0.4", "0", "0", "0", "0"],
        2,
        ["--pose", "quaternion"],
    ),
    (
        "ik_nan_pose",
        ["ik", "--robot", "ur5", "--pose", "nan", "0", "0.4", "1", "0", "0", "0"],
        2,
        ["--pose", "nan"],
    ),
    (
        "ik_text_pose",
        ["ik", "--robot", "ur5", "--pose", "x", "0", "0.4", "1", "0", "0", "0"],
        2,
        ["--pose", "'x'"],
    ),
    ("ik_short_pose", ["ik", "--robot", "ur5", "--pose", "0.4", "0"], 2, ["--pose"]),
    ("ik_q0_count", ["ik", "--robot", "ur5", *POSE, "--q0", "1", "2"], 2, ["--q0"]),
    ("ik_q0_inf", ["ik", "--robot", "ur5", *POSE, "--q0", *["inf"] * 6], 2, ["--q0"]),
    ("ik_old_seed_inf", ["ik", "--robot", "ur5", *POSE, "--seed", *["inf"] * 6], 2, ["--seed"]),
    (
        "ik_seed_and_q0",
        ["ik", "--robot", "ur5", *POSE, "--seed", *["0"] * 6, "--q0", *["0"] * 6],
        2,
        ["--seed", "--q0"],
    ),
    ("ik_bad_method", ["ik", "--robot", "ur5", *POSE, "--method", "magic"], 2, ["'magic'"]),
    ("servo_dt_nan", ["servo-demo", "--robot", "ur5", "--dt", "nan"], 2, ["--dt", "nan"]),
    ("servo_dt_zero", ["servo-demo", "--robot", "ur5", "--dt", "0"], 2, ["--dt", "> 0"]),
    ("servo_dt_negative", ["servo-demo", "--robot", "ur5", "--dt", "-0.01"], 2, ["--dt"]),
    ("servo_steps_zero", ["servo-demo", "--robot", "ur5", "--steps", "0"], 2, ["--steps"]),
    ("servo_every_zero", ["servo-demo", "--robot", "ur5", "--every", "0"], 2, ["--every"]),
    ("servo_offset_inf", ["servo-demo", "--robot", "ur5", "--offset", "inf"], 2, ["--offset"]),
    ("servo_target_count", ["servo-demo", "--robot", "ur5", "--target-q", "1"], 2, ["--target-q"]),
    (
        "ik_q0_count_deg",
        [
            "ik",
            "--robot",
            "ur5",
            "--pose",
            "0.3",
            "0.1",
            "0.4",
            "1",
            "0",
            "0",
            "0",
            "--deg",
            "--q0",
            "10",
        ],
        2,
        ["--q0"],
    ),
    ("fk_q_count_deg", ["fk", "--robot", "ur5", "--deg", "--q", "10"], 2, ["--q"]),
    (
        "servo_target_count_deg",
        ["servo-demo", "--robot", "ur5", "--deg", "--target-q", "1"],
        2,
        ["--target-q"],
    ),
    ("servo_bad_solver", ["servo-demo", "--robot", "ur5", "--solver", "x"], 2, ["--solver"]),
    ("validate_unknown", ["validate", "ur6"], 2, ["'ur6'"]),
    ("validate_random_urdf", ["validate", "{random}", "--no-progress"], 2, ["random.npz"]),
    ("validate_targets_zero", ["validate", "ur5", "--targets", "0"], 2, ["0"]),
    ("validate_damping_nan", ["validate", "ur5", "--damping", "nan"], 2, ["damping"]),
    ("robots_unknown", ["robots", "ur6"], 2, ["'ur6'"]),
    (
        "decode_random_file",
        ["decode", "{random}", "--profile", "marvin_bimanual_diff"],
        2,
        ["random.npz", "not a .npz"],
    ),
    (
        "decode_npy_pickle",
        ["decode", "{pickled}", "--profile", "marvin_bimanual_diff"],
        2,
        ["pickled.npy"],
    ),
    (
        "decode_text_joint",
        ["decode", "{text_q}", "--profile", "marvin_bimanual_diff"],
        2,
        ["text_q.npz", "'q_observed_right'"],
    ),
    (
        "decode_missing_file",
        ["decode", "{tmp}/none.npz", "--profile", "marvin_bimanual_diff"],
        2,
        ["none.npz"],
    ),
    ("decode_unknown_profile", ["decode", "{text_q}", "--profile", "nosuch"], 2, ["'nosuch'"]),
    (
        "decode_broken_profile",
        ["decode", "{text_q}", "--profile", "{bad_profile}"],
        2,
        ["bad.yaml"],
    ),
    ("solve_no_input", ["solve", "--robot", "ur5", "-o", "{tmp}/out"], 2, ["INPUT"]),
    ("solve_no_output", ["solve", "--robot", "ur5", "sample:ur5"], 2, ["-o"]),
    ("solve_unknown_sample", ["solve", "sample:ur6", "-o", "{tmp}/out"], 2, ["'ur6'"]),
    (
        "solve_robot_mismatch",
        ["solve", "--robot", "panda", "sample:ur5", "-o", "{tmp}/out"],
        2,
        ["sample:ur5", "panda", "--force-robot"],
    ),
    (
        "solve_urdf_mismatch",
        ["solve", "--urdf", "{tmp}/x.urdf", "sample:ur5", "-o", "{tmp}/out"],
        2,
        ["sample:ur5", "--urdf"],
    ),
    (
        "solve_min_success",
        ["solve", "sample:ur5", "-o", "{tmp}/out", "--min-success", "1.5"],
        2,
        ["--min-success"],
    ),
    (
        "solve_workers_zero",
        ["solve", "sample:ur5", "-o", "{tmp}/out", "--workers", "0"],
        2,
        ["workers"],
    ),
    (
        "solve_step_nan",
        ["solve", "sample:ur5", "-o", "{tmp}/out", "--max-joint-step", "nan"],
        2,
        ["max_joint_step"],
    ),
    (
        "solve_missing_input",
        ["solve", "--robot", "ur5", "{tmp}/none", "-o", "{tmp}/out"],
        2,
        ["none"],
    ),
    (
        "solve_unknown_suffix",
        ["solve", "--robot", "ur5", "{bad_profile}", "-o", "{tmp}/out"],
        2,
        [".yaml"],
    ),
    (
        "solve_output_is_file",
        ["solve", "--robot", "ur5", "{episode}", "-o", "{a_file}"],
        2,
        ["a_file"],
    ),
    (
        "solve_output_is_input",
        ["solve", "--robot", "ur5", "{tmp}/ep", "-o", "{tmp}/ep"],
        2,
        ["differ"],
    ),
    (
        "solve_base_with_robot",
        ["solve", "--robot", "ur5", "--base", "b", "{episode}", "-o", "{tmp}/out"],
        2,
        ["--base"],
    ),
]


@pytest.fixture
def files(tmp_path):
    return _files(tmp_path)


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_input_is_one_line_with_a_documented_exit_code(case, files, tmp_path, capsys):
    cid, argv, code, words = case
    fmt = {k: str(v) for k, v in files.items()} | {"tmp": str(tmp_path)}
    argv = [a.format(**fmt) for a in argv]
    before = sorted(p for p in tmp_path.rglob("*"))
    rc = _call(argv)
    cap = capsys.readouterr()
    lines = cap.err.strip().splitlines()
    assert rc == code and code in EXIT_CODES, (cid, rc, cap.err)
    assert len(lines) == 1, cap.err
    assert lines[0].startswith(f"ikstack {argv[0]}: error: "), lines[0]
    assert "Traceback" not in cap.err
    for w in words:
        assert w in lines[0], f"{cid}: {w!r} not in {lines[0]!r}"
    assert sorted(p for p in tmp_path.rglob("*")) == before  # nothing written


def _call(argv: list[str]) -> int:
    """``main(argv)``'s exit code, including argparse's own exits."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def test_exit_codes_are_documented_in_every_help():
    parser = build_parser()
    assert "exit codes:" in parser.format_help()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, p in sub.choices.items():
        text = p.format_help()
        assert "exit codes:" in text, name
        for code in EXIT_CODES:
            assert f"{code:>3}  " in text


def _run(*argv, env=None):
    env = dict(os.environ, PYTHONPATH=str(SRC), **(env or {}))
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from ikstack.cli.main import main; import sys; sys.exit(main())",
            *argv,
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_a_real_process_exits_with_the_code_and_only_debug_prints_a_traceback(files):
    r = _run("decode", str(files["text_q"]), "--profile", "marvin_bimanual_diff")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    r = _run("decode", str(files["text_q"]), "--profile", "marvin_bimanual_diff", "--debug")
    assert r.returncode == 2 and "Traceback" in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("ikstack decode: error:")
    r = _run("fk", "--robot", "ur5", "--q", "x", env={"IKSTACK_DEBUG": "0"})
    assert r.returncode == 2 and r.stderr.count("\n") == 1


def test_an_unexpected_error_is_one_line_exit_70_and_a_traceback_with_debug(monkeypatch, capsys):
    import ikstack.kinematics as kinematics

    def broken(*a, **k):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(kinematics, "fk_jacobian", broken)
    assert main(["fk", "--robot", "ur5"]) == 70
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error: ZeroDivisionError: a bug" in err
    assert main(["fk", "--robot", "ur5", "--debug"]) == 70
    assert "Traceback" in capsys.readouterr().err


def test_a_non_unit_pose_quaternion_is_normalised_with_a_note(capsys):
    assert main(
        ["ik", "--robot", "ur5", "--pose", "0.4", "0.1", "0.4", "2", "0", "0", "0", "--json"]
    ) in (0, 1)
    err = capsys.readouterr().err
    assert "note: --pose quaternion (2 0 0 0) has norm 2; normalised" in err


def test_fk_refuses_strings_and_complex_numbers():
    from ikstack.errors import InputError
    from ikstack.kinematics import fk, jacobian
    from ikstack.robots import load

    chain = load("ur5")
    for bad in (
        ["a"] * 6,
        ["0.1"] * 6,
        [1 + 2j] * 6,
        np.ones(6, dtype=complex),
        np.array(["1"] * 6),
        [[0.1] * 6, [0.2] * 5],
    ):
        for f in (fk, jacobian):
            with pytest.raises(InputError):
                f(chain, bad)
