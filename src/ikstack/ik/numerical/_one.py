"""One numerical-IK target in one compiled call: the search loop, then the FK gate.

The same kernels as the batched path (:func:`._kernels.solve_batch`, then
:func:`ikstack.ik._gate.certify_rows`, the kernel behind :func:`ikstack.ik.certify`), so the
numbers are the general path's. A solver's constant data travel packed in one float and one int
array (a compiled call pays per argument): :func:`pack` builds them, :func:`_unpack` reads
them back.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

from ikstack.ik._gate import certify_rows
from ikstack.ik.numerical._kernels import solve_batch

Array = NDArray[np.float64]


def pack(Rs: Array, ps: Array, kinds: NDArray[np.int64], R_end: Array, p_end: Array, lo: Array,
         hi: Array, slo: Array, shi: Array, w: Array, tol_p: float, tol_r: float, damping: float,
         step_kind: int, limit_mode: int, max_iter: int, max_restarts: int, glo: Array,
         ghi: Array, gate_p: float, gate_r: float, qidx: NDArray[np.int64], qcoef: Array,
         A: Array, b: Array) -> tuple[Array, NDArray[np.int64]]:
    """A solver's constant data as ``(floats, ints)`` in :func:`_unpack`'s layout."""
    dof = lo.shape[0]
    fl = np.concatenate([Rs.ravel(), ps.ravel(), R_end.ravel(), p_end, lo, hi, slo, shi, w, glo,
                         ghi, [tol_p, tol_r, damping, gate_p, gate_r], qcoef.ravel(), A.ravel(),
                         b]).astype(np.float64)
    il = np.concatenate([[dof, qidx.shape[0], A.shape[0], step_kind, limit_mode, max_iter,
                          max_restarts], kinds, qidx.ravel()]).astype(np.int64)
    return np.ascontiguousarray(fl), np.ascontiguousarray(il)


@njit(cache=True, inline="always")
def _unpack(fl, il):  # pragma: no cover - compiled
    dof, nq, nl = il[0], il[1], il[2]
    kinds = il[7:7 + dof]
    qidx = il[7 + dof:7 + dof + 2 * nq].reshape((nq, 2))
    o = 0
    Rs = fl[o:o + 9 * dof].reshape((dof, 3, 3))
    o += 9 * dof
    ps = fl[o:o + 3 * dof].reshape((dof, 3))
    o += 3 * dof
    R_end = fl[o:o + 9].reshape((3, 3))
    o += 9
    p_end = fl[o:o + 3]
    o += 3
    lo = fl[o:o + dof]
    hi = fl[o + dof:o + 2 * dof]
    slo = fl[o + 2 * dof:o + 3 * dof]
    shi = fl[o + 3 * dof:o + 4 * dof]
    o += 4 * dof
    w = fl[o:o + 6]
    o += 6
    glo = fl[o:o + dof]
    ghi = fl[o + dof:o + 2 * dof]
    o += 2 * dof
    tol_p, tol_r, damping, gate_p, gate_r = fl[o], fl[o + 1], fl[o + 2], fl[o + 3], fl[o + 4]
    o += 5
    qcoef = fl[o:o + 16 * nq].reshape((nq, 2, 2, 4))
    o += 16 * nq
    A = fl[o:o + nl * dof].reshape((nl, dof))
    o += nl * dof
    b = fl[o:o + nl]
    return (Rs, ps, kinds, R_end, p_end, lo, hi, slo, shi, w, glo, ghi, tol_p, tol_r, damping,
            gate_p, gate_r, qidx, qcoef, A, b)


@njit(cache=True)
def solve_gate_one(Tt, Q0, fl, il, key, budget, Q, codes, iters, restarts, ok, perr,
                   rerr):  # pragma: no cover - compiled
    """:func:`._kernels.solve_batch` for ``Tt (1, 4, 4)`` from ``Q0 (1, dof)``, then the FK
    gate of the answer into ``ok``, ``perr``, ``rerr``. Returns the number of rows whose
    constraints the gate could not decide (see :func:`ikstack.ik._gate.certify_rows`)."""
    (Rs, ps, kinds, R_end, p_end, lo, hi, slo, shi, w, glo, ghi, tol_p, tol_r, damping, gate_p,
     gate_r, qidx, qcoef, A, b) = _unpack(fl, il)
    solve_batch(Tt, Q0, Rs, ps, kinds, R_end, p_end, lo, hi, slo, shi, w, tol_p, tol_r, il[3],
                damping, il[4], il[5], il[6], key, budget, qidx, qcoef, A, b, Q, codes, iters,
                restarts)
    return certify_rows(Q, Tt, gate_p, gate_r, glo, ghi, Rs, ps, kinds, R_end, p_end, qidx,
                        qcoef, A, b, ok, perr, rerr, np.empty((4, 4)))
