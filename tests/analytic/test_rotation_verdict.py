"""The compiled ``return_all`` gate decides most rotation verdicts without ``atan2``: its verdict
must be the certificate's, ``atan2(|v| / 2, c) <= tol`` (libm's ``math.atan2``), for every
input, in particular within round-off of the tolerance."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from ikstack.ik.analytic._all6 import _rot_ok


@njit(cache=False)
def _verdicts(y, c, rtol, tr):  # pragma: no cover - compiled
    out = np.empty(y.shape[0], dtype=np.bool_)
    for i in range(y.shape[0]):
        out[i] = _rot_ok(y[i], c[i], rtol, tr)
    return out


def _reference(y: np.ndarray, c: np.ndarray, rtol: float) -> np.ndarray:
    return np.array([math.atan2(a, b) <= rtol for a, b in zip(y, c, strict=True)])


@pytest.mark.parametrize("rtol", [1e-9, 1e-6, 3.7e-4, 0.25, 0.999, 1.0, 2.5])
def test_verdict_is_the_certificates_at_the_boundary(rtol: float) -> None:
    rng = np.random.default_rng(7)
    c = rng.uniform(1e-3, 1.0, size=4000)
    # y within a few ulp of the boundary c tan(rtol), then further out on both sides
    tr = math.tan(rtol) if rtol < math.pi / 2 else 1.0
    rel = np.concatenate(
        [
            rng.integers(-64, 65, size=2000) * np.finfo(float).eps,
            rng.choice([-1.0, 1.0], size=2000) * 10.0 ** rng.uniform(-15, 0, 2000),
        ]
    )
    y = np.abs(c * tr * (1.0 + rel))
    # and exact boundary angles: y, c of the tolerance itself and its neighbours
    t = np.nextafter(rtol, np.array([0.0, np.inf, 0.0]))
    t = np.concatenate([t, [rtol], rtol * (1 + np.arange(-8, 9) * 1e-16)])
    y = np.concatenate([y, np.sin(t), [0.0, 1.0, 1e-300]])
    c = np.concatenate([c, np.cos(t), [-1.0, 0.0, 1.0]])
    got = _verdicts(y, c, rtol, math.tan(rtol) if rtol < 1.0 else -1.0)
    np.testing.assert_array_equal(got, _reference(y, c, rtol))
