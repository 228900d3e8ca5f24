# mypy: ignore-errors
# ruff: noqa
"""GENERATED from ``src/ikstack/ik/_gate.py`` by :mod:`ikstack.backends.warp._translate`:
do not edit; edit the CPU source and run ``python -m ikstack.backends.warp._translate``
(a test fails when this file and its source disagree)."""

import warp as wp

from ikstack.backends.warp._prims import *  # noqa: F403
from ikstack.backends.warp._gen_tuple_math import rel_rotation, rotation_angle

_LINEAR_AMBIGUOUS = wp.constant(F(1e-12))


@wp.func
def pose_residual(T: wp.mat44d, Tt: wp.mat44d):
    """``(perr, c, vx, vy, vz)`` of ``T`` against ``Tt``: position error [m], and of
    ``M = R_t R^T`` (:func:`~ikstack.spatial._tuple_math.rel_rotation`) the cosine
    ``(tr M - 1)/2`` and the axial vector ``vee(M - M^T)`` (twice ``sin(angle) * axis``).
    Every compiled FK gate and pose error in ikstack starts here."""
    dp0 = Tt[0, 3] - T[0, 3]
    dp1 = Tt[1, 3] - T[1, 3]
    dp2 = Tt[2, 3] - T[2, 3]
    perr = wp.sqrt(dp0 * dp0 + dp1 * dp1 + dp2 * dp2)
    M = rel_rotation(Tt, T)
    c = F(0.5) * (M[0, 0] + M[1, 1] + M[2, 2] - F(1.0))
    return perr, c, M[2, 1] - M[1, 2], M[0, 2] - M[2, 0], M[1, 0] - M[0, 1]


@wp.func
def fk_error_one(T: wp.mat44d, Tt: wp.mat44d):
    """Position [m] and geodesic rotation [rad] errors of ``T`` against ``Tt``
    (:func:`pose_residual`, then :func:`~ikstack.spatial._tuple_math.rotation_angle`): the
    numbers of :func:`ikstack.ik.fk_errors` and :func:`ikstack.ik.certify`."""
    perr, c, vx, vy, vz = pose_residual(T, Tt)
    rerr_2 = rotation_angle(c, vx, vy, vz)
    rerr = rerr_2[0]
    _u1 = rerr_2[1]
    return wp.vec2d(perr, rerr)


@wp.func
def constraints_row(q: wp.array(dtype=wp.float64), qidx: wp.array2d(dtype=wp.int32), qcoef: wp.array4d(dtype=wp.float64), A: wp.array2d(dtype=wp.float64), b: wp.array(dtype=wp.float64)):
    """1 satisfied, 0 violated, -1 too close to call (a linear row within round-off of 0)."""
    for m in range(qidx.shape[0]):
        qi = q[qidx[m, 0]]
        qj = q[qidx[m, 1]]
        ci = wp.where(qi >= F(0.0), 1, 0)
        cj = wp.where(qj >= F(0.0), 1, 0)
        bound = qcoef[m, ci, cj, 0] * qi * qi + qcoef[m, ci, cj, 1] * qi + qcoef[m, ci, cj, 2]
        g = wp.where(qcoef[m, ci, cj, 3] > F(0.0), qj - bound, bound - qj)
        if not (g <= F(0.0)):
            return 0
    out = int(1)
    for m in range(A.shape[0]):
        g = F(0.0)
        scale = wp.abs(b[m])
        for j in range(q.shape[0]):
            g = g + q[j] * A[m, j]
            scale = scale + wp.abs(q[j] * A[m, j])
        g = g - b[m]
        if wp.abs(g) <= _LINEAR_AMBIGUOUS * scale:
            out = int(-1)
        elif g > F(0.0):
            return 0
    return out


@wp.func
def constraints_slots(Q: wp.array2d(dtype=wp.float64), qidx: wp.array2d(dtype=wp.int32), qcoef: wp.array4d(dtype=wp.float64), A: wp.array2d(dtype=wp.float64), b: wp.array(dtype=wp.float64), CON: wp.array(dtype=wp.int32)):
    """``CON[k]`` of the slots marked in ``CON`` (the others stay False): whether slot ``Q[k]``
    meets every constraint (:func:`constraints_row`); returns 1 when some marked slot could
    not be decided here (its ``CON`` then False), else 0."""
    c = int(0)
    und = int(0)
    for k in range(Q.shape[0]):
        if (CON[k] != 0):
            c = constraints_row(Q[k], qidx, qcoef, A, b)
            if c < 0:
                und = int(1)
            CON[k] = wp.where(c == 1, 1, 0)
    return und
