"""A counter that starts at a literal int in a kernel is not passed to another kernel.

numba types ``n = 0`` as the literal 0 until the loop's ``n += 1`` widens it, and a compiled
callee that sees the counter before then is compiled for ``Literal[int](0)`` and again for
``int64`` (measured: the Cholesky kernels twice in the first Panda ``solve_ik``, ``set4`` twice
in the first UR5 one). ``n = int(0)`` is an int64 from the start and reads the same to the Warp
translator. Callees inlined at every call site (``inline="always"``) are typed per site and do
not count.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "ikstack"
#: builtins and numpy calls: not compiled kernels
NOT_KERNELS = {"range", "prange", "min", "max", "abs", "int", "float", "bool", "len"}


def _kernel_defs() -> list[tuple[Path, ast.FunctionDef]]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        if "backends/warp" in path.as_posix():  # Warp's kernel language; generated copies
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                "jit" in ast.unparse(d) for d in node.decorator_list
            ):
                out.append((path, node))
    return out


def _inlined(defs: list[tuple[Path, ast.FunctionDef]]) -> set[str]:
    return {
        fn.name
        for _, fn in defs
        if any("inline" in ast.unparse(d) and "always" in ast.unparse(d) for d in fn.decorator_list)
    }


def literal_counters_passed(fn: ast.FunctionDef, inlined: set[str]) -> list[str]:
    """``"line: name -> callee"`` for each counter of ``fn`` started at an int literal, assigned
    again, and passed to a callee that is compiled on its own."""
    started, reassigned = set(), set()
    for node in ast.walk(fn):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            reassigned.add(node.target.id)
        if isinstance(node, ast.Assign):
            literal = isinstance(node.value, ast.Constant) and type(node.value.value) is int
            for t in node.targets:
                if isinstance(t, ast.Name):
                    (started if literal else reassigned).add(t.id)
    counters = started & reassigned
    found = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        callee = ast.unparse(node.func)
        name = callee.rsplit(".", 1)[-1]
        if callee in NOT_KERNELS or callee.startswith(("np.", "math.")) or name in inlined:
            continue
        for arg in node.args:
            if isinstance(arg, ast.Name) and arg.id in counters:
                found.append(f"{node.lineno}: {arg.id} -> {callee}")
    return found


def test_no_kernel_passes_a_literal_counter_to_a_compiled_callee():
    defs = _kernel_defs()
    assert len(defs) > 100  # the scan sees the kernels
    inlined = _inlined(defs)
    bad = [
        f"{path.relative_to(SRC.parent)}:{hit} (in {fn.name})"
        for path, fn in defs
        for hit in literal_counters_passed(fn, inlined)
    ]
    assert bad == [], "start these counters at int(0) (or int(1)):\n" + "\n".join(bad)


def test_the_rule_sees_a_literal_counter():
    src = (
        "@njit(cache=True)\n"
        "def f(A, x):\n"
        "    m = 0\n"
        "    k = int(0)\n"
        "    for i in range(3):\n"
        "        m += 1\n"
        "        k += 1\n"
        "    g(A, m)\n"
        "    g(A, k)\n"
        "    h(A, m)\n"
    )
    fn = ast.parse(src).body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert literal_counters_passed(fn, {"h"}) == ["8: m -> g"]
