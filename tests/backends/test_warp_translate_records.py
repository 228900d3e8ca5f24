"""The CPU-kernel -> Warp translator on records passed whole (a struct with vector and matrix
elements), parameters the CPU passes as ``None`` (only the branch taken is translated), hooks
into the device's steps, and tuples of values and of vectors; and what of these lies outside
the subset. No Warp needed."""

from __future__ import annotations

import textwrap

import pytest
from translate_snippets import WORK
from translate_snippets import source_of as _body
from translate_snippets import translate as _tr

from ikstack._records import B, F, I, Record
from ikstack.backends.warp._translate import TranslateError, Translator

#: the chain record's layout (a record passed whole: ``rec(NAME)``)
CHAINREC = Record(
    "ChainRec",
    __name__,
    [
        ("Rs", F, ("dof", 3, 3)),
        ("ps", F, ("dof", 3)),
        ("kinds", I, ("dof",)),
        ("R_end", F, (3, 3)),
        ("p_end", F, (3,)),
        ("w", F, ("dof",)),
        ("tol", F, ()),
        ("on", B, ()),
    ],
)


def test_a_record_passed_whole_is_its_struct_with_vector_and_matrix_elements():
    """A record parameter declared ``rec(NAME)`` is the struct ``NAME_T``: a float field's
    trailing (3, 3) is a ``wp.mat33d`` and its trailing (3,) a ``wp.vec3d``, so a row of the
    joints' rotations (``_row9``) or origins (``_row3``) is an element, a (3, 3) field reads
    as on the CPU (by ``[i, j]``) and ``m9``/``v3`` of one are the value itself, a bool an int
    0/1; a (4, 4) array passed where a pose value is read becomes one."""
    code = _tr(
        """
        def err(T, Tt):
            return Tt[0, 3] - T[0, 3]
        def walk(ch, q, T, Tt):
            R = m9(ch.R_end)
            p = v3(ch.p_end)
            s = ch.R_end[2, 1] + ch.p_end[0] * ch.tol
            if ch.on:
                s = -s
            for i in range(ch.Rs.shape[0]):
                A = _row9(ch.Rs, i)
                b = _row3(ch.ps, i)
                s += A[1] * b[2] * q[i] * ch.w[i] + ch.kinds[i]
            return s + R[0] + p[1] + err(T, Tt)
        """,
        {"err": "T:m44 Tt:m44", "walk": "ch:rec(CHAINREC) q:a1f T:a2f Tt:m44"},
        {"CHAINREC": CHAINREC},
    )
    assert "from ikstack.backends.warp._structs import CHAINREC_T" in code
    body = _body(code, "walk")
    assert "def walk(ch: CHAINREC_T.type, q: wp.array(dtype=wp.float64)," in body
    lines = [ln.strip() for ln in body.splitlines()]
    assert "R = ch.R_end" in lines and "p = ch.p_end" in lines
    assert "s = ch.R_end[2, 1] + ch.p_end[0] * ch.tol" in lines
    assert "if (ch.on != 0):" in lines
    assert "for i in range(ch.Rs.shape[0]):" in lines
    assert "A = ch.Rs[i]" in lines and "b = ch.ps[i]" in lines
    assert "s = s + (A[0, 1] * b[2] * q[i] * ch.w[i] + F(ch.kinds[i]))" in lines
    assert "return s + R[0, 0] + p[1] + err(mat44_of(T), Tt)" in lines


def _trh(src: str, sigs: dict[str, str], hooks: dict[str, str], records=None) -> str:
    tr = Translator(
        signatures={"snippet": sigs},
        modules={},
        records=records,
        hooks={"snippet": ("dev_steps", hooks)},
    )
    return tr.translate("snippet", textwrap.dedent(src))


def test_none_parameters_keep_only_the_branch_taken():
    """A parameter declared ``none`` (numba prunes its branches at compile time) is not a
    Warp parameter; tests of it decide ``if``s and ``and``/``or`` terms, and only the branch
    taken is translated (the other may hold anything)."""
    code = _tr(
        """
        def f(x, extra, n):
            y = 0.0
            if extra is not None or x is None:
                y = extra[7].anything()
            elif n is not None and n > 0:
                y = x
            else:
                y = 2.0 * x
            if extra is None:
                y += 1.0
            return y
        def g(x, n):
            return f(x, None, n)
        """,
        {"f": "x:f? extra:none n:i?", "g": "x:f n:i"},
    )
    body = _body(code, "f")
    assert "def f(x: wp.float64, n: int):" in body
    assert "anything" not in body and "extra" not in body.split('"""')[-1]
    assert "if n > 0:\n        y = x\n    else:\n        y = F(2.0) * x" in body
    assert "    y = y + F(1.0)\n" in body  # no `if True:`
    assert "return f(x, n)" in _body(code, "g")


def test_records_passed_whole_and_tuples_of_values():
    """``rec(NAME)`` is the record's struct ``NAME_T`` (fields read as on the CPU); a
    ``tup(...)`` parameter is one Warp parameter per entry, its unpacked names stand for them,
    and a call passes a tuple literal or the tuple whole."""
    code = _tr(
        """
        def inner(pack, w):
            (a, (b, c)), v = pack
            return a * b + c[0] + w.lam + v.J[0, 1]
        def outer(w, x, arr):
            return inner(((x, (2.0, arr)), w), w)
        def again(pack, w):
            return inner(pack, w)
        """,
        {
            "inner": "pack:tup(tup(f,tup(f,a1f)),rec(WORK)) w:rec(WORK)",
            "outer": "w:rec(WORK) x:f arr:a1f",
            "again": "pack:tup(tup(f,tup(f,a1f)),rec(WORK)) w:rec(WORK)",
        },
        {"WORK": WORK},
    )
    assert "from ikstack.backends.warp._structs import WORK_T" in code
    assert (  # the entries named as the source unpacks them
        "def inner(a: wp.float64, b: wp.float64, "
        "c: wp.array(dtype=wp.float64), v: WORK_T.type, w: WORK_T.type):"
    ) in code
    assert "return a * b + c[0] + w.lam + v.J[0, 1]" in code
    assert "return inner(x, F(2.0), arr, w, w)" in _body(code, "outer")
    # never unpacked: named by position
    assert "return inner(pack_0_0, pack_0_1_0, pack_0_1_1, pack_1, w)" in _body(code, "again")


def test_hooks_device_contexts_rows_of_arrays_and_isfinite():
    """A hook is called by name with the declared kinds and imported from the hook module,
    with the ``dev(NAME)`` struct of a context passed on with its row; ``A[k]`` of a 2D array
    is a row (a view); ``np.isfinite`` is Warp's."""
    code = _trh(
        """
        import numpy as np
        def f(Q, k, ctx):
            pe, re = gate(Q, k, ctx)
            row = Q[k]
            return pe + re + row[0] if np.isfinite(row[1]) else 0.0
        """,
        {"f": "Q:a2f k:i ctx:dev(Thread)"},
        {"gate": "Q:a2f k:i ctx:dev(Thread) -> f f"},
    )
    assert "from dev_steps import Thread, gate" in code
    body = _body(code, "f")
    assert "def f(Q: wp.array2d(dtype=wp.float64), k: int, ctx: Thread, ctx_row: int):" in body
    assert "pe, re = gate(Q, k, ctx, ctx_row)" in body
    assert "row = Q[k]" in body and "wp.isfinite(row[1])" in body


@pytest.mark.parametrize(
    "src, sig, what",
    [
        ("def f(ch):\n    return ch.nope[0]\n", "ch:rec(CHAINREC)", "no field nope"),
        ("def f(ch):\n    return ch.Rs[0, 0, 0]\n", "ch:rec(CHAINREC)", "indexing"),
        ("def f(ch):\n    return ch.ps.shape[1]\n", "ch:rec(CHAINREC)", "shape"),
        ("def f(ch):\n    return 1.0\n", "ch:rec(NOPE)", "NOPE is not a record"),
        ("def f(J, v):\n    J[0, 0], J[1, 0] = v\n    return 0\n", "J:a2f v:v3", "unpacking 2"),
    ],
)
def test_whole_records_and_element_unpacking_outside_the_subset_are_errors(src, sig, what):
    with pytest.raises(TranslateError, match=what):
        _tr(src, {"f": sig}, {"CHAINREC": CHAINREC})


@pytest.mark.parametrize(
    "src, sig, what",
    [
        ("def f(x):\n    return x is 1.0\n", "x:f", "is None"),
        ("def f(x):\n    return x.nope\n", "x:rec(WORK)", "no field nope"),
        ("def f(x):\n    a, b = x\n    return a\n", "x:tup(f,f,f)", "unpacking 2 names"),
        ("def g(x):\n    return 1.0\n\ndef f(x):\n    return g(x)\n", "x:none", "x:f"),
        ("def g(x):\n    return x\n\ndef f(x):\n    return g((x, x))\n", "x:f", "x:tup(f)"),
    ],
)
def test_none_record_and_tuple_misuse_are_errors(src, sig, what):
    sigs = {"f": sig}
    if "def g" in src:
        sigs = {"g": what, "f": sig}
        what = "none|None|taken|2 where 1"
    with pytest.raises(TranslateError, match=what):
        _tr(src, sigs, {"WORK": WORK})


def test_a_tuple_of_vectors_is_a_matrix_of_rows():
    """Several vectors of one length in one tuple (a parameter declared ``4v3``, a literal, a
    returned member): a matrix whose rows are the vectors, indexed as on the CPU."""
    code = _tr(
        """
        def pack(a, b):
            return 2, (a, b, a, b)
        def use(hs, x):
            n, cs = pack(hs[1], hs[0])
            t = cs[3][2] + hs[2][0]
            return cs[n], t * x
        """,
        {"pack": "a:v4 b:v4", "use": "hs:3v4 x:f"},
    )
    assert "return 2, wp.matrix_from_rows(a, b, a, b)" in _body(code, "pack")
    body = _body(code, "use")
    assert "hs: wp.types.matrix(shape=(3, 4), dtype=wp.float64)" in body
    assert "n, cs = pack(hs[1], hs[0])" in body
    assert "t = cs[3][2] + hs[2][0]" in body
    assert "return cs[n], t * x" in body


def test_a_parameter_the_cpu_passes_as_none_always_has_its_value_on_the_device():
    """``var:i?``: numba compiles the branch a None argument picks; the device passes the
    value, so ``is None`` is False there and ``is not None`` True."""
    body = _body(
        _tr(
            """
        def pick(var, x):
            if var is None or var == 1:
                return x
            if var is not None:
                return -x
            return 0.0
        """,
            {"pick": "var:i? x:f"},
        ),
        "pick",
    )
    assert "def pick(var: int, x: wp.float64):" in body
    # the decided terms and tests are dropped: only the branches the device takes remain
    lines = [ln.strip() for ln in body.splitlines()]
    assert lines[1:4] == ["if var == 1:", "return x", "return -x"]


@pytest.mark.parametrize(
    "src, what",
    [
        ("def f(x):\n    return x is None\n", "not declared optional"),
        ("def f(x):\n    return x is 1.0\n", "with None only"),
        ("def f(x):\n    y = ((x, x), (x, x, x))\n    return x\n", "mixed values"),
    ],
)
def test_none_checks_and_tuples_of_vectors_outside_the_rules_are_errors(src, what):
    with pytest.raises(TranslateError, match=what):
        _tr(src, {"f": "x:f"})


#: a record passed whole, as a family's constant data
ARM = Record(
    "Arm",
    __name__,
    [("H", F, (7, 3)), ("S", F, (3,)), ("R", F, (3, 3)), ("lo", F, (7,)), ("arcs", B, ())],
)


def test_a_record_passed_whole_is_its_struct_with_vectors_and_matrices():
    """``rec(NAME)``: the struct ``NAME_T``; float fields (3,), (3, 3), (n, 3) are a vec3d, a
    mat33d and an array of vec3d (as the device struct holds them), a bool an int 0/1."""
    code = _tr(
        """
        import math
        def reach(arm, j):
            h = v3(arm.H[j])
            R = m9(arm.R)
            if arm.arcs and math.isfinite(arm.lo[j]):
                return h[0] * R[5] + v3(arm.S)[2]
            return 0.0
        """,
        {"reach": "arm:rec(ARM) j:i"},
        {"ARM": ARM},
    )
    assert "from ikstack.backends.warp._structs import ARM_T" in code
    body = _body(code, "reach")
    assert "def reach(arm: ARM_T.type, j: int):" in body
    assert "h = arm.H[j]" in body
    assert "if (arm.arcs != 0) and wp.isfinite(arm.lo[j]):" in body
    assert "R = arm.R" in body and "return h[0] * R[1, 2] + arm.S[2]" in body
