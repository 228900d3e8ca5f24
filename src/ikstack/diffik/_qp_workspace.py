"""One flat workspace per velocity-QP solver, and the two fused compiled kernels of a step.

A compiled call costs a fraction of a microsecond per argument, so a step's work is done by two
kernels that take the whole solver state as two flat buffers (``fb`` float64, ``ib`` int64)
plus the step's inputs: :func:`pre_step` (input checks, cached or fresh flange kinematics, the
QP's cost, boxes and quadrant rows, and OSQP's data vectors in its fixed sparsity pattern) and
:func:`post_step` (clip, integrate, flange FK and Jacobian at the new configuration, which the
next step reuses, residual, limit and coupled-joint checks). The buffers' layout is
:data:`PACKING`'s (three records: the flange chain, the step's settings, its buffers); the
kernels unpack it into the records and Python keeps numpy views of the same fields
(:attr:`Workspace.v`), by name.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit
from numpy.typing import NDArray

from ikstack._records import F, I, Packing, Record
from ikstack.diffik._qp_kernels import (
    build_qp,
    euler_residual_deg,
    inputs_ok,
    quadrant_residual_max,
    quadrant_rows,
)
from ikstack.ik._data import CHAIN
from ikstack.kinematics import _kernels as KK

Array = NDArray[np.float64]

#: OSQP's infinity
INF = 1e30

#: a step's constant settings (written once by the solver)
SETTINGS = Record("QPSettings", __name__, [
    ("lin_scale", F, ()),  # task rows: internal length units per metre
    ("ang_scale", F, ()),  # internal angle units per radian
    ("w_pos", F, ()),
    ("w_rot", F, ()),
    ("lam", F, ()),  # velocity regularization
    ("mu", F, ()),  # joint-limit cost weight
    ("band", F, ()),  # joint-limit cost band
    ("cmargin", F, ()),  # coupled-joint buffer [rad]
    ("s", F, ("dof",)),  # internal units per joint unit
    ("lo_int", F, ("dof",)),  # raw limits in internal units (joint-limit cost)
    ("hi_int", F, ("dof",)),
    ("nsw", F, ("dof",)),  # joint-limit cost switches
    ("lo_box", F, ("dof",)),  # margin-adjusted limits [rad]
    ("hi_box", F, ("dof",)),
    ("vmax", F, ("dof",)),  # [rad/s]
    ("qi", I, ("nquad",)),  # quadrant-polynomial constraints: joints and tables
    ("qj", I, ("nquad",)),
    ("qtab", F, ("nquad", 2, 2, 4)),
    ("row_scale", F, ("nrow",)),  # per coupled-joint row
    ("pr", I, ("npat",)),  # (row, col) of P's stored entries (upper triangle, CSC order)
    ("pc", I, ("npat",)),
    ("ar", I, ("nact",)),  # row of G (-1: the identity) and column of A's stored entries
    ("ac", I, ("nact",)),
])
QPSettings = SETTINGS.type
#: a step's buffers (written by the kernels, read by Python)
BUFFERS = Record("QPBuffers", __name__, [
    ("T", F, (4, 4)),  # flange pose at q
    ("J", F, (6, "dof")),  # flange Jacobian at q
    ("P", F, ("dof", "dof")),  # the QP: cost, boxes, coupled rows G x <= h
    ("c", F, ("dof",)),
    ("lb", F, ("dof",)),
    ("ub", F, ("dof",)),
    ("G", F, ("nrow", "dof")),
    ("h", F, ("nrow",)),
    ("grad", F, ("dof",)),  # joint-limit cost gradient
    ("Px", F, ("npat",)),  # OSQP's data vectors
    ("Ax", F, ("nact",)),
    ("l", F, ("dof + nrow",)),
    ("u", F, ("dof + nrow",)),
    ("q_new", F, ("dof",)),  # the step's result
    ("qdot", F, ("dof",)),
    ("q_cache", F, ("dof",)),  # the configuration T_new and J_new belong to
    ("T_new", F, (4, 4)),
    ("J_new", F, (6, "dof")),
    ("out", F, (2,)),  # position residual [m], Euler residual [deg]
    ("cache", I, (1,)),  # 1: T_new, J_new hold q_cache's kinematics
])
QPBuffers = BUFFERS.type
#: the flange chain, the settings and the buffers of one solver, in ``(fb, ib)``
PACKING = Packing(CHAIN, SETTINGS, BUFFERS)
_unpack = PACKING.unpack


def upper_pattern(n: int) -> tuple[sp.csc_matrix, NDArray[np.int64], NDArray[np.int64]]:
    """CSC upper triangle of a dense (n, n) matrix, with the (row, col) of each stored entry."""
    rows, cols = [], []
    for j in range(n):
        for i in range(j + 1):
            rows.append(i)
            cols.append(j)
    indptr = np.concatenate([[0], np.cumsum(np.arange(1, n + 1))])
    M = sp.csc_matrix((np.ones(len(rows)), np.array(rows), indptr), shape=(n, n))
    return M, np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)


def constraint_pattern(n: int, row_cols: list[tuple[int, ...]]
                       ) -> tuple[sp.csc_matrix, NDArray[np.int64], NDArray[np.int64]]:
    """CSC of ``[I_n; G]`` where row ``r`` of ``G`` uses columns ``row_cols[r]``; per stored
    entry, the row of ``G`` it holds (-1 for the identity) and its column."""
    src_r, src_c, indices, indptr = [], [], [], [0]
    for j in range(n):
        indices.append(j)
        src_r.append(-1)
        src_c.append(j)
        for r, cols in enumerate(row_cols):
            if j in cols:
                indices.append(n + r)
                src_r.append(r)
                src_c.append(j)
        indptr.append(len(indices))
    M = sp.csc_matrix((np.ones(len(indices)), np.array(indices), np.array(indptr)),
                      shape=(n + len(row_cols), n))
    return M, np.array(src_r, dtype=np.int64), np.array(src_c, dtype=np.int64)


class Workspace:
    """The flat buffers of one solver (``fb``, ``ib``: :data:`PACKING`'s layout) and ``v``,
    numpy views of every field by name (a scalar setting as a 0-d view)."""

    def __init__(self, n: int, num_quads: int, num_rows: int, row_cols: list[tuple[int, ...]]):
        self.P_pattern, pr, pc = upper_pattern(n)
        self.A_pattern, ar, ac = constraint_pattern(n, row_cols)
        self.fb, self.ib = PACKING.zeros(dof=n, nquad=num_quads, nrow=num_rows, npat=len(pr),
                                         nact=len(ar))
        self.v: dict[str, NDArray] = {}
        for rec in PACKING.views(self.fb, self.ib):
            self.v.update(zip(rec._fields, rec, strict=True))
        self.v["pr"][:], self.v["pc"][:] = pr, pc
        self.v["ar"][:], self.v["ac"][:] = ar, ac
        self.v["l"][:] = -INF
        self.v["u"][:] = INF

    def invalidate(self) -> None:
        """Forget the cached kinematics."""
        self.v["cache"][0] = 0


@njit(cache=True)
def _fill_osqp(st, b):  # pragma: no cover - compiled
    n, R = b.lb.shape[0], b.h.shape[0]
    P, G, h, Px, Ax = b.P, b.G, b.h, b.Px, b.Ax
    pr, pc, ar, ac = st.pr, st.pc, st.ar, st.ac
    for e in range(pr.shape[0]):
        Px[e] = P[pr[e], pc[e]]
    for e in range(ar.shape[0]):
        Ax[e] = 1.0 if ar[e] < 0 else G[ar[e], ac[e]]
    lb, ub, l_, u = b.lb, b.ub, b.l, b.u
    for j in range(n):
        l_[j] = lb[j]
        u[j] = ub[j]
    for r in range(R):
        l_[n + r] = -INF
        u[n + r] = min(h[r], INF)


@njit(cache=True)
def fill_osqp(fb, ib):  # pragma: no cover - compiled
    """Write OSQP's ``Px, Ax, l, u`` from the dense ``P, G, h`` and the boxes."""
    _, st, b = _unpack(fb, ib)
    _fill_osqp(st, b)


@njit(cache=True)
def pre_step(q, Tt, dt, fb, ib, rigid_atol):  # pragma: no cover - compiled
    """Check inputs and build the step's QP; 0 ok, 1 bad inputs, 2 an empty velocity box."""
    if inputs_ok(q, Tt, rigid_atol):
        return 1
    ch, st, b = _unpack(fb, ib)
    n, k = st.s.shape[0], st.qi.shape[0]
    T, J, qc = b.T, b.J, b.q_cache
    hit = b.cache[0] == 1
    if hit:
        for j in range(n):
            if qc[j] != q[j]:
                hit = False
                break
    if hit:
        T[:, :] = b.T_new
        J[:, :] = b.J_new
    else:
        KK.jac_one(q, ch.Rs, ch.ps, ch.kinds, ch.R_end, ch.p_end, J, T)
    empty = build_qp(q, Tt, dt, st, b)
    if k > 0:
        quadrant_rows(q, st.qi, st.qj, st.qtab, st.cmargin, dt, st.row_scale, st.s, b.G[:k],
                      b.h[:k])
    _fill_osqp(st, b)
    return 2 if empty > 0 else 0


@njit(cache=True)
def post_step(q, x, dt, Tt, fb, ib, tol):  # pragma: no cover - compiled
    """Clip ``x``, integrate, evaluate the new flange pose.

    Returns 0 ok, 1 out of the margin-adjusted limits, 2 a coupled joint violated, 3 ``x`` is
    not finite.

    Writes ``q_new``, ``qdot``, the kinematics cache and ``out = (position residual [m], Euler
    residual [deg], nan near the gimbal lock)``.
    """
    ch, st, b = _unpack(fb, ib)
    n, k = st.s.shape[0], st.qi.shape[0]
    for j in range(n):
        if not np.isfinite(x[j]):
            return 3
    s, lb, ub, qn, qd = st.s, b.lb, b.ub, b.q_new, b.qdot
    for j in range(n):
        xj = min(max(x[j], lb[j]), ub[j])
        qd[j] = xj / s[j]
        qn[j] = q[j] + qd[j] * dt
    Tn = b.T_new
    KK.jac_one(qn, ch.Rs, ch.ps, ch.kinds, ch.R_end, ch.p_end, b.J_new, Tn)
    qc = b.q_cache
    for j in range(n):
        qc[j] = qn[j]
    b.cache[0] = 1
    out = b.out
    d0 = Tt[0, 3] - Tn[0, 3]
    d1 = Tt[1, 3] - Tn[1, 3]
    d2 = Tt[2, 3] - Tn[2, 3]
    out[0] = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    out[1] = euler_residual_deg(Tt, Tn)
    lo, hi = st.lo_box, st.hi_box
    for j in range(n):
        if qn[j] < lo[j] - tol or qn[j] > hi[j] + tol:
            return 1
    if k > 0:
        worst = quadrant_residual_max(qn, st.qi, st.qj, st.qtab)
        if worst > tol:
            return 2
    return 0
