# mypy: ignore-errors
# ruff: noqa
"""GENERATED from ``src/ikstack/spatial/_dense.py`` by :mod:`ikstack.backends.warp._translate`:
do not edit; edit the CPU source and run ``python -m ikstack.backends.warp._translate``
(a test fails when this file and its source disagree)."""

import warp as wp

from ikstack.backends.warp._prims import *  # noqa: F403



@wp.func
def cholesky_inplace(A: wp.array2d(dtype=wp.float64), n: int):
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
    """Solve ``L L^T x = b`` for the leading ``n`` entries of ``b``, in place (``L`` the
    factor :func:`cholesky_inplace` left in the leading block)."""
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


@wp.func
def cap_step_inplace(dq: wp.array(dtype=wp.float64), n: int, max_step: wp.float64):
    """Shorten the step in the leading ``n`` entries of ``dq`` so no joint moves more than
    ``max_step``, in place: when its largest ``|dq_i|`` exceeds ``max_step`` every entry is
    scaled by ``max_step / max_i |dq_i|`` (the direction is kept); otherwise ``dq`` is left
    as it is."""
    big = F(0.0)
    for i in range(n):
        big = wp.max(big, wp.abs(dq[i]))
    if big > max_step:
        for i in range(n):
            dq[i] = dq[i] * (max_step / big)
