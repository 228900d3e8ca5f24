"""One packed workspace per velocity-QP solver, and the two fused compiled kernels of a step.

A compiled call costs a fraction of a microsecond per argument, and more for a named tuple, so a
step's work is done by two kernels that take the whole solver state as the two arrays of
:data:`WORKSPACE` (``fb`` float64, ``ib`` int64) plus the step's inputs: :func:`pre_step` (input
checks, cached or fresh flange kinematics, the QP's cost, boxes and quadrant rows, and OSQP's data
vectors in its fixed sparsity pattern) and :func:`post_step` (clip, integrate, flange FK and
Jacobian at the new configuration, which the next step reuses, residual, limit and coupled-joint
checks). Both unpack the arrays into the records below (:class:`ikstack._records.Packing`,
generated from the records' definitions) and work on named fields; Python holds the same fields
as numpy views (:attr:`Workspace.params`, :attr:`Workspace.work`, ...). No offset is written by
hand: a field is added by adding it to its record.

The unpacked arrays are strided views (numba layout "A"), so the step kernels inline the FK and
Jacobian (``kinematics._kernels._jac_into``) rather than call the shared ``jac_one``, which every
other caller compiles for C-contiguous arrays: a second specialization would cost a first run
about a second of compiling (a test holds the FK kernels to one layout).
"""

from __future__ import annotations

from typing import Any

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

# dimensions: dof joints, nq quadrant-polynomial constraints, nr coupled-joint rows (the quadrant
# rows first), npx and nax stored entries of OSQP's P (upper triangle) and A

#: the QP's settings and per-joint data (internal units unless marked), as :func:`build_qp` takes
#: them
QP_PARAMS = Record(
    "QPParams",
    __name__,
    [
        ("lin_scale", F, ()),  # internal units per m (1000 for mm) and per rad (deg: 180/pi)
        ("ang_scale", F, ()),
        ("w_pos", F, ()),  # task weights
        ("w_rot", F, ()),
        ("lam", F, ()),  # velocity damping
        ("mu", F, ()),  # joint-limit cost weight
        ("band", F, ()),  # the cost's activation band, -1 for the whole range
        ("coupled_margin", F, ()),  # the coupled rows' buffer [rad]
        ("s", F, ("dof",)),  # internal units per SI unit, per joint
        ("lo_int", F, ("dof",)),  # the raw limits (joint-limit cost)
        ("hi_int", F, ("dof",)),
        ("nsw", F, ("dof",)),  # the cost's per-joint weights
        ("lo_box", F, ("dof",)),  # the margin-adjusted limits [rad]
        ("hi_box", F, ("dof",)),
        ("vmax", F, ("dof",)),  # [rad/s]
    ],
)
QPParams = QP_PARAMS.type

#: the coupled-joint rows: quadrant polynomials on joints ``(qi, qj)`` with their table
#: ``qtab[k, i_nonneg, j_nonneg] = (a0, a1, a2, sense)``, and every row's scale to internal units
QP_ROWS = Record(
    "QPRows",
    __name__,
    [
        ("qi", I, ("nq",)),
        ("qj", I, ("nq",)),
        ("qtab", F, ("nq", 2, 2, 4)),
        ("row_scale", F, ("nr",)),
    ],
)
QPRows = QP_ROWS.type

#: OSQP's fixed sparsity pattern: per stored entry of ``P``, its (row, col); of ``A``, the row of
#: ``G`` it holds (-1 for the identity) and its column
QP_PATTERN = Record(
    "QPPattern",
    __name__,
    [("pr", I, ("npx",)), ("pc", I, ("npx",)), ("ar", I, ("nax",)), ("ac", I, ("nax",))],
)
QPPattern = QP_PATTERN.type

#: what the kernels write each step
QP_WORK = Record(
    "QPWork",
    __name__,
    [
        ("T", F, (4, 4)),  # flange pose and Jacobian at the step's q
        ("J", F, (6, "dof")),
        ("P", F, ("dof", "dof")),  # the QP: cost, boxes, coupled rows G x <= h
        ("c", F, ("dof",)),
        ("lb", F, ("dof",)),
        ("ub", F, ("dof",)),
        ("G", F, ("nr", "dof")),
        ("h", F, ("nr",)),
        ("grad", F, ("dof",)),  # the joint-limit cost's gradient
        ("Px", F, ("npx",)),  # OSQP's data in its pattern
        ("Ax", F, ("nax",)),
        ("l", F, ("dof + nr",)),
        ("u", F, ("dof + nr",)),
        ("q_new", F, ("dof",)),  # the step's result
        ("qdot", F, ("dof",)),
        ("q_cache", F, ("dof",)),  # the kinematics cache: q_new, its pose and Jacobian
        ("T_new", F, (4, 4)),
        ("J_new", F, (6, "dof")),
        ("out", F, (2,)),  # position residual [m], Euler residual [deg] (nan near the lock)
        ("cached", I, (1,)),  # 1 when the cache holds the last step's kinematics
    ],
)
QPWork = QP_WORK.type

#: a solver's records, packed for the step kernels (strided: both kernels unpack every field on
#: every step, which costs next to nothing this way)
WORKSPACE = Packing(QP_PARAMS, CHAIN, QP_ROWS, QP_PATTERN, QP_WORK, strided=True)
_unpack = WORKSPACE.unpack


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


def constraint_pattern(
    n: int, row_cols: list[tuple[int, ...]]
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
    M = sp.csc_matrix(
        (np.ones(len(indices)), np.array(indices), np.array(indptr)), shape=(n + len(row_cols), n)
    )
    return M, np.array(src_r, dtype=np.int64), np.array(src_c, dtype=np.int64)


class Workspace:
    """The packed arrays ``fb, ib`` of one solver (:data:`WORKSPACE`) and named numpy views of
    its records: :attr:`params`, :attr:`chain`, :attr:`rows`, :attr:`pattern`, :attr:`work`
    (array fields are views: writing one writes ``fb``/``ib``; scalar fields are values).

    Args:
        params: the solver's :data:`QP_PARAMS`.
        chain: the flange chain's :data:`ikstack.ik._data.CHAIN`.
        rows: its :data:`QP_ROWS`.
        row_cols: per coupled row, the joints it uses (OSQP's pattern of ``A``).
    """

    def __init__(self, params: Any, chain: Any, rows: Any, row_cols: list[tuple[int, ...]]):
        n = len(params.s)
        self.P_pattern, pr, pc = upper_pattern(n)
        self.A_pattern, ar, ac = constraint_pattern(n, row_cols)
        pattern = QP_PATTERN.make(pr=pr, pc=pc, ar=ar, ac=ac)
        work = QP_WORK.zeros(dof=n, nr=len(row_cols), npx=len(pr), nax=len(ar))
        self.fb, self.ib = WORKSPACE.pack(params, chain, rows, pattern, work)
        self.params, self.chain, self.rows, self.pattern, self.work = WORKSPACE.views(
            self.fb, self.ib
        )
        self.work.l[:] = -INF
        self.work.u[:] = INF

    def invalidate(self) -> None:
        """Forget the cached kinematics."""
        self.work.cached[0] = 0


@njit(cache=True, inline="always")
def _copy_into(src, dst):  # pragma: no cover - compiled
    """``dst[:, :] = src`` for two 2-D arrays of one shape, as a loop: numba's slice assignment
    compiles a formatted shape-mismatch error (about 2.5 s of string code on a first run)."""
    for a in range(dst.shape[0]):
        for b in range(dst.shape[1]):
            dst[a, b] = src[a, b]


@njit(cache=True)
def _fill_osqp(pat, w):  # pragma: no cover - compiled
    P, G, h = w.P, w.G, w.h
    pr, pc, Px = pat.pr, pat.pc, w.Px
    for e in range(pr.shape[0]):
        Px[e] = P[pr[e], pc[e]]
    ar, ac, Ax = pat.ar, pat.ac, w.Ax
    for e in range(ar.shape[0]):
        Ax[e] = 1.0 if ar[e] < 0 else G[ar[e], ac[e]]
    n, R = w.lb.shape[0], h.shape[0]
    lb, ub, l_, u = w.lb, w.ub, w.l, w.u
    for j in range(n):
        l_[j] = lb[j]
        u[j] = ub[j]
    for r in range(R):
        l_[n + r] = -INF
        u[n + r] = min(h[r], INF)


@njit(cache=True)
def fill_osqp(fb, ib):  # pragma: no cover - compiled
    """Write OSQP's ``Px, Ax, l, u`` from the dense ``P, G, h`` and the boxes."""
    _, _, _, pat, w = _unpack(fb, ib)
    _fill_osqp(pat, w)


@njit(cache=True)
def pre_step(q, Tt, dt, fb, ib, rigid_atol):  # pragma: no cover - compiled
    """Check inputs and build the step's QP; 0 ok, 1 bad inputs, 2 an empty velocity box."""
    if inputs_ok(q, Tt, rigid_atol):
        return 1
    par, ch, rows, pat, w = _unpack(fb, ib)
    n = w.q_cache.shape[0]
    hit = w.cached[0] == 1
    if hit:
        for j in range(n):
            if w.q_cache[j] != q[j]:
                hit = False
                break
    if hit:
        _copy_into(w.T_new, w.T)
        _copy_into(w.J_new, w.J)
    else:  # q is finite (inputs_ok)
        KK._jac_into(q, ch.Rs, ch.ps, ch.kinds, ch.R_end, ch.p_end, w.J, w.T)
    empty = build_qp(par, w, q, Tt, dt)
    if rows.qi.shape[0] > 0:
        quadrant_rows(q, rows, par.coupled_margin, dt, par.s, w.G, w.h)
    _fill_osqp(pat, w)
    return 2 if empty > 0 else 0


@njit(cache=True)
def post_step(q, x, dt, Tt, fb, ib, tol):  # pragma: no cover - compiled
    """Clip ``x``, integrate, evaluate the new flange pose.

    Returns 0 ok, 1 out of the margin-adjusted limits, 2 a coupled joint violated, 3 ``x`` is
    not finite.

    Writes ``q_new``, ``qdot``, the kinematics cache and ``out = (position residual [m], Euler
    residual [deg], nan near the gimbal lock)``.
    """
    par, ch, rows, _, w = _unpack(fb, ib)
    n = w.q_cache.shape[0]
    for j in range(n):
        if not np.isfinite(x[j]):
            return 3
    s, lb, ub, qn, qd = par.s, w.lb, w.ub, w.q_new, w.qdot
    for j in range(n):
        xj = min(max(x[j], lb[j]), ub[j])
        qd[j] = xj / s[j]
        qn[j] = q[j] + qd[j] * dt
    Tn = w.T_new
    # qn is finite: q passed pre_step's check, x is finite, the boxes are
    KK._jac_into(qn, ch.Rs, ch.ps, ch.kinds, ch.R_end, ch.p_end, w.J_new, Tn)
    qc = w.q_cache
    for j in range(n):
        qc[j] = qn[j]
    w.cached[0] = 1
    out = w.out
    d0 = Tt[0, 3] - Tn[0, 3]
    d1 = Tt[1, 3] - Tn[1, 3]
    d2 = Tt[2, 3] - Tn[2, 3]
    out[0] = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    out[1] = euler_residual_deg(Tt, Tn)
    lo, hi = par.lo_box, par.hi_box
    for j in range(n):
        if qn[j] < lo[j] - tol or qn[j] > hi[j] + tol:
            return 1
    if rows.qi.shape[0] > 0:
        worst = quadrant_residual_max(qn, rows)
        if worst > tol:
            return 2
    return 0
