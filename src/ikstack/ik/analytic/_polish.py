"""The bounded Newton polish of near mode (compiled): a chain within the alignment tolerance
of its family is solved on the exact surrogate, and each candidate the gate looks at is first
moved onto the true chain by at most ``iters`` monotone Gauss-Newton corrections.

Each correction solves the damped normal equations ``(J^T J + lam I) dq = J^T e`` by the
written-out Cholesky factorisation of :mod:`ikstack.spatial._dense` (the numerical search's
and the Warp backend's), so the arithmetic is the same on every device. The loop
(:func:`polish_into`, its scratch a :data:`POLISH_WORK` record) and its pieces are in the
portable subset of the kernels: the Warp backend's are generated from them
(``backends/warp/_gen_polish.py``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ikstack._records import F, Record
from ikstack.ik._data import CHAIN  # noqa: F401 (polish_into's chain, read by the translator)
from ikstack.kinematics._kernels import fk_one, jac_one
from ikstack.spatial._dense import cap_step_inplace, cholesky_inplace, cholesky_solve_inplace
from ikstack.spatial._tuple_math import rel_rotation, rotation_vector


@njit(cache=True)
def _err6(Tq, Tt, e):  # pragma: no cover - compiled
    """``|e_p| + |e_r|`` of ``Tq`` against ``Tt``, and ``e = [e_p, e_r]`` into ``e``: the
    position error ``p_t - p`` and the rotation vector of ``R_t R^T`` (base frame;
    :func:`~ikstack.spatial._tuple_math.rel_rotation`, then
    :func:`~ikstack.spatial._tuple_math.rotation_vector`: accurate up to and at pi), the
    numerical search's pose error."""
    e[0] = Tt[0, 3] - Tq[0, 3]
    e[1] = Tt[1, 3] - Tq[1, 3]
    e[2] = Tt[2, 3] - Tq[2, 3]
    rx, ry, rz = rotation_vector(rel_rotation(Tt, Tq))
    e[3] = rx
    e[4] = ry
    e[5] = rz
    pe = math.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
    return pe + math.sqrt(rx * rx + ry * ry + rz * rz)


@njit(cache=True, inline="always")
def _converged(e, ptol, rtol):  # pragma: no cover - compiled
    """Whether the pose error ``e`` is within a hundredth of both tolerances (the polish
    stops)."""
    pe = math.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
    re = math.sqrt(e[3] * e[3] + e[4] * e[4] + e[5] * e[5])
    return pe <= 0.01 * ptol and re <= 0.01 * rtol


@njit(cache=True, inline="always")
def _gn_step(J, e, A, dq, max_dq):  # pragma: no cover - compiled
    """The damped Gauss-Newton step of ``J dq = e`` into ``dq`` (its length the joint count),
    every joint's move capped at ``max_dq``: ``(J^T J + lam I) dq = J^T e`` with
    ``lam = 1e-12 trace(J^T J)``, factored in ``A`` (dof, dof). False when the normal matrix
    is not positive definite."""
    dof = dq.shape[0]
    # the lower triangle of J^T J (all the factorisation reads), its trace, and J^T e
    tr = 0.0
    for a in range(dof):
        for c in range(a + 1):
            s = 0.0
            for r in range(6):
                s += J[r, a] * J[r, c]
            A[a, c] = s
        tr += A[a, a]
        s = 0.0
        for r in range(6):
            s += J[r, a] * e[r]
        dq[a] = s
    lam = 1e-12 * (tr + 1e-300)
    for a in range(dof):
        A[a, a] += lam
    if not cholesky_inplace(A, dof):
        return False
    cholesky_solve_inplace(A, dof, dq)
    cap_step_inplace(dq, dof, max_dq)
    return True


#: :func:`polish_into`'s scratch: the Jacobian and pose of the current configuration, the
#: pose errors of the current and a trial configuration, the trial configuration, the normal
#: matrix and the step
POLISH_WORK = Record(
    "PolishWork",
    __name__,
    [
        ("J", F, (6, "dof")),
        ("T", F, (4, 4)),
        ("e", F, (6,)),
        ("e2", F, (6,)),
        ("trial", F, ("dof",)),
        ("A", F, ("dof", "dof")),
        ("dq", F, ("dof",)),
    ],
)
PolishWork = POLISH_WORK.type


@njit(cache=True)
def polish_one(q, Tt, chain, iters, max_dq, ptol, rtol):  # pragma: no cover - compiled
    """At most ``iters`` monotone Gauss-Newton corrections of ``q`` in place (``chain`` a
    :data:`ikstack.ik._data.CHAIN` record); returns the count (:func:`polish_into` with
    scratch of its own)."""
    dof = q.shape[0]
    ws = PolishWork(
        np.empty((6, dof)),
        np.empty((4, 4)),
        np.empty(6),
        np.empty(6),
        np.empty(dof),
        np.empty((dof, dof)),
        np.empty(dof),
    )
    return polish_into(q, Tt, chain, iters, max_dq, ptol, rtol, ws)


@njit(cache=True, inline="always")
def polish_into(q, Tt, chain, iters, max_dq, ptol, rtol, ws):  # pragma: no cover - compiled
    """At most ``iters`` monotone Gauss-Newton corrections of ``q`` in place, in the scratch
    ``ws`` (a :data:`POLISH_WORK` record); returns the count.

    Each step (:func:`_gn_step`) solves ``J dq = e`` by damped least squares, scales ``dq`` so
    no joint moves more than ``max_dq`` [rad], and is accepted only if it lowers
    ``|e_p| + |e_r|`` (halving up to four times); otherwise the polish stops.
    """
    Rs, ps, kinds, R_end, p_end = chain.Rs, chain.ps, chain.kinds, chain.R_end, chain.p_end
    J, Tq, e, e2, trial, A, dq = ws.J, ws.T, ws.e, ws.e2, ws.trial, ws.A, ws.dq
    dof = q.shape[0]
    jac_one(q, Rs, ps, kinds, R_end, p_end, J, Tq)
    cost = _err6(Tq, Tt, e)
    used = 0
    for _it in range(iters):
        if _converged(e, ptol, rtol):
            break
        if not _gn_step(J, e, A, dq, max_dq):
            break
        alpha = 1.0
        accepted = False
        c2 = 0.0
        for _h in range(5):
            for j in range(dof):
                trial[j] = q[j] + alpha * dq[j]
            fk_one(trial, Rs, ps, kinds, R_end, p_end, Tq)
            c2 = _err6(Tq, Tt, e2)
            if c2 < cost:
                accepted = True
                break
            alpha *= 0.5
        if not accepted:
            break
        for j in range(dof):
            q[j] = trial[j]
        # the accepted trial's error is the error at q (jac_one's FK below is fk_one's, the
        # same operations, bit for bit): a copy, not _err6 again. One call site fewer also
        # changes what the device's compiler makes of the loop (Warp's CPU device, Marvin
        # best: 578 -> 725 targets/s)
        for a in range(6):
            e[a] = e2[a]
        cost = c2
        used += 1
        jac_one(q, Rs, ps, kinds, R_end, p_end, J, Tq)
    return used
