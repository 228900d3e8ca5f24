"""Small dense linear algebra compiled with numba, for every solver's hot loop.

Scalar loops over the leading ``n x n`` block (or ``n`` entries) of caller-owned buffers:
nothing is allocated. The Warp backend's twins are generated from this module
(``backends/warp/_gen_dense.py``).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def cholesky_inplace(A, n):  # pragma: no cover - compiled
    """Lower Cholesky factor ``L`` (``L L^T = A``) of the leading ``n x n`` block of ``A``, in
    place; True on success.

    Only the lower triangle (diagonal included) is read; the factor overwrites it and the
    strict upper triangle is left as it was. The failure rule: the factorisation stops and
    returns False at the first pivot (the diagonal entry less the squares left of it, before
    its square root) that is not greater than ``1e-300``. That takes in a zero, negative or
    NaN pivot (an indefinite, singular or NaN matrix: a NaN anywhere in the lower triangle
    reaches a later pivot) and one so small that the solve's two divisions by its root would
    overflow. After a failure the block holds a partial factor the caller must not use.
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
    """Solve ``L L^T x = b`` for the leading ``n`` entries of ``b``, in place (``L`` the
    factor :func:`cholesky_inplace` left in the leading block)."""
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


@njit(cache=True)
def cap_step_inplace(dq, n, max_step):  # pragma: no cover - compiled
    """Shorten the step in the leading ``n`` entries of ``dq`` so no joint moves more than
    ``max_step``, in place: when its largest ``|dq_i|`` exceeds ``max_step`` every entry is
    scaled by ``max_step / max_i |dq_i|`` (the direction is kept); otherwise ``dq`` is left
    as it is."""
    big = 0.0
    for i in range(n):
        big = max(big, abs(dq[i]))
    if big > max_step:
        for i in range(n):
            dq[i] *= max_step / big
