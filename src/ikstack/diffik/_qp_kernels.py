"""Compiled per-step work of the velocity QP: building the cost and boxes, and the post-step FK.

The step's rotation error is :func:`~ikstack.spatial._tuple_math.rotation_vector` of
:func:`~ikstack.spatial._tuple_math.rel_rotation`'s ``R_t R^T``, the numerical search's pose
error's own (the public :func:`ikstack.spatial.so3.log` is the same Shepperd quaternion in
vectorised NumPy). The Euler residual of the lag guard is SciPy's ``Rotation.as_euler("xyz")``
(extrinsic) in closed form away from the gimbal lock; tests hold it equal to SciPy itself.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ikstack.diffik.joint_limit_cost import cost_gradient_into
from ikstack.spatial._tuple_math import rel_rotation, rotation_vector

#: ``1 - |R[2, 0]|`` below this is "near the gimbal lock": the caller defers to SciPy there
EULER_LOCK_TOL = 1e-6


@njit(cache=True)
def euler_residual_deg(Rt, R):  # pragma: no cover - compiled
    """Largest wrapped difference [deg] of the extrinsic-xyz Euler angles of ``R`` and ``Rt``
    (SciPy's ``as_euler("xyz")``: ``R = Rz(c) Ry(b) Rx(a)``), wrapped to [-180, 180); nan when
    either rotation is within :data:`EULER_LOCK_TOL` of the gimbal lock."""
    if 1.0 - abs(R[2, 0]) < EULER_LOCK_TOL or 1.0 - abs(Rt[2, 0]) < EULER_LOCK_TOL:
        return np.nan
    k = 180.0 / np.pi
    d0 = k * (np.arctan2(R[2, 1], R[2, 2]) - np.arctan2(Rt[2, 1], Rt[2, 2]))
    d1 = k * (np.arcsin(min(1.0, max(-1.0, -R[2, 0]))) - np.arcsin(min(1.0, max(-1.0, -Rt[2, 0]))))
    d2 = k * (np.arctan2(R[1, 0], R[0, 0]) - np.arctan2(Rt[1, 0], Rt[0, 0]))
    worst = 0.0
    for d in (d0, d1, d2):
        w = abs((d + 180.0) % 360.0 - 180.0)
        if w > worst:
            worst = w
    return worst


@njit(cache=True)
def build_qp(par, w, q, T_target, dt):  # pragma: no cover - compiled
    """Fill ``w.P (n,n)``, ``w.c (n)``, ``w.lb, w.ub (n)`` and ``w.grad`` of one step from the
    flange pose ``w.T`` and Jacobian ``w.J`` at ``q``; return the number of empty boxes.

    ``par`` and ``w`` are the workspace's ``QPParams`` and ``QPWork`` records
    (:mod:`ikstack.diffik._qp_workspace`). Internal units: ``x = s * qdot`` (deg/s or rad/s), task
    rows scaled to mm (or m) and deg (or rad). ``lo_int, hi_int`` are the raw limits in internal
    units (joint-limit cost); ``lo_box, hi_box`` the margin-adjusted limits [rad]; ``vmax``
    [rad/s].
    """
    J, T, s = w.J, w.T, par.s
    lin_scale, ang_scale, w_pos, w_rot = par.lin_scale, par.ang_scale, par.w_pos, par.w_rot
    lam, mu, lo_box, hi_box, vmax = par.lam, par.mu, par.lo_box, par.hi_box, par.vmax
    P, c, lb, ub, grad = w.P, w.c, w.lb, w.ub, w.grad
    n = q.shape[0]
    Ji = np.empty((6, n))
    for j in range(n):
        for r in range(3):
            Ji[r, j] = J[r, j] * lin_scale / s[j]
            Ji[r + 3, j] = J[r + 3, j] * ang_scale / s[j]
    v = np.empty(6)
    for r in range(3):
        v[r] = lin_scale * (T_target[r, 3] - T[r, 3]) / dt
    rv = rotation_vector(rel_rotation(T_target, T))
    for r in range(3):
        v[r + 3] = ang_scale * rv[r] / dt
    W = np.empty(6)
    for r in range(3):
        W[r] = w_pos
        W[r + 3] = w_rot
    qi = np.empty(n)
    for j in range(n):
        qi[j] = q[j] * s[j]
    cost_gradient_into(qi, par.lo_int, par.hi_int, par.nsw, par.band, grad)
    for a in range(n):
        for b in range(a, n):
            acc = 0.0
            for r in range(6):
                acc += Ji[r, a] * W[r] * Ji[r, b]
            acc *= 2.0
            if a == b:
                acc += 2.0 * lam
            P[a, b] = acc
            P[b, a] = acc
        acc = 0.0
        for r in range(6):
            acc += Ji[r, a] * W[r] * v[r]
        c[a] = -2.0 * acc + mu * dt * grad[a]
    empty = 0
    for j in range(n):
        lo = max(-vmax[j], (lo_box[j] - q[j]) / dt)
        hi = min(vmax[j], (hi_box[j] - q[j]) / dt)
        lb[j] = lo * s[j]
        ub[j] = hi * s[j]
        if lo > hi:
            empty += 1
    return empty


@njit(cache=True)
def inputs_ok(q, T, atol):  # pragma: no cover - compiled
    """0 when ``q`` is finite and ``T`` a finite rigid transform within ``atol``; else 1."""
    for v in q:
        if not np.isfinite(v):
            return 1
    for a in range(4):
        for b in range(4):
            if not np.isfinite(T[a, b]):
                return 1
    if (
        abs(T[3, 0]) > atol
        or abs(T[3, 1]) > atol
        or abs(T[3, 2]) > atol
        or abs(T[3, 3] - 1.0) > atol
    ):
        return 1
    for a in range(3):
        for b in range(3):
            d = T[0, a] * T[0, b] + T[1, a] * T[1, b] + T[2, a] * T[2, b]
            if a == b:
                d -= 1.0
            if abs(d) > atol:
                return 1
    det = (
        T[0, 0] * (T[1, 1] * T[2, 2] - T[1, 2] * T[2, 1])
        - T[0, 1] * (T[1, 0] * T[2, 2] - T[1, 2] * T[2, 0])
        + T[0, 2] * (T[1, 0] * T[2, 1] - T[1, 1] * T[2, 0])
    )
    if det < 0.0:
        return 1
    return 0


@njit(cache=True)
def quadrant_rows(q, rows, margin, dt, s, G, h):  # pragma: no cover - compiled
    """Linearized quadrant-polynomial rows ``G x <= h`` (internal units) at ``q`` [rad], written
    into the first rows of ``G`` and ``h``.

    ``rows`` is the workspace's ``QPRows`` record: joints ``(qi, qj)`` and
    ``qtab[k, i_nonneg, j_nonneg] = (a0, a1, a2, sense)``, the bound ``b(q_i)`` with
    ``q_j <= b`` (sense +1) or ``q_j >= b`` (sense -1).
    """
    ii, jj, table, row_scale = rows.qi, rows.qj, rows.qtab, rows.row_scale
    for k in range(ii.shape[0]):
        i = ii[k]
        j = jj[k]
        qi = q[i]
        qj = q[j]
        a0, a1, a2, sense = table[k, 1 if qi >= 0 else 0, 1 if qj >= 0 else 0]
        b = a0 * qi * qi + a1 * qi + a2
        slope = 2.0 * a0 * qi + a1
        for c in range(G.shape[1]):
            G[k, c] = 0.0
        if sense > 0:
            g = qj - b
            G[k, i] = -slope * row_scale[k] / s[i]
            G[k, j] = row_scale[k] / s[j]
        else:
            g = b - qj
            G[k, i] = slope * row_scale[k] / s[i]
            G[k, j] = -row_scale[k] / s[j]
        h[k] = row_scale[k] * (-margin - g) / dt


@njit(cache=True)
def quadrant_residual_max(q, rows):  # pragma: no cover - compiled
    """Largest residual ``g(q)`` [rad] of the quadrant-polynomial rows (``<= 0`` holds)."""
    ii, jj, table = rows.qi, rows.qj, rows.qtab
    worst = -np.inf
    for k in range(ii.shape[0]):
        qi = q[ii[k]]
        qj = q[jj[k]]
        a0, a1, a2, sense = table[k, 1 if qi >= 0 else 0, 1 if qj >= 0 else 0]
        b = a0 * qi * qi + a1 * qi + a2
        g = qj - b if sense > 0 else b - qj
        if g > worst:
            worst = g
    return worst
