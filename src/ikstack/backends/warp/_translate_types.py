"""The types of :mod:`ikstack.backends.warp._translate`'s portable subset: declared parameter
types, their Warp annotations, record fields, literals. Does not import Warp."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ikstack.backends.warp import _translate_args as args_
from ikstack.backends.warp import _translate_u64 as u64_
from ikstack.errors import TranslateError

# ----------------------------------------------------------------------------- types
# a type is "f", "i", "b", "c", ("v", n) for n floats, "m9", ("cv", n) for n complex,
# ("arr", ndim, "f" | "i" | "b") an array, ("rows", NAME) a record of one row a thread,
# ("tv", k, n) a tuple of k float n-vectors (a k x n matrix of rows),
# ("tup", (t, ...)) for several values (a function's results), or VOID (no value); I64 a
# signed 64-bit int (:mod:`._translate_ints`; ``I`` is the device's 32-bit ``int``)
F, I, B, C, M9 = "f", "i", "b", "c", "m9"
I64 = "i64"
VOID = "void"


def _vec(n: int) -> tuple:
    return ("v", n)


def _parse_type(s: str) -> Any:
    extra = args_.parse(s, _parse_type)  # none, rec(...), dev(...), tup(...)
    if extra is not None:
        return extra
    if s in (F, I, B, C, M9, I64, u64_.U64):
        return s
    if len(s) == 3 and s[0] in "234" and s[1] == "v" and s[2] in "234":
        return ("tv", int(s[0]), int(s[2]))  # "4v3": a tuple of 4 3-vectors
    if s[0] == "v" and s[1:].isdigit():
        return _vec(int(s[1:]))
    if s == "m44":
        return ("mat", 4)
    if s == "av3":
        return ("arrv", 3)
    if s == "am9":
        return ("arrm", 3)
    if len(s) == 3 and s[0] == "a" and s[1] in "1234" and s[2] in "fib":
        return ("arr", int(s[1]), s[2])
    if s.startswith("rows(") and s.endswith(")") and s[5:-1].isidentifier():
        return ("rows", s[5:-1])
    if s.startswith("rec(") and s.endswith(")") and s[4:-1].isidentifier():
        return ("rec", s[4:-1])
    raise TranslateError(f"unknown declared type {s!r}")


def warp_type(t: Any) -> str:
    """The Warp annotation of a declared parameter type."""
    if t == F:
        return "wp.float64"
    if t == I:
        return "int"
    if t == B:
        return "bool"
    if t == C:
        return "wp.vec2d"
    if t == u64_.U64:
        return u64_.WARP
    if t == I64:
        return "wp.int64"
    if t == M9:
        return "wp.mat33d"
    if isinstance(t, tuple) and t[0] == "v":
        return f"wp.vec{t[1]}d"
    if isinstance(t, tuple) and t[0] == "mat":
        return f"wp.mat{t[1]}{t[1]}d"
    if isinstance(t, tuple) and t[0] == "arrv":
        return f"wp.array(dtype=wp.vec{t[1]}d)"
    if isinstance(t, tuple) and t[0] == "arrm":
        return f"wp.array(dtype=wp.mat{t[1]}{t[1]}d)"
    if isinstance(t, tuple) and t[0] == "rec":
        return f"{record_struct(t[1])}.type"
    if isinstance(t, tuple) and t[0] == "arr":
        dt = "wp.float64" if t[2] == "f" else "wp.int32"  # bools as int32 0/1
        return f"wp.array(dtype={dt})" if t[1] == 1 else f"wp.array{t[1]}d(dtype={dt})"
    if isinstance(t, tuple) and t[0] == "rows":
        return f"{rows_struct(t[1])}.type"
    if isinstance(t, tuple) and t[0] == "dev":
        return t[1]
    if isinstance(t, tuple) and t[0] == "cv":
        return f"cmat{t[1]}"
    if isinstance(t, tuple) and t[0] == "tv":
        return f"wp.types.matrix(shape=({t[1]}, {t[2]}), dtype=wp.float64)"
    raise TranslateError(f"no Warp type for {t!r}")


def rows_struct(record: str) -> str:
    """The name in :mod:`ikstack.backends.warp._structs` of the Warp struct of CPU record
    ``record`` (a module-level :class:`~ikstack._records.Record`) with a row a thread."""
    return f"{record}_ROWS_T"


def record_struct(record: str) -> str:
    """The name in :mod:`ikstack.backends.warp._structs` of the Warp struct of CPU record
    ``record`` passed whole (a kernel's constant data, one for all threads)."""
    return f"{record}_T"


def device_field_type(dtype: str, shape: tuple) -> Any:
    """The subset type of a record field in the record's Warp struct (``rec(NAME)``): a float
    field's trailing ``(3, 3)`` is a ``wp.mat33d`` and its trailing ``(3,)`` a ``wp.vec3d``
    (as :mod:`ikstack.backends.warp._structs` declares them: a test holds the two together),
    so ``(3, 3)`` is a 3x3 matrix (read as a 9-tuple or as a (3, 3) array), ``(n, 3, 3)`` an
    array of them, ``(3,)`` a 3-vector and ``(n, 3)`` an array of 3-vectors."""
    if dtype == "f8" and shape[-2:] == (3, 3) and len(shape) in (2, 3):
        return M9 if len(shape) == 2 else ("arrm", 3)
    if dtype == "f8" and shape[-1:] == (3,) and len(shape) in (1, 2):
        return ("v", 3) if len(shape) == 1 else ("arrv", 3)
    return field_type(dtype, shape)


def field_type(dtype: str, shape: tuple) -> Any:
    """The subset type of a record field (``dtype`` one of ``_records``' ``F``/``I``/``B``)."""
    kind = {"f8": "f", "i8": "i", "b1": "b"}[dtype]
    return ("arr", len(shape), kind) if shape else {"f": F, "i": I, "b": B}[kind]


def _zero(t: Any) -> str:
    if t == F:
        return "F(0.0)"
    if t == I:
        return "int(0)"
    if t == B:
        return "bool(False)"
    if t == u64_.U64:
        return f"{u64_.WARP}(0)"
    if t == I64:
        return "wp.int64(0)"
    return f"{warp_type(t)}()"


def _flit(v: float) -> str:
    if math.isnan(v):
        return "NAN"
    if math.isinf(v):
        return "INF" if v > 0 else "-INF"
    return f"F({v!r})"


@dataclass
class _Func:
    name: str
    params: list[tuple[str, Any]]
    ret: Any = None
    #: parameters the CPU may pass as None (declared ``i?``...): a compile-time choice of
    #: numba's; the device always passes the value, so ``is None`` is False there
    optional: frozenset[str] = frozenset()


def row_param(name: str) -> str:
    """The row-index parameter that follows a ``rows`` record parameter ``name``."""
    return f"{name}_row"
