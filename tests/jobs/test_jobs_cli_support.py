"""``ikstack solve`` options: parsing, the bundled sample shortcuts, the chain choice, and the
backend checks."""

from __future__ import annotations

import argparse

import pytest
from jobs_standin import SEEN, recording_factory, standin_factory

from ikstack.backends.warp.runtime import DeviceUnavailableError
from ikstack.errors import IKStackError, InputError, MissingExtraError
from ikstack.jobs import sample_path
from ikstack.jobs.cli_support import (
    add_solve_arguments,
    chain_from_options,
    input_from_options,
    run_solve,
)
from ikstack.jobs.progress import Progress
from ikstack.robots import data_path


def parse(*argv):
    return add_solve_arguments(argparse.ArgumentParser(prog="ikstack solve")).parse_args(argv)


def test_every_documented_option_parses():
    a = parse(
        "--urdf",
        "arm.urdf",
        "--base",
        "b",
        "--tip",
        "t",
        "in",
        "-o",
        "out",
        "--method",
        "numerical",
        "--max-joint-step",
        "0.2",
        "--engine",
        "ray",
        "--workers",
        "3",
        "--ray-address",
        "auto",
        "--overwrite",
        "--backend",
        "warp",
        "--device",
        "cuda",
    )
    assert (a.urdf, a.base, a.tip, a.input, a.output) == ("arm.urdf", "b", "t", "in", "out")
    assert (a.method, a.max_joint_step, a.engine, a.workers) == ("numerical", 0.2, "ray", 3)
    assert (a.ray_address, a.overwrite, a.backend, a.device) == ("auto", True, "warp", "cuda")
    d = parse("--robot", "ur5", "in", "-o", "out")
    assert (d.method, d.engine, d.workers, d.backend, d.device) == (
        "auto",
        "local",
        None,
        "numpy",
        "cpu",
    )


def test_robot_and_urdf_are_exclusive_and_one_is_required():
    with pytest.raises(SystemExit):
        parse("--robot", "ur5", "--urdf", "x.urdf", "in", "-o", "out")
    with pytest.raises(InputError, match="--robot NAME or --urdf PATH"):
        chain_from_options(parse("in", "-o", "out"))  # only a sample names its own robot


def test_sample_shortcuts_resolve_to_the_bundled_folder():
    want = str(sample_path("ur5"))
    assert input_from_options(parse("--robot", "ur5", "--sample", "-o", "o")) == want
    assert input_from_options(parse("--robot", "panda", "sample:ur5", "-o", "o")) == want
    with pytest.raises(InputError, match="ur5, panda, marvin_left"):
        input_from_options(parse("--robot", "iiwa14", "--sample", "-o", "o"))
    with pytest.raises(InputError, match="INPUT or --sample"):
        input_from_options(parse("--robot", "ur5", "x", "--sample", "-o", "o"))
    with pytest.raises(InputError, match="give an INPUT"):
        input_from_options(parse("--robot", "ur5", "-o", "o"))


def test_urdf_base_and_tip_select_the_chain():
    a = parse(
        "--urdf",
        str(data_path("ur5.urdf")),
        "--base",
        "base_link",
        "--tip",
        "wrist_3_link",
        "x",
        "-o",
        "o",
    )
    chain = chain_from_options(a)
    assert (chain.base, chain.tip, chain.dof) == ("base_link", "wrist_3_link", 6)
    with pytest.raises(InputError, match="--base/--tip go with --urdf"):
        chain_from_options(parse("--robot", "ur5", "--tip", "tool0", "x", "-o", "o"))


def test_run_solve_converts_the_bundled_sample(tmp_path):
    s = run_solve(
        parse("--robot", "ur5", "--sample", "-o", str(tmp_path / "out"), "--workers", "1"),
        progress=Progress.silent(),
        path_solver_factory=standin_factory,
    )
    assert (s.robot, s.episodes, s.frames, s.success_rate) == ("ur5", 3, 600, 1.0)
    assert (tmp_path / "out" / "summary.json").exists()


def test_warp_backend_is_validated_before_any_work(tmp_path):
    a = parse(
        "--robot",
        "ur5",
        "sample:ur5",
        "-o",
        str(tmp_path / "o"),
        "--backend",
        "warp",
        "--device",
        "cuda",
    )
    try:
        import warp
    except ImportError:
        warp = None
    if warp is not None and warp.is_cuda_available():
        pytest.skip("a GPU is present: the CUDA device is valid here")
    with pytest.raises((MissingExtraError, DeviceUnavailableError)) as ei:
        run_solve(a, progress=Progress.silent())
    assert "warp" in str(ei.value).lower() or "no cuda gpu" in str(ei.value).lower()
    assert not (tmp_path / "o").exists()
    b = parse("--robot", "ur5", "sample:ur5", "-o", str(tmp_path / "o"), "--device", "cuda")
    with pytest.raises(InputError, match="backend .numpy. runs on cpu"):
        run_solve(b, progress=Progress.silent(), path_solver_factory=standin_factory)


def test_bad_job_arguments_are_input_errors(tmp_path):
    base = ["--robot", "ur5", "sample:ur5", "-o", str(tmp_path / "o")]
    with pytest.raises(InputError, match="max_joint_step"):
        run_solve(parse(*base, "--max-joint-step", "-1"), progress=Progress.silent())
    with pytest.raises(InputError, match="workers"):
        run_solve(
            parse(*base, "--workers", "0"),
            progress=Progress.silent(),
            path_solver_factory=standin_factory,
        )
    with pytest.raises(InputError, match="--ray-address needs --engine ray"):
        run_solve(
            parse(*base, "--ray-address", "auto"),
            progress=Progress.silent(),
            path_solver_factory=standin_factory,
        )
    with pytest.raises(InputError, match="no such file or folder"):
        run_solve(
            parse("--robot", "ur5", str(tmp_path / "nope"), "-o", str(tmp_path / "o")),
            progress=Progress.silent(),
            path_solver_factory=standin_factory,
        )
    with pytest.raises(IKStackError, match="must differ from the input"):
        run_solve(
            parse("--robot", "ur5", str(sample_path("ur5")), "-o", str(sample_path("ur5"))),
            progress=Progress.silent(),
            path_solver_factory=standin_factory,
        )


def test_backend_and_device_reach_a_custom_factory(tmp_path):
    pytest.importorskip("warp")
    a = parse(
        "--robot",
        "ur5",
        "sample:ur5",
        "-o",
        str(tmp_path / "o"),
        "--backend",
        "warp",
        "--device",
        "cpu",
        "--workers",
        "1",
    )
    s = run_solve(a, progress=Progress.silent(), path_solver_factory=recording_factory)
    assert s.frames_solved == 600
    assert SEEN == [("warp", "cpu")]


def test_the_warp_backend_solves_the_sample_on_the_cpu_like_the_numpy_backend(tmp_path):
    pytest.importorskip("warp")
    for backend in ("numpy", "warp"):
        a = parse(
            "--robot",
            "ur5",
            "sample:ur5",
            "-o",
            str(tmp_path / backend),
            "--backend",
            backend,
            "--workers",
            "1",
        )
        s = run_solve(a, progress=Progress.silent())
        assert s.frames_solved == 600
    import numpy as np

    for f in sorted((tmp_path / "numpy").glob("*.csv")):
        a = np.genfromtxt(f, delimiter=",", names=True)
        b = np.genfromtxt(tmp_path / "warp" / f.name, delimiter=",", names=True)
        for name in a.dtype.names:
            if name.startswith("q_"):
                assert np.allclose(a[name], b[name], atol=1e-9)
