"""Typed records for the compiled kernels, and their packing for a compiled call.

A kernel takes its constant data as a few named tuples (numba types a named tuple of arrays
and scalars field by field, so ``chain.Rs`` in a kernel costs nothing) instead of twenty
positional arrays. One :class:`Record` definition (field names, dtypes, shapes) gives:

- the named tuple type (:attr:`Record.type`), built in Python by :meth:`Record.make`;
- through a :class:`Packing` of several records, :meth:`Packing.pack` (Python) and
  :attr:`Packing.unpack` (compiled, inlined into its caller), which carry the records across a
  compiled call as one float64 and one int64 array, and :attr:`Packing.views` (the same
  unpack run in Python: named numpy views into the two arrays);
- :meth:`Record.zeros`, a record of zeros at given dimensions: with :meth:`Packing.pack` and
  :attr:`Packing.views`, a packed workspace whose fields kernels write and Python reads by name,
  with no offset written by hand.

A record of a few numbers that a compiled loop keeps per item in a float array (branches of a
branch-and-bound, their bounds, a kernel's scratch) is a :class:`Flat`: one definition (field
names and widths) gives its offsets and the compiled functions that build a flat tuple of it,
take one apart and read one back from the array, so no offset is written by hand either.

Why pack at all: a compiled call pays per argument, and a named tuple is typed field by field
in Python on every call (about 2.3 us for 21 fields against 0.16 us for two arrays, measured on
numba 0.68), which a single-target solve of tens of microseconds would notice. Inside compiled
code records are free, so a single-target kernel unpacks once and passes records on.

The unpack function is generated from the definition (straight-line slices and reshapes, the
code one would write by hand) and compiled with ``njit(inline="always")``; its callers are
cached as usual. A field's shape holds ints, dimension names and sums of them (``"dof + nr"``);
the dimensions are stored at the head of the int array and read back first.

The int array starts with a tag of the layout (a checksum of the generated unpack), which the
unpack checks: a kernel cached with an older layout (numba's cache does not see a change in
another module) raises instead of reading the wrong offsets.

A per-cycle kernel unpacks its records on every call, so the unpack must cost next to nothing.
A slice costs a compiled kernel about 3 ns, a reshape of it about 55 ns more (numba's reshape
calls a C helper, measured on numba 0.68), so ``Packing(..., strided=True)`` builds each
multi-dimensional field as a strided view of its slice instead (``as_strided``, same cost as the
slice; numba types it as a layout "A" array, whose loops index through strides: about 50 ns more
on a 7-joint FK and Jacobian); the velocity QP's step unpacks its whole workspace this way twice
per step. A compiled kernel that also has layout "C" callers would compile once more for such
views (about a second of a first run from an empty cache), so a strided unpack's caller passes
its fields only to kernels of its own or inlines what it shares (``njit(inline="always")``: the
velocity QP's step inlines the FK and Jacobian).
"""

from __future__ import annotations

import zlib
from collections import namedtuple
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numba import njit

#: field dtypes: float64, int64, bool (stored as int64 0/1)
F, I, B = "f8", "i8", "b1"
_DTYPES = {F: np.float64, I: np.int64, B: np.bool_}
#: bytes per element of both packed arrays (float64 and int64)
_ITEMSIZE = 8


class Record:
    """A named tuple type for kernels: ``fields`` as ``(name, dtype, shape)`` with ``dtype``
    one of :data:`F`, :data:`I`, :data:`B` and ``shape`` a tuple of ints and dimension names
    (``()`` for a scalar).

    ``name`` must be the module-level name the record is bound to in ``module`` (numba's cache
    pickles the type by reference).
    """

    def __init__(self, name: str, module: str, fields: Sequence[tuple[str, str, tuple]]):
        for fname, dtype, shape in fields:
            if dtype not in _DTYPES:
                raise ValueError(f"{name}.{fname}: dtype {dtype!r} is not one of F, I, B")
            if not all(
                isinstance(d, int) or (isinstance(d, str) and _is_dim_expr(d)) for d in shape
            ):
                raise ValueError(
                    f"{name}.{fname}: shape {shape!r} holds ints, names and sums of names only"
                )
        self.name = name
        self.fields = tuple((f, d, tuple(s)) for f, d, s in fields)
        names = [f for f, _, _ in self.fields]
        self.type: Any = namedtuple(name, names, module=module)  # type: ignore[misc]

    @property
    def dims(self) -> tuple[str, ...]:
        """The dimension names the fields' shapes use, in first-use order."""
        out: list[str] = []
        for _, _, shape in self.fields:
            for d in shape:
                if isinstance(d, str):
                    out += [t for t in _names(d) if t not in out]
        return tuple(out)

    def make(self, **values: Any) -> Any:
        """The named tuple of ``values`` (every field), each converted to its dtype (arrays C
        contiguous, scalars Python ``float``/``int``/``bool``) and checked against its shape."""
        missing = set(self.type._fields) - set(values)
        extra = set(values) - set(self.type._fields)
        if missing or extra:
            raise TypeError(f"{self.name}: missing {sorted(missing)}, unexpected {sorted(extra)}")
        dims: dict[str, int] = {}
        out = []
        for fname, dtype, shape in self.fields:
            v = values[fname]
            if not shape:
                out.append({F: float, I: int, B: bool}[dtype](v))
                continue
            a: np.ndarray = np.ascontiguousarray(v, dtype=_DTYPES[dtype])
            _match(self.name, fname, shape, a.shape, dims)
            out.append(a)
        return self.type(*out)

    def zeros(self, **dims: int) -> Any:
        """The record with every field zero, its arrays shaped by ``dims`` (every dimension
        name the fields use): the starting state of a workspace."""
        missing = [d for d in self.dims if d not in dims]
        if missing:
            raise TypeError(f"{self.name}: dimensions {missing} not given")
        return self.make(
            **{f: np.zeros(_size(s, dims), _DTYPES[d]) if s else 0 for f, d, s in self.fields}
        )


def _names(expr: str) -> list[str]:
    return [t.strip() for t in expr.split("+")]


def _is_dim_expr(expr: str) -> bool:
    return all(t.isidentifier() for t in _names(expr))


def _size(shape: tuple, dims: dict[str, int]) -> tuple[int, ...]:
    """``shape`` with its dimension names (and sums of them) replaced by ``dims``' values."""
    return tuple(d if isinstance(d, int) else sum(dims[t] for t in _names(d)) for d in shape)


def _match(rec: str, fname: str, shape: tuple, got: tuple[int, ...], dims: dict[str, int]) -> None:
    """Check ``got`` against ``shape``, learning a dimension the first time a name meets it
    alone (a sum is checked once its names are known)."""
    if len(got) != len(shape):
        raise ValueError(f"{rec}.{fname}: shape {got}, expected {shape}")
    for d, g in zip(shape, got, strict=True):
        if isinstance(d, str) and d.isidentifier():
            dims.setdefault(d, g)
    for d, g in zip(shape, got, strict=True):
        if isinstance(d, int) or all(t in dims for t in _names(d)):
            if g != _size((d,), dims)[0]:
                raise ValueError(f"{rec}.{fname}: shape {got}, expected {shape} with {dims}")


class Packing:
    """Several records carried as ``(fl, il)``: floats in ``fl``; the layout's tag, the
    dimensions, then ints and bools in ``il``; fields in definition order. :meth:`pack` builds
    the arrays from record instances; :attr:`unpack` (compiled,
    ``(fl, il) -> tuple of records``) reads them back, :attr:`views` the same in Python.

    ``strided``: multi-dimensional fields come back as strided views (layout "A" in numba)
    rather than reshapes (layout "C"), for kernels that unpack on every call (see the module
    doc)."""

    def __init__(self, *records: Record, strided: bool = False):
        self.records = records
        self.strided = strided
        dims: list[str] = []
        for r in records:
            dims += [d for d in r.dims if d not in dims]
        self.dims = tuple(dims)
        body = self._source()
        #: the layout's tag (``il[0]``): a checksum of the unpack's source
        self.tag = zlib.crc32(body.encode()) & 0x7FFFFFFF
        self.source = f"""def check(il):
    if il[0] != {self.tag}:
        raise ValueError("packed layout {self.tag} expected: a kernel compiled for another \\
layout (clear numba's cache)")


{body}

def unpack(fl, il):
    check(il)
    return unpack_unchecked(fl, il)
"""
        code = compile(self.source, f"<unpack {', '.join(r.name for r in records)}>", "exec")
        ns: dict[str, Any] = {r.name: r.type for r in records}
        ns["_as_strided"] = np.lib.stride_tricks.as_strided
        py = dict(ns)  # a namespace of its own: these functions stay Python
        exec(code, py)  # noqa: S102 - our own generated source, see _source
        #: ``il -> None`` in Python, raises unless ``il`` has this layout: for a caller that runs
        #: a compiled block kernel (one taking ``unpack_unchecked``'s records) from Python
        self.check_here: Callable[..., Any] = py["check"]
        #: ``(fl, il) -> tuple of records`` in Python, the same source run by numpy: array
        #: fields are views into ``fl`` and ``il`` (writing one writes the packed arrays), scalars
        #: are values; the Python side of a packed workspace
        self.views: Callable[..., Any] = py["unpack"]
        exec(code, ns)  # noqa: S102 - the same, compiled below
        for name in ("check", "unpack_unchecked", "unpack"):  # the later ones call the earlier
            ns[name] = njit(inline="always")(ns[name])
        #: ``(fl, il) -> tuple of records`` after checking the layout's tag
        self.unpack: Callable[..., Any] = ns["unpack"]
        #: ``il -> None``, raises unless ``il`` has this layout; with :attr:`unpack_unchecked`
        #: for a ``prange`` body (numba runs a loop that may raise serially)
        self.check: Callable[..., Any] = ns["check"]
        self.unpack_unchecked: Callable[..., Any] = ns["unpack_unchecked"]

    def pack(self, *values: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(fl, il)`` of record instances, one per record in order (each a :meth:`Record.make`
        result or the same fields in any named tuple)."""
        if len(values) != len(self.records):
            raise TypeError(f"pack takes {len(self.records)} records, got {len(values)}")
        dims: dict[str, int] = {}
        fl: list[np.ndarray] = []
        il: list[np.ndarray] = []
        for rec, val in zip(self.records, values, strict=True):
            for fname, dtype, shape in rec.fields:
                a: np.ndarray = np.asarray(getattr(val, fname), dtype=_DTYPES[dtype])
                _match(rec.name, fname, shape, a.shape, dims)
                (fl if dtype == F else il).append(a.ravel())
        for rec, val in zip(self.records, values, strict=True):  # sums met before their names
            for fname, _, shape in rec.fields:
                _match(rec.name, fname, shape, np.shape(getattr(val, fname)), dims)
        head = np.array([self.tag] + [dims[d] for d in self.dims], dtype=np.int64)
        f = np.concatenate([np.zeros(0)] + fl).astype(np.float64)
        i = np.concatenate([head] + [a.astype(np.int64) for a in il])
        return np.ascontiguousarray(f), np.ascontiguousarray(i)

    def _source(self) -> str:
        lines = ["def unpack_unchecked(fl, il):"]
        lines += [f"    {d} = il[{1 + k}]" for k, d in enumerate(self.dims)]
        lines += ["    f = 0", f"    i = {1 + len(self.dims)}"]
        made = []
        for rec in self.records:
            for fname, dtype, shape in rec.fields:
                buf, at = ("fl", "f") if dtype == F else ("il", "i")
                size = " * ".join(f"({d})" if "+" in str(d) else str(d) for d in shape) or "1"
                if not shape:
                    expr = f"{buf}[{at}]"
                else:
                    expr = f"{buf}[{at}:{at} + {size}]"
                    dims = ", ".join(str(d) for d in shape)
                    if len(shape) > 1 and self.strided:  # C order: bytes per step of each axis
                        steps = [
                            " * ".join([f"({d})" if "+" in str(d) else str(d) for d in shape[k:]])
                            for k in range(1, len(shape))
                        ]
                        strides = ", ".join(f"{st} * {_ITEMSIZE}" for st in steps)
                        expr = f"_as_strided({expr}, ({dims}), ({strides}, {_ITEMSIZE}))"
                    elif len(shape) > 1:
                        expr += f".reshape(({dims}))"
                if dtype == B:
                    expr = f"({expr} != 0)"
                lines += [f"    {rec.name}_{fname} = {expr}", f"    {at} += {size}"]
            args = ", ".join(f"{rec.name}_{f}" for f, _, _ in rec.fields)
            made.append(f"{rec.name}({args})")
        lines.append(f"    return ({', '.join(made)},)")
        return "\n".join(lines) + "\n"


class Flat:
    """Numbers carried as one flat tuple of floats: ``fields`` as ``(name, width)`` in order.

    A compiled loop holds such a record in registers as a flat tuple and keeps it in a float
    array at an offset: a tuple of arrays or of records would cost reference counts on every
    call, which a loop of a few microseconds notices. The definition gives the offsets,
    :attr:`at` (field -> offset) and :attr:`size`, and four functions generated from it
    (straight-line code, compiled with ``njit(inline="always")`` into their callers, as
    :class:`Packing`'s unpack):

    - :attr:`pack` ``(field, ...) -> flat tuple``: the fields in order, a width-1 field a
      number, a wider one a tuple of its numbers;
    - :attr:`unpack` ``flat tuple -> (field, ...)``, the same fields back;
    - :attr:`load` ``(array, offset) -> flat tuple`` of ``array[offset : offset + size]``;
    - :attr:`store` ``(array, offset, flat tuple)``, the reverse (a loop over the tuple's
      entries would index it by a variable, which compiles to a switch per entry).

    ``name`` names the generated code (tracebacks).
    """

    def __init__(self, name: str, fields: Sequence[tuple[str, int]]):
        at: dict[str, int] = {}
        size = 0
        for fname, width in fields:
            if not fname.isidentifier() or fname in at:
                raise ValueError(f"{name}: field name {fname!r} is not a new identifier")
            if not (isinstance(width, int) and width >= 1):
                raise ValueError(f"{name}.{fname}: width {width!r} is not a positive int")
            at[fname] = size
            size += width
        self.name = name
        self.fields = tuple((f, w) for f, w in fields)
        #: field -> its first number's offset in the flat tuple
        self.at: dict[str, int] = at
        #: numbers in the flat tuple
        self.size = size
        self.source = self._source()
        ns: dict[str, Any] = {}
        exec(compile(self.source, f"<flat {name}>", "exec"), ns)  # noqa: S102 - see _source
        #: ``(field, ...) -> flat tuple``
        self.pack: Callable[..., Any] = njit(inline="always")(ns["pack"])
        #: ``flat tuple -> (field, ...)``
        self.unpack: Callable[..., Any] = njit(inline="always")(ns["unpack"])
        #: ``(array, offset) -> flat tuple`` read from the array
        self.load: Callable[..., Any] = njit(inline="always")(ns["load"])
        #: ``(array, offset, flat tuple)``: the tuple written into the array
        self.store: Callable[..., Any] = njit(inline="always")(ns["store"])

    def _source(self) -> str:
        names = [f for f, _ in self.fields]
        flat = []  # the flat tuple's entries, as read from the fields
        parts = []  # each field, as read from the flat tuple
        for fname, width in self.fields:
            k = self.at[fname]
            if width == 1:
                flat.append(fname)
                parts.append(f"b[{k}]")
            else:
                flat += [f"{fname}[{j}]" for j in range(width)]
                parts.append("(" + ", ".join(f"b[{k + j}]" for j in range(width)) + ")")
        loads = ", ".join(f"a[o + {c}]" for c in range(self.size))
        stores = "".join(f"    a[o + {c}] = b[{c}]\n" for c in range(self.size))
        return (
            f"def pack({', '.join(names)}):\n    return ({', '.join(flat)},)\n\n\n"
            f"def unpack(b):\n    return ({', '.join(parts)},)\n\n\n"
            f"def load(a, o):\n    return ({loads},)\n\n\n"
            f"def store(a, o, b):\n{stores}"
        )


__all__ = ["B", "F", "I", "Flat", "Packing", "Record"]
