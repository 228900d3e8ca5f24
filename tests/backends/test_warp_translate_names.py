"""The translator's names and docstrings: a tuple parameter's entries carry the names the CPU
source unpacks them into (never one another name of the function), temporaries are named for
what they hold, and a generated docstring says how the device's parameters differ. No Warp
needed: the generated text is parsed as Python."""

from __future__ import annotations

import ast
import textwrap

import pytest

from ikstack.backends.warp._translate import TranslateError, Translator


def _tr(src: str, sigs: dict[str, str], hooks: dict[str, str] | None = None) -> str:
    tr = Translator(
        signatures={"snippet": sigs},
        modules={},
        hooks={"snippet": ("dev_steps", hooks or {})},
    )
    return tr.translate("snippet", textwrap.dedent(src))


def _func(code: str, name: str) -> ast.FunctionDef:
    (fn,) = [n for n in ast.parse(code).body if isinstance(n, ast.FunctionDef) and n.name == name]
    return fn


def _params(code: str, name: str) -> list[str]:
    return [a.arg for a in _func(code, name).args.args]


def _bound(code: str, name: str) -> set[str]:
    """The names a generated function assigns (its locals)."""
    fn = _func(code, name)
    return {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _distinct(code: str, name: str) -> list[str]:
    """The function's parameters, checked distinct and never assigned: each Warp name is one
    value of the source."""
    ps = _params(code, name)
    assert len(ps) == len(set(ps)), ps
    assert not set(ps) & _bound(code, name), set(ps) & _bound(code, name)
    return ps


def test_tuple_entries_take_the_names_the_source_unpacks_them_into():
    """Nested tuples, a tuple named first and unpacked later, a device context's row, an entry
    the source discards (``_``: its position), and a tuple passed on whole under those
    names."""
    code = _tr(
        """
        def inner(Q, dst, gate):
            A, V, base, off, rev = dst
            chain, tols = gate
            ptol, _ = tols
            if rev:
                Q[base, off] = ptol
            V[base] = chain > 0
            return A * ptol
        def outer(Q, dst, gate):
            return inner(Q, dst, gate)
        def hooked(work, x):
            D, ctx = work
            step(D, ctx)
            return x
        """,
        {
            "inner": "Q:a2f dst:tup(f,a1b,i,i,b) gate:tup(i,tup(f,f))",
            "outer": "Q:a2f dst:tup(f,a1b,i,i,b) gate:tup(i,tup(f,f))",
            "hooked": "work:tup(a1f,dev(Ctx)) x:f",
        },
        {"step": "D:a1f ctx:dev(Ctx) ->"},
    )
    assert _distinct(code, "inner") == [
        "Q", "A", "V", "base", "off", "rev", "chain", "ptol", "gate_1_1",
    ]  # fmt: skip
    body = ast.unparse(_func(code, "inner"))
    assert "Q[base, off] = ptol" in body and "return A * ptol" in body
    assert "V[base] = " in body and "dst_" not in body
    # passed on whole: the caller's own entries (never unpacked there: by position)
    assert _distinct(code, "outer")[1:3] == ["dst_0", "dst_1"]
    assert "inner(Q, dst_0, dst_1, dst_2, dst_3, dst_4, gate_0, gate_1_0, gate_1_1)" in code
    assert _distinct(code, "hooked") == ["D", "ctx", "ctx_row", "x"]
    assert "step(D, ctx, ctx_row)" in code


@pytest.mark.parametrize(
    "body, sig, positional",
    [
        # bound again after the unpack: the name is not only the entry's
        ("a, b = p\n    a = 2.0 * b\n    return a\n", "p:tup(f,f)", ["p_0", "b"]),
        # bound to something else before the unpack
        ("a = 1.0\n    x = a\n    a, b = p\n    return a + b + x\n", "p:tup(f,f)", ["p_0", "b"]),
        # a loop variable of the same name
        ("s = 0.0\n    for a in range(3):\n        s += a\n    a, b = p\n    return s + a\n",
         "p:tup(f,f)", ["p_0", "b"]),
        # two entries unpacked into one name
        ("a, b = p\n    x = a\n    a, c = q\n    return x + a + b + c\n",
         "p:tup(f,f) q:tup(f,f)", ["p_0", "b", "q_0", "c"]),
        # another parameter's name
        ("y, b = p\n    return y + b\n", "p:tup(f,f) y:f", ["p_0", "b", "y"]),
        # a function of the module (the generated module defines it too)
        ("g, b = p\n    return g + b\n", "p:tup(f,f)", ["p_0", "b"]),
        # a name of the generated module (F: the float64 constructor), a builtin
        ("F, abs = p\n    return F + abs\n", "p:tup(f,f)", ["p_0", "p_1"]),
        # the translator's own names (temporaries, renamings)
        ("_t1, x_1 = p\n    return _t1 + x_1\n", "p:tup(f,f)", ["p_0", "p_1"]),
        # a device context's row name taken by a local
        ("a, ctx = p\n    ctx_row = 2.0\n    return a + ctx_row\n", "p:tup(f,dev(Ctx))",
         ["a", "p_1", "p_1_row"]),
    ],
)  # fmt: skip
def test_an_entry_name_that_means_something_else_in_the_function_stays_positional(
    body, sig, positional
):
    """Each case would give one Warp variable two meanings under the unpacked name; the entry
    keeps its position instead, and the generated parameters stay distinct and unassigned
    except where the source itself rebinds the entry."""
    src = f"def g(x):\n    return x\n\ndef f({', '.join(p.split(':')[0] for p in sig.split())}):\n"
    code = _tr(src + "    " + body, {"g": "x:f", "f": sig})
    ps = _params(code, "f")
    assert ps == positional
    assert len(ps) == len(set(ps))
    if "a = 2.0 * b" in body:  # the source rebinds the entry: it writes the entry, as before
        assert "p_0 = F(2.0) * b" in ast.unparse(_func(code, "f"))
    else:
        assert not set(ps) & _bound(code, "f")


def test_an_entry_the_function_does_not_name_takes_the_name_its_callers_give_it():
    """``_, b = hs``: the discarded entry takes the name of the module's callers' tuple
    (``outer`` builds ``(x, y)``), through a caller that passes the tuple on (``mid``)."""
    code = _tr(
        """
        def inner(hs):
            _, b = hs
            return b
        def mid(hs, k):
            _, b = hs
            return inner(hs) + b * k
        def outer(x, y):
            return mid((x, y), 2.0)
        """,
        {"inner": "hs:tup(f,f)", "mid": "hs:tup(f,f) k:f", "outer": "x:f y:f"},
    )
    assert _distinct(code, "inner") == ["x", "b"]
    assert _distinct(code, "mid") == ["x", "b", "k"]
    assert "return inner(x, b) + b * k" in code


@pytest.mark.parametrize(
    "callers, positional",
    [
        # callers that disagree
        ("def c1(x, y):\n    return g((x, y), 1.0)\ndef c2(u, y):\n    return g((u, y), 1.0)\n",
         ["hs_0", "b", "k"]),
        # the caller's name is another parameter of the function
        ("def c1(k, y):\n    return g((k, y), 1.0)\n", ["hs_0", "b", "k"]),
        # a value, not a name
        ("def c1(x, y):\n    return g((2.0 * x, y), 1.0)\n", ["hs_0", "b", "k"]),
    ],
)  # fmt: skip
def test_callers_name_an_entry_only_with_one_free_name(callers, positional):
    src = "def g(hs, k):\n    _, b = hs\n    return b * k\n" + callers
    sigs = {"g": "hs:tup(f,f) k:f", "c1": "x:f y:f", "c2": "u:f y:f"}
    if "def c1(k" in callers:
        sigs["c1"] = "k:f y:f"
    code = _tr(src, {k: v for k, v in sigs.items() if f"def {k}(" in src})
    assert _params(code, "g") == positional


def test_an_entry_whose_position_is_taken_is_an_error():
    with pytest.raises(TranslateError, match="tuple entry p_0 collides"):
        _tr("def f(p):\n    _, b = p\n    p_0 = 2.0 * b\n    return p_0\n", {"f": "p:tup(f,f)"})


def test_temporaries_are_named_for_what_they_hold_and_only_where_needed():
    code = _tr(
        """
        def two(x):
            return x, 2.0 * x
        def f(a, b, v):
            a, b = a + 1.0, b * 2.0
            a, b = b, a
            x, y = v
            c, d = two(x)
            c_d = c
            e, f_ = two(d)
            return a + b + y + c_d + e + f_
        """,
        {"two": "x:f", "f": "a:f b:f v:v2"},
    )
    lines = [ln.strip() for ln in ast.unparse(_func(code, "f")).splitlines()][1:]  # no @
    # in order, each value read before a later name is bound: no temporaries
    assert lines[1:3] == ["a = a + F(1.0)", "b = b * F(2.0)"]
    # a swap: through the new values, named for them
    assert lines[3:7] == ["a_new = b", "b_new = a", "a = a_new", "b = b_new"]
    assert lines[7:9] == ["x = v[0]", "y = v[1]"]  # a vector variable: read directly
    assert lines[9:12] == ["c_d_2 = two(x)", "c = c_d_2[0]", "d = c_d_2[1]"]  # c_d: the source's
    assert "e_f_ = two(d)" in lines


def test_generated_docstrings_say_how_the_device_parameters_differ():
    """Paragraphs naming a parameter compiled out (``none``) are dropped (the first kept); a
    closing paragraph names the CPU function and each difference; a function without a
    docstring has none."""
    code = _tr(
        '''
        def f(Q, gate, opt, extra, n):
            """Summary naming ``extra``.

            ``Q`` the slots; ``gate = (chain, tol)``.

            With ``extra`` None the plain loop; otherwise ``extra = (a, b)`` the strategy.

            ``n`` may be None."""
            chain, tol = gate
            if n is None:
                return chain
            return chain + tol + n
        def one(x):
            """One line."""
            return x
        def plain(x, n):
            return x if n is None else x + n
        ''',
        {
            "f": "Q:a2f gate:tup(f,f) opt:tup(f,f)? extra:none n:i?",
            "one": "x:f",
            "plain": "x:f n:i?",
        },
    )
    doc = ast.get_docstring(_func(code, "f"))
    assert doc is not None
    paras = doc.split("\n\n")
    assert paras[0] == "Summary naming ``extra``."
    assert "strategy" not in doc and "``n`` may be None." in doc
    note = " ".join(paras[-1].split())
    assert note == (
        "On the device (generated from ``snippet.f``): ``extra`` is None (compiled out); "
        "``gate`` is passed as ``chain`` and ``tol``; ``opt`` is always passed, as ``opt_0`` "
        "and ``opt_1``; ``n`` is always passed."
    )
    assert ast.get_docstring(_func(code, "one")) == "One line."  # nothing differs
    assert ast.get_docstring(_func(code, "plain")) is None  # none in the source


def test_a_name_rebound_to_another_type_never_takes_a_name_of_the_source():
    """``x`` rebound to a vector becomes a new Warp variable; ``x_1`` is the source's own
    variable (bound later, same type), so the new one is ``x_2``: one name per value."""
    code = _tr(
        """
        def f(v, w):
            x = 1.0
            y = x
            x = v
            x_1 = w
            return x[0] + x_1[1] + y
        """,
        {"f": "v:v2 w:v2"},
    )
    lines = [ln.strip() for ln in ast.unparse(_func(code, "f")).splitlines()][2:]
    assert lines == ["x = F(1.0)", "y = x", "x_2 = v", "x_1 = w", "return x_2[0] + x_1[1] + y"]
