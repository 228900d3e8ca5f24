# mypy: ignore-errors
# ruff: noqa
"""GENERATED from ``src/ikstack/ik/analytic/_polish.py`` by :mod:`ikstack.backends.warp._translate`:
do not edit; edit the CPU source and run ``python -m ikstack.backends.warp._translate``
(a test fails when this file and its source disagree)."""

import warp as wp

from ikstack.backends.warp._prims import *  # noqa: F403
from ikstack.backends.warp._gen_dense import cap_step_inplace, cholesky_inplace, cholesky_solve_inplace
from ikstack.backends.warp._gen_kinematics import fk_one, jac_one
from ikstack.backends.warp._gen_tuple_math import rel_rotation, rotation_vector
from ikstack.backends.warp._structs import CHAIN_T, POLISH_WORK_ROWS_T



@wp.func
def _err6(Tq: wp.mat44d, Tt: wp.mat44d, e: wp.array(dtype=wp.float64)):
    """``|e_p| + |e_r|`` of ``Tq`` against ``Tt``, and ``e = [e_p, e_r]`` into ``e``: the
    position error ``p_t - p`` and the rotation vector of ``R_t R^T`` (base frame;
    :func:`~ikstack.spatial._tuple_math.rel_rotation`, then
    :func:`~ikstack.spatial._tuple_math.rotation_vector`: accurate up to and at pi), the
    numerical search's pose error."""
    e[0] = Tt[0, 3] - Tq[0, 3]
    e[1] = Tt[1, 3] - Tq[1, 3]
    e[2] = Tt[2, 3] - Tq[2, 3]
    rx_ry_rz = rotation_vector(rel_rotation(Tt, Tq))
    rx = rx_ry_rz[0]
    ry = rx_ry_rz[1]
    rz = rx_ry_rz[2]
    e[3] = rx
    e[4] = ry
    e[5] = rz
    pe = wp.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
    return pe + wp.sqrt(rx * rx + ry * ry + rz * rz)


@wp.func
def _converged(e: wp.array(dtype=wp.float64), ptol: wp.float64, rtol: wp.float64):
    """Whether the pose error ``e`` is within a hundredth of both tolerances (the polish
    stops)."""
    pe = wp.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
    re = wp.sqrt(e[3] * e[3] + e[4] * e[4] + e[5] * e[5])
    return pe <= F(0.01) * ptol and re <= F(0.01) * rtol


@wp.func
def _gn_step(J: wp.array2d(dtype=wp.float64), e: wp.array(dtype=wp.float64), A: wp.array2d(dtype=wp.float64), dq: wp.array(dtype=wp.float64), max_dq: wp.float64):
    """The damped Gauss-Newton step of ``J dq = e`` into ``dq`` (its length the joint count),
    every joint's move capped at ``max_dq``: ``(J^T J + lam I) dq = J^T e`` with
    ``lam = 1e-12 trace(J^T J)``, factored in ``A`` (dof, dof). False when the normal matrix
    is not positive definite."""
    dof = dq.shape[0]
    tr = F(0.0)
    for a in range(dof):
        for c in range(a + 1):
            s = F(0.0)
            for r in range(6):
                s = s + J[r, a] * J[r, c]
            A[a, c] = s
        tr = tr + A[a, a]
        s = F(0.0)
        for r in range(6):
            s = s + J[r, a] * e[r]
        dq[a] = s
    lam = F(1e-12) * (tr + F(1e-300))
    for a in range(dof):
        A[a, a] = A[a, a] + lam
    if not cholesky_inplace(A, dof):
        return False
    cholesky_solve_inplace(A, dof, dq)
    cap_step_inplace(dq, dof, max_dq)
    return True


@wp.func
def polish_into(q: wp.array(dtype=wp.float64), Tt: wp.mat44d, chain: CHAIN_T.type, iters: int, max_dq: wp.float64, ptol: wp.float64, rtol: wp.float64, ws: POLISH_WORK_ROWS_T.type, ws_row: int):
    """At most ``iters`` monotone Gauss-Newton corrections of ``q`` in place, in the scratch
    ``ws`` (a :data:`POLISH_WORK` record); returns the count.

    Each step (:func:`_gn_step`) solves ``J dq = e`` by damped least squares, scales ``dq`` so
    no joint moves more than ``max_dq`` [rad], and is accepted only if it lowers
    ``|e_p| + |e_r|`` (halving up to four times); otherwise the polish stops.

    On the device (generated from ``ikstack.ik.analytic._polish.polish_into``): ``ws`` is
    followed by the thread's row ``ws_row``.
    """
    Rs = chain.Rs
    ps = chain.ps
    kinds = chain.kinds
    R_end = chain.R_end
    p_end = chain.p_end
    J = ws.J[ws_row]
    Tq = ws.T[ws_row]
    e = ws.e[ws_row]
    e2 = ws.e2[ws_row]
    trial = ws.trial[ws_row]
    A = ws.A[ws_row]
    dq = ws.dq[ws_row]
    dof = q.shape[0]
    jac_one(q, Rs, ps, kinds, R_end, p_end, J, Tq)
    cost = _err6(mat44_of(Tq), Tt, e)
    used = int(0)
    for _it in range(iters):
        if _converged(e, ptol, rtol):
            break
        if not _gn_step(J, e, A, dq, max_dq):
            break
        alpha = F(1.0)
        accepted = bool(False)
        c2 = F(0.0)
        for _h in range(5):
            for j in range(dof):
                trial[j] = q[j] + alpha * dq[j]
            fk_one(trial, Rs, ps, kinds, R_end, p_end, Tq)
            c2 = _err6(mat44_of(Tq), Tt, e2)
            if c2 < cost:
                accepted = bool(True)
                break
            alpha = alpha * F(0.5)
        if not accepted:
            break
        for j in range(dof):
            q[j] = trial[j]
        for a in range(6):
            e[a] = e2[a]
        cost = c2
        used = used + 1
        jac_one(q, Rs, ps, kinds, R_end, p_end, J, Tq)
    return used
