"""Warp structs made from the kernels' record definitions: each field arrives on the device
with the record's values (read back by a kernel), vector and matrix elements included, and a
definition the generator cannot map is refused by name."""

from __future__ import annotations

import numpy as np
import pytest

from ikstack._records import B, F, I, Record

pytest.importorskip("warp")
import warp as wp  # noqa: E402

from ikstack.backends.warp._structs import DeviceRecord  # noqa: E402

REC = Record(
    "ProbeData",
    __name__,
    [
        ("Rs", F, ("n", 3, 3)),
        ("x", F, ("n",)),
        ("k", I, ("n", 2)),
        ("flag", B, ("n",)),
        ("R", F, (3, 3)),
        ("t", F, ()),
        ("m", I, ()),
        ("on", B, ()),
    ],
)
PROBE = DeviceRecord(
    REC, {"Rs": wp.mat33d, "R": wp.mat33d}, extra=[("w", wp.array(dtype=wp.float64))]
)
Probe = PROBE.type


@wp.kernel
def _read(p: Probe, out: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    out[i, 0] = p.Rs[i][1, 2]
    out[i, 1] = p.x[i]
    out[i, 2] = wp.float64(p.k[i, 1])
    out[i, 3] = wp.float64(p.flag[i])
    out[i, 4] = p.R[2, 0]
    out[i, 5] = p.t
    out[i, 6] = wp.float64(p.m)
    out[i, 7] = wp.float64(p.on)
    out[i, 8] = p.w[i]


def test_a_struct_carries_every_field_of_its_record():
    rng = np.random.default_rng(0)
    n = 3
    val = REC.make(
        Rs=rng.normal(size=(n, 3, 3)),
        x=rng.normal(size=n),
        k=np.arange(2 * n).reshape(n, 2),
        flag=[True, False, True],
        R=rng.normal(size=(3, 3)),
        t=0.25,
        m=7,
        on=True,
    )
    w = rng.normal(size=n)
    s = PROBE.make(val, "cpu", w=wp.array(w, dtype=wp.float64, device="cpu"))
    out = wp.zeros((n, 9), dtype=wp.float64, device="cpu")
    wp.launch(_read, dim=n, inputs=[s, out], device="cpu")
    got = out.numpy()
    np.testing.assert_array_equal(got[:, 0], val.Rs[:, 1, 2])
    np.testing.assert_array_equal(got[:, 1], val.x)
    np.testing.assert_array_equal(got[:, 2], val.k[:, 1])
    np.testing.assert_array_equal(got[:, 3], [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(got[:, 4], val.R[2, 0])
    np.testing.assert_array_equal(got[:, 5], 0.25)
    np.testing.assert_array_equal(got[:, 6], 7.0)
    np.testing.assert_array_equal(got[:, 7], 1.0)
    np.testing.assert_array_equal(got[:, 8], w)


def test_definitions_the_generator_cannot_map_are_refused_by_name():
    with pytest.raises(ValueError, match="no fields"):
        DeviceRecord(REC, {"nope": wp.vec3d})
    with pytest.raises(ValueError, match=r"ProbeData\.x: shape"):
        DeviceRecord(REC, {"x": wp.vec3d})
    with pytest.raises(ValueError, match=r"ProbeData\.k: only float"):
        DeviceRecord(REC, {"k": wp.vec2d})
    with pytest.raises(TypeError, match="extra fields"):
        PROBE.make(REC, "cpu")


def test_a_rows_struct_holds_a_row_of_every_field_a_thread():
    """``rows=True`` (per-thread scratch): every field one dimension larger, scalars as 1D
    arrays, bools as int32; :meth:`DeviceRecord.zero_rows` allocates it by dimension names."""
    rows = DeviceRecord(REC, {"Rs": wp.mat33d, "R": wp.mat33d}, rows=True)
    s = rows.zero_rows(5, "cpu", n=4)
    assert s.Rs.shape == (5, 4) and s.Rs.dtype == wp.mat33d
    assert s.x.shape == (5, 4) and s.k.shape == (5, 4, 2) and s.k.dtype == wp.int32
    assert s.flag.dtype == wp.int32 and s.R.shape == (5,) and s.R.dtype == wp.mat33d
    assert s.t.shape == (5,) and s.m.shape == (5,) and s.on.shape == (5,)
    assert not s.x.numpy().any()
    with pytest.raises(TypeError, match="zero_rows"):
        rows.make(REC.zeros(n=4), "cpu")


def test_the_translator_reads_a_whole_records_fields_as_the_structs_declare_them():
    """A generated function that takes a record whole (``rec(NAME)``) indexes its fields by
    the translator's rule (a float field's trailing (3, 3) a ``mat33d``, (3,) a ``vec3d``):
    every struct made from a CPU record declares its elements so."""
    from ikstack.backends.warp import _structs
    from ikstack.backends.warp._translate_types import device_field_type

    element = {"m9": wp.mat33d, ("arrm", 3): wp.mat33d}
    element |= {("v", 3): wp.vec3d, ("arrv", 3): wp.vec3d}
    structs = [v for v in vars(_structs).values() if isinstance(v, DeviceRecord) and not v.rows]
    assert len(structs) >= 8
    for s in structs:
        for name, dtype, shape in s.record.fields:
            want = element.get(device_field_type(dtype, shape))
            assert s.elements.get(name) == want, (s.record.name, name)
