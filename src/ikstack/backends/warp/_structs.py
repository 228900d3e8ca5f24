"""Warp structs made from the kernels' record definitions (:class:`ikstack._records.Record`).

The CPU kernels take a solver's constant data as records (:mod:`ikstack.ik._data`: the chain,
its coupled-joint tables, the FK gate; the selection's settings, a 6R family; the numerical
search's settings). The Warp kernels take the same records as ``wp.struct`` values, made here
from the same definitions, so what a record holds is written once:

- a float64 field (:data:`~ikstack._records.F`) becomes a ``wp.float64`` or a float64 array of
  the field's number of dimensions; an int or bool field (:data:`~ikstack._records.I`,
  :data:`~ikstack._records.B`) an ``int`` (int32, bools as 0/1) or an int32 array;
- ``elements`` names fields held as Warp vectors or matrices (the chain's ``Rs`` as
  ``mat33d``): the element eats the field's trailing dimensions (``("dof", 3, 3)`` becomes an
  array of ``mat33d``, ``(3, 3)`` one ``mat33d``);
- ``extra`` adds fields the device needs beyond the record (a derived array), after its own;
- ``rows``: one row of every field a thread (a per-thread scratch record): each field gains a
  leading dimension (a scalar becomes a 1D array); a generated function reads a row through
  the record and its row index (see :mod:`ikstack.backends.warp._translate`).

:meth:`DeviceRecord.make` fills a struct from a record instance (or any object with the same
attributes) on a device, :meth:`DeviceRecord.zero_rows` allocates a ``rows`` struct. Imported only
after :func:`ikstack.backends.warp.runtime.warp` succeeded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import warp as wp

from ikstack._records import B, F, I, Record
from ikstack.ik._data import CHAIN, CONSTRAINTS, GATE
from ikstack.ik.analytic._polish import POLISH_WORK
from ikstack.ik.analytic._single_target import FAMILY6, SELECT
from ikstack.ik.analytic._srs import SRS_DATA
from ikstack.ik.numerical._kernels import SCRATCH, SETTINGS

_SCALAR = {F: wp.float64, I: int, B: int}
_ARRAY = {F: (wp.float64, np.float64), I: (wp.int32, np.int32), B: (wp.int32, np.int32)}


class DeviceRecord:
    """The ``wp.struct`` of a :class:`~ikstack._records.Record` (see the module).

    Args:
        record: the record definition.
        elements: field name -> Warp vector or matrix type of its trailing dimensions.
        extra: ``(name, Warp type)`` fields after the record's own.
        rows: a row of every field a thread (the fields one dimension larger).
    """

    def __init__(
        self,
        record: Record,
        elements: Mapping[str, Any] | None = None,
        extra: Sequence[tuple[str, Any]] = (),
        rows: bool = False,
    ):
        elements = dict(elements or {})
        unknown = set(elements) - {f for f, _, _ in record.fields}
        if unknown:
            raise ValueError(f"{record.name}: no fields {sorted(unknown)}")
        self.record = record
        self.elements = elements
        self.rows = rows
        ann: dict[str, Any] = {}
        #: field -> (Warp dtype of its items, numpy dtype, leading dimensions), arrays only
        self._arrays: dict[str, tuple[Any, Any, int]] = {}
        for name, dtype, shape in record.fields:
            el = elements.get(name)
            tail: tuple = tuple(el._shape_) if el is not None else ()
            if tail and tuple(shape[len(shape) - len(tail) :]) != tail:
                raise ValueError(f"{record.name}.{name}: shape {shape} does not end in {tail}")
            nd = len(shape) - len(tail) + int(rows)
            if el is not None and dtype != F:
                raise ValueError(f"{record.name}.{name}: only float fields can be {el}")
            if nd == 0:
                ann[name] = el if el is not None else _SCALAR[dtype]
                continue
            wdt, ndt = (el, np.float64) if el is not None else _ARRAY[dtype]
            ann[name] = wp.array(dtype=wdt, ndim=nd)
            self._arrays[name] = (wdt, ndt, nd)
        for name, t in extra:
            ann[name] = t
        self.extra = tuple(n for n, _ in extra)
        cls = type(
            record.name,
            (),
            {"__annotations__": ann, "__module__": __name__, "__qualname__": record.name},
        )
        #: the ``wp.struct`` type (kernel annotations use it)
        self.type = wp.struct(cls)

    def make(self, values: Any, device: Any, **extra: Any) -> Any:
        """A struct of ``values`` (a record instance or any object with its fields as
        attributes) with its arrays on ``device``; ``extra`` gives the extra fields."""
        if set(extra) != set(self.extra):
            raise TypeError(f"{self.record.name}: extra fields {sorted(self.extra)} expected")
        if self.rows:
            raise TypeError(f"{self.record.name}: a rows struct is allocated by zero_rows()")
        s = self.type()
        for name, dtype, _shape in self.record.fields:
            v = getattr(values, name)
            if name in self._arrays:
                wdt, ndt, nd = self._arrays[name]
                a = np.ascontiguousarray(np.asarray(v).astype(ndt))
                setattr(s, name, wp.array(a, dtype=wdt, device=device))
            elif name in self.elements:
                el = self.elements[name]
                setattr(s, name, el(*np.asarray(v, dtype=np.float64).ravel().tolist()))
            elif dtype == F:
                setattr(s, name, float(v))
            else:
                setattr(s, name, int(v))
        for name, v in extra.items():
            setattr(s, name, v)
        return s

    def zero_rows(self, n: int, device: Any, /, **dims: int) -> Any:
        """A ``rows`` struct of ``n`` rows of zeros on ``device``, the fields' dimension names
        given by ``dims`` (each field ``(n, *shape)``)."""
        if not self.rows or self.extra:
            raise TypeError(f"{self.record.name}: zero_rows() makes rows structs without extras")
        s = self.type()
        for name, _dtype, shape in self.record.fields:
            wdt, _ndt, _nd = self._arrays[name]
            el = self.elements.get(name)
            tail = len(el._shape_) if el is not None else 0
            lead = shape[: len(shape) - tail]
            size = (n, *(d if isinstance(d, int) else dims[d] for d in lead))
            setattr(s, name, wp.zeros(size, dtype=wdt, device=device))
        return s


_M33, _V3 = wp.mat33d, wp.vec3d

#: the chain's kinematics (:data:`ikstack.ik._data.CHAIN`)
CHAIN_T = DeviceRecord(CHAIN, {"Rs": _M33, "ps": _V3, "R_end": _M33, "p_end": _V3})
#: the coupled-joint tables (:data:`ikstack.ik._data.CONSTRAINTS`)
CONSTRAINTS_T = DeviceRecord(CONSTRAINTS)
#: certification: the chain's limits and the FK tolerances (:data:`ikstack.ik._data.GATE`)
GATE_T = DeviceRecord(GATE)
#: the selection's settings (:data:`ikstack.ik.analytic._single_target.SELECT`)
SELECT_T = DeviceRecord(SELECT)
#: a 6R family (:data:`ikstack.ik.analytic._single_target.FAMILY6`)
FAMILY6_T = DeviceRecord(FAMILY6, {"H": _V3, "P": _V3, "R6T": _M33})
#: the numerical search's settings (:data:`ikstack.ik.numerical._kernels.SETTINGS`)
LM_T = DeviceRecord(SETTINGS)
SETTINGS_T = LM_T  #: its name as the translator's ``rec(SETTINGS)`` reads it
#: the numerical search's scratch (:data:`ikstack.ik.numerical._kernels.SCRATCH`), a row a
#: target (the generated ``_step`` takes it)
SCRATCH_ROWS_T = DeviceRecord(SCRATCH, rows=True)
#: the analytic polish's scratch (:data:`ikstack.ik.analytic._polish.POLISH_WORK`), a row a
#: thread (the generated ``polish_into`` takes it)
POLISH_WORK_ROWS_T = DeviceRecord(POLISH_WORK, rows=True)

#: a 7R arm with an end joint locked (:class:`ikstack.ik.analytic.families.LockedJoint`; its
#: 6R family is a :data:`FAMILY6_T` of its own)
LOCKED = Record(
    "LockedData",
    __name__,
    [
        ("lock_first", B, ()),  # the first joint locked (else the last)
        ("lh", F, (3,)),  # the locked joint's axis and origin
        ("lr", F, (3,)),
        ("M_R", F, (3, 3)),  # the locked joint's fixed transform
        ("M_p", F, (3,)),
        ("grid", F, ("ng",)),  # the locked values tried after the seed's
    ],
)
LOCKED_T = DeviceRecord(LOCKED, {"lh": _V3, "lr": _V3, "M_R": _M33, "M_p": _V3})

#: a 7R SRS arm (:data:`ikstack.ik.analytic._srs.SRS_DATA`; the generated SRS functions take
#: it whole, by the name ``SRS_DATA_T``)
SRS_T = SRS_DATA_T = DeviceRecord(
    SRS_DATA, {"H": _V3, "S": _V3, "pS3": _V3, "p3W": _V3, "p7T": _V3, "R7T": _M33}
)


def locked_values(f: Any) -> Any:
    """:data:`LOCKED` of a :class:`~ikstack.ik.analytic.families.LockedJoint`."""
    M = np.asarray(f.M, dtype=np.float64)
    return LOCKED.make(
        lock_first=f.lock_first, lh=f.lh, lr=f.lr, M_R=M[:3, :3], M_p=M[:3, 3], grid=f.grid
    )


def family6_values(f: Any) -> Any:
    """:data:`FAMILY6` of a :class:`~ikstack.ik.analytic.families.SixR`."""
    return FAMILY6.make(fid=f.fid, var=f.var, reverse=f.reverse, H=f.H, P=f.P, R6T=f.R6T, sgn=f.sgn)
