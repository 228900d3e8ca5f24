"""The CPU-kernel -> Warp translator: the checked-in generated modules match their CPU source,
and the translation rules (types, literal folding, declarations) hold. No Warp needed."""

from __future__ import annotations

import textwrap

import pytest

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


def _tr(src: str, sigs: dict[str, str]) -> str:
    tr = Translator(signatures={"snippet": sigs}, modules={})
    return tr.translate("snippet", textwrap.dedent(src))


def _body(code: str, name: str) -> str:
    return code[code.index(f"def {name}(") :]


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
    assert "_t1 = two(x)" in body and "a = _t1[0]" in body  # a float pair is a vector
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
    ],
)
def test_outside_the_subset_is_an_error_naming_the_line(src, what):
    with pytest.raises(TranslateError, match=what) as e:
        _tr(src, {"f": "x:f"})
    assert "snippet" in str(e.value) and ":" in str(e.value)


def test_declared_signature_must_match_the_source():
    with pytest.raises(TranslateError, match="declared signature"):
        _tr("def f(x, y):\n    return x\n", {"f": "x:f"})
