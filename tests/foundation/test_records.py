"""Typed records and their packing (:mod:`ikstack._records`): one definition gives the named
tuple, the pack and the compiled unpack; these tests hold the three together.

The references are the definitions themselves (field names, dtypes, shapes), never the packing
code: a packed record must come back field for field, value for value, in every layout the
solvers use and in random ones.
"""

from __future__ import annotations

import inspect
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from ikstack._records import B, F, Flat, I, Packing, Record
from ikstack.diffik import _qp_workspace as QW
from ikstack.ik import _data
from ikstack.ik.analytic import _branches6, _selection
from ikstack.ik.analytic import _single_target as A1
from ikstack.ik.numerical import _kernels as NK
from ikstack.ik.numerical import _single_target as N1

R1 = Record(
    "Rec1",
    __name__,
    [
        ("x", F, ("n", 3)),
        ("k", I, ("n",)),
        ("t", F, ()),
        ("flag", B, ()),
        ("m", B, ("n",)),
        ("c", I, ()),
    ],
)
R2 = Record("Rec2", __name__, [("y", F, (2, "m", 4)), ("z", F, ("n + m",)), ("e", F, (0,))])
Rec1, Rec2 = R1.type, R2.type  # bound under their names, as numba's cache needs
PK = Packing(R1, R2)
_unpack = PK.unpack
PK_S = Packing(R1, R2, strided=True)  # the same layout, unpacked without reshapes
_unpack_s = PK_S.unpack


@njit(cache=False)
def _roundtrip(fl, il):
    return _unpack(fl, il)


@njit(cache=False)
def _roundtrip_s(fl, il):
    return _unpack_s(fl, il)


def _random(rec: Record, dims: dict[str, int], rng: np.random.Generator):
    vals = {}
    for name, dtype, shape in rec.fields:
        size = tuple(
            d if isinstance(d, int) else sum(dims[t.strip()] for t in d.split("+")) for d in shape
        )
        if dtype == F:
            v = rng.normal(size=size) * 10.0 ** rng.integers(-300, 300, size=size)
        elif dtype == I:
            v = rng.integers(-(2**62), 2**62, size=size)
        else:
            v = rng.random(size) < 0.5
        vals[name] = v if shape else v.item() if hasattr(v, "item") else v
    return rec.make(**vals)


def _same(a, b) -> None:
    assert type(a) is type(b)
    for name, x, y in zip(a._fields, a, b, strict=True):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape, name
        assert x.dtype == y.dtype or (x.dtype.kind == y.dtype.kind), name
        assert np.array_equal(x, y), name  # exact, bit for bit on floats (no NaN here)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 7), m=st.integers(0, 5), seed=st.integers(0, 2**32 - 1))
def test_pack_then_unpack_gives_every_field_back(n, m, seed):
    rng = np.random.default_rng(seed)
    r1, r2 = _random(R1, {"n": n}, rng), _random(R2, {"n": n, "m": m}, rng)
    fl, il = PK.pack(r1, r2)
    assert fl.dtype == np.float64 and il.dtype == np.int64
    assert il[:3].tolist() == [PK.tag, n, m]  # the tag, then the dimensions in first-use order
    for out in (_roundtrip(fl, il), PK.unpack.py_func(fl, il), PK.views(fl, il)):
        _same(out[0], r1)
        _same(out[1], r2)
    fs, is_ = PK_S.pack(r1, r2)  # strided: the same arrays but for the tag
    assert np.array_equal(fs, fl) and np.array_equal(is_[1:], il[1:])
    for out in (_roundtrip_s(fs, is_), PK_S.views(fs, is_)):
        _same(out[0], r1)
        _same(out[1], r2)
    # a compiled unpack types every field as its definition says
    got = _roundtrip(fl, il)
    assert isinstance(got[0].t, float) and isinstance(got[0].c, int)
    assert isinstance(got[0].flag, bool) and got[0].m.dtype == np.bool_


def test_bad_values_are_named():
    with pytest.raises(TypeError, match="missing"):
        R1.make(x=np.zeros((1, 3)))
    good = dict(x=np.zeros((2, 3)), k=np.zeros(2), t=0.0, flag=True, m=np.ones(2), c=1)
    with pytest.raises(ValueError, match=r"Rec1\.k"):
        R1.make(**{**good, "k": np.zeros(3)})
    with pytest.raises(ValueError, match=r"Rec2\.z"):
        PK.pack(R1.make(**good), Rec2(np.zeros((2, 1, 4)), np.zeros(4), np.zeros(0)))
    with pytest.raises(ValueError, match="dtype"):
        Record("Bad", __name__, [("a", "f4", ())])


def test_an_unpack_of_another_layout_refuses_the_arrays():
    """A kernel cached with an older layout (numba does not see a record change in another
    module) raises rather than read the wrong offsets."""
    other = Packing(R1, Record("Rec2", __name__, [("y", F, (2, "m", 4)), ("z", F, ("n + m",))]))
    assert other.tag != PK.tag
    rng = np.random.default_rng(1)
    fl, il = PK.pack(_random(R1, {"n": 2}, rng), _random(R2, {"n": 2, "m": 1}, rng))
    with pytest.raises(ValueError, match="layout"):
        _roundtrip_other(fl, il)
    _roundtrip(fl, il)  # its own layout: fine


_unpack_other = Packing(
    R1, Record("Rec2", __name__, [("y", F, (2, "m", 4)), ("z", F, ("n + m",))])
).unpack


@njit(cache=False)
def _roundtrip_other(fl, il):
    return _unpack_other(fl, il)


def test_record_types_pickle_by_reference():
    """numba's cache pickles a kernel's argument types: each record type must be the
    module-level name it claims."""
    for rec in (
        _data.CHAIN,
        _data.CONSTRAINTS,
        _data.GATE,
        NK.SETTINGS,
        A1.SELECT,
        A1.FAMILY6,
        QW.QP_PARAMS,
        QW.QP_ROWS,
        QW.QP_PATTERN,
        QW.QP_WORK,
        R1,
        R2,
    ):
        assert pickle.loads(pickle.dumps(rec.type)) is rec.type


def _solver_values(rec: Record, dims: dict[str, int], rng: np.random.Generator):
    return _random(rec, dims, rng)


@pytest.mark.parametrize(
    "packing",
    [N1.PACKING, A1.PACKING, A1.PACKING6, QW.WORKSPACE],
    ids=["numerical", "analytic", "analytic6", "velocity_qp"],
)
def test_the_solvers_layouts_round_trip(packing):
    rng = np.random.default_rng(5)
    dims = {
        d: int(v) for d, v in zip(packing.dims, rng.integers(1, 5, len(packing.dims)), strict=True)
    }
    if "dof" in dims and A1.FAMILY6 in packing.records:
        dims["dof"] = 6
    recs = [_solver_values(r, dims, rng) for r in packing.records]
    fl, il = packing.pack(*recs)
    for got, want in zip(packing.unpack.py_func(fl, il), recs, strict=True):
        _same(got, want)
    for got, want in zip(packing.views(fl, il), recs, strict=True):
        _same(got, want)


def _spans(buf: np.ndarray, arr: np.ndarray) -> tuple[int, int]:
    start = (arr.__array_interface__["data"][0] - buf.__array_interface__["data"][0]) // 8
    return start, start + arr.size


@pytest.mark.parametrize("packing", [PK, PK_S, QW.WORKSPACE], ids=["plain", "strided", "qp"])
def test_views_tile_the_packed_arrays_and_write_through(packing):
    """:attr:`Packing.views` gives every array field as a view of its own span, as the layout
    says (fields in definition order, floats in ``fl``, ints and bools in ``il`` after the tag
    and the dimensions; the spans tile both arrays), and a write through a view is what the
    compiled unpack reads."""
    dims = {d: 2 + k for k, d in enumerate(packing.dims)}
    fl, il = packing.pack(*[r.zeros(**dims) for r in packing.records])
    views = packing.views(fl, il)
    at = {F: 0, I: 1 + len(dims)}
    for rec, got in zip(packing.records, views, strict=True):
        for (name, dtype, shape), v in zip(rec.fields, got, strict=True):
            size = tuple(
                sum(dims[t.strip()] for t in d.split("+")) if isinstance(d, str) else d
                for d in shape
            )
            kind = F if dtype == F else I
            start, at[kind] = at[kind], at[kind] + int(np.prod(size))
            if not shape or dtype == B or v.size == 0:  # values, not views; nothing to hold
                continue
            buf = fl if dtype == F else il
            assert v.shape == size and v.flags.c_contiguous, name
            assert _spans(buf, v) == (start, at[kind]), name
            v.reshape(-1)[...] = np.arange(1, v.size + 1)  # a view: writes the packed array
    assert (at[F], at[I]) == (fl.size, il.size)
    again = packing.unpack.py_func(fl, il)  # what a kernel reads back
    for got, back in zip(views, again, strict=True):
        for name, x, y in zip(got._fields, got, back, strict=True):
            assert np.array_equal(x, y), name
    assert fl.any()


def test_views_stay_python():
    """The Python views run the generated source without numba: compiling the unpack from
    Python would cost a solver's constructor seconds, uncached."""
    for name in ("check", "unpack_unchecked", "unpack"):
        assert inspect.isfunction(PK_S.views.__globals__[name]), name


def test_zeros_shapes_every_field_from_the_dimensions():
    r = R2.zeros(n=3, m=2)
    assert r.y.shape == (2, 2, 4) and r.z.shape == (5,) and r.e.shape == (0,)
    assert not r.y.any() and r.z.dtype == np.float64
    with pytest.raises(TypeError, match="m"):
        R2.zeros(n=3)


def _split(numbers: list[float], widths: list[int]) -> list:
    """The reference: ``numbers`` cut into consecutive fields of ``widths`` (a width-1 field a
    number, a wider one a tuple)."""
    out, at = [], 0
    for w in widths:
        part = tuple(numbers[at : at + w])
        out.append(part[0] if w == 1 else part)
        at += w
    return out


@njit
def _flat_round_trip(pack, unpack, load, store, fields, a, o):  # as a kernel uses them
    b = pack(*fields)
    out = np.full(a.shape[0], np.nan)
    store(out, o, b)
    return b, unpack(b), load(a, o), out


@pytest.mark.parametrize(
    "flat",
    [
        _branches6.BRANCH6,
        _selection.SCRATCH6,
        Flat("odd", (("a", 1), ("b", 2), ("c", 1), ("d", 5))),
    ],
    ids=["branch6", "scratch6", "odd"],
)
def test_a_flat_record_is_its_fields_in_order(flat):
    """One definition, widths in order: the offsets are the widths' running sums, the flat
    tuple is the fields' numbers in order, unpack cuts it back into the fields, load reads the
    same numbers from an array at an offset and store writes them there, and nothing else."""
    widths = [w for _, w in flat.fields]
    assert list(flat.at.values()) == [sum(widths[:k]) for k in range(len(widths))]
    assert list(flat.at) == [f for f, _ in flat.fields] and flat.size == sum(widths)
    numbers = [float(x) for x in np.random.default_rng(3).normal(size=flat.size)]
    fields = tuple(_split(numbers, widths))
    a = np.concatenate([np.full(4, np.nan), numbers, np.full(3, np.nan)])
    fns = (flat.pack, flat.unpack, flat.load, flat.store)
    b, back, loaded, stored = _flat_round_trip(*fns, fields, a, 4)
    assert b == tuple(numbers) and loaded == tuple(numbers)
    assert np.array_equal(stored, a, equal_nan=True)
    assert back == fields
    for (name, w), field in zip(flat.fields, fields, strict=True):
        k = flat.at[name]
        assert b[k : k + w] == (field if w > 1 else (field,)), name


def test_flat_fields_are_checked():
    with pytest.raises(ValueError, match="width"):
        Flat("bad", (("a", 0),))
    with pytest.raises(ValueError, match="new identifier"):
        Flat("bad", (("a", 1), ("a", 2)))


def test_the_branch_layout_is_the_kernels_scratch():
    """The selection loop's scratch holds the slots' distances, one bound per branch, then the
    branches; every branch of a target fits (two candidates each fill the slots)."""
    s = _selection.SCRATCH6
    assert s.at["bound"] == _branches6.K6
    assert s.size == _selection.SCRATCH6_SIZE == s.at["branches"] + 4 * _branches6.BRANCH
    assert _branches6.BRANCHES * _branches6.CANDIDATES == _branches6.K6
    assert _branches6.STATE == _branches6.BRANCH6.at["state"]
