"""The statement half of :mod:`ikstack.backends.warp._translate`: one compiled CPU function as
Warp source (assignments and their types, branches, loops, returns). Does not import Warp."""

from __future__ import annotations

import ast
import builtins
from typing import Any

from ikstack.backends.warp import _translate_args as args_
from ikstack.backends.warp import _translate_names as names_
from ikstack.backends.warp._translate_expr import RESERVED, _elem, _ExprWriter
from ikstack.backends.warp._translate_types import (
    VOID,
    B,
    C,
    F,
    I,
    _Func,
    _parse_type,
    _zero,
    record_struct,
    rows_struct,
    warp_type,
)


class _FuncWriter(_ExprWriter):
    def __init__(self, tr: Any, m: Any, fn: _Func) -> None:
        self.tr = tr
        self.m = m
        self.fn = fn
        self.env: dict[str, Any] = dict(fn.params)
        self.rename: dict[str, str] = {}
        self.entry: dict[str, str] = {}  # a tuple parameter's entries' names by position
        self.taken: set[str] = set()  # every name the function's Warp code may use
        self.used_consts: set[str] = set()
        self.used_imports: set[str] = set()
        self.used_hooks: set[str] = set()
        self.depth = 0  # inside a loop or branch
        self.ntmp = 0
        self.loopvars: set[str] = set()
        self.outtype: dict[str, Any] = dict(fn.params)  # Warp variable -> type
        self.hoist: list[str] = []  # Warp variables first bound in a branch
        self.in_if = 0

    def write(self, node: ast.FunctionDef) -> str:
        body = node.body
        doc = ast.get_docstring(node, clean=False)
        if doc is not None:
            body = body[1:]
        if not any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(node)):
            self.fn.ret = VOID  # writes its array arguments, returns nothing
        where = f"{self.m.path}:{node.lineno}: {node.name}"
        outside = self.outside_names()
        self.entry = names_.entry_names(self.fn.params, node, outside, where, self.module_funcs())
        self.taken = outside | {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        self.taken |= {
            x.split(":")[0] for q, t in self.fn.params for x in args_.params(q, t, str, self.entry)
        }
        lines = self.block(body, 1)
        lines = [f"    {nm} = {_zero(self.outtype[nm])}" for nm in self.hoist] + lines
        sig = ", ".join(
            x for p, t in self.fn.params for x in args_.params(p, t, warp_type, self.entry)
        )
        doc = names_.device_doc(doc, self.fn, self.entry, f"{self.m.name}.{node.name}")
        head = ["@wp.func", f"def {node.name}({sig}):"]
        if doc is not None:
            q = '"""' if '"""' not in doc and not doc.endswith('"') else None
            if q is None:
                head.append(f"    {ast.unparse(ast.Constant(doc))}")
            else:
                head.append(f"    {'r' if chr(92) in doc else ''}{q}{doc}{q}")
        if self.fn.ret is None:
            raise self.err(node, "no return statement")
        return "\n".join(head + lines) + "\n"

    def module_funcs(self) -> names_.Funcs:
        """The module's translated functions: ``{name: (params, source)}``."""
        sigs = self.tr.signatures.get(self.m.name, {})
        return {
            n.name: (
                [
                    (p.split(":")[0], _parse_type(p.split(":")[1].rstrip("?")))
                    for p in sigs[n.name].split()
                ],
                n,
            )
            for n in self.m.tree.body
            if isinstance(n, ast.FunctionDef) and n.name in sigs
        }

    def outside_names(self) -> set[str]:
        """The names a function's own must not shadow: the CPU module's, Python's builtins,
        the generated module's (primitives, structs, hooks)."""
        out = names_.module_names(self.m.tree) | RESERVED | set(dir(builtins))
        out |= set(self.m.consts) | set(self.m.tuples) | set(self.tr.hooks_of(self.m))
        for _, t in self.fn.params:
            out |= {record_struct(r) for r in args_.named(t, "rec")} | args_.named(t, "dev")
            if args_.is_kind(t, "rows"):
                out.add(rows_struct(t[1]))
        return out

    # -- statements
    def block(self, stmts: list[ast.stmt], ind: int) -> list[str]:
        out: list[str] = []
        for s in stmts:
            out += self.stmt(s, ind)
        if not out:
            out.append("    " * ind + "pass")
        return out

    def stmt(self, s: ast.stmt, ind: int) -> list[str]:
        pad = "    " * ind
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
            return []  # a string used as a comment
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            return [pad + self.expr(s.value)[0]]  # a call for what it writes
        if isinstance(s, ast.Return):
            if s.value is None and self.fn.ret == VOID:
                return [pad + "return"]
            return [pad + "return " + self.ret(s)]
        if isinstance(s, ast.Assign):
            return self.assign(s, ind)
        if isinstance(s, ast.AugAssign):
            # x op= v is x = x op v (an array element too: Warp's `a[i] += v` is atomic)
            if isinstance(s.target, ast.Name):
                load: ast.expr = ast.Name(s.target.id, ast.Load())
            elif isinstance(s.target, ast.Subscript):
                load = ast.Subscript(s.target.value, s.target.slice, ast.Load())
            else:
                raise self.err(s, "augmented assignment to an attribute")
            val = ast.BinOp(ast.copy_location(load, s), s.op, s.value)
            ast.copy_location(val, s)
            return self.assign(ast.copy_location(ast.Assign([s.target], val), s), ind)
        if isinstance(s, ast.If):
            return self.if_(s, ind)
        if isinstance(s, ast.For):
            return self.for_(s, ind)
        if isinstance(s, ast.While):
            cond, t = self.expr(s.test)
            self.depth += 1
            body = self.block(s.body, ind + 1)
            self.depth -= 1
            if s.orelse:
                raise self.err(s, "while ... else")
            return [pad + f"while {cond}:"] + body
        if isinstance(s, ast.Break):
            return [pad + "break"]
        if isinstance(s, ast.Continue):
            return [pad + "continue"]
        if isinstance(s, ast.Pass):
            return [pad + "pass"]
        raise self.err(s, f"{type(s).__name__} is outside the portable subset")

    def ret(self, s: ast.Return) -> str:
        if s.value is None:
            raise self.err(s, "a bare return")
        if isinstance(s.value, ast.Tuple) and not self.is_vector(s.value):
            parts = [self.expr(e) for e in s.value.elts]
            t: Any = ("tup", tuple(p[1] for p in parts))
        else:
            p = self.expr(s.value)
            parts = [p]
            t = p[1]
        if self.fn.ret is None:
            self.fn.ret = t
        elif self.fn.ret != t:
            # an int where the other returns have a float: convert, as numba unifies
            want = self.fn.ret[1] if self.fn.ret[0] == "tup" else (self.fn.ret,)
            if len(want) != len(parts):
                raise self.err(s, f"returns {t!r} here and {self.fn.ret!r} elsewhere")
            parts = [self.coerce(s, p, w) for p, w in zip(parts, want, strict=True)]
        return ", ".join(p[0] for p in parts)

    def bind(
        self, node: ast.AST, name: str, code: str, t: Any, ind: int, literal: bool = False
    ) -> list[str]:
        pad = "    " * ind
        if t == VOID:
            raise self.err(node, "the result of a function that returns nothing")
        old = self.env.get(name)
        if old == F and t == I:
            code, t = f"F({code})", F
        name_out = self.target(node, name, t)
        if literal and t == I:
            code = f"int({code})"
        elif literal and t == B:
            code = f"bool({code})"
        return [pad + f"{name_out} = {code}"]

    def target(self, node: ast.AST, name: str, t: Any) -> str:
        """The Warp name a binding of ``name`` to a ``t`` writes: one Warp variable per
        name and type (a name bound to another type where the old binding is out of reach,
        as in another branch or after a top-level rebinding, becomes a new variable)."""
        if name in RESERVED and name not in self.rename:
            self.rename[name] = f"{name}_"
        name_out = self.rename.get(name, name)
        old = self.env.get(name)
        if old is not None and old != t and self.depth > 0:
            raise self.err(node, f"{name} changes type ({old!r} -> {t!r}) in a branch")
        if self.outtype.get(name_out, t) != t:
            k = 1
            while self.outtype.get(f"{name}_{k}", t) != t or (
                f"{name}_{k}" not in self.outtype and f"{name}_{k}" in self.taken
            ):  # another type's, or a name of the source or a temporary's
                k += 1
            name_out = f"{name}_{k}"
            self.rename[name] = name_out
        if name_out not in self.outtype and self.in_if > 0 and name not in self.loopvars:
            self.hoist.append(name_out)  # declared at the top: Warp has no branch scopes
        self.outtype[name_out] = t
        self.env[name] = t
        return name_out

    def assign(self, s: ast.Assign, ind: int) -> list[str]:
        out: list[str] = []
        first = s.targets[0]
        if len(s.targets) > 1:  # a = b = v: each from v
            for t in s.targets:
                out += self.assign(ast.copy_location(ast.Assign([t], s.value), s), ind)
            return out
        if isinstance(first, ast.Name):
            code, t = self.expr(s.value)
            if isinstance(t, tuple) and t[0] == "tup":
                raise self.err(s, "several values bound to one name")
            lit = isinstance(s.value, ast.Constant) or (
                isinstance(s.value, ast.UnaryOp) and isinstance(s.value.operand, ast.Constant)
            )
            return self.bind(s, first.id, code, t, ind, literal=lit)
        if isinstance(first, ast.Tuple) and isinstance(s.value, ast.Name):
            code, t = self.expr(s.value)
            if args_.is_kind(t, "pack"):  # the names stand for the tuple's entries
                args_.unpack(self, s, first, code, t)
                return []
        if isinstance(first, ast.Tuple) and any(isinstance(e, ast.Subscript) for e in first.elts):
            return self.unpack_stores(s, first, ind)
        if isinstance(first, ast.Tuple):
            names = []
            for e in first.elts:
                if not isinstance(e, ast.Name):
                    raise self.err(s, "unpacking into a non-name")
                if e.id == "_":  # each discarded value its own name (Warp binds every one)
                    self.ntmp += 1
                    names.append(f"_u{self.ntmp}")
                    continue
                if e.id in RESERVED and e.id not in self.rename:
                    self.rename[e.id] = f"{e.id}_"
                names.append(e.id)
            val = s.value
            if (
                isinstance(val, ast.IfExp)
                and isinstance(val.body, ast.Tuple)
                and isinstance(val.orelse, ast.Tuple)
            ):
                val = ast.Tuple(
                    [
                        ast.copy_location(ast.IfExp(val.test, a, b), val)
                        for a, b in zip(val.body.elts, val.orelse.elts, strict=False)
                    ],
                    ast.Load(),
                )
            if isinstance(val, ast.Tuple):
                if len(val.elts) != len(names):
                    raise self.err(s, "unpacking a tuple of another length")
                parts = [self.expr(e) for e in val.elts]
                if self.rebinds_read(names, val.elts):  # a, b = b, a: through temporaries
                    tmps = []
                    for nm, (code, t) in zip(names, parts, strict=True):
                        tmp = self.fresh(f"{nm}_new" if not nm.startswith("_") else "_t")
                        tmps.append((tmp, t))
                        out.append("    " * ind + f"{tmp} = {code}")
                    parts = tmps
                for nm, (code, t), e in zip(names, parts, val.elts, strict=True):
                    out += self.bind(s, nm, code, t, ind, literal=isinstance(e, ast.Constant))
                return out
            code, t = self.expr(val)
            if isinstance(t, tuple) and t[0] in ("v", "cv") and t[1] == len(names):
                # unpacking a vector: its entries (a variable's read directly where no name
                # bound before the last is that variable)
                written = {self.rename.get(n, n) for n in names[:-1]}
                tmp = code
                if not (isinstance(val, ast.Name) and code not in written):
                    tmp = self.fresh("_".join(n for n in names if not n.startswith("_")) or "_t")
                    out.append("    " * ind + f"{tmp} = {code}")
                for i, nm in enumerate(names):
                    out += self.bind(s, nm, f"{tmp}[{i}]", F if t[0] == "v" else C, ind)
                return out
            if not (isinstance(t, tuple) and t[0] == "tup" and len(t[1]) == len(names)):
                raise self.err(s, f"unpacking {len(names)} names from a {t!r}")
            outs = [self.target(s, nm, tt) for nm, tt in zip(names, t[1], strict=True)]
            return ["    " * ind + f"{', '.join(outs)} = {code}"]
        if isinstance(first, ast.Subscript):  # a store into an array parameter
            return self.store(s, first, self.expr(s.value), ind)
        raise self.err(s, "assignment to an attribute")

    def fresh(self, stem: str) -> str:
        """A new Warp variable named for what it holds (``stem``: the names it is unpacked
        into, or ``x_new`` for the value ``x`` takes), numbered where that name is in use."""
        nm, k = stem, 1
        while nm in self.taken or nm in self.outtype:
            k += 1
            nm = f"{stem}_{k}"
        self.taken.add(nm)
        return nm

    def rebinds_read(self, names: list[str], values: list[ast.expr]) -> bool:
        """Whether binding ``names`` one after the other to ``values`` (all computed before)
        would overwrite a variable a later value reads (``a, b = b, a``; ``a, b = f(a), g(b)``
        binds in order)."""
        warp = {self.rename.get(n, n) for n in names[:1]}
        for nm, e in zip(names[1:], values[1:], strict=True):
            read = {self.rename.get(x.id, x.id) for x in ast.walk(e) if isinstance(x, ast.Name)}
            if read & warp:
                return True
            warp.add(self.rename.get(nm, nm))
        return False

    def store(self, s: ast.stmt, target: ast.Subscript, val: tuple[str, Any], ind: int):
        """``target = val`` for an array element ``target`` (``val`` translated)."""
        arr, t = self.expr(target.value)
        if not (isinstance(t, tuple) and t[0] == "arr"):
            raise self.err(s, "a store into a non-array")
        idx = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
        codes = [self.expr(x) for x in idx]
        if len(codes) != t[1] or any(c[1] != I for c in codes):
            raise self.err(s, "a store needs one int index per dimension")
        if t[2] == "b":  # a bool array is int32 0/1
            code, vt = val
            if vt != B:
                raise self.err(s, "a non-bool stored into a bool array")
            stored = {"True": "1", "False": "0"}.get(code, f"wp.where({code}, 1, 0)")
        else:
            stored = self.coerce(s, val, F if t[2] == "f" else I)[0]
        return ["    " * ind + f"{arr}[{', '.join(c[0] for c in codes)}] = {stored}"]

    def unpack_stores(self, s: ast.Assign, first: ast.Tuple, ind: int) -> list[str]:
        """``a[i], b, c[j] = value`` with array elements among the targets: every value is
        computed first (as Python does; through temporaries where a value reads a target),
        then bound or stored left to right. The value is a tuple, a vector, or a function's
        several results."""
        pad = "    " * ind
        out: list[str] = []
        n = len(first.elts)
        if isinstance(s.value, ast.Tuple):
            if len(s.value.elts) != n:
                raise self.err(s, "unpacking a tuple of another length")
            parts = [self.expr(e) for e in s.value.elts]
            read = {x.id for e in s.value.elts for x in ast.walk(e) if isinstance(x, ast.Name)}
            written = {x.id for e in first.elts for x in ast.walk(e) if isinstance(x, ast.Name)}
            if read & written and n > 1:
                held: list[tuple[str, Any]] = []
                for code, t in parts:
                    self.ntmp += 1
                    held.append((f"_t{self.ntmp}", t))
                    out.append(pad + f"_t{self.ntmp} = {code}")
                parts = held
        else:
            code, t = self.expr(s.value)
            if isinstance(t, tuple) and t[0] in ("v", "cv") and t[1] == n:
                written = {
                    self.rename.get(x.id, x.id) for x in ast.walk(first) if isinstance(x, ast.Name)
                }
                tmp = code  # a variable no target writes: read directly
                if not (isinstance(s.value, ast.Name) and code not in written):
                    self.ntmp += 1
                    tmp = f"_t{self.ntmp}"
                    out.append(pad + f"{tmp} = {code}")
                et = F if t[0] == "v" else C
                parts = [(f"{tmp}[{i}]", et) for i in range(n)]
            elif isinstance(t, tuple) and t[0] == "tup" and len(t[1]) == n:
                self.ntmp += 1
                tmp = f"_t{self.ntmp}"
                names = [f"{tmp}_{i}" for i in range(n)]
                out.append(pad + f"{', '.join(names)} = {code}")
                parts = list(zip(names, t[1], strict=True))
            else:
                raise self.err(s, f"unpacking {n} targets from a {t!r}")
        for tgt, p in zip(first.elts, parts, strict=True):
            if isinstance(tgt, ast.Subscript):
                out += self.store(s, tgt, p, ind)
            elif isinstance(tgt, ast.Name):
                out += self.bind(s, tgt.id, p[0], p[1], ind)
            else:
                raise self.err(s, "unpacking into an attribute")
        return out

    def if_(self, s: ast.If, ind: int) -> list[str]:
        pad = "    " * ind
        decided = args_.static(self, s.test)
        if decided is not None:  # a test of a none parameter: the branch taken only
            return self.block(s.body if decided else s.orelse, ind) if (decided or s.orelse) else []
        before = dict(self.env)
        cond, t = self.expr(s.test)
        self.depth += 1
        self.in_if += 1
        body = self.block(s.body, ind + 1)
        env_body = self.env
        self.env = dict(before)
        orelse: list[str] = []
        if s.orelse:
            if (
                len(s.orelse) == 1
                and isinstance(s.orelse[0], ast.If)
                and args_.static(self, s.orelse[0].test) is None
            ):
                sub = self.if_(s.orelse[0], ind)
                orelse = [pad + "el" + sub[0].lstrip()] + sub[1:]
            else:
                orelse = [pad + "else:"] + self.block(s.orelse, ind + 1)
        env_else = self.env
        self.depth -= 1
        self.in_if -= 1
        # after the branches: a name bound to one type where bound; bound to two, unusable
        self.env = dict(before)
        live = [
            env for env, stmts in ((env_body, s.body), (env_else, s.orelse)) if not _exits(stmts)
        ]
        for env in live:
            for nm, tt in env.items():
                if before.get(nm) != tt:
                    self.env[nm] = tt
        if len(live) == 2:
            for nm in set(env_body) & set(env_else):
                if env_body[nm] != env_else[nm]:
                    del self.env[nm]
        return [pad + f"if {cond}:"] + body + orelse

    def for_(self, s: ast.For, ind: int) -> list[str]:
        pad = "    " * ind
        if isinstance(s.iter, ast.Tuple) and isinstance(s.target, ast.Name) and not s.orelse:
            # over a tuple of numbers: an index loop that picks the value
            parts = [self.expr(e) for e in s.iter.elts]
            t = F if any(p[1] == F for p in parts) else I
            parts = [self.coerce(s, p, t) for p in parts]
            self.ntmp += 1
            k = f"_k{self.ntmp}"
            pick = parts[-1][0]
            for i in range(len(parts) - 2, -1, -1):
                pick = f"wp.where({k} == {i}, {parts[i][0]}, {pick})"
            self.loopvars.add(k)
            self.depth += 1
            head = self.bind(s, s.target.id, pick, t, ind + 1)
            body = self.block(s.body, ind + 1)
            self.depth -= 1
            return [pad + f"for {k} in range({len(parts)}):"] + head + body
        if isinstance(s.target, ast.Name) and not s.orelse and not isinstance(s.iter, ast.Call):
            # over a 1D array: an index loop that reads the element
            code, t = self.expr(s.iter)
            if not (isinstance(t, tuple) and t[0] == "arr" and t[1] == 1):
                raise self.err(s, "only `for name in range(...)` loops")
            self.ntmp += 1
            k = f"_k{self.ntmp}"
            self.loopvars.add(k)
            self.depth += 1
            head = self.bind(s, s.target.id, *_elem(f"{code}[{k}]", t[2]), ind + 1)
            body = self.block(s.body, ind + 1)
            self.depth -= 1
            return [pad + f"for {k} in range({code}.shape[0]):"] + head + body
        if not (
            isinstance(s.target, ast.Name)
            and isinstance(s.iter, ast.Call)
            and isinstance(s.iter.func, ast.Name)
            and s.iter.func.id == "range"
            and not s.orelse
        ):
            raise self.err(s, "only `for name in range(...)` loops")
        args = [
            self.coerce(s, self.expr(a), I) if self.expr(a)[1] == B else self.expr(a)
            for a in s.iter.args
        ]
        for a in args:
            if a[1] not in (I, B):
                raise self.err(s, "range() of a non-int")
        var = s.target.id
        self.env[var] = I
        self.loopvars.add(var)
        self.depth += 1
        body = self.block(s.body, ind + 1)
        self.depth -= 1
        rng = ", ".join(a[0] if a[1] == I else f"int({a[0]})" for a in args)
        return [pad + f"for {var} in range({rng}):"] + body

    # -- expressions


def _exits(stmts: list[ast.stmt]) -> bool:
    """Whether a block always leaves by ``return``, ``break`` or ``continue``."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Break, ast.Continue)):
        return True
    return isinstance(last, ast.If) and _exits(last.body) and _exits(last.orelse)
