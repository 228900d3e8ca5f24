"""The package's structure as the design notes state it (``docs/design.md``, "Layers").

- Every import in ``src/ikstack`` (module level, inside functions, under ``TYPE_CHECKING``, and
  modules named by string to ``importlib.import_module`` or in a lazy-name table) reaches only
  the importing module's own layer or an earlier one in the notes' table.
- No module is over 600 lines.
- Importing ikstack or any of its packages loads no optional extra (Warp, MuJoCo, Ray, viser,
  Pinocchio, ...); only the Warp kernel modules import one at module level.
- mypy skips (``# mypy: ignore-errors``) only modules in Warp's kernel language.

The layer order is read from the notes' table, so the notes and this test cannot drift apart.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PKG = SRC / "ikstack"
NOTES = ROOT / "docs" / "design.md"

MAX_LINES = 600

#: imports that run up a layer on purpose: (importing module, imported module) -> why
EXCEPTIONS = {
    (
        "ikstack.model.chain",
        "ikstack.kinematics",
    ): "Chain.fk / Chain.jacobian are conveniences resolved at call time",
}

#: optional extras (and heavy peers of the test extra) that importing ikstack must not load
EXTRAS = (
    "warp",
    "mujoco",
    "ray",
    "viser",
    "pinocchio",
    "matplotlib",
    "trimesh",
    "pyarrow",
    "example_robot_data",
    "torch",
    "pandas",
)
#: the modules allowed to import an extra at module level (they are imported lazily themselves)
EXTRA_AT_MODULE_LEVEL = {"warp": re.compile(r"ikstack\.backends\.warp\._[a-z0-9_]+$")}


# ----------------------------------------------------------------------------- the notes
def layer_table(text: str) -> list[tuple[str, list[str]]]:
    """``[(layer, [module prefix, ...]), ...]`` in order, from the notes' "Layers" table."""
    section = text.split("\n## Layers\n", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("|")]
    out = []
    for row in rows[2:]:  # header and separator
        cells = [c.strip() for c in row.strip("|").split("|")]
        out.append((cells[0], re.findall(r"`(ikstack[\w.]*)`", cells[1])))
    return out


LAYERS = layer_table(NOTES.read_text())
ORDER = {name: i for i, (name, _) in enumerate(LAYERS)}


def layer_of(module: str) -> str | None:
    """The layer of a dotted module name (the longest matching prefix in the table)."""
    best, best_len = None, -1
    for name, prefixes in LAYERS:
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best_len:
                best, best_len = name, len(p)
    return best


# ----------------------------------------------------------------------------- the sources
def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def sources() -> list[tuple[str, Path]]:
    return sorted((module_name(p), p) for p in PKG.rglob("*.py"))


def is_module(name: str) -> bool:
    """Whether ``name`` is an ikstack module or package (the compiled ``_native`` included)."""
    rel = Path(*name.split("."))
    base = SRC / rel
    return (
        base.with_suffix(".py").is_file()
        or (base / "__init__.py").is_file()
        or any(base.parent.glob(base.name + ".*.so"))
        or name == "ikstack._native"
    )


@dataclass(frozen=True)
class Import:
    target: str
    line: int
    module_level: bool  # runs when the module is imported (not in a function, not type-only)


def _type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def imports(module: str, path: Path) -> Iterator[Import]:
    """Every import of an ikstack module in ``path``, resolved to the module it loads."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(), str(path))

    def walk(node: ast.AST, top: bool) -> Iterator[Import]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                for n in child.body:
                    yield from one(n, False)
                for n in child.orelse:
                    yield from one(n, top)
            else:
                yield from one(child, top)

    def one(node: ast.AST, top: bool) -> Iterator[Import]:
        if isinstance(node, ast.Import):
            for a in node.names:
                yield Import(a.name, node.lineno, top)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                src = ".".join(base + ([node.module] if node.module else []))
            else:
                src = node.module or ""
            for a in node.names:
                sub = f"{src}.{a.name}"
                yield Import(sub if is_module(sub) else src, node.lineno, top)
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if (
                name == "import_module"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                yield Import(node.args[0].value, node.lineno, top)
        elif isinstance(node, ast.Dict):  # a lazy-name table: name -> module, loaded on use
            for v in node.values:
                if (
                    isinstance(v, ast.Constant)
                    and isinstance(v.value, str)
                    and v.value.startswith("ikstack.")
                    and is_module(v.value)
                ):
                    yield Import(v.value, v.lineno, False)
        inner = top and not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        yield from walk(node, inner)

    yield from walk(tree, True)


# ----------------------------------------------------------------------------- the tests
def test_the_notes_table_names_every_module_and_the_layers_in_order():
    names = [n for n, _ in LAYERS]
    assert names[:2] == ["base", "spatial"] and names[-1] == "cli", names
    unplaced = [m for m, _ in sources() if m != "ikstack" and layer_of(m) is None]
    assert not unplaced, (
        f"modules in no layer of the table in {NOTES.name}: {unplaced}; add them to the table"
    )


def violations() -> list[str]:
    out = []
    for module, path in sources():
        if module == "ikstack":  # the facade: checked by the test below
            continue
        mine = layer_of(module)
        assert mine is not None, module
        for imp in imports(module, path):
            if not imp.target.startswith("ikstack.") or (module, imp.target) in EXCEPTIONS:
                continue
            theirs = layer_of(imp.target)
            if theirs is None:
                out.append(
                    f"{path.relative_to(ROOT)}:{imp.line}: {module} imports {imp.target}, "
                    "which is in no layer"
                )
            elif ORDER[theirs] > ORDER[mine]:
                out.append(
                    f"{path.relative_to(ROOT)}:{imp.line}: {module} (layer {mine}) imports "
                    f"{imp.target} (layer {theirs}), a later layer"
                )
    return out


def test_no_import_runs_up_a_layer():
    bad = violations()
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


def test_the_package_facade_loads_only_the_base_layer_at_import():
    path = PKG / "__init__.py"
    eager = [
        i for i in imports("ikstack", path) if i.module_level and i.target.startswith("ikstack")
    ]
    assert eager, "the scan found none of the facade's imports"
    bad = [
        f"line {i.line}: {i.target} (layer {layer_of(i.target)})"
        for i in eager
        if layer_of(i.target) != "base"
    ]
    assert not bad, "ikstack/__init__.py imports beyond the base layer at import time: " + str(bad)


def test_no_module_is_over_600_lines():
    long = {
        str(p.relative_to(ROOT)): n
        for _, p in sources()
        if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines (split them by what they hold): {long}"


def test_extras_are_imported_at_module_level_only_by_the_warp_kernel_modules():
    bad = []
    for module, path in sources():
        for imp in imports(module, path):
            top = imp.target.split(".")[0]
            if imp.module_level and top in EXTRAS:
                allowed = EXTRA_AT_MODULE_LEVEL.get(top)
                if allowed is None or not allowed.match(module):
                    bad.append(f"{path.relative_to(ROOT)}:{imp.line}: {imp.target}")
    assert not bad, (
        "optional extras imported when the module loads (import them inside the "
        "function that needs them):\n" + "\n".join(bad)
    )


def test_importing_ikstack_and_its_packages_loads_no_extra():
    packages = [m for m, p in sources() if p.name == "__init__.py" and ".cli" not in m]
    code = (
        "import importlib, sys\n"
        f"for m in {packages!r}:\n"
        "    importlib.import_module(m)\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({EXTRAS!r})))\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ},
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]", f"importing {packages} loaded {p.stdout.strip()}"


#: a module defining Warp kernel-language code: its annotations are Warp's, not types
WARP_CODE = re.compile(r"^\s*@wp\.(func|kernel|struct)\b", re.M)


def test_mypy_skips_only_modules_in_warp_kernel_language():
    """``# mypy: ignore-errors`` only where Warp's annotations (``wp.array(dtype=...)``, struct
    types) are not types mypy reads: a module that defines Warp functions, kernels or structs,
    or is generated from a CPU kernel (those are Warp functions). Plain Python is checked."""
    skipped = [(m, p) for m, p in sources() if p.read_text().startswith("# mypy: ignore-errors")]
    assert skipped, "the scan found no opt-out (the Warp kernel modules carry one)"
    bad = [
        str(p.relative_to(ROOT))
        for _, p in skipped
        if not p.name.startswith("_gen_") and not WARP_CODE.search(p.read_text())
    ]
    assert not bad, f"plain Python modules that mypy skips (remove the opt-out): {bad}"


def test_the_scan_sees_every_kind_of_import(tmp_path):
    """The scanner itself, on a made-up module: each kind of import is found and placed."""
    probe = (
        "from typing import TYPE_CHECKING\n"
        "import ikstack.spatial\n"
        "from ikstack import robots\n"
        "if TYPE_CHECKING:\n"
        "    from ikstack.servo import Servo\n"
        "def f():\n"
        "    from ikstack.chunk import decode_chunk\n"
        "    import importlib\n"
        '    return importlib.import_module("ikstack.jobs")\n'
        '_LAZY = {"X": "ikstack.validate"}\n'
    )
    fake = tmp_path / "forward.py"
    fake.write_text(probe)
    found = {
        (i.target, i.line, i.module_level)
        for i in imports("ikstack.kinematics.forward", fake)
        if i.target.startswith("ikstack")
    }
    assert found == {
        ("ikstack.spatial", 2, True),
        ("ikstack.robots", 3, True),
        ("ikstack.servo", 5, False),
        ("ikstack.chunk", 7, False),
        ("ikstack.jobs", 9, False),
        ("ikstack.validate", 10, False),
    }, found
