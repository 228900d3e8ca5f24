"""Parameter kinds of :mod:`ikstack.backends.warp._translate` beyond numbers and arrays, and the
calls that pass them. Does not import Warp.

- ``none``: a parameter the CPU code receives as None, so numba prunes the branches that test
  it at compile time. The Warp function has no such parameter; ``x is None`` is True there
  (``x is not None`` False), while for a parameter of any other kind ``x is None`` is False;
  an ``if`` whose test these decide keeps only the branch taken (the other is not
  translated), and ``and``/``or`` drop their decided terms. A call passes ``None`` for it.
- ``rec(NAME)``: a record passed whole (:class:`~ikstack._records.Record`, the module-level
  ``NAME``): the Warp struct ``NAME_T`` of :mod:`ikstack.backends.warp._structs` (made from
  the same definition); ``r.field`` reads a field (an array, or a number).
- ``tup(t1,t2,...)``: a tuple of values of those kinds (nested too): one Warp parameter per
  entry, named as the source unpacks it (``a, (b, c) = p``: ``a``, ``b``, ``c``; else by
  position, ``p_0``, ``p_1_0``...: :mod:`._translate_names`); the unpacked names stand for the
  entries (nothing is copied); passed on whole, or a call builds it as a tuple literal.
- ``dev(NAME)``: a context the shared code only passes on (to hooks): on the CPU whatever
  the CPU hook takes, on the device the struct ``NAME`` of the module's hook module, followed
  by the thread's row ``p_row`` (as a ``rows`` record).
- hooks (:data:`ikstack.backends.warp._translate.HOOKS`): CPU functions the shared code calls
  whose Warp counterparts are written by hand in a named module (a step that needs the
  device's own data layout), declared ``"params -> results"``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Any

from ikstack.errors import TranslateError

NONE = "none"


def split_top(s: str) -> list[str]:
    """``s`` split at the commas outside parentheses."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
            continue
        depth += {"(": 1, ")": -1}.get(ch, 0)
        cur += ch
    return [*out, cur] if cur or out else []


def parse(s: str, parse_type: Callable[[str], Any]) -> Any:
    """The kind declared by ``s`` if it is one of this module's, else None."""
    if s == NONE:
        return NONE
    for kind in ("rec", "dev"):
        if s.startswith(kind + "(") and s.endswith(")") and s[len(kind) + 1 : -1].isidentifier():
            return (kind, s[len(kind) + 1 : -1])
    if s.startswith("tup(") and s.endswith(")"):
        return ("pack", tuple(parse_type(x.strip()) for x in split_top(s[4:-1])))
    return None


def is_kind(t: Any, *kinds: str) -> bool:
    return isinstance(t, tuple) and t[0] in kinds


_NO_NAMES: Mapping[str, str] = {}


def _entry(entry: Mapping[str, str], path: str, t: Any) -> str:
    """The Warp name of a tuple's entry at ``path`` (``p_0``, ``p_1_0``...; a tuple inside
    keeps its path, its entries are named)."""
    return path if is_kind(t, "pack") else entry.get(path, path)


def params(
    name: str, t: Any, warp_type: Callable[[Any], str], entry: Mapping[str, str] = _NO_NAMES
) -> list[str]:
    """The Warp parameters ``"name: annotation"`` of a parameter ``name`` of kind ``t``
    (``entry``: the names of a tuple's entries by position, :mod:`._translate_names`)."""
    if t == NONE:
        return []
    if is_kind(t, "pack"):
        return [
            x
            for k, e in enumerate(t[1])
            for x in params(_entry(entry, f"{name}_{k}", e), e, warp_type, entry)
        ]
    if is_kind(t, "dev", "rows"):
        return [f"{name}: {warp_type(t)}", f"{name}_row: int"]
    return [f"{name}: {warp_type(t)}"]


def codes(code: str, t: Any, entry: Mapping[str, str] = _NO_NAMES) -> list[str]:
    """The Warp arguments that pass a value ``code`` of kind ``t`` on whole."""
    if t == NONE:
        return []
    if is_kind(t, "pack"):
        return [
            c for k, e in enumerate(t[1]) for c in codes(_entry(entry, f"{code}_{k}", e), e, entry)
        ]
    if is_kind(t, "dev", "rows"):
        return [code, f"{code}_row"]
    return [code]


def named(t: Any, kind: str) -> set[str]:
    """The names of the ``kind`` (``rec`` or ``dev``) kinds inside ``t``."""
    if is_kind(t, "pack"):
        return {n for e in t[1] for n in named(e, kind)}
    return {t[1]} if is_kind(t, kind) else set()


def static(w: Any, e: ast.expr) -> bool | None:
    """The value of a test decided by ``none`` parameters, or None when the device decides.
    ``x is None`` of a parameter declared optional (``name:type?``: the CPU may pass None,
    the device always passes the value) is False."""
    if isinstance(e, ast.Compare) and len(e.ops) == 1 and isinstance(e.ops[0], (ast.Is, ast.IsNot)):
        rhs = e.comparators[0]
        if not (
            isinstance(rhs, ast.Constant) and rhs.value is None and isinstance(e.left, ast.Name)
        ):
            raise w.err(e, "`is` other than `name is None` (compares with None only)")
        if e.left.id not in w.env:
            raise w.err(e, f"unknown name {e.left.id}")
        none = w.env[e.left.id] == NONE
        if not none and e.left.id not in w.fn.optional:
            raise w.err(e, f"`{e.left.id} is None` of a name not declared optional (`name:type?`)")
        return none if isinstance(e.ops[0], ast.Is) else not none
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        v = static(w, e.operand)
        return None if v is None else not v
    if isinstance(e, ast.BoolOp):
        vals = [static(w, x) for x in e.values]
        stop = not isinstance(e.op, ast.And)  # the value that decides: False for and
        if stop in vals:
            return stop
        if all(v is not None for v in vals):
            return not stop
    return None


def undecided(w: Any, e: ast.BoolOp) -> list[ast.expr]:
    """The terms of ``e`` that the device decides (the decided ones cannot change it)."""
    return [x for x in e.values if static(w, x) is None]


def unpack(w: Any, node: ast.AST, target: ast.Tuple, code: str, t: Any) -> None:
    """``a, (b, c) = p`` of a ``tup`` value ``p``: the names stand for its entries."""
    if not (is_kind(t, "pack") and len(t[1]) == len(target.elts)):
        raise w.err(node, f"unpacking {len(target.elts)} names from a {t!r}")
    for k, (elt, et) in enumerate(zip(target.elts, t[1], strict=True)):
        if isinstance(elt, ast.Tuple):
            unpack(w, node, elt, f"{code}_{k}", et)
        elif isinstance(elt, ast.Name):
            if elt.id != "_":
                w.rename[elt.id] = _entry(w.entry, f"{code}_{k}", et)
                w.env[elt.id] = et
        else:
            raise w.err(node, "unpacking into a non-name")


def arg_codes(w: Any, call: ast.Call, node: ast.expr, t: Any) -> list[str]:
    """The Warp arguments of the CPU argument ``node`` for a parameter of kind ``t``."""
    if t == NONE:
        if isinstance(node, ast.Constant) and node.value is None:
            return []
        if w.peek(node) != NONE:
            raise w.err(call, "a value where the callee takes None")
        return []
    if is_kind(t, "pack") and isinstance(node, ast.Tuple):
        if len(node.elts) != len(t[1]):
            raise w.err(call, f"a tuple of {len(node.elts)} where {len(t[1])} are taken")
        return [c for n, et in zip(node.elts, t[1], strict=True) for c in arg_codes(w, call, n, et)]
    code, at = w.expr(node)
    if is_kind(t, "pack", "dev", "rows", "rec"):
        if at != t:
            raise w.err(call, f"a {at!r} where a {t!r} is taken")
        return codes(code, t, w.entry)
    return [w.coerce(call, (code, at), t)[0]]


def call_whole(w: Any, e: ast.Call, nm: str, fn: Any) -> tuple[str, Any] | None:
    """The call of ``nm`` when it takes a parameter of this module's kinds, else None."""
    if fn is None or not any(t == NONE or is_kind(t, "pack", "rec", "dev") for _, t in fn.params):
        return None
    if len(e.args) != len(fn.params):
        raise w.err(e, f"{nm} takes {len(fn.params)} arguments")
    w.note_call(nm)
    cs = [c for n, (_, t) in zip(e.args, fn.params, strict=True) for c in arg_codes(w, e, n, t)]
    return f"{nm}({', '.join(cs)})", fn.ret


def hook_func(spec: str, name: str, parse_type: Callable[[str], Any], func: Any) -> Any:
    """The :class:`._translate_expr._Func` of a hook declared ``"p:t ... -> t ..."``."""
    if "->" not in spec:
        raise TranslateError(f"hook {name}: {spec!r} has no '->'")
    ps, rs = spec.split("->")
    pars = [(p.split(":")[0], parse_type(p.split(":")[1])) for p in ps.split()]
    rets = [parse_type(r) for r in rs.split()]
    ret = "void" if not rets else rets[0] if len(rets) == 1 else ("tup", tuple(rets))
    return func(name, pars, ret)
