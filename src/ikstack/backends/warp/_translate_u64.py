"""Unsigned 64-bit integers in :mod:`ikstack.backends.warp._translate`'s portable subset (a
random stream's state, as splitmix64 keeps it). Does not import Warp.

- the type ``u64`` (declared ``name:u64``): ``wp.uint64`` on the device, ``np.uint64`` on the
  CPU; ``np.uint64(x)`` of an int (or a literal up to 2**64 - 1) is one;
- ``+ - * ^ | & >> <<`` of two ``u64`` values wrap modulo 2**64 on both (numba's and Warp's
  unsigned arithmetic), so no operand may be of another type (write ``np.uint64(k)``);
- ``np.float64(x)`` of a ``u64`` is the nearest float (both round to nearest).
"""

from __future__ import annotations

import ast
from typing import Any

U64 = "u64"
WARP = "wp.uint64"

_OPS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.BitXor: "^",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.RShift: ">>",
    ast.LShift: "<<",
}


def _np_call(e: ast.expr, name: str) -> bool:
    return (
        isinstance(e, ast.Call)
        and isinstance(e.func, ast.Attribute)
        and isinstance(e.func.value, ast.Name)
        and e.func.value.id == "np"
        and e.func.attr == name
        and len(e.args) == 1
        and not e.keywords
    )


def call(w: Any, e: ast.Call) -> tuple[str, Any] | None:
    """``np.uint64(x)`` / ``np.float64(x)`` of a ``u64``, else None (not this rule's)."""
    if _np_call(e, "uint64"):
        arg = e.args[0]
        if isinstance(arg, ast.Constant) and type(arg.value) is int:
            if not 0 <= arg.value < 2**64:
                raise w.err(e, f"np.uint64 of {arg.value} (outside 0 .. 2**64 - 1)")
            lit = f"{arg.value:#x}" if arg.value >= 2**31 else str(arg.value)
            return f"{WARP}({lit})", U64
        code, t = w.expr(arg)
        if t not in ("i", U64):
            raise w.err(e, f"np.uint64 of a {t!r}")
        return f"{WARP}({code})", U64
    if _np_call(e, "float64") and w.peek(e.args[0]) == U64:
        return f"wp.float64({w.expr(e.args[0])[0]})", "f"
    return None


def binop(w: Any, e: ast.BinOp) -> tuple[str, Any] | None:
    """An operator on ``u64`` values, else None (neither operand is one)."""
    ta, tb = w.peek(e.left), w.peek(e.right)
    if U64 not in (ta, tb):
        return None
    op = _OPS.get(type(e.op))
    if op is None or ta != tb:
        raise w.err(e, f"{type(e.op).__name__} of a {ta!r} and a {tb!r} (u64 with u64 only)")
    a, b = w.expr(e.left)[0], w.expr(e.right)[0]
    if isinstance(e.left, ast.BinOp):
        a = f"({a})"
    if isinstance(e.right, ast.BinOp):
        b = f"({b})"
    return f"{a} {op} {b}", U64
