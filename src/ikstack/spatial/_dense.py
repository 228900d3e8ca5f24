"""Small dense linear algebra compiled with numba, shared by every solver's hot loop.

Scalar loops over the leading ``n x n`` block of caller-owned buffers: nothing is allocated.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def cholesky_inplace(A, n):  # pragma: no cover - compiled
    """Lower Cholesky factor of the leading ``n x n`` block of ``A``, in place.

    Returns False when the block is not (numerically) positive definite.
    """
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[j, k]
        if not d > 1e-300:
            return False
        d = np.sqrt(d)
        A[j, j] = d
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s / d
    return True


@njit(cache=True)
def cholesky_solve_inplace(L, n, b):  # pragma: no cover - compiled
    """Solve ``L L^T x = b`` for the leading ``n`` entries of ``b``, in place."""
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * b[k]
        b[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= L[k, i] * b[k]
        b[i] = s / L[i, i]
