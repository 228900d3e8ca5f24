"""The test tree collects in one run: no test module imports a ``conftest`` by name, and the
helper modules test folders import by name (their folder is put on ``sys.path``) have names of
their own. Each test folder is a plain directory, so every ``conftest.py`` is a module named
``conftest``: with two folders in one run the first import wins, and a test that imported
helpers from its folder's conftest got the other folder's."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _imported_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_no_test_module_imports_a_conftest():
    offenders = [
        str(p.relative_to(TESTS)) for p in TESTS.rglob("*.py") if "conftest" in _imported_names(p)
    ]
    assert not offenders, f"import helpers from a module of their own, not conftest: {offenders}"


def test_helper_module_names_are_unique():
    by_name: dict[str, list[str]] = defaultdict(list)
    for p in TESTS.rglob("*.py"):
        if p.name != "conftest.py" and not p.name.startswith("test_") and p.name != "__init__.py":
            by_name[p.stem].append(str(p.relative_to(TESTS)))
    clashes = {k: v for k, v in by_name.items() if len(v) > 1}
    assert not clashes, f"helper modules sharing a name: {clashes}"
