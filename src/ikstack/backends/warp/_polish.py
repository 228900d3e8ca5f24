# mypy: ignore-errors
"""Warp float64 port of the analytic path's bounded polish (:func:`ikstack.ik.analytic._polish.
polish_one`): a chain within the alignment tolerance of its family is solved on the exact
surrogate, and each candidate the gate looks at is first moved onto the true chain by at most
``iters`` monotone Gauss-Newton corrections (damped normal equations, every joint's move capped
at ``max_dq``, a step kept only if it lowers ``|e_p| + |e_r|``, halving up to four times).

:class:`Polish` carries the options, the per-slot polished flags (no slot is polished twice
however many gate passes see it, as on the CPU path) and one row of scratch per thread. With
``iters = 0`` nothing is polished and its arrays are never touched (placeholders suffice).
The pose error, the stop test and the damped step (``_err6``, ``_converged``, ``_gn_step``)
are generated from the CPU source (``_gen_polish.py``); this file holds the loop around them.
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._gen_kinematics import tool_pose
from ikstack.backends.warp._gen_polish import _converged, _err6, _gn_step
from ikstack.backends.warp._kernels import kinematics_kernels
from ikstack.backends.warp._prims import F
from ikstack.backends.warp._structs import CHAIN_T

Chain = CHAIN_T.type

_pose = kinematics_kernels()["pose"]
_jcols = kinematics_kernels()["jacobian_columns"]


@wp.struct
class Polish:
    #: corrections per candidate (0: no polish)
    iters: int
    #: largest move of any joint per correction [rad]
    max_dq: wp.float64
    #: (rows, K) slots polished so far
    PL: wp.array2d(dtype=wp.int32)
    #: per-thread scratch: trial configuration (rows, dof), recorded joint axes and origins
    #: (rows, dof), Jacobian (rows, 6, dof), normal matrix (rows, dof, dof), right side (rows, dof),
    #: the current and a trial configuration's pose errors (rows, 6)
    Qp: wp.array2d(dtype=wp.float64)
    zs: wp.array2d(dtype=wp.vec3d)
    os: wp.array2d(dtype=wp.vec3d)
    J: wp.array3d(dtype=wp.float64)
    L: wp.array3d(dtype=wp.float64)
    b: wp.array2d(dtype=wp.float64)
    e: wp.array2d(dtype=wp.float64)
    e2: wp.array2d(dtype=wp.float64)


@wp.func
def _tcp(q: wp.array2d(dtype=wp.float64), i: int, ch: Chain, pol: Polish, jac: int):
    """FK of ``q[i]`` as a pose (and its Jacobian into ``pol.J[i]`` when ``jac``)."""
    R0, p0 = _pose(q, i, ch.Rs, ch.ps, ch.kinds, pol.zs, pol.os, jac)
    R, p = tool_pose(R0, p0, ch.R_end, ch.p_end)
    if jac != 0:
        _jcols(i, q.shape[1], ch.kinds, pol.zs, pol.os, p, pol.J)
    # fmt: off
    return wp.mat44d(
        R[0, 0], R[0, 1], R[0, 2], p[0],
        R[1, 0], R[1, 1], R[1, 2], p[1],
        R[2, 0], R[2, 1], R[2, 2], p[2],
        F(0.0), F(0.0), F(0.0), F(1.0),
    )
    # fmt: on


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
    e = pol.e[i]
    cost = _err6(_tcp(pol.Qp, i, ch, pol, 1), Tt, e)
    used = int(0)  # noqa: UP018 (a mutable Warp variable)
    go = int(1)  # noqa: UP018 (a mutable Warp variable)
    for _it in range(pol.iters):
        if go != 0:
            if _converged(e, ptol, rtol):
                go = 0
        if go != 0:
            if not _gn_step(pol.J[i], e, pol.L[i], pol.b[i], pol.max_dq):
                go = 0
        if go != 0:
            alpha = F(1.0)
            accepted = int(0)  # noqa: UP018 (a mutable Warp variable)
            c2 = F(0.0)
            for _h in range(5):
                if accepted == 0:
                    for a in range(dof):
                        pol.Qp[i, a] = Qf[row, a] + alpha * pol.b[i, a]
                    ct = _err6(_tcp(pol.Qp, i, ch, pol, 0), Tt, pol.e2[i])
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
                _err6(_tcp(pol.Qp, i, ch, pol, 1), Tt, e)
    return used
