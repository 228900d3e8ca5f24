"""Compiled scalar loops for FK and Jacobians (numba ``njit(cache=True)``).

A chain is compiled once into "canonical" joint data: every joint axis is rotated onto local z
by folding a constant rotation into the neighbouring origins, so a revolute joint's motion is a
2x2 mix of two rotation columns and a prismatic joint's motion a move along the third column.

With ``NUMBA_DISABLE_JIT=1`` these run as plain Python for debugging.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

# joint kinds in compiled data
ROT = 0
PRISM = 1


@njit(cache=True, inline="always")
def _apply_chain(q, Rs, ps, kinds, R, p):  # pragma: no cover - compiled
    n = Rs.shape[0]
    for i in range(n):
        # p = p + R @ ps[i]
        p0 = p[0] + R[0, 0] * ps[i, 0] + R[0, 1] * ps[i, 1] + R[0, 2] * ps[i, 2]
        p1 = p[1] + R[1, 0] * ps[i, 0] + R[1, 1] * ps[i, 1] + R[1, 2] * ps[i, 2]
        p2 = p[2] + R[2, 0] * ps[i, 0] + R[2, 1] * ps[i, 1] + R[2, 2] * ps[i, 2]
        p[0], p[1], p[2] = p0, p1, p2
        # R = R @ Rs[i]
        for r in range(3):
            a0, a1, a2 = R[r, 0], R[r, 1], R[r, 2]
            R[r, 0] = a0 * Rs[i, 0, 0] + a1 * Rs[i, 1, 0] + a2 * Rs[i, 2, 0]
            R[r, 1] = a0 * Rs[i, 0, 1] + a1 * Rs[i, 1, 1] + a2 * Rs[i, 2, 1]
            R[r, 2] = a0 * Rs[i, 0, 2] + a1 * Rs[i, 1, 2] + a2 * Rs[i, 2, 2]
        qi = q[i]
        if kinds[i] == ROT:
            c = np.cos(qi)
            s = np.sin(qi)
            for r in range(3):
                x, y = R[r, 0], R[r, 1]
                R[r, 0] = c * x + s * y
                R[r, 1] = -s * x + c * y
        else:
            p[0] += R[0, 2] * qi
            p[1] += R[1, 2] * qi
            p[2] += R[2, 2] * qi


@njit(cache=True, inline="always")
def _finish(R, p, R_end, p_end, out):  # pragma: no cover - compiled
    for r in range(3):
        out[r, 3] = p[r] + R[r, 0] * p_end[0] + R[r, 1] * p_end[1] + R[r, 2] * p_end[2]
        for c in range(3):
            out[r, c] = R[r, 0] * R_end[0, c] + R[r, 1] * R_end[1, c] + R[r, 2] * R_end[2, c]
    out[3, 0] = 0.0
    out[3, 1] = 0.0
    out[3, 2] = 0.0
    out[3, 3] = 1.0


@njit(cache=True)
def all_finite(x):  # pragma: no cover - compiled
    for v in x.ravel():
        if not np.isfinite(v):
            return False
    return True


@njit(cache=True)
def fk_one(q, Rs, ps, kinds, R_end, p_end, out):  # pragma: no cover - compiled
    """FK of one configuration into ``out``; returns False (computing nothing) if q is not
    finite."""
    for v in q:
        if not np.isfinite(v):
            return False
    R = np.eye(3)
    p = np.zeros(3)
    _apply_chain(q, Rs, ps, kinds, R, p)
    _finish(R, p, R_end, p_end, out)
    return True


@njit(cache=True)
def fk_revolute6_tuples(q, Rs, ps, R_end, p_end, out):  # pragma: no cover - compiled
    """:func:`fk_one` of a revolute 6R chain whose data are tuples
    (``Rs`` six 9-tuples, ``ps`` six 3-tuples, ``R_end`` a 9-tuple, ``p_end`` a 3-tuple): the
    same operations in the same order, so the same numbers bit for bit."""
    fk_revolute6_cs(
        (np.cos(q[0]), np.cos(q[1]), np.cos(q[2]), np.cos(q[3]), np.cos(q[4]), np.cos(q[5])),
        (np.sin(q[0]), np.sin(q[1]), np.sin(q[2]), np.sin(q[3]), np.sin(q[4]), np.sin(q[5])),
        Rs,
        ps,
        R_end,
        p_end,
        out,
    )


@njit(cache=True, inline="always")
def fk_revolute6_cs(cq, sq, Rs, ps, R_end, p_end, out):  # pragma: no cover - compiled
    """:func:`fk_revolute6_tuples` from the joints' cosines ``cq`` and sines ``sq`` (callers
    that share joint values between configurations compute each cosine and sine once)."""
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
    p0 = p1 = p2 = 0.0
    for i in range(6):
        A = Rs[i]
        b = ps[i]
        p0, p1, p2 = (
            p0 + r00 * b[0] + r01 * b[1] + r02 * b[2],
            p1 + r10 * b[0] + r11 * b[1] + r12 * b[2],
            p2 + r20 * b[0] + r21 * b[1] + r22 * b[2],
        )
        r00, r01, r02 = (
            r00 * A[0] + r01 * A[3] + r02 * A[6],
            r00 * A[1] + r01 * A[4] + r02 * A[7],
            r00 * A[2] + r01 * A[5] + r02 * A[8],
        )
        r10, r11, r12 = (
            r10 * A[0] + r11 * A[3] + r12 * A[6],
            r10 * A[1] + r11 * A[4] + r12 * A[7],
            r10 * A[2] + r11 * A[5] + r12 * A[8],
        )
        r20, r21, r22 = (
            r20 * A[0] + r21 * A[3] + r22 * A[6],
            r20 * A[1] + r21 * A[4] + r22 * A[7],
            r20 * A[2] + r21 * A[5] + r22 * A[8],
        )
        c = cq[i]
        s = sq[i]
        r00, r01 = c * r00 + s * r01, -s * r00 + c * r01
        r10, r11 = c * r10 + s * r11, -s * r10 + c * r11
        r20, r21 = c * r20 + s * r21, -s * r20 + c * r21
    e = R_end
    f = p_end
    out[0, 3] = p0 + r00 * f[0] + r01 * f[1] + r02 * f[2]
    out[1, 3] = p1 + r10 * f[0] + r11 * f[1] + r12 * f[2]
    out[2, 3] = p2 + r20 * f[0] + r21 * f[1] + r22 * f[2]
    for c in range(3):
        out[0, c] = r00 * e[c] + r01 * e[3 + c] + r02 * e[6 + c]
        out[1, c] = r10 * e[c] + r11 * e[3 + c] + r12 * e[6 + c]
        out[2, c] = r20 * e[c] + r21 * e[3 + c] + r22 * e[6 + c]
    out[3, 0] = 0.0
    out[3, 1] = 0.0
    out[3, 2] = 0.0
    out[3, 3] = 1.0


@njit(cache=True)
def fk_batch(Q, Rs, ps, kinds, R_end, p_end, out):  # pragma: no cover - compiled
    R = np.empty((3, 3))
    p = np.empty(3)
    for k in range(Q.shape[0]):
        R[:] = 0.0
        R[0, 0] = 1.0
        R[1, 1] = 1.0
        R[2, 2] = 1.0
        p[:] = 0.0
        _apply_chain(Q[k], Rs, ps, kinds, R, p)
        _finish(R, p, R_end, p_end, out[k])


@njit(cache=True, parallel=True)
def fk_batch_parallel(Q, Rs, ps, kinds, R_end, p_end, out):  # pragma: no cover - compiled
    n = Q.shape[0]
    nblk = (n + 255) // 256
    for b in prange(nblk):
        lo = b * 256
        hi = min(n, lo + 256)
        fk_batch(Q[lo:hi], Rs, ps, kinds, R_end, p_end, out[lo:hi])


@njit(cache=True, inline="always")
def _jac_into(q, Rs, ps, kinds, R_end, p_end, J, T):  # pragma: no cover - compiled
    """FK into ``T`` and the base-frame geometric Jacobian into ``J (6, n)``; allocates nothing
    (the running frame lives in scalars; joint axes and origins wait in ``J``'s columns)."""
    n = Rs.shape[0]
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
    p0, p1, p2 = 0.0, 0.0, 0.0
    for i in range(n):
        a0, a1, a2 = ps[i, 0], ps[i, 1], ps[i, 2]
        p0 = p0 + r00 * a0 + r01 * a1 + r02 * a2
        p1 = p1 + r10 * a0 + r11 * a1 + r12 * a2
        p2 = p2 + r20 * a0 + r21 * a1 + r22 * a2
        b00, b01, b02 = Rs[i, 0, 0], Rs[i, 0, 1], Rs[i, 0, 2]
        b10, b11, b12 = Rs[i, 1, 0], Rs[i, 1, 1], Rs[i, 1, 2]
        b20, b21, b22 = Rs[i, 2, 0], Rs[i, 2, 1], Rs[i, 2, 2]
        r00, r01, r02 = (
            r00 * b00 + r01 * b10 + r02 * b20,
            r00 * b01 + r01 * b11 + r02 * b21,
            r00 * b02 + r01 * b12 + r02 * b22,
        )
        r10, r11, r12 = (
            r10 * b00 + r11 * b10 + r12 * b20,
            r10 * b01 + r11 * b11 + r12 * b21,
            r10 * b02 + r11 * b12 + r12 * b22,
        )
        r20, r21, r22 = (
            r20 * b00 + r21 * b10 + r22 * b20,
            r20 * b01 + r21 * b11 + r22 * b21,
            r20 * b02 + r21 * b12 + r22 * b22,
        )
        # joint axis z_i (rows 3-5) and origin o_i (rows 0-2) until the TCP is known
        J[3, i], J[4, i], J[5, i] = r02, r12, r22
        J[0, i], J[1, i], J[2, i] = p0, p1, p2
        qi = q[i]
        if kinds[i] == ROT:
            c = np.cos(qi)
            s = np.sin(qi)
            r00, r01 = c * r00 + s * r01, -s * r00 + c * r01
            r10, r11 = c * r10 + s * r11, -s * r10 + c * r11
            r20, r21 = c * r20 + s * r21, -s * r20 + c * r21
        else:
            p0 += r02 * qi
            p1 += r12 * qi
            p2 += r22 * qi
    e0, e1, e2 = p_end[0], p_end[1], p_end[2]
    tx = p0 + r00 * e0 + r01 * e1 + r02 * e2
    ty = p1 + r10 * e0 + r11 * e1 + r12 * e2
    tz = p2 + r20 * e0 + r21 * e1 + r22 * e2
    T[0, 3], T[1, 3], T[2, 3] = tx, ty, tz
    for c in range(3):
        x, y, z = R_end[0, c], R_end[1, c], R_end[2, c]
        T[0, c] = r00 * x + r01 * y + r02 * z
        T[1, c] = r10 * x + r11 * y + r12 * z
        T[2, c] = r20 * x + r21 * y + r22 * z
    T[3, 0] = 0.0
    T[3, 1] = 0.0
    T[3, 2] = 0.0
    T[3, 3] = 1.0
    for i in range(n):
        zx, zy, zz = J[3, i], J[4, i], J[5, i]
        if kinds[i] == ROT:
            dx, dy, dz = tx - J[0, i], ty - J[1, i], tz - J[2, i]
            J[0, i] = zy * dz - zz * dy
            J[1, i] = zz * dx - zx * dz
            J[2, i] = zx * dy - zy * dx
        else:
            J[0, i], J[1, i], J[2, i] = zx, zy, zz
            J[3, i] = 0.0
            J[4, i] = 0.0
            J[5, i] = 0.0


@njit(cache=True)
def jac_one(q, Rs, ps, kinds, R_end, p_end, J, T):  # pragma: no cover - compiled
    """Jacobian and FK of one configuration; returns False (computing nothing) if q is not
    finite."""
    for v in q:
        if not np.isfinite(v):
            return False
    _jac_into(q, Rs, ps, kinds, R_end, p_end, J, T)
    return True


@njit(cache=True)
def jac_batch(Q, Rs, ps, kinds, R_end, p_end, J, T):  # pragma: no cover - compiled
    for k in range(Q.shape[0]):
        _jac_into(Q[k], Rs, ps, kinds, R_end, p_end, J[k], T[k])


@njit(cache=True, parallel=True)
def jac_batch_parallel(Q, Rs, ps, kinds, R_end, p_end, J, T):  # pragma: no cover - compiled
    n = Q.shape[0]
    nblk = (n + 255) // 256
    for b in prange(nblk):
        lo = b * 256
        hi = min(n, lo + 256)
        jac_batch(Q[lo:hi], Rs, ps, kinds, R_end, p_end, J[lo:hi], T[lo:hi])


@njit(cache=True)
def links_batch(Q, Rs, ps, kinds, Cs, R_end, p_end, out):  # pragma: no cover - compiled
    """Frames of every joint's child link (undoing the canonical rotation ``Cs``) and the TCP."""
    n = Rs.shape[0]
    R = np.empty((3, 3))
    p = np.empty(3)
    for k in range(Q.shape[0]):
        R[:] = 0.0
        R[0, 0] = 1.0
        R[1, 1] = 1.0
        R[2, 2] = 1.0
        p[:] = 0.0
        for i in range(n):
            _apply_chain(Q[k, i : i + 1], Rs[i : i + 1], ps[i : i + 1], kinds[i : i + 1], R, p)
            _finish(R, p, Cs[i].T, np.zeros(3), out[k, i])
        _finish(R, p, R_end, p_end, out[k, n])
