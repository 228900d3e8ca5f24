"""The first run: the parser and ``import ikstack`` load no kernel, the compile notice, warmup."""

from __future__ import annotations

import pytest

from fresh_process import KERNEL_MAKER, run_python
from ikstack import compile_notice
from ikstack.cli.main import COMMANDS, build_parser, main


def test_help_and_import_load_neither_numba_nor_a_kernel():
    code = (
        "import sys\n"
        "import ikstack\n"
        "from ikstack.cli.main import build_parser\n"
        "build_parser()\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('numba', 'numpy', 'scipy', 'ikstack') and not m.startswith(('ikstack.cli', "
        "'ikstack.errors', 'ikstack._lazy', 'ikstack.vocabulary', 'ikstack.jobs.options', "
        "'ikstack.jobs.cli_support')) "
        "and m not in ('ikstack', 'ikstack.jobs')))\n"
    )
    p = run_python(code)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_every_help_prints_usage_and_exits_0(command, capsys):
    argv = ["--help"] if command is None else [command, "--help"]
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 0
    assert "usage: ikstack" in capsys.readouterr().out


def test_lazy_names_of_the_package_resolve():
    import ikstack

    assert ikstack.solve_ik.__name__ == "solve_ik"
    assert {"fk", "Chain", "IKResult"} <= set(dir(ikstack))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = ikstack.nope


def test_compile_notice_names_the_area_once_and_can_be_silenced(tmp_path):
    code = (
        "import numpy as np\n"
        "from numba import njit\n"
        "import ikstack.spatial\n"  # installs the listener
        "src = 'def twice(x):\\n    return 2.0 * x\\n'\n"
        "ns = {'__name__': 'ikstack.servo.fake'}\n"
        "exec(src, ns)\n"
        "f = njit(ns['twice'])\n"
        "f(1.0); f(np.ones(2)); f(np.int64(3))\n"
    )
    p = run_python(code, NUMBA_CACHE_DIR=str(tmp_path))
    assert p.returncode == 0, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if ln.startswith("ikstack: compiling")]
    assert lines == ["ikstack: compiling servo kernels (first run only; cached for later runs)"]
    q = run_python(code, NUMBA_CACHE_DIR=str(tmp_path), IKSTACK_COMPILE_NOTICE="0")
    assert q.returncode == 0 and "compiling" not in q.stderr


def test_the_collector_is_paced_while_a_kernel_compiles_and_restored_after(tmp_path):
    # a listener registered after ikstack's sees the collector inside the compilation: the
    # live objects frozen, full collections rarer; the second kernel fails to type, and the
    # collector comes back all the same
    code = (
        KERNEL_MAKER + "import gc\n"
        "from numba.core import event\n"
        "import ikstack.spatial\n"  # installs ikstack's listener first
        "seen = []\n"
        "class L(event.Listener):\n"
        "    def on_start(self, ev): seen.append((gc.get_threshold(), gc.get_freeze_count() > 0))\n"
        "    def on_end(self, ev): pass\n"
        "event.register('numba:compile', L())\n"
        "gc.set_threshold(500, 7, 9)\n"
        "def now(): return gc.get_threshold(), gc.get_freeze_count()\n"
        "three_compiles(lambda p: print(p + str(seen[-1]), now()))\n"
        "keep = [[] for _ in range(10)]\n"
        "gc.freeze()\n"  # a program that froze its own objects keeps them frozen
        "make(ok, 'ikstack.chunk.fake')(1.0)\n"
        "print(seen[-1][0], gc.get_freeze_count() > 0)\n"
        "gc.unfreeze()\n"
        "gc.disable()\n"  # a program that turned the collector off
        "make(ok, 'ikstack.diffik.fake')(1.0)\n"
        "print(seen[-1], now(), gc.isenabled())\n"
    )
    p = run_python(code, NUMBA_CACHE_DIR=str(tmp_path), IKSTACK_COMPILE_NOTICE="0")
    assert p.returncode == 0, p.stderr
    full = compile_notice.COMPILE_FULL_EVERY
    assert p.stdout.splitlines() == [
        f"((500, 7, {full}), True) ((500, 7, 9), 0)",
        f"TypingError ((500, 7, {full}), True) ((500, 7, 9), 0)",
        "((500, 7, 9), False) ((500, 7, 9), 0)",  # a user's own kernel: left alone
        f"(500, 7, {full}) True",
        "((500, 7, 9), False) ((500, 7, 9), 0) False",
    ]


def test_area_of_takes_the_longest_prefix():
    assert compile_notice.area_of("ikstack.ik.analytic._single_target") == "analytic IK"
    assert compile_notice.area_of("ikstack.ik.analytic.general6r._dense") == "general 6R IK"
    assert compile_notice.area_of("ikstack.ik._gate") == "IK certification"
    assert compile_notice.area_of("numpy.linalg") is None


def test_warmup_runs_every_path_of_a_robot(capsys):
    assert main(["warmup", "--robot", "planar2"]) == 0
    out = capsys.readouterr().out
    for label in (
        "kinematics",
        "solve_ik, one pose",
        "solve_ik, batch",
        "path solver",
        "servo step",
    ):
        assert f"planar2: {label}" in out


def test_warmup_skips_a_gripper(capsys):
    assert main(["warmup", "--robot", "parallel_gripper"]) == 0
    assert "skipped" in capsys.readouterr().out
    assert build_parser().parse_args(["warmup", "--all"]).all
