"""FastGate's call from Python passes its records as plain tuples of fields (numba types a
named tuple slowly on every call); the kernel rebuilds the records. The rebuilt records must be
the records: the same verdicts and errors as the records passed whole, and one compiled
specialization of the shared gate kernel."""

from __future__ import annotations

import numpy as np

from ikstack.ik._fixed_gate import FIELDS_ROWS, FastGate, certify_fields
from ikstack.ik._gate import certify_rows
from ikstack.robots import load


def test_fields_call_is_the_records_call():
    arm = load("marvin_left")  # coupled joints: the constraint record is not empty
    gate = FastGate(arm, 1e-4, 1e-7)  # unequal tolerances: a swapped field shows
    rng = np.random.default_rng(5)
    Q = np.ascontiguousarray(arm.random_q(rng, 12))
    T = np.ascontiguousarray(arm.fk(Q))
    T[1, 0, 3] += 5e-5  # within the position tolerance
    T[2, 0, 3] += 2e-4  # outside it
    T[3, :3, :3] = T[3, :3, :3] @ np.array([[1, 0, 0], [0, 0.99999, -0.0045], [0, 0.0045, 0.99999]])
    Q[4, 0] = arm.upper[0] + 0.1  # out of its limit
    n = Q.shape[0]
    out = []
    for kernel, records in ((certify_rows, gate._records), (certify_fields, gate._fields)):
        ok, perr, rerr = np.empty(n, dtype=np.bool_), np.empty(n), np.empty(n)
        undecided = kernel(Q, T, *records, ok, perr, rerr, np.empty((4, 4)))
        out.append((undecided, ok, perr, rerr))
        if kernel is certify_rows:  # the records' types (other tests may have compiled others)
            seen = set(certify_rows.signatures)
    (u0, ok0, p0, r0), (u1, ok1, p1, r1) = out
    assert u0 == u1
    np.testing.assert_array_equal(ok1, ok0)
    np.testing.assert_array_equal(p1, p0)
    np.testing.assert_array_equal(r1, r0)
    assert not ok0[2] and not ok0[3] and not ok0[4] and ok0[1]
    got = gate(Q, T)  # a small batch: the fields call
    for a, b in zip(got, (ok0, p0, r0), strict=True):
        np.testing.assert_array_equal(a, b)
    reps = -(-FIELDS_ROWS // n)  # a batch past FIELDS_ROWS: the records call
    got = gate(np.tile(Q, (reps, 1)), np.tile(T, (reps, 1, 1)))
    for a, b in zip(got, (ok0, p0, r0), strict=True):
        np.testing.assert_array_equal(a, np.tile(b, reps))
    # the rebuilt records have the records' types: the fields call compiled no second version
    assert set(certify_rows.signatures) == seen
