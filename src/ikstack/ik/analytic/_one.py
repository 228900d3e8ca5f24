"""The single-target fast path of :class:`~ikstack.ik.analytic.AnalyticIK`, compiled.

One call selects the valid candidate nearest the seed (:func:`._select.lazy_one`, the same
kernel as the batched path), checks it against the coupled-joint constraints and certifies it
(:func:`ikstack.ik._gate.certify_rows`, the kernel behind :func:`ikstack.ik.certify`), so a
success here carries exactly the general path's numbers. Anything else (no candidate, a broken
constraint, a failed certificate) returns a nonzero code and the general path decides.

A solver's constant data travel packed in one float and one int array (a compiled call pays
per argument): :func:`pack` builds them, :func:`_unpack` reads them back.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import NDArray

from ikstack.ik._gate import certify_rows, constraints_row
from ikstack.ik.analytic._families6 import K6, _batch6_range
from ikstack.ik.analytic._select import lazy_one

Array = NDArray[np.float64]

#: codes of :func:`select_one`
DONE = 0
GENERAL = 1  #: let the general path decide


def pack(lo: Array, hi: Array, W: Array, glo: Array, ghi: Array, ptol: float, rtol: float,
         step: float, max_dq: float, Rs: Array, ps: Array, kinds: NDArray[np.int64],
         R_end: Array, p_end: Array, revolute: NDArray[np.bool_], qidx: NDArray[np.int64],
         qcoef: Array, A: Array, b: Array, family: tuple[int, int, bool, Array, Array, Array,
                                                          Array] | None = None,
         ) -> tuple[Array, NDArray[np.int64]]:
    """A solver's constant data as ``(floats, ints)`` in :func:`_unpack`'s layout; ``family``
    appends a 6R family's ``(fid, var, reverse, H, P, R6T, sgn)`` for :func:`six_one`."""
    dof = lo.shape[0]
    fl = np.concatenate([lo, hi, W, glo, ghi, [ptol, rtol, step, max_dq], R_end.ravel(), p_end,
                         Rs.ravel(), ps.ravel(), qcoef.ravel(), A.ravel(), b]).astype(np.float64)
    il = np.concatenate([[dof, qidx.shape[0], A.shape[0]], kinds, revolute.astype(np.int64),
                         qidx.ravel()]).astype(np.int64)
    if family is not None:
        fid, var, rev, H, P, R6T, sgn = family
        fl = np.concatenate([fl, H.ravel(), P.ravel(), R6T.ravel(), sgn])
        il = np.concatenate([il, [fid, var, int(rev)]])
    return np.ascontiguousarray(fl), np.ascontiguousarray(il)


@njit(cache=True, inline="always")
def _unpack(fl, il):  # pragma: no cover - compiled
    dof, nq, nl = il[0], il[1], il[2]
    kinds = il[3:3 + dof]
    revolute = il[3 + dof:3 + 2 * dof] != 0
    qidx = il[3 + 2 * dof:3 + 2 * dof + 2 * nq].reshape((nq, 2))
    lo = fl[0:dof]
    hi = fl[dof:2 * dof]
    W = fl[2 * dof:3 * dof]
    glo = fl[3 * dof:4 * dof]
    ghi = fl[4 * dof:5 * dof]
    o = 5 * dof
    ptol, rtol, step, max_dq = fl[o], fl[o + 1], fl[o + 2], fl[o + 3]
    o += 4
    R_end = fl[o:o + 9].reshape((3, 3))
    o += 9
    p_end = fl[o:o + 3]
    o += 3
    Rs = fl[o:o + 9 * dof].reshape((dof, 3, 3))
    o += 9 * dof
    ps = fl[o:o + 3 * dof].reshape((dof, 3))
    o += 3 * dof
    qcoef = fl[o:o + 16 * nq].reshape((nq, 2, 2, 4))
    o += 16 * nq
    A = fl[o:o + nl * dof].reshape((nl, dof))
    o += nl * dof
    b = fl[o:o + nl]
    return (lo, hi, W, glo, ghi, ptol, rtol, step, max_dq, R_end, p_end, Rs, ps, kinds,
            revolute, qidx, qcoef, A, b, o + nl, 3 + 2 * dof + 2 * nq)


@njit(cache=True)
def select_one(Q, V, S, T, fl, il, piters, q, ok, perr, rerr):  # pragma: no cover - compiled
    """Select and certify one target's candidates ``Q (K, dof)`` (``V`` their exact mask, ``S``
    the (dof,) seed, ``T`` the (1, 4, 4) target); on success write ``q (1, dof)``, ``ok``,
    ``perr`` and ``rerr`` (each (1,)) and return :data:`DONE`."""
    (lo, hi, W, glo, ghi, ptol, rtol, step, max_dq, R_end, p_end, Rs, ps, kinds, revolute, qidx,
     qcoef, A, b, _, _) = _unpack(fl, il)
    k = Q.shape[0]
    OK = np.empty(k, dtype=np.bool_)
    FK = np.empty(k, dtype=np.bool_)
    LIM = np.empty(k, dtype=np.bool_)
    D = np.empty(k)
    Tbuf = np.empty((4, 4))
    best = lazy_one(Q, V, S, T[0], lo, hi, revolute, Rs, ps, kinds, R_end, p_end, ptol, rtol,
                    step, W, piters, max_dq, OK, FK, LIM, D, Tbuf)
    if best < 0:
        return GENERAL
    q[0, :] = Q[best]
    if constraints_row(q[0], qidx, qcoef, A, b) != 1:
        return GENERAL  # broken (the general path re-selects) or too close to call here
    certify_rows(q, T, ptol, rtol, glo, ghi, Rs, ps, kinds, R_end, p_end, qidx, qcoef, A, b, ok,
                 perr, rerr, Tbuf)
    return DONE if ok[0] else GENERAL


@njit(cache=True)
def six_one(S, T, fl, il, q, ok, perr, rerr):  # pragma: no cover - compiled
    """A 6R family's candidates for one target (``S`` (1, 6), ``T`` (1, 4, 4); the family's data
    packed after the solver's), then :func:`select_one`."""
    fo, io = _unpack(fl, il)[-2:]
    H = fl[fo:fo + 18].reshape((6, 3))
    P = fl[fo + 18:fo + 39].reshape((7, 3))
    R6T = fl[fo + 39:fo + 48].reshape((3, 3))
    sgn = fl[fo + 48:fo + 54]
    fid, var, rev = il[io], il[io + 1], il[io + 2] != 0
    Q = np.empty((1, K6, 6))
    V = np.empty((1, K6), dtype=np.bool_)
    _batch6_range(0, 1, fid, var, rev, T, S, H, P, R6T, sgn, Q, V)
    return select_one(Q[0], V[0], S[0], T, fl, il, 0, q, ok, perr, rerr)
