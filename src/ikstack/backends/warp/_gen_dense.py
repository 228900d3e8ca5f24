# mypy: ignore-errors
# ruff: noqa
"""GENERATED from ``src/ikstack/spatial/_dense.py`` by :mod:`ikstack.backends.warp._translate`:
do not edit; edit the CPU source and run ``python -m ikstack.backends.warp._translate``
(a test fails when this file and its source disagree)."""

import warp as wp

from ikstack.backends.warp._prims import *  # noqa: F403



@wp.func
def cholesky_inplace(A: wp.array2d(dtype=wp.float64), n: int):
    """Lower Cholesky factor of the leading ``n x n`` block of ``A``, in place.

    Returns False when the block is not (numerically) positive definite.
    """
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d = d - A[j, k] * A[j, k]
        if not (d > F(1e-300)):
            return False
        d = wp.sqrt(d)
        A[j, j] = d
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s = s - A[i, k] * A[j, k]
            A[i, j] = s / d
    return True


@wp.func
def cholesky_solve_inplace(L: wp.array2d(dtype=wp.float64), n: int, b: wp.array(dtype=wp.float64)):
    """Solve ``L L^T x = b`` for the leading ``n`` entries of ``b``, in place."""
    for i in range(n):
        s = b[i]
        for k in range(i):
            s = s - L[i, k] * b[k]
        b[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s = s - L[k, i] * b[k]
        b[i] = s / L[i, i]
