"""Compiled scalar loops for FK and Jacobians (numba ``njit(cache=True)``).

A chain is compiled once into "canonical" joint data: every joint axis is rotated onto local z
by folding a constant rotation into the neighbouring origins, so a revolute joint's motion is a
2x2 mix of two rotation columns and a prismatic joint's motion a move along the third column.

One joint's step (:func:`joint_step`), the TCP (:func:`tool_pose`), one Jacobian column
(:func:`joint_column`) and the loops over the joints (:func:`fk_one`, :func:`jac_one` and
what they call) are written in the portable subset of the kernels (tuples of floats, arrays
read and written element by element): the Warp kernels' versions are generated from them
(``backends/warp/_gen_kinematics.py``), so both devices run the same operations in the same
order.

With ``NUMBA_DISABLE_JIT=1`` these run as plain Python for debugging.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ikstack.spatial._tuple_math import mm

# joint kinds in compiled data
ROT = 0
PRISM = 1

#: the identity rotation as a row-major 9-tuple
_EYE9 = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)


@njit(cache=True, inline="always")
def joint_step(R, p, A, b, kind, qi):  # pragma: no cover - compiled
    """The frame ``(R, p)`` (a row-major 9-tuple and a 3-tuple) carried through one joint:
    to the joint (``p + R b``, ``R A``; ``A``, ``b`` the joint's canonical data as tuples),
    then by its value ``qi`` (a revolute joint turns columns 0 and 1 about column 2, a
    prismatic one moves along column 2). The joint's axis is column 2 of the result; a
    revolute joint's origin is its ``p``."""
    p0 = p[0] + R[0] * b[0] + R[1] * b[1] + R[2] * b[2]
    p1 = p[1] + R[3] * b[0] + R[4] * b[1] + R[5] * b[2]
    p2 = p[2] + R[6] * b[0] + R[7] * b[1] + R[8] * b[2]
    r00 = R[0] * A[0] + R[1] * A[3] + R[2] * A[6]
    r01 = R[0] * A[1] + R[1] * A[4] + R[2] * A[7]
    r02 = R[0] * A[2] + R[1] * A[5] + R[2] * A[8]
    r10 = R[3] * A[0] + R[4] * A[3] + R[5] * A[6]
    r11 = R[3] * A[1] + R[4] * A[4] + R[5] * A[7]
    r12 = R[3] * A[2] + R[4] * A[5] + R[5] * A[8]
    r20 = R[6] * A[0] + R[7] * A[3] + R[8] * A[6]
    r21 = R[6] * A[1] + R[7] * A[4] + R[8] * A[7]
    r22 = R[6] * A[2] + R[7] * A[5] + R[8] * A[8]
    if kind == ROT:
        c = math.cos(qi)
        s = math.sin(qi)
        r00, r01 = c * r00 + s * r01, -s * r00 + c * r01
        r10, r11 = c * r10 + s * r11, -s * r10 + c * r11
        r20, r21 = c * r20 + s * r21, -s * r20 + c * r21
    else:
        p0 = p0 + r02 * qi
        p1 = p1 + r12 * qi
        p2 = p2 + r22 * qi
    return (r00, r01, r02, r10, r11, r12, r20, r21, r22), (p0, p1, p2)


@njit(cache=True, inline="always")
def tool_pose(R, p, E, f):  # pragma: no cover - compiled
    """The frame ``(R, p)`` followed by the fixed transform ``(E, f)`` (the TCP after the last
    joint): ``(R E, p + R f)`` as a 9-tuple and a 3-tuple."""
    t0 = p[0] + R[0] * f[0] + R[1] * f[1] + R[2] * f[2]
    t1 = p[1] + R[3] * f[0] + R[4] * f[1] + R[5] * f[2]
    t2 = p[2] + R[6] * f[0] + R[7] * f[1] + R[8] * f[2]
    return mm(R, E), (t0, t1, t2)


@njit(cache=True, inline="always")
def joint_column(kind, z, o, t):  # pragma: no cover - compiled
    """One column of the base-frame geometric Jacobian at the TCP position ``t``, from the
    joint's axis ``z`` and origin ``o``: ``(linear, angular)`` 3-tuples (``z x (t - o)`` and
    ``z`` for a revolute joint, ``z`` and zero for a prismatic one)."""
    if kind == ROT:
        dx = t[0] - o[0]
        dy = t[1] - o[1]
        dz = t[2] - o[2]
        return (z[1] * dz - z[2] * dy, z[2] * dx - z[0] * dz, z[0] * dy - z[1] * dx), z
    return z, (0.0, 0.0, 0.0)


@njit(cache=True, inline="always")
def _row9(A, i):  # pragma: no cover - compiled
    """``A[i]`` of an (n, 3, 3) array as a row-major 9-tuple."""
    return (
        A[i, 0, 0],
        A[i, 0, 1],
        A[i, 0, 2],
        A[i, 1, 0],
        A[i, 1, 1],
        A[i, 1, 2],
        A[i, 2, 0],
        A[i, 2, 1],
        A[i, 2, 2],
    )


@njit(cache=True, inline="always")
def _row3(a, i):  # pragma: no cover - compiled
    """``a[i]`` of an (n, 3) array as a 3-tuple."""
    return (a[i, 0], a[i, 1], a[i, 2])


@njit(cache=True, inline="always")
def _chain_pose(q, Rs, ps, kinds):  # pragma: no cover - compiled
    """The frame after the last joint, ``(R, p)`` as tuples."""
    R = _EYE9
    p = (0.0, 0.0, 0.0)
    for i in range(Rs.shape[0]):
        R, p = joint_step(R, p, _row9(Rs, i), _row3(ps, i), kinds[i], q[i])
    return R, p


@njit(cache=True, inline="always")
def _store(R, p, out):  # pragma: no cover - compiled
    """The pose ``(R, p)`` (tuples) into the (4, 4) ``out``."""
    out[0, 0], out[0, 1], out[0, 2], out[0, 3] = R[0], R[1], R[2], p[0]
    out[1, 0], out[1, 1], out[1, 2], out[1, 3] = R[3], R[4], R[5], p[1]
    out[2, 0], out[2, 1], out[2, 2], out[2, 3] = R[6], R[7], R[8], p[2]
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, 0.0, 0.0, 1.0


@njit(cache=True, inline="always")
def _finish(R, p, R_end, p_end, out):  # pragma: no cover - compiled
    """The TCP of the frame ``(R, p)`` (tuples) and the (3, 3), (3,) arrays of the fixed end
    transform into ``out``."""
    E = (
        R_end[0, 0],
        R_end[0, 1],
        R_end[0, 2],
        R_end[1, 0],
        R_end[1, 1],
        R_end[1, 2],
        R_end[2, 0],
        R_end[2, 1],
        R_end[2, 2],
    )
    Rt, pt = tool_pose(R, p, E, (p_end[0], p_end[1], p_end[2]))
    _store(Rt, pt, out)


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
    R, p = _chain_pose(q, Rs, ps, kinds)
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
    for k in range(Q.shape[0]):
        R, p = _chain_pose(Q[k], Rs, ps, kinds)
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
    (the running frame lives in tuples; joint axes and origins wait in ``J``'s columns)."""
    n = Rs.shape[0]
    R = _EYE9
    p = (0.0, 0.0, 0.0)
    for i in range(n):
        R, p = joint_step(R, p, _row9(Rs, i), _row3(ps, i), kinds[i], q[i])
        # joint axis z_i (rows 3-5) and origin o_i (rows 0-2) until the TCP is known
        J[3, i], J[4, i], J[5, i] = R[2], R[5], R[8]
        J[0, i], J[1, i], J[2, i] = p[0], p[1], p[2]
    _finish(R, p, R_end, p_end, T)
    t = (T[0, 3], T[1, 3], T[2, 3])
    for i in range(n):
        lin, ang = joint_column(
            kinds[i], (J[3, i], J[4, i], J[5, i]), (J[0, i], J[1, i], J[2, i]), t
        )
        J[0, i], J[1, i], J[2, i] = lin
        J[3, i], J[4, i], J[5, i] = ang


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
    for k in range(Q.shape[0]):
        R = _EYE9
        p = (0.0, 0.0, 0.0)
        for i in range(n):
            R, p = joint_step(R, p, _row9(Rs, i), _row3(ps, i), kinds[i], Q[k, i])
            _finish(R, p, Cs[i].T, np.zeros(3), out[k, i])
        _finish(R, p, R_end, p_end, out[k, n])
