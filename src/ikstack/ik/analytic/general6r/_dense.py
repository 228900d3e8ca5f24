"""Small dense kernels for the pencil (numba): partial-pivot LU with log-determinant, its
solve, pivoted Householder QR giving a left null space and a least-squares operator, and the
inverse of a rigid 4x4 transform."""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True)
def _lu(A, LU, piv):  # pragma: no cover - compiled
    """Partial-pivot LU of square ``A`` into ``LU``; returns (log|det|, min/max |pivot|, sign)."""
    n = A.shape[0]
    scale = 0.0
    for i in range(n):
        for j in range(n):
            LU[i, j] = A[i, j]
            scale = max(scale, abs(A[i, j]))
    tiny = 1e-15 * scale if scale > 0.0 else 1e-300
    logdet = 0.0
    sign = 1.0
    pmax = 0.0
    pmin = np.inf
    for k in range(n):
        p = k
        best = abs(LU[k, k])
        for i in range(k + 1, n):
            v = abs(LU[i, k])
            if v > best:
                best = v
                p = i
        piv[k] = p
        if p != k:
            sign = -sign
            for j in range(n):
                tmp = LU[k, j]
                LU[k, j] = LU[p, j]
                LU[p, j] = tmp
        d = LU[k, k]
        if abs(d) < tiny:  # singular to working precision: a tiny pivot keeps solves finite
            d = tiny if d >= 0.0 else -tiny
            LU[k, k] = d
        ad = abs(d)
        if d < 0.0:
            sign = -sign
        pmax = max(pmax, ad)
        pmin = min(pmin, ad)
        logdet += math.log(ad)
        inv = 1.0 / d
        for i in range(k + 1, n):
            f = LU[i, k] * inv
            LU[i, k] = f
            if f != 0.0:
                for j in range(k + 1, n):
                    LU[i, j] -= f * LU[k, j]
    ratio = pmin / pmax if pmax > 0.0 else 0.0
    return logdet, ratio, sign


@njit(cache=True)
def _lu_solve(LU, piv, b):  # pragma: no cover - compiled
    """Solve in place ``A x = b`` with ``_lu``'s factors."""
    n = LU.shape[0]
    for k in range(n):
        p = piv[k]
        if p != k:
            tmp = b[k]
            b[k] = b[p]
            b[p] = tmp
    for i in range(n):
        acc = b[i]
        for j in range(i):
            acc -= LU[i, j] * b[j]
        b[i] = acc
    for i in range(n - 1, -1, -1):
        acc = b[i]
        for j in range(i + 1, n):
            acc -= LU[i, j] * b[j]
        b[i] = acc / LU[i, i]


@njit(cache=True)
def _qr_null_pinv(A, N, pinv):  # pragma: no cover - compiled
    """Householder QR with column pivoting of ``A (m, n)``, m > n.

    Fills ``N (m - n, m)`` with an orthonormal basis of the left null space (rows) and
    ``pinv (n, m)`` with the basic least-squares solution operator (near-zero pivots dropped).
    """
    m, n = A.shape
    R = A.copy()
    Q = np.eye(m)
    perm = np.arange(n)
    v = np.empty(m)
    for k in range(n):
        # pivot: the remaining column of largest norm
        best = -1.0
        p = k
        for j in range(k, n):
            acc = 0.0
            for i in range(k, m):
                acc += R[i, j] * R[i, j]
            if acc > best:
                best = acc
                p = j
        if p != k:
            for i in range(m):
                tmp = R[i, k]
                R[i, k] = R[i, p]
                R[i, p] = tmp
            tmp2 = perm[k]
            perm[k] = perm[p]
            perm[p] = tmp2
        nrm = math.sqrt(best) if best > 0.0 else 0.0
        if nrm == 0.0:
            continue
        alpha = -nrm if R[k, k] >= 0.0 else nrm
        vn = 0.0
        for i in range(m):
            v[i] = R[i, k] if i >= k else 0.0
        v[k] -= alpha
        for i in range(k, m):
            vn += v[i] * v[i]
        if vn == 0.0:
            continue
        for j in range(k, n):  # R <- (I - 2 v v^T / vn) R
            d = 0.0
            for i in range(k, m):
                d += v[i] * R[i, j]
            f = 2.0 * d / vn
            for i in range(k, m):
                R[i, j] -= f * v[i]
        for i in range(m):  # Q <- Q (I - 2 v v^T / vn)
            d = 0.0
            for j in range(k, m):
                d += Q[i, j] * v[j]
            f = 2.0 * d / vn
            for j in range(k, m):
                Q[i, j] -= f * v[j]
    for e in range(m - n):
        for r in range(m):
            N[e, r] = Q[r, n + e]
    rmax = abs(R[0, 0])
    # pinv = P R^{-1} Q_1^T: back-substitute each column of Q_1^T
    y = np.empty(n)
    for r in range(m):
        for i in range(n - 1, -1, -1):
            acc = Q[r, i]
            for j in range(i + 1, n):
                acc -= R[i, j] * y[j]
            d = R[i, i]
            y[i] = acc / d if abs(d) > 1e-12 * rmax else 0.0
        for i in range(n):
            pinv[perm[i], r] = y[i]


@njit(cache=True, inline="always")
def _rigid_inv(T, out):  # pragma: no cover - compiled
    for i in range(3):
        for j in range(3):
            out[i, j] = T[j, i]
    for i in range(3):
        out[i, 3] = -(T[0, i] * T[0, 3] + T[1, i] * T[1, 3] + T[2, i] * T[2, 3])
        out[3, i] = 0.0
    out[3, 3] = 1.0
