"""Integers in :mod:`ikstack.backends.warp._translate`'s portable subset: signed 64-bit values
and Python's ``%`` and ``//``. Does not import Warp.

- the type ``i64`` (declared ``name:i64``): ``wp.int64`` on the device, numba's int64 on the
  CPU (where every int is one; the device's ``int`` is 32-bit). ``np.int64(x)`` of an int, of
  a literal within int64 or of a float is one (a float rounded toward zero on both; a NaN,
  an infinity or a float outside int64 is outside the subset);
- ``+ - *`` and comparisons of an ``i64`` with an ``i64`` or an ``int`` (widened to
  ``wp.int64``) are of ``i64`` values; a result outside int64 is outside the subset (numba
  wraps it, the device's signed overflow is undefined);
- ``a % b`` and ``a // b`` of ints (``int`` or ``i64``, widened alike) round as Python's do,
  toward minus infinity (a remainder takes the divisor's sign): :mod:`._prims`' ``floor_mod``
  and ``floor_div``, since Warp's integer ``%`` rounds toward zero as C's does (``-7 % 3`` is
  2 in Python, -1 in C). A zero divisor is outside the subset (numba raises
  ``ZeroDivisionError``), and so is ``-2**63 // -1`` (no int64 quotient); ``-2**63 % -1`` is
  0 on both. Of a float or a bool they are an error: Python's float ``%`` and ``//`` (a
  remainder with the divisor's sign, a floored quotient) have no counterpart in the device's
  float arithmetic here.
"""

from __future__ import annotations

import ast
from typing import Any

from ikstack.backends.warp._translate_types import I64, I

WARP = "wp.int64"
#: the operator -> its ``._prims`` function (Python's rounding)
FLOOR_OPS = {ast.Mod: ("%", "floor_mod"), ast.FloorDiv: ("//", "floor_div")}


def widen(p: tuple[str, Any], t: Any) -> tuple[str, Any]:
    """An int operand as a ``t`` (``I64``: an ``int`` widened to ``wp.int64``)."""
    code, pt = p
    if pt == I and t == I64:
        return f"{WARP}({code})", I64
    return p


def call(w: Any, e: ast.Call) -> tuple[str, Any] | None:
    """``np.int64(x)``, else None (not this rule's)."""
    f = e.func
    if not (
        isinstance(f, ast.Attribute)
        and isinstance(f.value, ast.Name)
        and f.value.id == "np"
        and f.attr == "int64"
        and len(e.args) == 1
        and not e.keywords
    ):
        return None
    arg = e.args[0]
    if isinstance(arg, ast.Constant) and type(arg.value) is int:
        if not -(2**63) <= arg.value < 2**63:
            raise w.err(e, f"np.int64 of {arg.value} (outside -2**63 .. 2**63 - 1)")
        return f"{WARP}({arg.value})", I64
    code, t = w.expr(arg)
    if t not in (I, I64, "f"):
        raise w.err(e, f"np.int64 of a {t!r}")
    return (code, I64) if t == I64 else (f"{WARP}({code})", I64)


def binop(w: Any, e: ast.BinOp) -> tuple[str, Any] | None:
    """``%`` or ``//`` with Python's rounding, else None (another operator)."""
    op = FLOOR_OPS.get(type(e.op))
    if op is None:
        return None
    a, b = w.expr(e.left), w.expr(e.right)
    if a[1] not in (I, I64) or b[1] not in (I, I64):
        raise w.err(
            e,
            f"'{op[0]}' of a {a[1]!r} and a {b[1]!r}: only ints (int, i64) round as Python's "
            "do on the device (Python's float '%' and '//' are outside the subset)",
        )
    t = I64 if I64 in (a[1], b[1]) else I
    a, b = widen(a, t), widen(b, t)
    return f"{op[1]}({a[0]}, {b[0]})", t
