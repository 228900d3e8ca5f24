"""Small dense linear algebra for the per-cycle solvers (numba ``njit(cache=True)``).

The matrices here are tiny (a handful of joints, at most six task rows), so plain scalar loops
beat LAPACK's call overhead. With ``NUMBA_DISABLE_JIT=1`` they run as ordinary Python.
"""

from __future__ import annotations

import numpy as np
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


@njit(cache=True)
def svd_small(A, U, s, Vh):  # pragma: no cover - compiled
    """SVD of a small (m, n) matrix by one-sided Jacobi rotations (see :func:`svd_jacobi`)."""
    svd_jacobi(A, U, s, Vh, False)


@njit(cache=True)
def svd_jacobi(A, U, s, Vh, warm):  # pragma: no cover - compiled
    """SVD of a small (m, n) matrix by one-sided Jacobi rotations on its columns.

    With ``warm`` the rotations start from the orthogonal ``Vh`` passed in (the previous
    cycle's, in a servo loop), so a slowly changing matrix needs one or two sweeps.

    Writes ``U`` (m, k), ``s`` (k,) descending and ``Vh`` (n, n) with ``k = min(m, n)``, so
    ``A = U diag(s) Vh[:k]``; the rows of ``Vh`` beyond the rank span the nullspace (complete
    even at an exact singularity, since ``V`` is a product of rotations). Left vectors of zero
    singular values are completed by Gram-Schmidt. Accurate to a few ulps relative to
    ``s_max`` (one-sided Jacobi is the most accurate dense SVD for small matrices).
    """
    m, n = A.shape
    svd_jacobi_into(A, U, s, Vh, warm, np.empty((n, m)), np.empty((n, n)), np.empty(n),
                    np.empty(n))


@njit(cache=True)
def svd_jacobi_into(A, U, s, Vh, warm, Wt, Vt, norms, order):  # pragma: no cover - compiled
    """:func:`svd_jacobi` with caller-provided scratch ``Wt`` (n, m), ``Vt`` (n, n) and
    ``norms``, ``order`` (n,) (a per-cycle caller avoids four allocations)."""
    m, n = A.shape
    k = min(m, n)
    # rows of Wt are the columns of A being rotated; rows of Vt the columns of V
    fro2 = 0.0
    for i in range(n):
        for r in range(m):
            fro2 += A[r, i] * A[r, i]
    if warm:
        for i in range(n):
            for c in range(n):
                Vt[i, c] = Vh[i, c]
            for r in range(m):
                x = 0.0
                for c in range(n):
                    x += A[r, c] * Vt[i, c]
                Wt[i, r] = x
    else:
        for i in range(n):
            for c in range(n):
                Vt[i, c] = 0.0
            Vt[i, i] = 1.0
            for r in range(m):
                Wt[i, r] = A[r, i]
    tiny = 1e-30 * fro2
    for _sweep in range(60):
        rotated = False
        for p in range(n - 1):
            wp_ = Wt[p]
            for q in range(p + 1, n):
                wq_ = Wt[q]
                a = 0.0
                b = 0.0
                g = 0.0
                for r in range(m):
                    a += wp_[r] * wp_[r]
                    b += wq_[r] * wq_[r]
                    g += wp_[r] * wq_[r]
                if abs(g) <= 1e-15 * np.sqrt(a * b) or a <= tiny or b <= tiny:
                    continue
                rotated = True
                zeta = (b - a) / (2.0 * g)
                t = (1.0 if zeta >= 0.0 else -1.0) / (abs(zeta) + np.sqrt(1.0 + zeta * zeta))
                c = 1.0 / np.sqrt(1.0 + t * t)
                sn = c * t
                for r in range(m):
                    x = wp_[r]
                    y = wq_[r]
                    wp_[r] = c * x - sn * y
                    wq_[r] = sn * x + c * y
                vp_ = Vt[p]
                vq_ = Vt[q]
                for r in range(n):
                    x = vp_[r]
                    y = vq_[r]
                    vp_[r] = c * x - sn * y
                    vq_[r] = sn * x + c * y
        if not rotated:
            break
    for j in range(n):
        x = 0.0
        for r in range(m):
            x += Wt[j, r] * Wt[j, r]
        norms[j] = np.sqrt(x)
        # insertion sort, descending (n is small); order holds indices as floats
        a = j
        while a > 0 and norms[int(order[a - 1])] < norms[j]:
            order[a] = order[a - 1]
            a -= 1
        order[a] = j
    smax = norms[int(order[0])] if n > 0 else 0.0
    for a in range(n):
        j = int(order[a])
        for r in range(n):
            Vh[a, r] = Vt[j, r]
    for a in range(k):
        j = int(order[a])
        sj = norms[j]
        s[a] = sj
        if sj > 1e-300 and sj > 1e-14 * smax:
            for r in range(m):
                U[r, a] = Wt[j, r] / sj
        else:
            # complete with the basis vector least covered by the columns found so far
            best = -1.0
            for e in range(m):
                res = 1.0
                for b in range(a):
                    res -= U[e, b] * U[e, b]
                if res > best:
                    best = res
                    be = e
            for r in range(m):
                x = 1.0 if r == be else 0.0
                for b in range(a):
                    x -= U[be, b] * U[r, b]
                U[r, a] = x
            nrm = 0.0
            for r in range(m):
                nrm += U[r, a] * U[r, a]
            nrm = np.sqrt(nrm)
            for r in range(m):
                U[r, a] /= nrm
