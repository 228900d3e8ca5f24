"""One flat workspace per velocity-QP solver, and the two fused compiled kernels of a step.

A compiled call costs a fraction of a microsecond per argument, so a step's work is done by two
kernels that take the whole solver state as two flat buffers (``fb`` float64, ``ib`` int64)
plus the step's inputs: :func:`pre_step` (input checks, cached or fresh flange kinematics, the
QP's cost, boxes and quadrant rows, and OSQP's data vectors in its fixed sparsity pattern) and
:func:`post_step` (clip, integrate, flange FK and Jacobian at the new configuration, which the
next step reuses, residual, limit and coupled-joint checks). Python keeps numpy views into the
buffers under readable names.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit
from numpy.typing import NDArray

from ikstack.diffik._qp_kernels import (
    build_qp,
    euler_residual_deg,
    inputs_ok,
    quadrant_residual_max,
    quadrant_rows,
)
from ikstack.kinematics import _kernels as KK

Array = NDArray[np.float64]

#: OSQP's infinity
INF = 1e30

# float blocks, in order; each name's offset lives in ib[position in this tuple]
_F = (
    "const",
    "s",
    "lo_int",
    "hi_int",
    "nsw",
    "lo_box",
    "hi_box",
    "vmax",
    "Rs",
    "ps",
    "R_end",
    "p_end",
    "qtab",
    "row_scale",
    "T",
    "J",
    "P",
    "c",
    "lb",
    "ub",
    "G",
    "h",
    "grad",
    "Px",
    "Ax",
    "l",
    "u",
    "q_new",
    "qdot",
    "q_cache",
    "T_new",
    "J_new",
    "out",
)
# int blocks, after the float offsets
_I = ("kinds", "qi", "qj", "pr", "pc", "ar", "ac")
_NF = len(_F)
# scalars after both offset tables
S_N, S_K, S_R, S_NP, S_NA, S_CACHE = range(_NF + len(_I), _NF + len(_I) + 6)
_NHEAD = S_CACHE + 1
F = {name: i for i, name in enumerate(_F)}
I_ = {name: _NF + i for i, name in enumerate(_I)}

# positions inside the "const" block
C_LIN, C_ANG, C_WPOS, C_WROT, C_LAM, C_MU, C_BAND, C_CMARGIN = range(8)


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
    """The flat buffers of one solver and named numpy views into them."""

    def __init__(self, n: int, num_quads: int, num_rows: int, row_cols: list[tuple[int, ...]]):
        self.P_pattern, pr, pc = upper_pattern(n)
        self.A_pattern, ar, ac = constraint_pattern(n, row_cols)
        k, R = num_quads, num_rows
        np_, na = len(pr), len(ar)
        sizes = {
            "const": 8,
            "s": n,
            "lo_int": n,
            "hi_int": n,
            "nsw": n,
            "lo_box": n,
            "hi_box": n,
            "vmax": n,
            "Rs": 9 * n,
            "ps": 3 * n,
            "R_end": 9,
            "p_end": 3,
            "qtab": 16 * k,
            "row_scale": R,
            "T": 16,
            "J": 6 * n,
            "P": n * n,
            "c": n,
            "lb": n,
            "ub": n,
            "G": R * n,
            "h": R,
            "grad": n,
            "Px": np_,
            "Ax": na,
            "l": n + R,
            "u": n + R,
            "q_new": n,
            "qdot": n,
            "q_cache": n,
            "T_new": 16,
            "J_new": 6 * n,
            "out": 2,
        }
        isizes = {"kinds": n, "qi": k, "qj": k, "pr": np_, "pc": np_, "ar": na, "ac": na}
        self.fb = np.zeros(sum(sizes.values()))
        self.ib = np.zeros(_NHEAD + sum(isizes.values()), dtype=np.int64)
        off = 0
        shapes = {
            "Rs": (n, 3, 3),
            "ps": (n, 3),
            "R_end": (3, 3),
            "qtab": (k, 2, 2, 4),
            "T": (4, 4),
            "J": (6, n),
            "P": (n, n),
            "G": (R, n),
            "T_new": (4, 4),
            "J_new": (6, n),
        }
        self.v: dict[str, NDArray] = {}
        for name in _F:
            self.ib[F[name]] = off
            self.v[name] = self.fb[off : off + sizes[name]].reshape(shapes.get(name, (-1,)))
            off += sizes[name]
        off = _NHEAD
        for name in _I:
            self.ib[I_[name]] = off
            self.v[name] = self.ib[off : off + isizes[name]]
            off += isizes[name]
        self.ib[S_N], self.ib[S_K], self.ib[S_R] = n, k, R
        self.ib[S_NP], self.ib[S_NA] = np_, na
        self.v["pr"][:], self.v["pc"][:] = pr, pc
        self.v["ar"][:], self.v["ac"][:] = ar, ac
        self.v["l"][:] = -INF
        self.v["u"][:] = INF

    def invalidate(self) -> None:
        """Forget the cached kinematics."""
        self.ib[S_CACHE] = 0


# offsets of the blocks in ib (compile-time constants for the kernels)
F_CONST = 0
F_S = 1
F_LO_INT = 2
F_HI_INT = 3
F_NSW = 4
F_LO_BOX = 5
F_HI_BOX = 6
F_VMAX = 7
F_RS = 8
F_PS = 9
F_R_END = 10
F_P_END = 11
F_QTAB = 12
F_ROW_SCALE = 13
F_T = 14
F_J = 15
F_P = 16
F_C = 17
F_LB = 18
F_UB = 19
F_G = 20
F_H = 21
F_GRAD = 22
F_PX = 23
F_AX = 24
F_L = 25
F_U = 26
F_Q_NEW = 27
F_QDOT = 28
F_Q_CACHE = 29
F_T_NEW = 30
F_J_NEW = 31
F_OUT = 32
I_KINDS = 33
I_QI = 34
I_QJ = 35
I_PR = 36
I_PC = 37
I_AR = 38
I_AC = 39


@njit(cache=True)
def _fill_osqp(fb, ib):  # pragma: no cover - compiled
    n, R = ib[S_N], ib[S_R]
    P = fb[ib[F_P] : ib[F_P] + n * n].reshape((n, n))
    G = fb[ib[F_G] : ib[F_G] + R * n].reshape((R, n))
    h = fb[ib[F_H] : ib[F_H] + R]
    pr = ib[ib[I_PR] : ib[I_PR] + ib[S_NP]]
    pc = ib[ib[I_PC] : ib[I_PC] + ib[S_NP]]
    Px = fb[ib[F_PX] : ib[F_PX] + ib[S_NP]]
    for e in range(pr.shape[0]):
        Px[e] = P[pr[e], pc[e]]
    ar = ib[ib[I_AR] : ib[I_AR] + ib[S_NA]]
    ac = ib[ib[I_AC] : ib[I_AC] + ib[S_NA]]
    Ax = fb[ib[F_AX] : ib[F_AX] + ib[S_NA]]
    for e in range(ar.shape[0]):
        Ax[e] = 1.0 if ar[e] < 0 else G[ar[e], ac[e]]
    lb = fb[ib[F_LB] : ib[F_LB] + n]
    ub = fb[ib[F_UB] : ib[F_UB] + n]
    l_ = fb[ib[F_L] : ib[F_L] + n + R]
    u = fb[ib[F_U] : ib[F_U] + n + R]
    for j in range(n):
        l_[j] = lb[j]
        u[j] = ub[j]
    for r in range(R):
        l_[n + r] = -INF
        u[n + r] = min(h[r], INF)


@njit(cache=True)
def fill_osqp(fb, ib):  # pragma: no cover - compiled
    """Write OSQP's ``Px, Ax, l, u`` from the dense ``P, G, h`` and the boxes."""
    _fill_osqp(fb, ib)


@njit(cache=True)
def pre_step(q, Tt, dt, fb, ib, rigid_atol):  # pragma: no cover - compiled
    """Check inputs and build the step's QP; 0 ok, 1 bad inputs, 2 an empty velocity box."""
    if inputs_ok(q, Tt, rigid_atol):
        return 1
    n, k, R = ib[S_N], ib[S_K], ib[S_R]
    T = fb[ib[F_T] : ib[F_T] + 16].reshape((4, 4))
    J = fb[ib[F_J] : ib[F_J] + 6 * n].reshape((6, n))
    qc = fb[ib[F_Q_CACHE] : ib[F_Q_CACHE] + n]
    hit = ib[S_CACHE] == 1
    if hit:
        for j in range(n):
            if qc[j] != q[j]:
                hit = False
                break
    if hit:
        T[:, :] = fb[ib[F_T_NEW] : ib[F_T_NEW] + 16].reshape((4, 4))
        J[:, :] = fb[ib[F_J_NEW] : ib[F_J_NEW] + 6 * n].reshape((6, n))
    else:
        KK.jac_one(
            q,
            fb[ib[F_RS] : ib[F_RS] + 9 * n].reshape((n, 3, 3)),
            fb[ib[F_PS] : ib[F_PS] + 3 * n].reshape((n, 3)),
            ib[ib[I_KINDS] : ib[I_KINDS] + n],
            fb[ib[F_R_END] : ib[F_R_END] + 9].reshape((3, 3)),
            fb[ib[F_P_END] : ib[F_P_END] + 3],
            J,
            T,
        )
    cst = fb[ib[F_CONST] : ib[F_CONST] + 8]
    s = fb[ib[F_S] : ib[F_S] + n]
    P = fb[ib[F_P] : ib[F_P] + n * n].reshape((n, n))
    empty = build_qp(
        J,
        T,
        Tt,
        q,
        dt,
        cst[C_LIN],
        cst[C_ANG],
        s,
        cst[C_WPOS],
        cst[C_WROT],
        cst[C_LAM],
        cst[C_MU],
        fb[ib[F_LO_INT] : ib[F_LO_INT] + n],
        fb[ib[F_HI_INT] : ib[F_HI_INT] + n],
        cst[C_BAND],
        fb[ib[F_NSW] : ib[F_NSW] + n],
        fb[ib[F_LO_BOX] : ib[F_LO_BOX] + n],
        fb[ib[F_HI_BOX] : ib[F_HI_BOX] + n],
        fb[ib[F_VMAX] : ib[F_VMAX] + n],
        P,
        fb[ib[F_C] : ib[F_C] + n],
        fb[ib[F_LB] : ib[F_LB] + n],
        fb[ib[F_UB] : ib[F_UB] + n],
        fb[ib[F_GRAD] : ib[F_GRAD] + n],
    )
    if k > 0:
        G = fb[ib[F_G] : ib[F_G] + R * n].reshape((R, n))
        h = fb[ib[F_H] : ib[F_H] + R]
        quadrant_rows(
            q,
            ib[ib[I_QI] : ib[I_QI] + k],
            ib[ib[I_QJ] : ib[I_QJ] + k],
            fb[ib[F_QTAB] : ib[F_QTAB] + 16 * k].reshape((k, 2, 2, 4)),
            cst[C_CMARGIN],
            dt,
            fb[ib[F_ROW_SCALE] : ib[F_ROW_SCALE] + R],
            s,
            G[:k],
            h[:k],
        )
    _fill_osqp(fb, ib)
    return 2 if empty > 0 else 0


@njit(cache=True)
def post_step(q, x, dt, Tt, fb, ib, tol):  # pragma: no cover - compiled
    """Clip ``x``, integrate, evaluate the new flange pose.

    Returns 0 ok, 1 out of the margin-adjusted limits, 2 a coupled joint violated, 3 ``x`` is
    not finite.

    Writes ``q_new``, ``qdot``, the kinematics cache and ``out = (position residual [m], Euler
    residual [deg], nan near the gimbal lock)``.
    """
    n, k = ib[S_N], ib[S_K]
    for j in range(n):
        if not np.isfinite(x[j]):
            return 3
    s = fb[ib[F_S] : ib[F_S] + n]
    lb = fb[ib[F_LB] : ib[F_LB] + n]
    ub = fb[ib[F_UB] : ib[F_UB] + n]
    qn = fb[ib[F_Q_NEW] : ib[F_Q_NEW] + n]
    qd = fb[ib[F_QDOT] : ib[F_QDOT] + n]
    for j in range(n):
        xj = min(max(x[j], lb[j]), ub[j])
        qd[j] = xj / s[j]
        qn[j] = q[j] + qd[j] * dt
    Tn = fb[ib[F_T_NEW] : ib[F_T_NEW] + 16].reshape((4, 4))
    Jn = fb[ib[F_J_NEW] : ib[F_J_NEW] + 6 * n].reshape((6, n))
    KK.jac_one(
        qn,
        fb[ib[F_RS] : ib[F_RS] + 9 * n].reshape((n, 3, 3)),
        fb[ib[F_PS] : ib[F_PS] + 3 * n].reshape((n, 3)),
        ib[ib[I_KINDS] : ib[I_KINDS] + n],
        fb[ib[F_R_END] : ib[F_R_END] + 9].reshape((3, 3)),
        fb[ib[F_P_END] : ib[F_P_END] + 3],
        Jn,
        Tn,
    )
    qc = fb[ib[F_Q_CACHE] : ib[F_Q_CACHE] + n]
    for j in range(n):
        qc[j] = qn[j]
    ib[S_CACHE] = 1
    out = fb[ib[F_OUT] : ib[F_OUT] + 2]
    d0 = Tt[0, 3] - Tn[0, 3]
    d1 = Tt[1, 3] - Tn[1, 3]
    d2 = Tt[2, 3] - Tn[2, 3]
    out[0] = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    out[1] = euler_residual_deg(Tt, Tn)
    lo = fb[ib[F_LO_BOX] : ib[F_LO_BOX] + n]
    hi = fb[ib[F_HI_BOX] : ib[F_HI_BOX] + n]
    for j in range(n):
        if qn[j] < lo[j] - tol or qn[j] > hi[j] + tol:
            return 1
    if k > 0:
        worst = quadrant_residual_max(
            qn,
            ib[ib[I_QI] : ib[I_QI] + k],
            ib[ib[I_QJ] : ib[I_QJ] + k],
            fb[ib[F_QTAB] : ib[F_QTAB] + 16 * k].reshape((k, 2, 2, 4)),
        )
        if worst > tol:
            return 2
    return 0
