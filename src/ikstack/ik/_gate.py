"""Compiled kernels of the FK gate and of the rigid-target check (numba ``njit(cache=True)``).

:func:`ikstack.ik.fk_errors` and :func:`ikstack.ik.certify` compute their errors with
:func:`fk_error_one`, so every path (batched numpy boundary or single-target fast path) reports
the same numbers bit for bit.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ikstack.kinematics._kernels import fk_one
from ikstack.spatial._tuple_math import rel_rotation, rotation_angle

#: rigid_code results
RIGID = 0
NOT_RIGID = 1  #: not finite, or outside (a hair under) the tolerance: the numpy checker decides

#: the fast check accepts a target only this far inside the tolerance, so a target within
#: round-off of it is decided by the numpy checker (the same verdict either way)
_INSIDE = 0.999

#: a linear constraint's residual this close to zero (relative) is decided by its Python code
_LINEAR_AMBIGUOUS = 1e-12


def kernel_array(a: np.ndarray) -> np.ndarray:
    """``a`` itself when it is writable and C-contiguous, else a C copy of it: a read-only or
    strided array is another type to numba, and every kernel it reached would compile again."""
    f = a.flags
    return a if f.c_contiguous and f.writeable else a.copy()


@njit(cache=True)
def rigid_code(T, atol):  # pragma: no cover - compiled
    """0 when the (4, 4) ``T`` is finite and rigid well within ``atol``; 1 otherwise."""
    for r in range(4):
        for c in range(4):
            if not np.isfinite(T[r, c]):
                return NOT_RIGID
    tol = atol * _INSIDE
    if abs(T[3, 0]) > tol or abs(T[3, 1]) > tol or abs(T[3, 2]) > tol or abs(T[3, 3] - 1.0) > tol:
        return NOT_RIGID
    for a in range(3):
        for b in range(3):
            s = T[0, a] * T[0, b] + T[1, a] * T[1, b] + T[2, a] * T[2, b]
            if abs(s - (1.0 if a == b else 0.0)) > tol:
                return NOT_RIGID
    det = (
        T[0, 0] * (T[1, 1] * T[2, 2] - T[1, 2] * T[2, 1])
        - T[0, 1] * (T[1, 0] * T[2, 2] - T[1, 2] * T[2, 0])
        + T[0, 2] * (T[1, 0] * T[2, 1] - T[1, 1] * T[2, 0])
    )
    if det <= 0.0:
        return NOT_RIGID
    return RIGID


@njit(cache=True)
def pose_residual(T, Tt):  # pragma: no cover - compiled
    """``(perr, c, vx, vy, vz)`` of ``T`` against ``Tt``: position error [m], and of
    ``M = R_t R^T`` (:func:`~ikstack.spatial._tuple_math.rel_rotation`) the cosine
    ``(tr M - 1)/2`` and the axial vector ``vee(M - M^T)`` (twice ``sin(angle) * axis``).
    Every compiled FK gate and pose error in ikstack starts here."""
    dp0 = Tt[0, 3] - T[0, 3]
    dp1 = Tt[1, 3] - T[1, 3]
    dp2 = Tt[2, 3] - T[2, 3]
    perr = math.sqrt(dp0 * dp0 + dp1 * dp1 + dp2 * dp2)
    M = rel_rotation(Tt, T)
    c = 0.5 * (M[0] + M[4] + M[8] - 1.0)
    return perr, c, M[7] - M[5], M[2] - M[6], M[3] - M[1]


@njit(cache=True)
def fk_error_one(T, Tt):  # pragma: no cover - compiled
    """Position [m] and geodesic rotation [rad] errors of ``T`` against ``Tt``
    (:func:`pose_residual`, then :func:`~ikstack.spatial._tuple_math.rotation_angle`): the
    numbers of :func:`ikstack.ik.fk_errors` and :func:`ikstack.ik.certify`."""
    perr, c, vx, vy, vz = pose_residual(T, Tt)
    rerr, _ = rotation_angle(c, vx, vy, vz)
    return perr, rerr


@njit(cache=True)
def constraints_row(q, qidx, qcoef, A, b):  # pragma: no cover - compiled
    """1 satisfied, 0 violated, -1 too close to call (a linear row within round-off of 0)."""
    for m in range(qidx.shape[0]):
        qi = q[qidx[m, 0]]
        qj = q[qidx[m, 1]]
        ci = 1 if qi >= 0 else 0
        cj = 1 if qj >= 0 else 0
        bound = qcoef[m, ci, cj, 0] * qi * qi + qcoef[m, ci, cj, 1] * qi + qcoef[m, ci, cj, 2]
        g = qj - bound if qcoef[m, ci, cj, 3] > 0 else bound - qj
        if not g <= 0.0:
            return 0
    out = 1
    for m in range(A.shape[0]):
        g = 0.0
        scale = abs(b[m])
        for j in range(q.shape[0]):
            g += q[j] * A[m, j]
            scale += abs(q[j] * A[m, j])
        g -= b[m]
        if abs(g) <= _LINEAR_AMBIGUOUS * scale:
            out = -1
        elif g > 0.0:
            return 0
    return out


@njit(cache=True)
def constraints_slots(Q, qidx, qcoef, A, b, CON):  # pragma: no cover - compiled
    """``CON[k]`` of the slots marked in ``CON`` (the others stay False): whether slot ``Q[k]``
    meets every constraint (:func:`constraints_row`); returns 1 when some marked slot could
    not be decided here (its ``CON`` then False), else 0."""
    und = 0
    for k in range(Q.shape[0]):
        if CON[k]:
            c = constraints_row(Q[k], qidx, qcoef, A, b)
            if c < 0:
                und = 1
            CON[k] = c == 1
    return und


@njit(cache=True)
def certify_rows(Q, T, chain, cons, gate, ok, perr, rerr, Tbuf):  # pragma: no cover - compiled
    """The FK gate of :func:`ikstack.ik.certify` for rows ``Q (n, dof)`` against ``T (n or 1,
    4, 4)``: ``chain``, ``cons`` and ``gate`` are :data:`ikstack.ik._data.CHAIN`,
    :data:`~ikstack.ik._data.CONSTRAINTS` and :data:`~ikstack.ik._data.GATE` records (the
    gate's ``lo``/``hi`` already include the limit tolerance); ``Tbuf`` a (4, 4) scratch.
    Returns the number of rows whose constraints could not be decided here (then ``ok`` is the
    verdict without constraints)."""
    n = Q.shape[0]
    dof = Q.shape[1]
    # the fields once, out of the loop (a field read per row costs its reference count)
    Rs, ps, kinds, R_end, p_end = chain.Rs, chain.ps, chain.kinds, chain.R_end, chain.p_end
    qidx, qcoef, A, b = cons.qidx, cons.qcoef, cons.A, cons.b
    lo, hi, ptol, rtol = gate.lo, gate.hi, gate.tol_p, gate.tol_r
    undecided = 0
    for i in range(n):
        Tt = T[i] if T.shape[0] == n else T[0]
        q = Q[i]
        if not fk_one(q, Rs, ps, kinds, R_end, p_end, Tbuf):
            perr[i] = np.inf
            rerr[i] = np.inf
            ok[i] = False
            continue
        pe, re = fk_error_one(Tbuf, Tt)
        perr[i] = pe
        rerr[i] = re
        good = pe <= ptol and re <= rtol
        for j in range(dof):
            if not (q[j] >= lo[j] and q[j] <= hi[j]):
                good = False
        if good:
            c = constraints_row(q, qidx, qcoef, A, b)
            if c < 0:
                undecided += 1
            else:
                good = c == 1
        ok[i] = good
    return undecided


@njit(cache=True, parallel=True)
def certify_rows_parallel(Q, T, chain, cons, gate, ok, perr, rerr):  # pragma: no cover - compiled
    """:func:`certify_rows` on all cores, in blocks of 256 rows (the same numbers)."""
    n = Q.shape[0]
    nblk = (n + 255) // 256
    undecided = 0
    for k in prange(nblk):
        k0 = k * 256
        k1 = min(n, k0 + 256)
        Tk = T[k0:k1] if T.shape[0] == n else T
        undecided += certify_rows(
            Q[k0:k1], Tk, chain, cons, gate, ok[k0:k1], perr[k0:k1], rerr[k0:k1], np.empty((4, 4))
        )
    return undecided


@njit(cache=True)
def fk_errors_rows(F, Tt, perr, rerr):  # pragma: no cover - compiled
    """:func:`fk_error_one` of every row of ``F (n, 4, 4)`` against ``Tt (n, 4, 4)``."""
    for i in range(F.shape[0]):
        perr[i], rerr[i] = fk_error_one(F[i], Tt[i])
