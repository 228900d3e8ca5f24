"""ikstack uses numba only through its public surface (``numba.njit``, ``prange``, typed
containers, configuration, and the documented high-level extension API ``overload``, which
picks a compiled implementation by argument type), so a numba upgrade cannot break a view or a
kernel silently. The low-level extension API (``intrinsic``, ``lower_builtin``, data models,
``make_array``/``cgutils`` array views) is banned: it reaches into code generation.

Two exceptions: :mod:`ikstack.compile_notice`, which listens to numba's documented event API
(``numba.core.event``) to print the first-run notice (``tests/cli/test_first_run.py``
exercises it), and :mod:`ikstack._numba_cache`, which reads a stale or damaged cache file of an
ikstack kernel as a cache miss (``tests/foundation/test_numba_cache.py``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import ikstack

SRC = Path(ikstack.__file__).parent
#: modules of numba's implementation (code generation, typing, array internals)
INTERNAL = (
    "numba.core",
    "numba.np",
    "numba.cpython",
    "numba.extending",
    "numba.typed.typeddict",
    "numba.misc",
    "numba.parfors",
    "llvmlite",
)
#: names of ``numba.extending`` that are its documented high-level API (typed in Python, compiled
#: as ordinary jitted code)
PUBLIC_EXTENDING = {"overload", "register_jitable"}
#: module -> the internal modules it may import
ALLOWED = {
    "compile_notice.py": {"numba.core.event", "numba.core"},
    "_numba_cache.py": {"numba.core.caching", "numba.core.caching.Cache"},
}


def _internal_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "numba.extending":
            names = [f"numba.extending.{a.name}" for a in node.names]
            names = [n for n in names if n.rsplit(".", 1)[1] not in PUBLIC_EXTENDING]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            if name.startswith(INTERNAL) or name in ("numba.intrinsic", "numba.generated_jit"):
                found.add(name)
    return found


def test_no_numba_internals_outside_the_compile_notice():
    bad = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = str(path.relative_to(SRC))
        extra = _internal_imports(path) - ALLOWED.get(rel, set())
        if extra:
            bad[rel] = sorted(extra)
    assert not bad, f"numba internals imported: {bad}"


def test_the_scan_sees_an_internal_import(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("from numba.np.arrayobj import make_array\nfrom numba import njit\n")
    assert _internal_imports(p) == {"numba.np.arrayobj", "numba.np.arrayobj.make_array"}


def test_the_scan_tells_the_extension_apis_apart(tmp_path):
    p = tmp_path / "m.py"
    p.write_text("from numba.extending import overload, intrinsic\n")
    assert _internal_imports(p) == {"numba.extending.intrinsic"}
