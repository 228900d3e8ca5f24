"""The vocabulary's settings and modes: the analytic lock search (``LockSearch``), the chunk
decoder's one ``ArmDecodeConfig``, rejections' ``status``; each former name still works one
release and warns."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ikstack.errors import ConfigError, IKStackDeprecationWarning, InputError


def _warns_once(fn):
    """``fn()``, which must warn exactly once (IKStackDeprecationWarning) at this file's line."""
    with pytest.warns(IKStackDeprecationWarning) as got:
        value = fn()
    assert len(got) == 1, [str(w.message) for w in got]
    assert Path(got[0].filename) == Path(__file__)
    return value


def _same(a, b):
    assert np.array_equal(a.q, b.q) and np.array_equal(a.success, b.success)
    assert np.array_equal(a.status, b.status)


# ---------------------------------------------------------------- analytic lock search
@pytest.fixture(scope="module")
def rizon():
    from ikstack.robots import load

    chain = load("rizon4")
    rng = np.random.default_rng(5)
    q = np.clip(chain.middle() + rng.uniform(-0.5, 0.5, (3, 7)), chain.lower, chain.upper)
    return chain, q, chain.fk(q)


def test_lock_search_is_a_string_enum_without_seed_in_its_names():
    from ikstack.ik.analytic import LockSearch
    from ikstack.ik.analytic.general6r import SEARCHES

    assert [s.value for s in LockSearch] == ["fixed", "near_q0"] and SEARCHES == (
        "fixed",
        "near_q0",
    )
    assert LockSearch.NEAR_Q0 == "near_q0" and f"{LockSearch.FIXED}" == "fixed"
    assert not any("seed" in s.name.lower() or "seed" in s.value for s in LockSearch)


def test_locked_7r_takes_near_q0_and_seed_local_warns(rizon):
    from ikstack.ik.analytic import LockSearch
    from ikstack.ik.analytic.general6r import LockedJoint7R

    chain, q, T = rizon
    new = LockedJoint7R(chain, num_locks=4, search=LockSearch.NEAR_Q0)
    old = _warns_once(lambda: LockedJoint7R(chain, num_locks=4, search="seed_local"))
    assert old.search is LockSearch.NEAR_Q0 and new.search is LockSearch.NEAR_Q0
    assert _warns_once(lambda: new.candidates_for("seed_local")) == new.candidates_for("near_q0")
    fixed = LockedJoint7R(chain, num_locks=4)
    want = fixed.solve(T, q0=q, search="near_q0", return_all=True)
    assert want.q_all.shape[1] == (4 + 9) * 16
    _same(_warns_once(lambda: fixed.solve(T, q0=q, search="seed_local", return_all=True)), want)
    path = _warns_once(lambda: fixed.solve_path(T, q0=q[0], search="seed_local"))
    _same(path, fixed.solve_path(T, q0=q[0], search="near_q0"))
    with pytest.raises(InputError, match="near_q0"):
        LockedJoint7R(chain, num_locks=4, search="local")


def test_analytic_general_mode_takes_near_q0_and_seed_local_warns(rizon):
    from ikstack.ik.analytic import AnalyticConfig, AnalyticIK, LockSearch

    chain, q, T = rizon
    new = AnalyticIK(chain, mode="general", num_locks=4, search="near_q0")
    old = _warns_once(lambda: AnalyticIK(chain, mode="general", num_locks=4, search="seed_local"))
    cfg = AnalyticConfig(mode="general", num_locks=4, search="seed_local")
    by_config = _warns_once(lambda: AnalyticIK(chain, config=cfg))
    assert new.family.search is old.family.search is by_config.family.search is LockSearch.NEAR_Q0
    _same(old.solve(T, q), new.solve(T, q))
    ik = AnalyticIK(chain, mode="general", num_locks=4)  # solve: fixed; paths: near_q0
    assert ik.family.search is LockSearch.FIXED
    want = ik.solve_path(T, q[0], search=LockSearch.NEAR_Q0)
    _same(_warns_once(lambda: ik.solve_path(T, q[0], search="seed_local")), want)
    _same(ik.solve_path(T, q[0]), want)
    with pytest.raises(InputError, match="search"):
        AnalyticIK(chain, mode="general", num_locks=4, search="everywhere")


def test_analytic_config_holds_every_solver_keyword_with_its_default():
    """``AnalyticConfig`` is the solver's settings as one value: the same names and defaults as
    ``AnalyticIK``'s keywords (which stay the public way to pass them), so a setting added to
    one is added to the other."""
    import dataclasses
    import inspect

    from ikstack.ik.analytic import AnalyticConfig, AnalyticIK

    params = inspect.signature(AnalyticIK.__init__).parameters
    keywords = {n: p.default for n, p in params.items() if n not in ("self", "chain", "config")}
    assert keywords == {f.name: f.default for f in dataclasses.fields(AnalyticConfig)}


# ---------------------------------------------------------------- chunk decoder settings
@pytest.fixture(scope="module")
def arm():
    from ikstack.robots import load

    return load("marvin_left_taccap")


def _chunk(arm, n=3):
    q0 = np.clip(arm.middle(), arm.lower + 0.3, arm.upper - 0.3)
    if arm.constraints and not arm.constraints_satisfied(q0):
        q0 = np.zeros(arm.dof)
    qs = q0 + np.linspace(0.0, 0.02, n)[:, None]
    return q0, arm.fk(qs)


def test_arm_decoder_takes_one_config(arm):
    from ikstack.chunk import AnalyticDecodeConfig, ArmDecodeConfig, ArmDecoder, DecodeMethod
    from ikstack.diffik import DiffQPConfig

    cfg = ArmDecodeConfig("diff", diff=DiffQPConfig(lam=2e-3), ik_validation_dt_s=0.005)
    assert cfg.method is DecodeMethod.DIFF and isinstance(cfg.analytic, AnalyticDecodeConfig)
    dec = ArmDecoder("left", arm, config=cfg)
    assert dec.config is cfg and dec.method is DecodeMethod.DIFF
    assert dec.ik_validation_dt_s == 0.005 and dec.substeps(0.05) == 10
    assert ArmDecoder("left", arm).method is DecodeMethod.ANALYTIC  # the default
    with pytest.raises(ConfigError, match="method"):
        ArmDecodeConfig("numeric")
    with pytest.raises(ConfigError, match="ik_validation_dt_s"):
        ArmDecodeConfig("diff", ik_validation_dt_s=0.0)
    with pytest.raises(ConfigError, match="DiffQPConfig"):
        ArmDecodeConfig("diff", diff={"lam": 1.0})
    with pytest.raises(AttributeError):
        cfg.method = "analytic"  # frozen


def test_arm_decoder_former_settings_arguments_warn_and_decode_the_same(arm):
    from ikstack.chunk import AnalyticDecodeConfig, ArmDecodeConfig, ArmDecoder, ArmSpec
    from ikstack.diffik import DiffQPConfig

    diff = DiffQPConfig(lam=2e-3)
    q0, T = _chunk(arm)
    new = ArmDecoder("left", arm, ArmDecodeConfig("diff", diff=diff, ik_validation_dt_s=0.005))
    want = new.decode(q0, T, 0.05)
    assert want.success
    positional = _warns_once(lambda: ArmDecoder("left", arm, "diff", diff, None, 0.005))
    keywords = _warns_once(
        lambda: ArmDecoder("left", arm, method="diff", diff_config=diff, ik_validation_dt_s=0.005)
    )
    for old in (positional, keywords):
        assert old.config == new.config
        np.testing.assert_array_equal(old.decode(q0, T, 0.05).q, want.q)
    assert _warns_once(lambda: new.diff_config) is diff
    assert isinstance(_warns_once(lambda: new.analytic), AnalyticDecodeConfig)
    # an ArmSpec (a worker's recipe) builds its decoder from the same config
    spec = ArmSpec("left", arm, "diff", diff, ik_validation_dt_s=0.005)
    assert spec.config == new.config and spec.build().config == new.config
    with pytest.raises(InputError, match="twice"):
        ArmDecoder("left", arm, "diff", method="diff")


def test_a_rejection_has_a_status_and_reason_warns():
    from ikstack.chunk import ChunkRejection, DecodeStatus

    r = ChunkRejection("left", 2, -1, DecodeStatus.BRANCH_JUMP, "jumps")
    assert r.status is DecodeStatus.BRANCH_JUMP and "branch_jump" in str(r)
    assert _warns_once(lambda: r.reason) is DecodeStatus.BRANCH_JUMP


def test_decode_methods_are_listed_once_in_the_vocabulary():
    import ikstack.chunk as chunk
    import ikstack.chunk.types as types
    from ikstack import vocabulary

    assert chunk.DecodeMethod is types.DecodeMethod is vocabulary.DecodeMethod
    assert vocabulary.DECODE_METHODS == ("analytic", "diff")


# ---------------------------------------------------------------- every result: the same words
def _summary(**kw):
    import dataclasses

    from ikstack.jobs import SolveSummary

    args = {
        f.name: (0 if f.type in ("int", "float") else "x")
        for f in dataclasses.fields(SolveSummary)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    return SolveSummary(**(args | kw))


def test_a_solve_job_and_each_episode_say_success_status_and_message():
    from ikstack.jobs import EpisodeStats, SolveStatus

    ok = EpisodeStats("a", "a.csv", 10, 10, 1e-7, 1e-7, "analytic", 0.1)
    part = EpisodeStats("b", "b.csv", 10, 7, 1e-7, 1e-7, "analytic", 0.1)
    bad = EpisodeStats("c", "c.csv", 0, 0, 0.0, 0.0, "failed", 0.0, error={"message": "no q"})
    assert (ok.success, ok.status) == (True, SolveStatus.OK) and "10/10" in ok.message
    assert (part.success, part.status) == (False, SolveStatus.FRAMES_FAILED)
    assert "7/10" in part.message
    assert (bad.success, bad.status) == (False, SolveStatus.EPISODE_FAILED)
    assert "no q" in bad.message
    # a job: success exactly when its status is ok
    good = _summary(frames=10, frames_solved=10, success_rate=1.0, success=True)
    low = _summary(frames=10, frames_solved=7, success_rate=0.7, min_success=0.9, success=False)
    err = _summary(success_rate=1.0, episode_errors=[{"name": "c"}], success=False)
    assert [s.status for s in (good, low, err)] == [
        SolveStatus.OK,
        SolveStatus.BELOW_MIN_SUCCESS,
        SolveStatus.EPISODE_FAILED,
    ]
    assert all(s.success == (s.status is SolveStatus.OK) for s in (good, low, err))
    assert str(SolveStatus.OK) == "ok"


def test_a_solved_episode_has_a_message():
    from ikstack.ik import IKStatus
    from ikstack.jobs import SolvedEpisode

    n = 4
    ep = SolvedEpisode(
        np.arange(n, dtype=float),
        ("j1",),
        np.zeros((n, 1)),
        np.array([True, False, False, True]),
        np.zeros(n),
        np.zeros(n),
        np.array([0, 5, 5, 0]),
    )
    assert ep.message == f"2/4 frames certified; most failures: {IKStatus.UNREACHABLE.reason}"


def test_every_status_enum_reads_as_its_value():
    from ikstack.chunk import DecodeStatus
    from ikstack.diffik import InternalUnits, LagPolicy, QPSolverKind, StepStatus
    from ikstack.validate import CheckStatus

    for e in (StepStatus.OK, LagPolicy.REPORT, InternalUnits.SI, QPSolverKind.OSQP):
        assert str(e) == e.value and f"{e}" == e.value
    assert str(CheckStatus.PASS) == "pass" and str(DecodeStatus.OK) == "ok"


RESULTS = [
    ("ikstack.ik", "IKResult"),
    ("ikstack.diffik", "DiffIKResult"),
    ("ikstack.diffik", "StepResult"),
    ("ikstack.servo", "ServoResult"),
    ("ikstack.chunk", "ArmDecodeResult"),
    ("ikstack.chunk", "DecodedChunk"),
    ("ikstack.jobs", "SolveSummary"),
    ("ikstack.jobs", "EpisodeStats"),
    ("ikstack.jobs", "SolvedEpisode"),
    ("ikstack.validate", "TargetResult"),
    ("ikstack.validate", "JacobianIKReport"),
]


@pytest.mark.parametrize("module, name", RESULTS)
def test_every_public_result_has_success_status_and_message(module, name):
    import dataclasses
    import importlib

    cls = getattr(importlib.import_module(module), name)
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    for word in ("success", "status", "message"):
        assert word in fields or hasattr(cls, word), f"{name} has no {word}"


def test_the_command_line_lists_come_from_the_vocabulary():
    from ikstack import vocabulary
    from ikstack.cli.main import build_parser
    from ikstack.servo.demo import SOLVERS

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    choices = {
        (cmd, a.dest): a.choices for cmd, p in sub.choices.items() for a in p._actions if a.choices
    }
    assert tuple(choices["view", "method"]) == vocabulary.VIEWER_METHODS
    assert tuple(choices["servo-demo", "solver"]) == vocabulary.VELOCITY_SOLVERS == tuple(SOLVERS)
    assert set(vocabulary.VIEWER_METHODS) <= set(vocabulary.METHODS)
    assert set(vocabulary.ANALYTIC_PATH_METHODS) <= set(vocabulary.PATH_METHODS)


def test_the_model_check_takes_its_settings_as_one_config():
    from ikstack.robots import load
    from ikstack.validate import CheckConfig, check_jacobian_ik

    chain = load("ur5")
    cfg = CheckConfig(num_targets=2, max_iterations=30, damping=0.1, rng=4)
    by_config = check_jacobian_ik(chain, config=cfg)
    by_keywords = check_jacobian_ik(chain, num_targets=2, max_iterations=30, damping=0.1, rng=4)
    assert by_config.config == by_keywords.config and by_config.config["damping"] == 0.1
    assert [t.success for t in by_config.targets] == [t.success for t in by_keywords.targets]
    with pytest.raises(AttributeError):
        cfg.damping = 0.2  # frozen
    with pytest.raises(InputError, match="CheckConfig"):
        check_jacobian_ik(chain, config={"damping": 0.1})


def test_engines_and_fk_kinematics_are_listed_once_in_the_vocabulary():
    import argparse

    from ikstack import vocabulary
    from ikstack.cli import validate_cmd
    from ikstack.jobs import engines, options
    from ikstack.jobs.cli_support import add_solve_arguments
    from ikstack.validate import load_fk_model

    assert options.ENGINES is engines.ENGINES is vocabulary.ENGINES == ("local", "ray")
    assert validate_cmd.KINEMATICS is vocabulary.FK_KINEMATICS == ("ikstack", "mujoco")
    p = argparse.ArgumentParser()
    add_solve_arguments(p)
    choices = {a.dest: a.choices for a in p._actions if a.choices}
    assert tuple(choices["engine"]) == vocabulary.ENGINES
    with pytest.raises(InputError, match="valid kinematics: ikstack, mujoco"):
        load_fk_model("ur5", kinematics="pinocchio")


def test_analytic_modes_are_listed_once_and_a_decode_config_takes_only_those():
    from ikstack import vocabulary
    from ikstack.chunk import AnalyticDecodeConfig
    from ikstack.ik.analytic import AnalyticMode
    from ikstack.ik.analytic.solver import MODES

    assert AnalyticMode is vocabulary.AnalyticMode
    assert MODES == vocabulary.ANALYTIC_MODES == ("strict", "near", "general")
    assert AnalyticDecodeConfig().mode is AnalyticMode.NEAR
    assert AnalyticDecodeConfig(mode="strict").mode is AnalyticMode.STRICT
    with pytest.raises(ConfigError, match="mode must be one of strict, near, general"):
        AnalyticDecodeConfig(mode="banana")
