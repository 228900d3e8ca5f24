"""The body of :mod:`ikstack.backends.warp._translate`: the portable subset's types and the
writer that turns one compiled CPU function into Warp source (type inference, literal
folding, branch-scoped declarations). Does not import Warp."""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any


# ----------------------------------------------------------------------------- types
class TranslateError(ValueError):
    """Source outside the portable subset (the message names the file and line)."""


# ----------------------------------------------------------------------------- types
# a type is "f", "i", "b", "c", ("v", n) for n floats, "m9", ("cv", n) for n complex, or
# ("tup", (t, ...)) for several values (a function's results)
F, I, B, C, M9 = "f", "i", "b", "c", "m9"


def _vec(n: int) -> tuple:
    return ("v", n)


def _parse_type(s: str) -> Any:
    if s in (F, I, B, C, M9):
        return s
    if s[0] == "v" and s[1:].isdigit():
        return _vec(int(s[1:]))
    if s == "m44":
        return ("mat", 4)
    if s == "av3":
        return ("arrv", 3)
    if len(s) == 3 and s[0] == "a" and s[1] in "1234" and s[2] in "fi":
        return ("arr", int(s[1]), s[2])
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
    if t == M9:
        return "wp.mat33d"
    if isinstance(t, tuple) and t[0] == "v":
        return f"wp.vec{t[1]}d"
    if isinstance(t, tuple) and t[0] == "mat":
        return f"wp.mat{t[1]}{t[1]}d"
    if isinstance(t, tuple) and t[0] == "arrv":
        return f"wp.array(dtype=wp.vec{t[1]}d)"
    if isinstance(t, tuple) and t[0] == "arr":
        dt = "wp.float64" if t[2] == "f" else "wp.int32"
        return f"wp.array(dtype={dt})" if t[1] == 1 else f"wp.array{t[1]}d(dtype={dt})"
    if isinstance(t, tuple) and t[0] == "cv":
        return f"cmat{t[1]}"
    raise TranslateError(f"no Warp type for {t!r}")


def _zero(t: Any) -> str:
    if t == F:
        return "F(0.0)"
    if t == I:
        return "int(0)"
    if t == B:
        return "bool(False)"
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



_MATH1 = {"sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "exp", "log", "floor",
          "ceil", "log2", "log10", "sinh", "cosh", "tanh"}
_MATH2 = {"atan2": "wp.atan2", "pow": "wp.pow", "hypot": "hypot", "copysign": "copysign"}
_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%",
           ast.FloorDiv: "//", ast.Pow: "**"}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==",
           ast.NotEq: "!="}
_FOLD_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
             ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b}


class _FuncWriter:
    def __init__(self, tr: Any, m: Any, fn: _Func) -> None:
        self.tr = tr
        self.m = m
        self.fn = fn
        self.env: dict[str, Any] = dict(fn.params)
        self.rename: dict[str, str] = {}
        self.used_consts: set[str] = set()
        self.used_imports: set[str] = set()
        self.depth = 0  # inside a loop or branch
        self.ntmp = 0
        self.loopvars: set[str] = set()
        self.outtype: dict[str, Any] = dict(fn.params)  # Warp variable -> type
        self.hoist: list[str] = []  # Warp variables first bound in a branch
        self.in_if = 0

    def err(self, node: ast.AST, msg: str) -> TranslateError:
        return TranslateError(f"{self.m.path}:{getattr(node, 'lineno', '?')}: "
                              f"{self.fn.name}: {msg}")

    # -- the function
    def write(self, node: ast.FunctionDef) -> str:
        body = node.body
        doc = ast.get_docstring(node, clean=False)
        if doc is not None:
            body = body[1:]
        lines = self.block(body, 1)
        lines = [f"    {nm} = {_zero(self.outtype[nm])}" for nm in self.hoist] + lines
        sig = ", ".join(f"{p}: {warp_type(t)}" for p, t in self.fn.params)
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
        if isinstance(s, ast.Return):
            return [pad + "return " + self.ret(s)]
        if isinstance(s, ast.Assign):
            return self.assign(s, ind)
        if isinstance(s, ast.AugAssign):
            if not isinstance(s.target, ast.Name):
                raise self.err(s, "augmented assignment to a non-name")
            val = ast.BinOp(ast.Name(s.target.id, ast.Load()), s.op, s.value)
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

    def is_vector(self, e: ast.Tuple) -> bool:
        """Whether a returned tuple is one vector (all floats, or all complex) rather than
        several values."""
        ts = {self.peek(x) for x in e.elts}
        return (ts == {F} and len(e.elts) in (2, 3, 4, 9)) or ts == {C}

    def peek(self, e: ast.expr) -> Any:
        """An expression's type, without recording what it uses."""
        saved = (set(self.used_consts), set(self.used_imports))
        t = self.expr(e)[1]
        self.used_consts, self.used_imports = saved
        return t

    def coerce(self, node: ast.AST, p: tuple[str, Any], want: Any) -> tuple[str, Any]:
        code, t = p
        if t == want:
            return p
        if want == F and t == I:
            if code.lstrip("-").isdigit():  # an int literal: the float literal
                return _flit(float(int(code))), F
            return f"F({code})", F
        if want == C and t in (F, I):
            return f"cre({self.coerce(node, p, F)[0]})", C
        raise self.err(node, f"a {t!r} where a {want!r} is needed")

    def bind(self, node: ast.AST, name: str, code: str, t: Any, ind: int,
             literal: bool = False) -> list[str]:
        pad = "    " * ind
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
            while self.outtype.get(f"{name}_{k}", t) != t:
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
                isinstance(s.value, ast.UnaryOp) and isinstance(s.value.operand, ast.Constant))
            return self.bind(s, first.id, code, t, ind, literal=lit)
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
            if isinstance(val, ast.IfExp) and isinstance(val.body, ast.Tuple) \
                    and isinstance(val.orelse, ast.Tuple):
                val = ast.Tuple([ast.copy_location(ast.IfExp(val.test, a, b), val)
                                 for a, b in zip(val.body.elts, val.orelse.elts, strict=False)], ast.Load())
            if isinstance(val, ast.Tuple):
                if len(val.elts) != len(names):
                    raise self.err(s, "unpacking a tuple of another length")
                parts = [self.expr(e) for e in val.elts]
                read = {n.id for e in val.elts for n in ast.walk(e) if isinstance(n, ast.Name)}
                if read & set(names[:-1]):  # a, b = b, a: through temporaries
                    tmps = []
                    for code, t in parts:
                        self.ntmp += 1
                        tmps.append((f"_t{self.ntmp}", t))
                        out.append("    " * ind + f"_t{self.ntmp} = {code}")
                    parts = tmps
                for nm, (code, t), e in zip(names, parts, val.elts, strict=True):
                    out += self.bind(s, nm, code, t, ind,
                                     literal=isinstance(e, ast.Constant))
                return out
            code, t = self.expr(val)
            if isinstance(t, tuple) and t[0] in ("v", "cv") and t[1] == len(names):
                # unpacking a vector: its entries
                self.ntmp += 1
                tmp = f"_t{self.ntmp}"
                out.append("    " * ind + f"{tmp} = {code}")
                for i, nm in enumerate(names):
                    out += self.bind(s, nm, f"{tmp}[{i}]", F if t[0] == "v" else C, ind)
                return out
            if not (isinstance(t, tuple) and t[0] == "tup" and len(t[1]) == len(names)):
                raise self.err(s, f"unpacking {len(names)} names from a {t!r}")
            outs = [self.target(s, nm, tt) for nm, tt in zip(names, t[1], strict=True)]
            return ["    " * ind + f"{', '.join(outs)} = {code}"]
        raise self.err(s, "assignment to a subscript or attribute")

    def if_(self, s: ast.If, ind: int) -> list[str]:
        pad = "    " * ind
        before = dict(self.env)
        cond, t = self.expr(s.test)
        self.depth += 1
        self.in_if += 1
        body = self.block(s.body, ind + 1)
        env_body = self.env
        self.env = dict(before)
        orelse: list[str] = []
        if s.orelse:
            if len(s.orelse) == 1 and isinstance(s.orelse[0], ast.If):
                sub = self.if_(s.orelse[0], ind)
                orelse = [pad + "el" + sub[0].lstrip()] + sub[1:]
            else:
                orelse = [pad + "else:"] + self.block(s.orelse, ind + 1)
        env_else = self.env
        self.depth -= 1
        self.in_if -= 1
        # after the branches: a name bound to one type where bound; bound to two, unusable
        self.env = dict(before)
        live = [env for env, stmts in ((env_body, s.body), (env_else, s.orelse))
                if not _exits(stmts)]
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
        if not (isinstance(s.target, ast.Name) and isinstance(s.iter, ast.Call)
                and isinstance(s.iter.func, ast.Name) and s.iter.func.id == "range"
                and not s.orelse):
            raise self.err(s, "only `for name in range(...)` loops")
        args = [self.coerce(s, self.expr(a), I) if self.expr(a)[1] == B else self.expr(a)
                for a in s.iter.args]
        for a in args:
            if a[1] not in (I, B):
                raise self.err(s, "range() of a non-int")
        self.env[s.target.id] = I
        self.loopvars.add(s.target.id)
        self.depth += 1
        body = self.block(s.body, ind + 1)
        self.depth -= 1
        rng = ", ".join(a[0] if a[1] == I else f"int({a[0]})" for a in args)
        return [pad + f"for {s.target.id} in range({rng}):"] + body

    # -- expressions
    def fold(self, e: ast.expr) -> float | int | None:
        """The value of a constant expression (literals, module constants, ``math.pi``...)."""
        if isinstance(e, ast.Constant) and isinstance(e.value, (int, float)) \
                and not isinstance(e.value, bool):
            return e.value
        if isinstance(e, ast.Name) and e.id in self.m.consts and e.id not in self.env \
                and isinstance(self.m.consts[e.id], (int, float)) \
                and not isinstance(self.m.consts[e.id], bool):
            return self.m.consts[e.id]
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) \
                and e.value.id == "math" and e.attr in ("pi", "inf", "e", "tau", "nan"):
            return float(getattr(math, e.attr))
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
            v = self.fold(e.operand)
            return None if v is None else (-v if isinstance(e.op, ast.USub) else v)
        if isinstance(e, ast.BinOp) and type(e.op) in _FOLD_OPS:
            a = self.fold(e.left)
            b = self.fold(e.right)
            if a is None or b is None:
                return None
            r = _FOLD_OPS[type(e.op)](a, b)
            return r
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) \
                and isinstance(e.func.value, ast.Name) and e.func.value.id == "math" \
                and e.func.attr == "sqrt" and len(e.args) == 1:
            v = self.fold(e.args[0])
            return None if v is None else math.sqrt(v)
        return None

    def expr(self, e: ast.expr) -> tuple[str, Any]:
        v = self.fold(e)
        if v is not None:
            if isinstance(e, ast.Name):
                self.used_consts.add(e.id)
                return e.id, (I if isinstance(v, int) else F)
            if isinstance(v, int):
                return repr(v), I
            return _flit(float(v)), F
        if isinstance(e, ast.Constant):
            if isinstance(e.value, bool):
                return repr(e.value), B
            if isinstance(e.value, complex):
                return f"wp.vec2d({_flit(e.value.real)}, {_flit(e.value.imag)})", C
            raise self.err(e, f"the constant {e.value!r}")
        if isinstance(e, ast.Name):
            if e.id in self.env:
                return self.rename.get(e.id, e.id), self.env[e.id]
            if e.id in self.m.consts:
                self.used_consts.add(e.id)
                c = self.m.consts[e.id]
                if isinstance(c, bool):
                    return e.id, B
                return e.id, ("table", len(c))
            raise self.err(e, f"unknown name {e.id}")
        if isinstance(e, ast.BinOp):
            return self.binop(e)
        if isinstance(e, ast.UnaryOp):
            code, t = self.expr(e.operand)
            if isinstance(e.op, ast.Not):
                return f"not {self.paren(e.operand, code)}", B
            if isinstance(e.op, ast.USub):
                return f"-{self.paren(e.operand, code)}", t
            if isinstance(e.op, ast.UAdd):
                return code, t
            raise self.err(e, "~")
        if isinstance(e, ast.BoolOp):
            op = " and " if isinstance(e.op, ast.And) else " or "
            parts = []
            for x in e.values:
                c, t = self.expr(x)
                if t != B:
                    raise self.err(e, "and/or of a non-bool")
                parts.append(self.paren(x, c, bool_ctx=True))
            return op.join(parts), B
        if isinstance(e, ast.Compare):
            if len(e.ops) != 1:
                raise self.err(e, "chained comparison")
            a = self.expr(e.left)
            b = self.expr(e.comparators[0])
            a, b, t = self.unify(e, a, b)
            cmp_op = _CMPOPS.get(type(e.ops[0]))
            if cmp_op is None:
                raise self.err(e, "comparison operator")
            op = cmp_op
            if t == C:
                if op not in ("==", "!="):
                    raise self.err(e, "ordering of complex numbers")
                code = f"ceq({a[0]}, {b[0]})"
                return (code if op == "==" else f"not {code}"), B
            return f"{self.paren(e.left, a[0], cmp=True)} {op} " \
                f"{self.paren(e.comparators[0], b[0], cmp=True)}", B
        if isinstance(e, ast.IfExp):
            c, tc = self.expr(e.test)
            a, b, t = self.unify(e, self.expr(e.body), self.expr(e.orelse))
            return f"wp.where({c}, {a[0]}, {b[0]})", t
        if isinstance(e, ast.Tuple):
            tparts = [self.expr(x) for x in e.elts]
            ts = {p[1] for p in tparts}
            if ts <= {F, I}:
                vals = [self.coerce(e, p, F)[0] for p in tparts]
                if len(vals) == 9:
                    return f"wp.mat33d({', '.join(vals)})", M9
                if len(vals) in (2, 3, 4):
                    return f"wp.vec{len(vals)}d({', '.join(vals)})", _vec(len(vals))
            if ts == {C}:
                return f"wp.matrix_from_rows({', '.join(p[0] for p in tparts)})", \
                    ("cv", len(tparts))
            raise self.err(e, "a tuple of mixed values outside a return")
        if isinstance(e, ast.Subscript):
            return self.subscript(e)
        if isinstance(e, ast.Attribute):
            code, t = self.expr(e.value)
            if t == C and e.attr == "real":
                return f"{code}[0]", F
            if t == C and e.attr == "imag":
                return f"{code}[1]", F
            raise self.err(e, f"attribute {e.attr}")
        if isinstance(e, ast.Call):
            return self.call(e)
        raise self.err(e, f"{type(e).__name__} is outside the portable subset")

    def paren(self, node: ast.expr, code: str, bool_ctx: bool = False,
              cmp: bool = False) -> str:
        if cmp and isinstance(node, ast.BinOp):
            return code
        if isinstance(node, (ast.BinOp, ast.BoolOp, ast.Compare, ast.IfExp)) or (
                isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
            if bool_ctx and isinstance(node, ast.Compare):
                return code
            return f"({code})"
        return code

    def unify(self, node: ast.AST, a: tuple[str, Any], b: tuple[str, Any]):
        ta, tb = a[1], b[1]
        if ta == tb:
            return a, b, ta
        if C in (ta, tb):
            return self.coerce(node, a, C), self.coerce(node, b, C), C
        if {ta, tb} == {F, I}:
            return self.coerce(node, a, F), self.coerce(node, b, F), F
        raise self.err(node, f"{ta!r} with {tb!r}")

    def binop(self, e: ast.BinOp) -> tuple[str, Any]:
        op = _BINOPS.get(type(e.op))
        if op is None:
            raise self.err(e, "operator")
        a = self.expr(e.left)
        b = self.expr(e.right)
        if op == "**":
            if a[1] == C:
                return f"cpow({a[0]}, {self.coerce(e, b, F)[0]})", C
            a, b, t = self.unify(e, a, b)
            return f"wp.pow({a[0]}, {b[0]})", t
        if op == "/" and a[1] == I and b[1] == I:
            a, b = self.coerce(e, a, F), self.coerce(e, b, F)
        a, b, t = self.unify(e, a, b)
        if t not in (F, I, C):
            raise self.err(e, f"arithmetic on {t!r}")
        if t == C and op in ("*", "/"):
            return f"{'cmul' if op == '*' else 'cdiv'}({a[0]}, {b[0]})", C
        if t == C and op not in ("+", "-"):
            raise self.err(e, f"complex {op}")
        # the source's grouping, kept exactly (it decides the rounding)
        left, right = a[0], b[0]
        if _needs_paren(e.left, e.op, right_side=False) and self.fold(e.left) is None:
            left = f"({left})"
        if _needs_paren(e.right, e.op, right_side=True) and self.fold(e.right) is None:
            right = f"({right})"
        return f"{left} {op} {right}", t

    def subscript(self, e: ast.Subscript) -> tuple[str, Any]:
        if isinstance(e.value, ast.Attribute) and e.value.attr == "shape":
            code, t = self.expr(e.value.value)
            k = self.fold(e.slice)
            if not (isinstance(t, tuple) and t[0] == "arr" and isinstance(k, int)):
                raise self.err(e, "shape of a non-array")
            return f"{code}.shape[{k}]", I
        code, t = self.expr(e.value)
        if isinstance(e.slice, ast.Tuple):  # an element of an array or a matrix
            idxs = [self.expr(x) for x in e.slice.elts]
            if any(x[1] != I for x in idxs):
                raise self.err(e, "a non-int index")
            if isinstance(t, tuple) and t[0] == "arr" and len(idxs) == t[1]:
                return f"{code}[{', '.join(x[0] for x in idxs)}]", F if t[2] == "f" else I
            if isinstance(t, tuple) and t[0] == "mat" and len(idxs) == 2:
                return f"{code}[{idxs[0][0]}, {idxs[1][0]}]", F
            raise self.err(e, f"indexing a {t!r} by {len(idxs)} indices")
        idx = self.expr(e.slice)
        if idx[1] != I:
            raise self.err(e, "a non-int index")
        k = self.fold(e.slice)
        if t == M9:
            if not isinstance(k, int):
                raise self.err(e, "a 3x3 matrix indexed by a variable")
            return f"{code}[{k // 3}, {k % 3}]", F
        if isinstance(t, tuple) and t[0] in ("v", "table"):
            return f"{code}[{idx[0]}]", F
        if isinstance(t, tuple) and t[0] == "cv":
            return f"{code}[{idx[0]}]", C
        if isinstance(t, tuple) and t[0] == "arr" and t[1] == 1:
            return f"{code}[{idx[0]}]", F if t[2] == "f" else I
        if isinstance(t, tuple) and t[0] == "arrv":
            return f"{code}[{idx[0]}]", _vec(t[1])
        raise self.err(e, f"indexing a {t!r}")

    def call(self, e: ast.Call) -> tuple[str, Any]:
        if e.keywords:
            raise self.err(e, "keyword arguments")
        f = e.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                and f.value.id == "math":
            args = [self.coerce(e, self.expr(a), F) for a in e.args]
            if f.attr in _MATH1 and len(args) == 1:
                return f"wp.{f.attr}({args[0][0]})", F
            if f.attr in _MATH2 and len(args) == 2:
                return f"{_MATH2[f.attr]}({args[0][0]}, {args[1][0]})", F
            raise self.err(e, f"math.{f.attr}")
        if not isinstance(f, ast.Name):
            raise self.err(e, "a call of a non-name")
        nm = f.id
        args = [self.expr(a) for a in e.args]
        if nm == "abs" and len(args) == 1:
            if args[0][1] == C:
                return f"cabs({args[0][0]})", F
            return f"wp.abs({args[0][0]})", args[0][1]
        if nm in ("max", "min") and len(args) >= 2:
            t = F if any(a[1] == F for a in args) else I
            args = [self.coerce(e, a, t) for a in args]
            code = args[0][0]
            for a in args[1:]:
                code = f"wp.{nm}({code}, {a[0]})"
            return code, t
        if nm == "int" and len(args) == 1:
            return f"int({args[0][0]})", I
        if nm == "float" and len(args) == 1:
            return f"F({args[0][0]})", F
        if nm == "complex":
            if len(args) == 1:
                if args[0][1] == C:
                    return args[0]
                return f"cre({self.coerce(e, args[0], F)[0]})", C
            if len(args) == 2:
                a, b = (self.coerce(e, x, F) for x in args)
                return f"wp.vec2d({a[0]}, {b[0]})", C
        if nm in IDENTITY and len(args) == 1 and args[0][1] == IDENTITY[nm]:
            return args[0]  # a CPU array row as a tuple: the device value already is one
        fn = self.tr.func_type(self.m, nm)
        if fn is None:
            raise self.err(e, f"{nm} is neither a translated function nor a builtin")
        if nm in self.m.imports:
            self.used_imports.add(nm)
        if len(args) != len(fn.params):
            raise self.err(e, f"{nm} takes {len(fn.params)} arguments")
        args = [self.coerce(e, a, t) for a, (_, t) in zip(args, fn.params, strict=True)]
        return f"{nm}({', '.join(a[0] for a in args)})", fn.ret


#: CPU helpers that turn an array row into a tuple: the identity on device values
IDENTITY = {"v3": ("v", 3), "m9": M9}
#: names a generated module defines or imports: a CPU local of the same name is renamed
RESERVED = {"wp", "F", "INF", "NAN", "PI", "TWO_PI", "cmat4", "hypot", "copysign", "cre",
            "ceq", "cmul", "cdiv", "cabs", "cpow"}


def _exits(stmts: list[ast.stmt]) -> bool:
    """Whether a block always leaves by ``return``, ``break`` or ``continue``."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Break, ast.Continue)):
        return True
    return isinstance(last, ast.If) and _exits(last.body) and _exits(last.orelse)


def _prec(op: ast.operator) -> int:
    return 1 if isinstance(op, (ast.Add, ast.Sub)) else 2


def _needs_paren(node: ast.expr, parent: ast.operator, right_side: bool) -> bool:
    """Whether an operand's code needs parentheses to keep the source's grouping (operands
    that became calls, literals or names never do)."""
    if isinstance(node, (ast.BoolOp, ast.Compare, ast.IfExp)):
        return True
    if not isinstance(node, ast.BinOp) or isinstance(node.op, ast.Pow):
        return False
    if right_side:
        return _prec(node.op) <= _prec(parent)
    return _prec(node.op) < _prec(parent)
