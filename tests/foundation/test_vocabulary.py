"""One public vocabulary: every error in ``ikstack.errors``, one list of methods and backends,
and each renamed name still working for one release (it warns)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import ikstack
from ikstack import errors, vocabulary
from ikstack.errors import IKStackDeprecationWarning

SRC = Path(ikstack.__file__).resolve().parent


def _exception_classes_outside_errors() -> list[str]:
    """``module:Class`` for every class in the package whose base names end in Error or
    Exception, outside ``errors.py``."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path.name == "errors.py" and path.parent == SRC:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                bases = [
                    b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases
                ]
                if any(b.endswith(("Error", "Exception")) for b in bases):
                    found.append(f"{path.relative_to(SRC)}:{node.name}")
    return found


def test_every_error_class_is_defined_in_errors_py():
    assert _exception_classes_outside_errors() == []


@pytest.mark.parametrize(
    "module, name",
    [
        ("ikstack.jobs.path", "SolverUnavailableError"),
        ("ikstack.jobs.episode", "DatasetError"),
        ("ikstack.jobs", "SolverUnavailableError"),
        ("ikstack.jobs", "DatasetError"),
        ("ikstack.backends.warp.runtime", "DeviceUnavailableError"),
    ],
)
def test_errors_moved_to_errors_py_keep_their_old_import_location(module, name):
    try:
        mod = importlib.import_module(module)
    except ImportError:  # pragma: no cover - the warp extra is missing
        pytest.skip(f"{module} needs an extra")
    assert getattr(mod, name) is getattr(errors, name)
    assert issubclass(getattr(errors, name), errors.IKStackError)


def test_dataset_error_names_the_file_row_and_field_and_survives_pickling():
    import pickle

    e = errors.DatasetError("ep.csv", "not a number", row=3, field="qx")
    assert str(e) == "ep.csv, row 3, field 'qx': not a number"
    back = pickle.loads(pickle.dumps(e))
    assert (back.path, back.row, back.field, str(back)) == ("ep.csv", 3, "qx", str(e))
    assert isinstance(e, errors.InputError)


def test_methods_and_backends_are_one_list():
    from ikstack.backends import BACKENDS as registry
    from ikstack.ik import front
    from ikstack.jobs import options

    assert vocabulary.METHODS == ("auto", "analytic", "numerical", "lm", "dls")
    assert front.METHODS is vocabulary.METHODS
    assert options.METHODS is vocabulary.PATH_METHODS
    assert set(vocabulary.PATH_METHODS) <= set(vocabulary.METHODS)
    assert options.BACKENDS is vocabulary.BACKENDS
    assert options.DEVICES is vocabulary.DEVICES
    assert tuple(registry) == vocabulary.BACKENDS == ("numpy", "warp")
    assert {k: v[0] for k, v in registry.items()} == vocabulary.BACKEND_DEVICES


def test_the_command_line_offers_exactly_the_listed_methods_and_backends():
    import argparse

    from ikstack.jobs.cli_support import add_solve_arguments

    p = argparse.ArgumentParser()
    add_solve_arguments(p)
    choices = {a.dest: a.choices for a in p._actions if a.choices}
    assert tuple(choices["method"]) == vocabulary.PATH_METHODS
    assert tuple(choices["backend"]) == vocabulary.BACKENDS
    assert tuple(choices["device"]) == vocabulary.DEVICES


def test_string_enums_read_and_compare_as_their_value():
    m = vocabulary.Method.ANALYTIC
    assert m == "analytic" and str(m) == "analytic" and f"{m}" == "analytic"
    assert vocabulary.Method("dls") is vocabulary.Method.DLS
    assert vocabulary.Backend("warp") == "warp"
    assert {"dls": 1}[vocabulary.Method.DLS] == 1 and vocabulary.Method.LM in {"lm"}


def test_solve_ik_takes_a_method_enum():
    ur5, T, guess = _ur5_target()
    for m in vocabulary.Method:
        assert ikstack.solve_ik(ur5, T, guess, method=m).success.all()


# ---------------------------------------------------------------- renamed names: old warns


@pytest.mark.parametrize(
    "module, old, new",
    [
        ("ikstack", "DampedLeastSquares", "DLSVelocitySolver"),
        ("ikstack.diffik", "DampedLeastSquares", "DLSVelocitySolver"),
        ("ikstack.diffik.dls", "DampedLeastSquares", "DLSVelocitySolver"),
        ("ikstack.ik.numerical", "DampedLeastSquares", "DampedLeastSquaresIK"),
        ("ikstack.ik.numerical.dls", "DampedLeastSquares", "DampedLeastSquaresIK"),
        ("ikstack.diffik", "StepReason", "StepStatus"),
        ("ikstack.diffik.qp_config", "StepReason", "StepStatus"),
    ],
)
def test_a_renamed_module_name_warns_and_is_the_new_object(module, old, new):
    mod = importlib.import_module(module)
    with pytest.warns(IKStackDeprecationWarning, match=new):
        value = getattr(mod, old)
    assert value is getattr(mod, new)


def test_the_two_damped_least_squares_are_two_names():
    from ikstack.diffik import DLSVelocitySolver
    from ikstack.ik.numerical import DampedLeastSquaresIK

    assert DLSVelocitySolver is not DampedLeastSquaresIK
    assert ikstack.DLSVelocitySolver is DLSVelocitySolver
    assert "DLSVelocitySolver" in ikstack.__all__


def test_unknown_module_names_still_raise_attribute_error():
    import ikstack.diffik

    with pytest.raises(AttributeError):
        ikstack.diffik.NoSuchName  # noqa: B018
    with pytest.raises(AttributeError):
        ikstack.NoSuchName  # noqa: B018


def _warns_once(fn):
    """``fn()``, which must warn (IKStackDeprecationWarning) at its caller's line: this file."""
    with pytest.warns(IKStackDeprecationWarning) as got:
        value = fn()
    assert [Path(w.filename) for w in got] == [Path(__file__)] * len(got)
    return value


def test_a_deprecation_warning_points_at_the_line_that_uses_the_old_name():
    """Through a constructor's metaclass, a module ``__getattr__`` under ``from ... import``,
    and a keyword handled a few calls deep: Python's default filter shows a DeprecationWarning
    only when it points at ``__main__``, so it must name the user's line, never ikstack's."""
    from ikstack.ik.numerical import LevenbergMarquardt

    ur5, T, guess = _ur5_target()
    with pytest.warns(IKStackDeprecationWarning) as got:
        LevenbergMarquardt(ur5, seed=7)
        from ikstack.diffik import DampedLeastSquares  # noqa: F401

        ikstack.solve_ik(ur5, T, seed=guess, method="numerical")
    assert len(got) == 3
    assert {(Path(w.filename), w.lineno) for w in got} == {
        (Path(__file__), got[0].lineno),
        (Path(__file__), got[0].lineno + 1),
        (Path(__file__), got[0].lineno + 3),  # after the blank line ruff format puts there
    }
    assert issubclass(IKStackDeprecationWarning, DeprecationWarning)


@pytest.mark.parametrize(
    "module",
    [
        "ikstack",
        "ikstack.ik",
        "ikstack.ik.analytic",
        "ikstack.ik.numerical",
        "ikstack.diffik",
        "ikstack.servo",
        "ikstack.chunk",
        "ikstack.jobs",
        "ikstack.validate",
    ],
)
def test_a_star_import_takes_no_deprecated_name(module):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", IKStackDeprecationWarning)
        exec(f"from {module} import *", {})


def test_ik_result_has_success_status_and_message():
    import numpy as np

    from ikstack.ik import IKResult, IKStatus

    r = IKResult(
        q=np.zeros((3, 2)),
        success=np.array([True, False, False]),
        position_error=np.zeros(3),
        rotation_error=np.zeros(3),
        status=np.array([0, 5, 3]),
        method="test",
    )
    assert IKStatus.UNREACHABLE.reason == r.reason(1)
    assert r.message == (
        "1 of 3 targets solved; failed: 1 no solution within the joint "
        "limits, 1 no candidate met the FK tolerances (target out of reach?)"
    )
    ok = IKResult(
        q=np.zeros((1, 2)),
        success=np.array([True]),
        position_error=np.zeros(1),
        rotation_error=np.zeros(1),
        status=np.array([0]),
        method="test",
    )
    assert ok.message == "all 1 target solved and certified by FK"


def test_arm_decode_result_success_and_status_with_old_names_warning():
    import numpy as np

    from ikstack.chunk.types import ArmDecodeResult, DecodeStatus

    r = ArmDecodeResult("left", False, np.zeros((4, 7)), 2, 1, "joint_limit", "j3 at its limit")
    assert r.success is False and r.status is DecodeStatus.JOINT_LIMIT
    assert r.status == "joint_limit" and r.message == "j3 at its limit"
    assert _warns_once(lambda: r.ok) is False
    assert _warns_once(lambda: r.reason) == "joint_limit"
    with pytest.raises(ValueError):
        ArmDecodeResult("left", False, np.zeros((4, 7)), 2, 1, "no_such_reason")


def test_decoded_chunk_success_status_message():
    import numpy as np

    from ikstack.chunk.types import ChunkRejection, DecodedChunk, DecodeStatus

    rej = ChunkRejection("left", 2, -1, DecodeStatus.BRANCH_JUMP, "jumps")
    c = DecodedChunk(False, np.arange(3.0), {}, rej, (rej,), {})
    assert not c.success and c.status is DecodeStatus.BRANCH_JUMP
    assert c.message == "chunk rejected: arm 'left', knot 2: branch_jump (jumps)"
    assert _warns_once(lambda: c.ok) is False
    good = DecodedChunk(True, np.arange(3.0), {}, None, (), {})
    assert good.success and good.status is DecodeStatus.OK and good.message == "accepted"


def test_step_result_status_with_reason_warning():
    import numpy as np

    from ikstack.diffik import StepResult, StepStatus

    r = StepResult(np.zeros(2), np.zeros(2), StepStatus.TRACKING_LAG, 0.01)
    assert not r.success and r.status is StepStatus.TRACKING_LAG
    assert _warns_once(lambda: r.reason) is StepStatus.TRACKING_LAG


def test_servo_result_success_and_rotation_error():
    import numpy as np

    from ikstack.servo import Action, ServoResult, ServoStatus
    from ikstack.servo.commands import Reference

    ref = Reference(np.zeros(2), np.zeros(2))
    r = ServoResult(Action.TRACK, ref, ServoStatus.VELOCITY_SCALED, rotation_error=0.25)
    assert r.success and r.rotation_error == 0.25
    assert "rotation error 2.5e-01 rad" in repr(r)
    assert not ServoResult(Action.REJECT, ref, ServoStatus.INVALID_INPUT).success
    assert not ServoResult(Action.HOLD, ref, ServoStatus.SOLVER_ERROR).success


def test_validate_target_result_success_and_rotation_error_with_old_names_warning():
    from ikstack.validate.report import CheckStatus, TargetResult

    t = TargetResult(
        index=0,
        q_sample=[0.0],
        position=[0.0, 0.0, 0.0],
        success=True,
        position_error=1e-4,
        rotation_error_deg=0.5,
        iterations=7,
        q_final=[0.1],
    )
    assert t.status is CheckStatus.PASS and t.message == "reached in 7 iterations"
    assert _warns_once(lambda: t.reached) is True
    assert _warns_once(lambda: t.orientation_error_deg) == 0.5


def test_servo_trace_rotation_error_with_old_name_warning():
    import numpy as np

    from ikstack.servo.demo import ServoTrace

    z = np.zeros(2)
    tr = ServoTrace(
        z,
        np.zeros((2, 1)),
        np.zeros((2, 1)),
        z,
        np.array([0.0, 0.5]),
        np.zeros(2, dtype=np.int64),
        np.zeros(2, dtype=np.int64),
        z,
        (),
    )
    assert tr.rotation_error[-1] == 0.5
    assert _warns_once(lambda: tr.orientation_error)[-1] == 0.5
    assert tr.success and tr.message == "no cycles"


def test_servo_trace_success_and_message_follow_its_cycles():
    import numpy as np

    from ikstack.servo import Action, ServoStatus
    from ikstack.servo.demo import ServoTrace

    z = np.zeros(3)

    def trace(actions, flags):
        a = np.array([int(x) for x in actions], dtype=np.int64)
        f = np.array([int(x) for x in flags], dtype=np.int64)
        return ServoTrace(z, z[:, None], z[:, None], z, z, a, f, z, ("ok", "near a limit"))

    ok = trace([Action.TRACK] * 3, [0, ServoStatus.JOINT_BOUND, 0])
    assert ok.success and ok.message == "ok; near a limit"
    assert not trace([Action.TRACK, Action.REJECT, Action.TRACK], [0, 0, 0]).success
    assert not trace([Action.TRACK] * 3, [0, ServoStatus.SOLVER_ERROR, 0]).success


# ---------------------------------------------------------------- q0 (joint guess), rng


def _ur5_target():
    import numpy as np

    from ikstack.robots import load

    ur5 = load("ur5")
    q = np.array([0.1, -1.2, 1.4, -1.8, -1.57, 0.3])
    return ur5, ikstack.fk(ur5, q), q + 0.05


def test_solve_ik_takes_q0_and_seed_still_works_with_a_warning():
    import numpy as np

    from ikstack.errors import InputError

    ur5, T, guess = _ur5_target()
    for method in ("analytic", "numerical"):
        new = ikstack.solve_ik(ur5, T, q0=guess, method=method)
        old = _warns_once(lambda m=method: ikstack.solve_ik(ur5, T, seed=guess, method=m))
        assert new.success.all() and np.array_equal(new.q, old.q)
    with pytest.raises(InputError, match="both 'seed' and 'q0'"):
        ikstack.solve_ik(ur5, T, q0=guess, seed=guess)


def test_solver_methods_take_q0_and_seed_still_works_with_a_warning():
    import numpy as np

    from ikstack.ik.analytic import AnalyticIK
    from ikstack.ik.numerical import LevenbergMarquardt

    ur5, T, guess = _ur5_target()
    ik = AnalyticIK(ur5)
    assert np.array_equal(ik.solve(T, q0=guess).q, _warns_once(lambda: ik.solve(T, seed=guess)).q)
    path = np.stack([T, T])
    assert np.array_equal(
        ik.solve_path(path, q0=guess).q, _warns_once(lambda: ik.solve_path(path, seed=guess)).q
    )
    lm = LevenbergMarquardt(ur5)
    assert np.array_equal(lm.solve(T, q0=guess).q, _warns_once(lambda: lm.solve(T, seed=guess)).q)


def test_numerical_randomness_is_rng_and_seed_still_works_with_a_warning():
    from ikstack.errors import InputError
    from ikstack.ik.numerical import LevenbergMarquardt

    ur5, _, _ = _ur5_target()
    assert LevenbergMarquardt(ur5, rng=7).options.rng == 7
    old = _warns_once(lambda: LevenbergMarquardt(ur5, seed=7))
    assert old.options.rng == 7
    assert _warns_once(lambda: old.options.seed) == 7
    with pytest.raises(InputError, match="both 'seed' and 'rng'"):
        LevenbergMarquardt(ur5, seed=7, rng=7)


def test_model_check_takes_rng_and_rotation_tolerance_with_old_names_warning():
    from ikstack.validate import check_jacobian_ik

    ur5, _, _ = _ur5_target()
    new = check_jacobian_ik(ur5, num_targets=2, rng=3, rotation_tolerance_deg=5.0)
    with pytest.warns(IKStackDeprecationWarning) as got:
        old = check_jacobian_ik(ur5, num_targets=2, seed=3, orientation_tolerance_deg=5.0)
    assert len(got) == 2
    assert [t.q_sample for t in new.targets] == [t.q_sample for t in old.targets]
    assert new.config["rotation_tolerance_deg"] == old.config["orientation_tolerance_deg"] == 5.0


# ---------------------------------------------------------------- *Config settings, enums


def test_numerical_settings_are_a_config_passed_whole_or_as_keywords():
    import numpy as np

    from ikstack.errors import InputError
    from ikstack.ik.numerical import LevenbergMarquardt, NumericalConfig

    ur5, T, guess = _ur5_target()
    cfg = NumericalConfig(max_restarts=3, rng=5)
    a = LevenbergMarquardt(ur5, config=cfg)
    assert a.config == cfg and a.options is a.config
    b = LevenbergMarquardt(ur5, max_restarts=3, rng=5)
    assert b.config == cfg
    c = LevenbergMarquardt(ur5, config=cfg, max_restarts=4)  # a keyword overrides the config
    assert c.config.max_restarts == 4 and c.config.rng == 5
    assert np.array_equal(a.solve(T, guess).q, b.solve(T, guess).q)
    with pytest.raises(InputError, match="NumericalConfig"):
        LevenbergMarquardt(ur5, config={"max_restarts": 3})
    import ikstack.ik.numerical as numerical

    assert _warns_once(lambda: numerical.NumericalOptions) is NumericalConfig


def test_analytic_settings_are_a_config_and_modes_an_enum():
    import numpy as np

    from ikstack.errors import InputError
    from ikstack.ik.analytic import AnalyticConfig, AnalyticIK, AnalyticMode

    ur5, T, guess = _ur5_target()
    via_config = AnalyticIK(
        ur5, config=AnalyticConfig(mode=AnalyticMode.STRICT, max_joint_step=2.0)
    )
    via_keywords = AnalyticIK(ur5, mode="strict", max_joint_step=2.0)
    assert via_config.max_joint_step == via_keywords.max_joint_step == 2.0
    assert via_config.mode == "strict"
    assert np.array_equal(via_config.solve(T, guess).q, via_keywords.solve(T, guess).q)
    assert tuple(AnalyticMode) == ("strict", "near", "general")
    with pytest.raises(InputError, match="AnalyticConfig"):
        AnalyticIK(ur5, config={"mode": "strict"})


def test_servo_kernel_is_kernel_and_backend_warns():
    from ikstack.errors import InputError
    from ikstack.robots import load
    from ikstack.servo import Servo, ServoConfig

    chain = load("planar2")
    cfg = ServoConfig(task_axes=(0, 1))
    s = Servo(chain, cfg, kernel="native")
    assert s.kernel == "native"
    with pytest.warns(IKStackDeprecationWarning, match="kernel="):
        Servo(chain, cfg, backend="native")
    assert _warns_once(lambda: s.backend) == "native"
    with pytest.raises(InputError, match="kernel must be 'native'"):
        Servo(chain, cfg, kernel="fortran")
    with pytest.raises(InputError, match="both"):
        Servo(chain, cfg, kernel="native", backend="native")


def test_servo_config_rotation_tolerance_with_the_old_keyword_and_attribute_warning():
    import dataclasses

    from ikstack.errors import ConfigError
    from ikstack.servo import ServoConfig

    new = ServoConfig(rotation_tolerance=0.02)
    old = _warns_once(lambda: ServoConfig(orientation_tolerance=0.02))
    assert old == new and old.rotation_tolerance == 0.02
    assert _warns_once(lambda: new.orientation_tolerance) == 0.02
    assert dataclasses.replace(new, rotation_tolerance=0.03).rotation_tolerance == 0.03
    with pytest.raises(ConfigError, match="both"):
        ServoConfig(rotation_tolerance=0.02, orientation_tolerance=0.02)
    with pytest.raises(ConfigError, match="rotation_tolerance"):
        ServoConfig(rotation_tolerance=-1.0)


def test_chunk_decode_method_is_method_and_backend_warns():
    from ikstack.chunk import AnalyticDecodeConfig, ArmSpec, DecodeMethod
    from ikstack.robots import load

    chain = load("ur5")
    spec = ArmSpec("arm", chain, DecodeMethod.DIFF)
    assert spec.method == "diff"
    assert _warns_once(lambda: spec.backend) == "diff"
    dec = spec.build()
    assert dec.method is DecodeMethod.DIFF
    assert _warns_once(lambda: dec.backend) is DecodeMethod.DIFF
    from ikstack.chunk.arm_decoder import ArmDecoder

    old = _warns_once(lambda: ArmDecoder("arm", chain, backend="diff"))
    assert old.method is DecodeMethod.DIFF
    import ikstack.chunk as chunk
    import ikstack.chunk.arm_decoder as arm_decoder

    assert _warns_once(lambda: chunk.AnalyticSettings) is AnalyticDecodeConfig
    assert _warns_once(lambda: arm_decoder.AnalyticSettings) is AnalyticDecodeConfig


def test_profile_ik_method_with_the_old_attribute_warning():
    from ikstack.chunk import bundled_profile_path, load_profile

    path = bundled_profile_path("marvin_bimanual_diff")
    p = load_profile(path)
    assert p.ik_method in ("analytic", "diff")
    assert _warns_once(lambda: p.ik_backend) == p.ik_method


def test_model_check_runs_against_fk_models_and_the_backend_names_warn():
    import ikstack.validate as validate
    from ikstack.robots import load

    chain = load("ur5")
    m = validate.as_fk_model(chain)
    assert isinstance(m, validate.FKModel) and isinstance(m, validate.ChainFK)
    assert _warns_once(lambda: validate.FKBackend) is validate.FKModel
    assert isinstance(_warns_once(lambda: validate.as_backend(chain)), validate.ChainFK)
    assert _warns_once(lambda: validate.load_backend("ur5", engine="ikstack")).name == "ur5"
    assert validate.load_fk_model("ur5", kinematics="ikstack").name == "ur5"
    import ikstack.validate.backends as old_module

    assert _warns_once(lambda: old_module.ChainFK) is validate.ChainFK
    assert _warns_once(lambda: old_module.FKBackend) is validate.FKModel


def test_the_algebraic_solvers_take_q0_and_seed_still_works_with_a_warning():
    import numpy as np

    from ikstack.errors import InputError
    from ikstack.ik.analytic.general6r import General6R, LockedJoint7R
    from ikstack.robots import load

    ur5, T, guess = _ur5_target()
    g = General6R(ur5)
    assert np.array_equal(g.solve(T, q0=guess).q, _warns_once(lambda: g.solve(T, seed=guess)).q)
    rizon = load("rizon4s")
    q = rizon.middle() + 0.2
    Tr = ikstack.fk(rizon, q)
    lk = LockedJoint7R(rizon, num_locks=4)
    assert np.array_equal(lk.solve(Tr, q).q, _warns_once(lambda: lk.solve(Tr, seed=q)).q)
    path = np.stack([Tr, Tr])
    assert np.array_equal(
        lk.solve_path(path, q).q, _warns_once(lambda: lk.solve_path(path, seed=q)).q
    )
    with pytest.raises(InputError, match="needs q0"):
        lk.solve_path(path)


def test_solve_summary_success_with_the_old_name_warning_and_both_json_keys():
    import dataclasses
    import json

    from ikstack.jobs import SolveSummary

    fields = {f.name: f for f in dataclasses.fields(SolveSummary)}
    args = {
        n: (0 if f.type in ("int", "float") else "x")
        for n, f in fields.items()
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    s = SolveSummary(**args, success=False)
    assert s.success is False and _warns_once(lambda: s.ok) is False
    d = json.loads(s.to_json())
    assert d["success"] is False and d["ok"] is False
    assert "episodes" in s.message


def test_servo_result_orientation_error_is_a_deprecated_alias():
    import numpy as np

    from ikstack.errors import InputError
    from ikstack.servo import Action, ServoResult, ServoStatus
    from ikstack.servo.commands import Reference

    ref = Reference(np.zeros(2), np.zeros(2))
    with pytest.deprecated_call(match="rotation_error"):
        r = ServoResult(Action.TRACK, ref, ServoStatus.NONE, orientation_error=0.25)
    assert r.rotation_error == 0.25
    with pytest.deprecated_call(match="rotation_error"):
        assert r.orientation_error == 0.25
    with pytest.raises(InputError, match="both rotation_error and orientation_error"):
        ServoResult(Action.TRACK, ref, ServoStatus.NONE, rotation_error=0.1, orientation_error=0.2)
