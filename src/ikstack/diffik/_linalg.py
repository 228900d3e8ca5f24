"""Small dense linear algebra for the per-cycle solvers (numba ``njit(cache=True)``).

The matrices here are tiny (a handful of joints, at most six task rows), so plain scalar loops
beat LAPACK's call overhead. With ``NUMBA_DISABLE_JIT=1`` they run as ordinary Python.
"""

from __future__ import annotations

from numba import njit


@njit(cache=True)
def normal_matrices(J, task, preferred, damping, H, g):  # pragma: no cover - compiled
    """``H = J^T J + lambda^2 I`` and ``g = -(J^T task + lambda^2 preferred)``."""
    m, n = J.shape
    lam2 = damping * damping
    for i in range(n):
        for j in range(i, n):
            s = 0.0
            for r in range(m):
                s += J[r, i] * J[r, j]
            H[i, j] = s
            H[j, i] = s
        H[i, i] += lam2
        s = 0.0
        for r in range(m):
            s += J[r, i] * task[r]
        g[i] = -(s + lam2 * preferred[i])


@njit(cache=True)
def scale_into_box(dq, lower, upper, out):  # pragma: no cover - compiled
    """Scale ``dq`` uniformly into the box, then clip what scaling cannot fix.

    The scale is the largest ``s <= 1`` with ``s dq`` inside every bound that contains zero, so
    the direction of motion is kept whenever the box contains the origin (MoveIt Servo's
    velocity scaling). Joints whose box excludes zero (a joint that must keep decelerating) are
    clipped afterwards. Returns the scale used.
    """
    n = dq.shape[0]
    s = 1.0
    for i in range(n):
        v = dq[i]
        if lower[i] <= 0.0 <= upper[i]:
            if v > upper[i] and v > 0.0:
                r = upper[i] / v
                if r < s:
                    s = r
            elif v < lower[i] and v < 0.0:
                r = lower[i] / v
                if r < s:
                    s = r
    if s < 0.0:
        s = 0.0
    for i in range(n):
        v = s * dq[i]
        if v < lower[i]:
            v = lower[i]
        elif v > upper[i]:
            v = upper[i]
        out[i] = v
    return s
