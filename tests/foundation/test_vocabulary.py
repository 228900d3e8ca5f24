"""One public vocabulary: every error in ``ikstack.errors``, one list of methods and backends,
and each renamed name still working for one release (it warns)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import ikstack
from ikstack import errors, vocabulary

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
                bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")
                         for b in node.bases]
                if any(b.endswith(("Error", "Exception")) for b in bases):
                    found.append(f"{path.relative_to(SRC)}:{node.name}")
    return found


def test_every_error_class_is_defined_in_errors_py():
    assert _exception_classes_outside_errors() == []


@pytest.mark.parametrize("module, name", [
    ("ikstack.jobs.path", "SolverUnavailableError"),
    ("ikstack.jobs.episode", "DatasetError"),
    ("ikstack.jobs", "SolverUnavailableError"),
    ("ikstack.jobs", "DatasetError"),
    ("ikstack.backends.warp.runtime", "DeviceUnavailableError"),
])
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
