"""The CPU-kernel -> Warp translator: the checked-in generated modules match their CPU source,
and the translation rules (types, literal folding, declarations) hold. No Warp needed.
Records passed whole, ``None`` parameters, hooks and tuples of values:
``test_warp_translate_records.py``; names and docstrings: ``test_warp_translate_names.py``."""

from __future__ import annotations

import pytest
from translate_snippets import WORK
from translate_snippets import source_of as _body
from translate_snippets import translate as _tr

from ikstack.backends.warp._translate import MODULES, TranslateError, Translator, generate_all


def test_generated_modules_match_their_cpu_source():
    """Editing one side only (the CPU kernel or a generated file) fails here; the fix is
    ``python -m ikstack.backends.warp._translate``."""
    stale = [
        str(p) for p, text in generate_all().items() if not p.exists() or p.read_text() != text
    ]
    assert not stale, "regenerate with `python -m ikstack.backends.warp._translate`: " + ", ".join(
        stale
    )
    assert len(generate_all()) == len(MODULES)


def test_literals_are_float64_and_constant_expressions_fold_in_double():
    code = _tr(
        """
        import math
        K = 16
        def f(x):
            return x * (1.0 / 3.0) + 2.0 * math.pi * x + x / K
        """,
        {"f": "x:f"},
    )
    body = _body(code, "f")
    assert f"F({1.0 / 3.0!r})" in body  # not 1.0 / 3.0, which Warp folds in float32
    assert f"F({2.0 * 3.141592653589793!r})" in body
    assert "x / F(K)" in body  # an int constant meets a float: converted as Python does
    assert "K = wp.constant(16)" in code


def test_types_vectors_and_builtins():
    code = _tr(
        """
        import math
        def g(a, b, n):
            s = max(1.0, a[0], n)
            m = (a[0], a[1], a[2], b, b, b, b, b, b)
            return (s * m[4], abs(b), math.hypot(b, s))
        """,
        {"g": "a:v3 b:f n:i"},
    )
    body = _body(code, "g")
    assert "def g(a: wp.vec3d, b: wp.float64, n: int):" in body
    assert "wp.max(wp.max(F(1.0), a[0]), F(n))" in body  # Python's left fold, ints converted
    assert "wp.mat33d(" in body and "m[1, 1]" in body  # a 9-tuple is a row-major 3x3
    assert "return wp.vec3d(s * m[1, 1], wp.abs(b), hypot(b, s))" in body


def test_branch_bound_names_are_declared_before_the_branch_and_ints_stay_mutable():
    body = _body(
        _tr(
            """
        def h(x, n):
            cnt = 0
            for i in range(n):
                if x > 0.0:
                    y = x
                else:
                    y = -x
                cnt += 1
            a, b = (y, x) if x > 1.0 else (x, y)
            return cnt, a, b
        """,
            {"h": "x:f n:i"},
        ),
        "h",
    )
    lines = [ln.strip() for ln in body.splitlines()]
    assert "cnt = int(0)" in lines  # a literal int is a constant in a Warp loop otherwise
    assert lines.index("y = F(0.0)") < lines.index("if x > F(0.0):")
    assert "cnt = cnt + 1" in lines
    assert "a = wp.where(x > F(1.0), y, x)" in lines and "b = wp.where(x > F(1.0), x, y)" in lines


def test_complex_arithmetic_lowers_onto_the_primitives():
    body = _body(
        _tr(
            """
        def c(a, z):
            w = complex(a) * z / 3.0 + 1j
            if w == 0:
                return 0.0
            return abs(w ** 0.5) + w.real
        """,
            {"c": "a:f z:c"},
        ),
        "c",
    )
    assert "w = cdiv(cmul(cre(a), z), cre(F(3.0))) + wp.vec2d(F(0.0), F(1.0))" in body
    assert "if ceq(w, cre(F(0.0))):" in body
    assert "return cabs(cpow(w, F(0.5))) + w[0]" in body


def test_results_of_other_functions_are_typed_and_unpacked():
    body = _body(
        _tr(
            """
        def two(x):
            return x, 2 * x
        def pair(x):
            return 1, (x, x)
        def use(x):
            a, b = two(x)
            n, v = pair(a)
            return v[1] + b + n
        """,
            {"two": "x:f", "pair": "x:f", "use": "x:f"},
        ),
        "use",
    )
    # a float pair is a vector, held under the names it is unpacked into
    assert "a_b = two(x)" in body and "a = a_b[0]" in body and "b = a_b[1]" in body
    assert "n, v = pair(a)" in body
    assert "return v[1] + b + F(n)" in body


def test_arrays_and_matrices_index_as_on_the_cpu():
    body = _body(
        _tr(
            """
        def rows(q, idx, A, T):
            g = 0.0
            for m in range(A.shape[0]):
                g += q[idx[m, 0]] * A[m, 1] + T[0, 3]
                if g > 1.0:
                    return -1
            return 1
        """,
            {"rows": "q:a1f idx:a2i A:a2f T:m44"},
        ),
        "rows",
    )
    assert (
        "def rows(q: wp.array(dtype=wp.float64), idx: wp.array2d(dtype=wp.int32), "
        "A: wp.array2d(dtype=wp.float64), T: wp.mat44d):" in body
    )
    assert "for m in range(A.shape[0]):" in body
    assert "g = g + (q[idx[m, 0]] * A[m, 1] + T[0, 3])" in body  # `+=` adds the whole side
    assert "return -1" in body


def test_names_rebound_to_another_type_in_separate_branches_become_separate_variables():
    body = _body(
        _tr(
            """
        def pick(var, x):
            if var == 0:
                t = (x, x, x, x)
                return t[3]
            if var == 1:
                t = (x, x)
                s = t[1]
            else:
                t = (x, x)
                s = t[0]
            wp, _ = t[0], 1.0
            return s + wp
        """,
            {"pick": "var:i x:f"},
        ),
        "pick",
    )
    lines = [ln.strip() for ln in body.splitlines()]
    # declared first (Warp has no branch scopes), one variable per type
    assert lines[1:4] == ["t = wp.vec4d()", "t_1 = wp.vec2d()", "s = F(0.0)"]
    assert "t_1 = wp.vec2d(x, x)" in lines and "s = t_1[1]" in lines
    assert "wp_ = t_1[0]" in lines  # a local named like the Warp module is renamed
    assert "return s + wp_" in lines


def test_stores_into_arrays_and_loops_over_a_tuple_of_numbers():
    body = _body(
        _tr(
            """
        def fill(out, n, x):
            for sign in (1.0, -1.0):
                if n < out.shape[0]:
                    out[n] = sign * x
                    n += 1
            return n
        """,
            {"fill": "out:a1f n:i x:f"},
        ),
        "fill",
    )
    lines = [ln.strip() for ln in body.splitlines()]
    assert "for _k1 in range(2):" in lines
    assert "sign = wp.where(_k1 == 0, F(1.0), F(-1.0))" in lines
    assert "out[n] = sign * x" in lines


def test_a_rows_record_is_the_threads_row_of_a_struct_one_dimension_larger():
    """A record parameter declared ``rows(NAME)`` is the struct ``NAME_ROWS_T`` (every field
    with a row a thread) and its row index; a field reads that row (an array view indexed as
    on the CPU, a scalar its value); the record passes on with its row."""
    code = _tr(
        """
        import numpy as np
        def scale(ws, c):
            J, held = ws.J, ws.held
            for c in range(J.shape[1]):
                J[0, c] *= ws.lam
            return held[0]
        def run(ws, x):
            return scale(ws, 1) and x < np.inf
        """,
        {"scale": "ws:rows(WORK) c:i", "run": "ws:rows(WORK) x:f"},
        {"WORK": WORK},
    )
    assert "from ikstack.backends.warp._structs import WORK_ROWS_T" in code
    body = _body(code, "scale")
    assert "def scale(ws: WORK_ROWS_T.type, ws_row: int, c: int):" in body
    assert "J = ws.J[ws_row]" in body and "held = ws.held[ws_row]" in body
    # an element's augmented assignment is written out (Warp's `a[i] += v` is atomic)
    assert "J[0, c] = J[0, c] * ws.lam[ws_row]" in body
    assert "return (held[0] != 0)" in body  # bools are int32 0/1 on the device
    assert "return scale(ws, ws_row, 1) and x < INF" in _body(code, "run")


def test_bool_array_stores_void_functions_and_numpy_scalar_math():
    code = _tr(
        """
        import numpy as np
        def mark(flags, x, n):
            for i in range(n):
                flags[i] = x[i] > 0.0
            flags[0] = False
            if n == 0:
                return
            x[0] = np.sqrt(np.arctan2(x[0], 1.0))
        def use(flags, x):
            mark(flags, x, 2)
            return flags[1]
        """,
        {"mark": "flags:a1b x:a1f n:i", "use": "flags:a1b x:a1f"},
    )
    body = _body(code, "mark")
    assert "def mark(flags: wp.array(dtype=wp.int32), x: wp.array(dtype=wp.float64), n: int):" in (
        body
    )
    assert "flags[i] = wp.where(x[i] > F(0.0), 1, 0)" in body and "flags[0] = 0" in body
    assert "        return\n" in body  # a bare return in a function without a value
    assert "x[0] = wp.sqrt(wp.atan2(x[0], F(1.0)))" in body
    assert "    mark(flags, x, 2)\n" in _body(code, "use")  # a call for what it writes


@pytest.mark.parametrize(
    "src, sig, what",
    [
        ("def f(ws):\n    return ws.K[0, 0]\n", "ws:rows(WORK)", "no field K"),
        ("def f(ws):\n    return 1.0\n", "ws:rows(NOPE)", "NOPE is not a record"),
        ("def f(b):\n    b[0] = 1\n    return 0\n", "b:a1b", "non-bool stored"),
        (
            "def g(b):\n    b[0] = 1.0\n\ndef f(b):\n    y = g(b)\n    return y\n",
            "b:a1f",
            "returns nothing",
        ),
    ],
)
def test_records_and_arrays_outside_the_subset_are_errors(src, sig, what):
    sigs = {"f": sig} if "def g" not in src else {"g": sig, "f": sig}
    with pytest.raises(TranslateError, match=what):
        _tr(src, sigs, {"WORK": WORK})


@pytest.mark.parametrize(
    "src, what",
    [
        ("def f(x):\n    return [x]\n", "List"),
        ("def f(x):\n    y = x.shape\n    return y\n", "attribute"),
        ("def f(x):\n    return 0 < x < 1.0\n", "chained"),
        ("def f(x):\n    for i in x:\n        pass\n    return x\n", "range"),
        ("def f(x):\n    return g(x)\n", "g is neither"),
        (
            "def f(x):\n    if x > 0.0:\n        y = 1\n"
            "    else:\n        y = (x, x)\n    return y\n",
            "unknown name y",
        ),  # bound to two types by the two branches: unusable after them
        (
            "def f(x):\n    y = 1.0\n    if x > 0.0:\n        y = (x, x)\n    return x\n",
            "changes type",
        ),
        # Python's % and // of floats (a remainder with the divisor's sign): no device form
        # here (of ints they are translated: tests/backends/test_warp_floor_ops.py)
        ("def f(x):\n    return x % 3.0\n", "only ints"),
        ("def f(x):\n    return x // 2.0\n", "only ints"),
    ],
)
def test_outside_the_subset_is_an_error_naming_the_line(src, what):
    with pytest.raises(TranslateError, match=what) as e:
        _tr(src, {"f": "x:f"})
    assert "snippet" in str(e.value) and ":" in str(e.value)


def test_declared_signature_must_match_the_source():
    with pytest.raises(TranslateError, match="declared signature"):
        _tr("def f(x, y):\n    return x\n", {"f": "x:f"})


def test_finite_tests_are_bools_and_float_tuple_constants_are_their_literals():
    code = _tr(
        """
        import math
        import numpy as np
        EYE = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
        ZERO3 = (0.0, 0.0, 0.0)
        def ok(q, x):
            for i in range(q.shape[0]):
                if not np.isfinite(q[i]):
                    return False
            return math.isnan(x) or np.isinf(x)
        def start(x):
            R = EYE
            p = ZERO3
            return R[4] * x + p[2]
        """,
        {"ok": "q:a1f x:f", "start": "x:f"},
    )
    body = _body(code, "ok")
    assert "if not wp.isfinite(q[i]):" in body
    assert "return wp.isnan(x) or wp.isinf(x)" in body
    body = _body(code, "start")
    assert "R = wp.mat33d(F(1.0), F(0.0), F(0.0), F(0.0), F(1.0)," in body
    assert "p = wp.vec3d(F(0.0), F(0.0), F(0.0))" in body
    assert "EYE" not in code  # used as its literal: no device constant


def test_an_int_tuple_constant_is_not_a_vector():
    with pytest.raises(TranslateError, match="unknown name IDX"):
        _tr("IDX = (0, 1, 2)\n\ndef f(x):\n    return x * IDX[0]\n", {"f": "x:f"})


def test_unpacking_into_array_elements_stores_each_value():
    code = _tr(
        """
        def two(x):
            return x, 2.0 * x
        def put(J, i, R, v):
            J[3, i], J[4, i], J[5, i] = R[2], R[5], R[8]
            J[0, i], J[1, i], J[2, i] = v
            J[0, 0], s = two(v[0])
            J[1, 0], J[2, 0] = J[2, 0], J[1, 0]
            return s
        """,
        {"two": "x:f", "put": "J:a2f i:i R:m9 v:v3"},
    )
    lines = [ln.strip() for ln in _body(code, "put").splitlines()]
    assert lines[1:4] == ["J[3, i] = R[0, 2]", "J[4, i] = R[1, 2]", "J[5, i] = R[2, 2]"]
    # a vector variable no target writes: its entries, read directly
    assert lines[4:7] == ["J[0, i] = v[0]", "J[1, i] = v[1]", "J[2, i] = v[2]"]
    k = lines.index("_t1 = two(v[0])")  # a float pair is a vector too
    assert lines[k + 1 : k + 3] == ["J[0, 0] = _t1[0]", "s = _t1[1]"]
    # a value that reads a target is computed before any store (a swap)
    k = lines.index("_t2 = J[2, 0]")
    assert lines[k + 1 : k + 4] == ["_t3 = J[1, 0]", "J[1, 0] = _t2", "J[2, 0] = _t3"]


def test_unpacking_several_results_into_array_elements():
    code = _tr(
        """
        def pair(x):
            return 1, (x, x, x)
        def put(J, x):
            J[0, 0], v = pair(x)
            return v[0]
        """,
        {"pair": "x:f", "put": "J:a2f x:f"},
    )
    lines = [ln.strip() for ln in _body(code, "put").splitlines()]
    k = lines.index("_t1_0, _t1_1 = pair(x)")
    assert lines[k + 1 : k + 3] == ["J[0, 0] = F(_t1_0)", "v = _t1_1"]


def test_a_loop_over_a_1d_array_reads_each_element_by_index():
    code = _tr(
        """
        import numpy as np
        def finite(q, flags):
            for v in q:
                if not np.isfinite(v):
                    return False
            for b in flags:
                if b:
                    return False
            return True
        """,
        {"finite": "q:a1f flags:a1b"},
    )
    lines = [ln.strip() for ln in _body(code, "finite").splitlines()]
    k = lines.index("for _k1 in range(q.shape[0]):")
    assert lines[k + 1 : k + 3] == ["v = q[_k1]", "if not wp.isfinite(v):"]
    k = lines.index("for _k2 in range(flags.shape[0]):")
    assert lines[k + 1] == "b = (flags[_k2] != 0)"


def test_a_number_imported_from_another_translated_module_is_a_constant():
    """``from <translated module> import K6`` (an int): a constant of the generated module, as
    the module's own numbers are (a function imported alike stays an import)."""
    tr = Translator(
        signatures={"ikstack.ik.analytic._families6": {}, "snippet": {"f": "x:f"}},
        modules={"ikstack.ik.analytic._families6": "gen_families6", "snippet": "gen_snippet"},
    )
    code = tr.translate(
        "snippet",
        "from ikstack.ik.analytic._families6 import K6, SINGULAR_WRIST\n"
        "def f(x):\n    return x * K6 + SINGULAR_WRIST\n",
    )
    assert "K6 = wp.constant(8)" in code and "SINGULAR_WRIST = wp.constant(F(1e-06))" in code
    assert "return x * F(K6) + SINGULAR_WRIST" in _body(code, "f")


def test_numpy_round_of_a_scalar_is_warps_rint():
    """``np.round(x)`` of a float is Warp's ``rint`` (to the nearest integer, ties to even, as
    numba compiles it; the Warp numerical tests run both on the restarts' turn wrapping)."""
    code = _tr(
        """
        import numpy as np
        def f(x):
            return np.round(x / (2 * np.pi))
        """,
        {"f": "x:f"},
    )
    assert "return wp.rint(x / F(6.283185307179586))" in _body(code, "f")


def test_unsigned_64_bit_integers_wrap_alike_and_mix_with_nothing_else():
    """``u64`` values (``np.uint64(...)``) take ``+ * ^ >>`` among themselves as
    ``wp.uint64`` values, a big literal in hexadecimal; ``np.float64`` of one is a float;
    an operand of another type is an error naming the line."""
    code = _tr(
        """
        import numpy as np
        def step(s):
            s = s + np.uint64(0x9E3779B97F4A7C15)
            z = (s ^ (s >> np.uint64(30))) * np.uint64(7)
            return s, np.float64(z >> np.uint64(11)) * 0.5
        def seeded(k):
            return np.uint64(k)
        """,
        {"step": "s:u64", "seeded": "k:i"},
    )
    body = _body(code, "step")
    assert "def step(s: wp.uint64):" in body
    assert "s = s + wp.uint64(0x9e3779b97f4a7c15)" in body
    assert "z = (s ^ (s >> wp.uint64(30))) * wp.uint64(7)" in body
    assert "return s, wp.float64(z >> wp.uint64(11)) * F(0.5)" in body
    assert "return wp.uint64(k)" in _body(code, "seeded")
    with pytest.raises(TranslateError, match=r"<snippet>:3: .*u64 with u64 only"):
        _tr("import numpy as np\ndef f(s):\n    return s + 1\n", {"f": "s:u64"})
    with pytest.raises(TranslateError, match="outside 0 .. 2"):
        _tr("import numpy as np\ndef f():\n    return np.uint64(18446744073709551616)\n", {"f": ""})
