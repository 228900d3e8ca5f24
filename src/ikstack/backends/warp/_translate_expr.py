"""The expression half of :mod:`ikstack.backends.warp._translate`: the portable subset's types,
literal folding, operators, calls and indexing, as Warp source. Does not import Warp."""

from __future__ import annotations

import ast
import math
from typing import Any

from ikstack.backends.warp import _translate_args as args_
from ikstack.backends.warp import _translate_ints as ints_
from ikstack.backends.warp import _translate_u64 as u64_
from ikstack.backends.warp._translate_types import (
    I64,
    M9,
    B,
    C,
    F,
    I,
    _flit,
    _Func,
    _vec,
    row_param,
)
from ikstack.errors import TranslateError

_MATH1 = {
    "sqrt",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "exp",
    "log",
    "floor",
    "ceil",
    "log2",
    "log10",
    "sinh",
    "cosh",
    "tanh",
    "rint",  # (np.round only: math has no rint)
}
_MATH2 = {"atan2": "wp.atan2", "pow": "wp.pow", "hypot": "hypot", "copysign": "copysign"}
#: NumPy scalar functions -> the ``math`` function numba compiles them to alike
_NP_MATH = {
    **{f: f for f in ("sqrt", "sin", "cos", "tan", "exp", "log", "floor", "ceil", "hypot")},
    **{"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arctan2": "atan2"},
    **{f: f for f in ("isfinite", "isnan", "isinf")},
    "round": "rint",  # of a scalar: to the nearest integer, ties to even (numba's llvm.rint)
}
#: ``math.*`` / ``np.*`` tests of one float (a bool)
_PREDICATES = {"isfinite", "isnan", "isinf"}
#: module names whose float constants fold (``math.pi``, ``np.inf``...)
_CONST_MODULES = ("math", "np")
_BINOPS = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.Pow: "**",
}
_CMPOPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_FOLD_OPS = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
}


class _ExprWriter:
    """Expressions of one function (its locals' types in ``env``)."""

    tr: Any
    m: Any
    fn: _Func
    env: dict[str, Any]
    rename: dict[str, str]
    entry: dict[str, str]
    used_consts: set[str]
    used_imports: set[str]
    used_hooks: set[str]

    def err(self, node: ast.AST, msg: str) -> TranslateError:
        return TranslateError(
            f"{self.m.path}:{getattr(node, 'lineno', '?')}: {self.fn.name}: {msg}"
        )

    # -- the function
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
        if want == I64 and t == I:
            return ints_.widen(p, I64)
        if want == F and t in (I, I64):
            if t == I and code.lstrip("-").isdigit():  # an int literal: the float literal
                return _flit(float(int(code))), F
            return f"F({code})", F
        if want == C and t in (F, I):
            return f"cre({self.coerce(node, p, F)[0]})", C
        if want == ("mat", 4) and t == ("arr", 2, "f"):
            # a (4, 4) array where a pose value is read: its entries as a matrix
            return f"mat44_of({code})", want
        raise self.err(node, f"a {t!r} where a {want!r} is needed")

    def fold(self, e: ast.expr) -> float | int | None:
        """The value of a constant expression (literals, module constants, ``math.pi``...)."""
        if (
            isinstance(e, ast.Constant)
            and isinstance(e.value, (int, float))
            and not isinstance(e.value, bool)
        ):
            return e.value
        if (
            isinstance(e, ast.Name)
            and e.id in self.m.consts
            and e.id not in self.env
            and isinstance(self.m.consts[e.id], (int, float))
            and not isinstance(self.m.consts[e.id], bool)
        ):
            return self.m.consts[e.id]
        if (
            isinstance(e, ast.Attribute)
            and isinstance(e.value, ast.Name)
            and e.value.id in _CONST_MODULES
            and e.attr in ("pi", "inf", "e", "tau", "nan")
        ):
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
        if (
            isinstance(e, ast.Call)
            and isinstance(e.func, ast.Attribute)
            and isinstance(e.func.value, ast.Name)
            and e.func.value.id == "math"
            and e.func.attr == "sqrt"
            and len(e.args) == 1
        ):
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
            if e.id in self.m.tuples:  # a tuple constant: its literal
                lit = ast.Tuple([ast.Constant(x) for x in self.m.tuples[e.id]], ast.Load())
                return self.expr(ast.copy_location(lit, e))
            if e.id in self.m.consts:
                self.used_consts.add(e.id)
                c = self.m.consts[e.id]
                if isinstance(c, bool):
                    return e.id, B
                return e.id, ("table", len(c))
            raise self.err(e, f"unknown name {e.id}")
        if isinstance(e, ast.BinOp):
            return self.binop(e)
        if isinstance(e, (ast.Compare, ast.BoolOp, ast.UnaryOp)):
            decided = args_.static(self, e)  # a test of a none parameter
            if decided is not None:
                return repr(decided), B
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
            for x in args_.undecided(self, e):
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
            return (
                f"{self.paren(e.left, a[0], cmp=True)} {op} "
                f"{self.paren(e.comparators[0], b[0], cmp=True)}",
                B,
            )
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
                return f"wp.matrix_from_rows({', '.join(p[0] for p in tparts)})", (
                    "cv",
                    len(tparts),
                )
            (vt,) = ts if len(ts) == 1 else (None,)
            if isinstance(vt, tuple) and vt[0] == "v" and 2 <= len(tparts) <= 4:
                # a tuple of vectors: the rows of a matrix (``t[k]`` a row, ``t[k][j]`` a value)
                rows = ", ".join(p[0] for p in tparts)
                return f"wp.matrix_from_rows({rows})", ("tv", len(tparts), vt[1])
            raise self.err(e, "a tuple of mixed values outside a return")
        if isinstance(e, ast.Subscript):
            return self.subscript(e)
        if isinstance(e, ast.Attribute):
            code, t = self.expr(e.value)
            if isinstance(t, tuple) and t[0] == "rows":  # a field: this thread's row of it
                ft = self.tr.record_fields(self.m, t[1]).get(e.attr)
                if ft is None:
                    raise self.err(e, f"record {t[1]} has no field {e.attr}")
                return f"{code}.{e.attr}[{row_param(code)}]", ft
            if isinstance(t, tuple) and t[0] == "rec":  # a field of the struct
                ft = self.tr.record_fields(self.m, t[1], device=True).get(e.attr)
                if ft is None:
                    raise self.err(e, f"record {t[1]} has no field {e.attr}")
                return (f"({code}.{e.attr} != 0)" if ft == B else f"{code}.{e.attr}"), ft
            if t == C and e.attr == "real":
                return f"{code}[0]", F
            if t == C and e.attr == "imag":
                return f"{code}[1]", F
            raise self.err(e, f"attribute {e.attr}")
        if isinstance(e, ast.Call):
            return self.call(e)
        raise self.err(e, f"{type(e).__name__} is outside the portable subset")

    def note_call(self, nm: str) -> None:
        """Record a call of ``nm`` from another module (imported by the generated one)."""
        if nm in self.m.funcs or nm == self.fn.name:
            return
        if nm in self.tr.hooks_of(self.m):
            self.used_hooks.add(nm)
        elif nm in self.m.imports:
            self.used_imports.add(nm)

    def paren(self, node: ast.expr, code: str, bool_ctx: bool = False, cmp: bool = False) -> str:
        if cmp and isinstance(node, ast.BinOp):
            return code
        if isinstance(node, (ast.BinOp, ast.BoolOp, ast.Compare, ast.IfExp)) or (
            isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
        ):
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
        if {ta, tb} == {I, I64}:
            return ints_.widen(a, I64), ints_.widen(b, I64), I64
        raise self.err(node, f"{ta!r} with {tb!r}")

    def binop(self, e: ast.BinOp) -> tuple[str, Any]:
        wide = u64_.binop(self, e)  # unsigned 64-bit operands
        if wide is not None:
            return wide
        floored = ints_.binop(self, e)  # % and // as Python rounds them
        if floored is not None:
            return floored
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
        if op == "/" and a[1] in (I, I64) and b[1] in (I, I64):
            a, b = self.coerce(e, a, F), self.coerce(e, b, F)
        a, b, t = self.unify(e, a, b)
        if t not in (F, I, I64, C):
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
            if not (
                isinstance(t, tuple)
                and isinstance(k, int)
                and (t[0] == "arr" or (t[0] in ("arrv", "arrm") and k == 0))
            ):
                raise self.err(e, "shape of a non-array")
            return f"{code}.shape[{k}]", I
        code, t = self.expr(e.value)
        if isinstance(e.slice, ast.Tuple):  # an element of an array or a matrix
            idxs = [self.expr(x) for x in e.slice.elts]
            if any(x[1] != I for x in idxs):
                raise self.err(e, "a non-int index")
            if isinstance(t, tuple) and t[0] == "arr" and len(idxs) == t[1]:
                return _elem(f"{code}[{', '.join(x[0] for x in idxs)}]", t[2])
            if ((isinstance(t, tuple) and t[0] == "mat") or t == M9) and len(idxs) == 2:
                # a matrix value (a (3, 3) array on the CPU reads as the 9-tuple does)
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
        if isinstance(t, tuple) and t[0] == "tv":
            return f"{code}[{idx[0]}]", _vec(t[2])
        if isinstance(t, tuple) and t[0] == "arr" and t[1] == 1:
            return _elem(f"{code}[{idx[0]}]", t[2])
        if isinstance(t, tuple) and t[0] == "arr":  # a row: a view one dimension smaller
            return f"{code}[{idx[0]}]", ("arr", t[1] - 1, t[2])
        if isinstance(t, tuple) and t[0] == "arrv":
            return f"{code}[{idx[0]}]", _vec(t[1])
        if t == ("arrm", 3):
            return f"{code}[{idx[0]}]", M9
        raise self.err(e, f"indexing a {t!r}")

    def call(self, e: ast.Call) -> tuple[str, Any]:
        if e.keywords:
            raise self.err(e, "keyword arguments")
        wide = u64_.call(self, e) or ints_.call(self, e)  # np.uint64 / np.float64 / np.int64
        if wide is not None:
            return wide
        f = e.func
        if (
            isinstance(f, ast.Attribute)
            and isinstance(f.value, ast.Name)
            and f.value.id in ("math", "np")
        ):
            args = [self.coerce(e, self.expr(a), F) for a in e.args]
            if f.attr in _PREDICATES and len(args) == 1:
                return f"wp.{f.attr}({args[0][0]})", B
            fn_name = f.attr if f.value.id == "math" else _NP_MATH.get(f.attr, "")
            if fn_name in _MATH1 and len(args) == 1:
                return f"wp.{fn_name}({args[0][0]})", F
            if fn_name in ("isfinite", "isnan", "isinf") and len(args) == 1:
                return f"wp.{fn_name}({args[0][0]})", B
            if fn_name in _MATH2 and len(args) == 2:
                return f"{_MATH2[fn_name]}({args[0][0]}, {args[1][0]})", F
            raise self.err(e, f"{f.value.id}.{f.attr}")
        if not isinstance(f, ast.Name):
            raise self.err(e, "a call of a non-name")
        nm = f.id
        fn = self.tr.func_type(self.m, nm)
        whole = args_.call_whole(self, e, nm, fn)  # None or tuples as arguments
        if whole is not None:
            return whole
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
        if nm in IDENTITY and len(args) == 1 and args[0][1] in IDENTITY[nm][1]:
            # a CPU array (row) as a tuple: the device value already is one
            return args[0][0], IDENTITY[nm][0]
        if nm in ROW_IDENTITY and len(args) == 2 and args[0][1] == ROW_IDENTITY[nm][1]:
            if args[1][1] != I:
                raise self.err(e, "a non-int index")
            # row i of a CPU array as a tuple: the device array's element
            return f"{args[0][0]}[{args[1][0]}]", ROW_IDENTITY[nm][0]
        if fn is None:
            raise self.err(e, f"{nm} is neither a translated function nor a builtin")
        self.note_call(nm)
        if len(args) != len(fn.params):
            raise self.err(e, f"{nm} takes {len(fn.params)} arguments")
        codes = []
        for node, a, (_, t) in zip(e.args, args, fn.params, strict=True):
            if isinstance(t, tuple) and t[0] == "rows":  # the record and its row, passed on
                if a[1] != t or not isinstance(node, ast.Name):
                    raise self.err(e, f"{nm} takes a {t[1]} record (a parameter) here")
                codes.append(f"{a[0]}, {row_param(a[0])}")
            else:
                codes.append(self.coerce(e, a, t)[0])
        return f"{nm}({', '.join(codes)})", fn.ret


def _elem(code: str, kind: str) -> tuple[str, Any]:
    """An array element of kind ``f``/``i``/``b`` (bools are stored as int32 0/1)."""
    if kind == "b":
        return f"({code} != 0)", B
    return code, F if kind == "f" else I


#: CPU helpers that turn an array (row) into a tuple: the identity on device values
#: (name -> (result type, the argument types it accepts))
IDENTITY: dict[str, tuple[Any, tuple]] = {
    "v3": (("v", 3), (("v", 3),)),
    "m9": (M9, (M9,)),
}
#: CPU helpers ``name(A, i)`` that read row ``i`` of an array as a tuple: element ``i`` of the
#: device array of vectors or matrices (name -> (result type, array type))
ROW_IDENTITY: dict[str, tuple[Any, Any]] = {
    "_row9": (M9, ("arrm", 3)),
    "_row3": (("v", 3), ("arrv", 3)),
}
#: names a generated module defines or imports: a CPU local of the same name is renamed
RESERVED = {
    "wp",
    "F",
    "INF",
    "NAN",
    "PI",
    "TWO_PI",
    "cmat4",
    "hypot",
    "copysign",
    "cre",
    "ceq",
    "cmul",
    "cdiv",
    "cabs",
    "cpow",
    "mat44_of",
    "floor_mod",
    "floor_div",
}


def _prec(op: ast.operator) -> int:
    return 1 if isinstance(op, (ast.Add, ast.Sub)) else 2


def _needs_paren(node: ast.expr, parent: ast.operator, right_side: bool) -> bool:
    """Whether an operand's code needs parentheses to keep the source's grouping (operands
    that became calls, literals or names never do)."""
    if isinstance(node, (ast.BoolOp, ast.Compare, ast.IfExp)):
        return True
    if not isinstance(node, ast.BinOp) or type(node.op) in (ast.Pow, *ints_.FLOOR_OPS):
        return False  # (these become calls)
    if right_side:
        return _prec(node.op) <= _prec(parent)
    return _prec(node.op) < _prec(parent)
