# mypy: ignore-errors
"""Warp float64 port of the analytic path's bounded polish (:func:`ikstack.ik.analytic._select.
polish_one`): a chain within the alignment tolerance of its family is solved on the exact
surrogate, and each candidate the gate looks at is first moved onto the true chain by at most
``iters`` monotone Gauss-Newton corrections (damped normal equations, every joint's move capped
at ``max_dq``, a step kept only if it lowers ``|e_p| + |e_r|``, halving up to four times).

:class:`Polish` carries the options, the per-slot polished flags (no slot is polished twice
however many gate passes see it, as on the CPU path) and one row of scratch per thread. With
``iters = 0`` nothing is polished and its arrays are never touched (placeholders suffice).
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._gen_dense import cholesky_inplace, cholesky_solve_inplace
from ikstack.backends.warp._gen_kinematics import tool_pose
from ikstack.backends.warp._kernels import kinematics_kernels
from ikstack.backends.warp._prims import F
from ikstack.backends.warp._structs import CHAIN_T

Chain = CHAIN_T.type

_pose = kinematics_kernels()["pose"]
_jcols = kinematics_kernels()["jacobian_columns"]

vec6d = wp.types.vector(length=6, dtype=wp.float64)


@wp.struct
class Polish:
    #: corrections per candidate (0: no polish)
    iters: int
    #: largest move of any joint per correction [rad]
    max_dq: wp.float64
    #: (rows, K) slots polished so far
    PL: wp.array2d(dtype=wp.int32)
    #: per-thread scratch: trial configuration (rows, dof), recorded joint axes and origins
    #: (rows, dof), Jacobian (rows, 6, dof), normal matrix (rows, dof, dof), right side (rows, dof)
    Qp: wp.array2d(dtype=wp.float64)
    zs: wp.array2d(dtype=wp.vec3d)
    os: wp.array2d(dtype=wp.vec3d)
    J: wp.array3d(dtype=wp.float64)
    L: wp.array3d(dtype=wp.float64)
    b: wp.array2d(dtype=wp.float64)


@wp.func
def _err6(R: wp.mat33d, p: wp.vec3d, Tt: wp.mat44d):
    """``(|e_p| + |e_r|, e)`` with ``e = [p_t - p, rotation vector of R_t R^T]`` (the CPU
    ``_err6`` through ``pose_err``)."""
    dp0 = Tt[0, 3] - p[0]
    dp1 = Tt[1, 3] - p[1]
    dp2 = Tt[2, 3] - p[2]
    pe = wp.sqrt(dp0 * dp0 + dp1 * dp1 + dp2 * dp2)
    m00 = Tt[0, 0] * R[0, 0] + Tt[0, 1] * R[0, 1] + Tt[0, 2] * R[0, 2]
    m11 = Tt[1, 0] * R[1, 0] + Tt[1, 1] * R[1, 1] + Tt[1, 2] * R[1, 2]
    m22 = Tt[2, 0] * R[2, 0] + Tt[2, 1] * R[2, 1] + Tt[2, 2] * R[2, 2]
    m21 = Tt[2, 0] * R[1, 0] + Tt[2, 1] * R[1, 1] + Tt[2, 2] * R[1, 2]
    m12 = Tt[1, 0] * R[2, 0] + Tt[1, 1] * R[2, 1] + Tt[1, 2] * R[2, 2]
    m02 = Tt[0, 0] * R[2, 0] + Tt[0, 1] * R[2, 1] + Tt[0, 2] * R[2, 2]
    m20 = Tt[2, 0] * R[0, 0] + Tt[2, 1] * R[0, 1] + Tt[2, 2] * R[0, 2]
    m10 = Tt[1, 0] * R[0, 0] + Tt[1, 1] * R[0, 1] + Tt[1, 2] * R[0, 2]
    m01 = Tt[0, 0] * R[1, 0] + Tt[0, 1] * R[1, 1] + Tt[0, 2] * R[1, 2]
    c = F(0.5) * (m00 + m11 + m22 - F(1.0))
    v0 = F(0.5) * (m21 - m12)
    v1 = F(0.5) * (m02 - m20)
    v2 = F(0.5) * (m10 - m01)
    s = wp.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
    re = wp.atan2(s, c)
    f = F(1.0)
    if s > F(1e-12):
        f = re / s
    return pe + re, vec6d(dp0, dp1, dp2, v0 * f, v1 * f, v2 * f)


@wp.func
def _tcp(q: wp.array2d(dtype=wp.float64), i: int, ch: Chain, pol: Polish, jac: int):
    """FK of ``q[i]`` (and its Jacobian into ``pol.J[i]`` when ``jac``): ``(R, p)``."""
    R0, p0 = _pose(q, i, ch.Rs, ch.ps, ch.kinds, pol.zs, pol.os, jac)
    R, p = tool_pose(R0, p0, ch.R_end, ch.p_end)
    if jac != 0:
        _jcols(i, q.shape[1], ch.kinds, pol.zs, pol.os, p, pol.J)
    return R, p


@wp.func
def polish_one(
    Qf: wp.array2d(dtype=wp.float64),
    row: int,
    i: int,
    Tt: wp.mat44d,
    ch: Chain,
    ptol: wp.float64,
    rtol: wp.float64,
    pol: Polish,
):
    """At most ``pol.iters`` monotone corrections of ``Qf[row]`` in place (thread ``i``'s
    scratch); returns the count."""
    dof = Qf.shape[1]
    for j in range(dof):
        pol.Qp[i, j] = Qf[row, j]
    R, p = _tcp(pol.Qp, i, ch, pol, 1)
    cost, e = _err6(R, p, Tt)
    used = int(0)  # noqa: UP018 (a mutable Warp variable)
    go = int(1)  # noqa: UP018 (a mutable Warp variable)
    for _it in range(pol.iters):
        if go != 0:
            pe = wp.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
            re = wp.sqrt(e[3] * e[3] + e[4] * e[4] + e[5] * e[5])
            if pe <= F(0.01) * ptol and re <= F(0.01) * rtol:
                go = 0
        if go != 0:
            # damped normal equations J^T J dq = J^T e
            tr = F(0.0)
            for a in range(dof):
                for c in range(dof):
                    s = F(0.0)
                    for r in range(6):
                        s += pol.J[i, r, a] * pol.J[i, r, c]
                    pol.L[i, a, c] = s
                tr += pol.L[i, a, a]
                s2 = F(0.0)
                for r in range(6):
                    s2 += pol.J[i, r, a] * e[r]
                pol.b[i, a] = s2
            lam = F(1e-12) * (tr + F(1e-300))
            for a in range(dof):
                pol.L[i, a, a] = pol.L[i, a, a] + lam
            if not cholesky_inplace(pol.L[i], dof):
                go = 0
        if go != 0:
            cholesky_solve_inplace(pol.L[i], dof, pol.b[i])
            big = F(0.0)
            for a in range(dof):
                big = wp.max(big, wp.abs(pol.b[i, a]))
            if big > pol.max_dq:
                for a in range(dof):
                    pol.b[i, a] = pol.b[i, a] * (pol.max_dq / big)
            alpha = F(1.0)
            accepted = int(0)  # noqa: UP018 (a mutable Warp variable)
            c2 = F(0.0)
            for _h in range(5):
                if accepted == 0:
                    for a in range(dof):
                        pol.Qp[i, a] = Qf[row, a] + alpha * pol.b[i, a]
                    Rq, pq = _tcp(pol.Qp, i, ch, pol, 0)
                    ct, _e2 = _err6(Rq, pq, Tt)
                    if ct < cost:
                        accepted = 1
                        c2 = ct
                    else:
                        alpha = alpha * F(0.5)
            if accepted == 0:
                go = 0
            else:
                for a in range(dof):
                    Qf[row, a] = pol.Qp[i, a]
                cost = c2
                used += 1
                R, p = _tcp(pol.Qp, i, ch, pol, 1)
                _c, e = _err6(R, p, Tt)
    return used
