"""The compiled fast paths of :class:`~ikstack.ik.analytic.AnalyticIK`.

:func:`select_one` selects one target's valid candidate nearest the seed
(:func:`._select.lazy_one`, the same kernel as the batched path), checks it against the
coupled-joint constraints and certifies it (:func:`ikstack.ik._gate.certify_rows`, the kernel
behind :func:`ikstack.ik.certify`), so a success here carries exactly the general path's
numbers. :func:`six_batch` (and :func:`six_one`, the same row kernel for one target) does the
whole solve of a 6R family per row in one pass: rigid check, candidates, representatives,
limits, lazy FK gate, certificate, with no scratch allocated per row. Anything else (no
candidate, a broken constraint, a failed certificate, a target to check with numpy) returns a
nonzero code and the general path decides.

A solver's constant data travel packed in one float and one int array (a compiled call pays
per argument): :func:`pack` builds them, :func:`_unpack` reads them back.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange
from numpy.typing import NDArray

from ikstack.ik._gate import RIGID, certify_rows, constraints_row, rigid_code
from ikstack.ik.analytic._families6 import K6
from ikstack.ik.analytic._nearest6 import BRANCH_COLS, nearest6
from ikstack.ik.analytic._select import lazy_one
from ikstack.ik.analytic._vec import m9, v3
from ikstack.spatial import RIGID_ATOL

Array = NDArray[np.float64]

#: codes of :func:`select_one`, :func:`six_one` and :func:`six_batch`
DONE = 0
GENERAL = 1  #: let the general path decide
NOT_RIGID = 2  #: the target is not finite and rigid well within the tolerance: numpy decides


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


@njit(cache=True, inline="always")
def _family6(fl, il, fo, io):  # pragma: no cover - compiled
    H = fl[fo:fo + 18].reshape((6, 3))
    P = fl[fo + 18:fo + 39].reshape((7, 3))
    R6 = m9(fl[fo + 39:fo + 48].reshape((3, 3)))
    sgn = fl[fo + 48:fo + 54]
    return il[io], il[io + 1], il[io + 2] != 0, H, P, R6, sgn


@njit(cache=True)
def _six_block(i0, i1, S, T, fl, il, fid, var, sgn, q, perr, rerr,
               code):  # pragma: no cover - compiled
    """Rows ``i0 .. i1`` of :func:`six_batch`. Per row: the rigid check, the family's
    nearest valid candidate (:func:`._nearest6.nearest6`), then the certificate: it is
    :func:`ikstack.ik._gate.certify_rows`'s for the row, since the FK gate that selected it ran
    the same FK and error kernels on the same row and target with the same tolerances, so only
    the chain limits and the constraints remain to check. ``fid``, ``var`` and ``sgn`` are the
    family's :attr:`.families.SixR.kfid`, ``kvar`` and ``ksgn`` (which pick the family's code
    at compile time)."""
    (lo, hi, W, glo, ghi, ptol, rtol, step, _, R_end, p_end, Rs, ps, _, revolute, qidx,
     qcoef, A, b, fo, io) = _unpack(fl, il)
    _, _, rev, H, P, R6, _ = _family6(fl, il, fo, io)  # fid, var, sgn: the arguments
    Q = np.empty((K6, 6))
    OK = np.empty(K6, dtype=np.bool_)
    D = np.empty(K6)
    Bs = np.empty((4, BRANCH_COLS))
    Tbuf = np.empty((4, 4))
    # the chain as tuples for the FK gate (a 6R family's joints are revolute)
    Rs_t = (m9(Rs[0]), m9(Rs[1]), m9(Rs[2]), m9(Rs[3]), m9(Rs[4]), m9(Rs[5]))
    ps_t = (v3(ps[0]), v3(ps[1]), v3(ps[2]), v3(ps[3]), v3(ps[4]), v3(ps[5]))
    Re_t = m9(R_end)
    pe_t = v3(p_end)
    one_seed = S.shape[0] == 1
    for i in range(i0, i1):
        Ti = T[i]
        s = S[0] if one_seed else S[i]
        perr[i] = 0.0
        rerr[i] = 0.0
        if rigid_code(Ti, RIGID_ATOL) != RIGID:
            code[i] = NOT_RIGID
            continue
        best, pe, re = nearest6(fid, var, rev, m9(Ti), (Ti[0, 3], Ti[1, 3], Ti[2, 3]), H, P, R6,
                                sgn, s, Ti, lo, hi, revolute, W, step, Rs_t, ps_t, Re_t, pe_t,
                                ptol, rtol, Q, D, OK, Bs, Tbuf)
        code[i] = GENERAL
        if best < 0:
            continue
        good = True
        for j in range(6):
            x = Q[best, j]
            q[i, j] = x
            if not (x >= glo[j] and x <= ghi[j]):
                good = False
        if good and constraints_row(q[i], qidx, qcoef, A, b) == 1:
            code[i] = DONE
            perr[i] = pe
            rerr[i] = re


def six_batch(S, T, fl, il, fid, var, sgn, q, perr, rerr, code, parallel):
    """Targets ``T`` (N, 4, 4) of a 6R family, seeds ``S`` (N or 1, 6): per row the selection
    ``q``, its certified errors and a code (:data:`DONE`, :data:`GENERAL` or
    :data:`NOT_RIGID`); rows not :data:`DONE` are the general path's to decide. On all cores
    when ``parallel`` (a serial call never touches numba's thread pool)."""
    if parallel:
        six_batch_parallel(S, T, fl, il, fid, var, sgn, q, perr, rerr, code)
    else:
        _six_block(0, T.shape[0], S, T, fl, il, fid, var, sgn, q, perr, rerr, code)


@njit(cache=True, parallel=True)
def six_batch_parallel(S, T, fl, il, fid, var, sgn, q, perr, rerr,
                       code):  # pragma: no cover - compiled
    """:func:`six_batch` on all cores, in blocks of 64 targets."""
    n = T.shape[0]
    nblk = (n + 63) // 64
    for bk in prange(nblk):
        _six_block(bk * 64, min(n, bk * 64 + 64), S, T, fl, il, fid, var, sgn, q, perr, rerr,
                   code)


@njit(cache=True)
def six_one(S, T, fl, il, fid, var, sgn, q, ok, perr, rerr):  # pragma: no cover - compiled
    """:func:`six_batch` for one C-contiguous (4, 4) target ``T`` and seed ``S`` (1, 6); also
    writes ``ok``; returns the code."""
    code = np.empty(1, dtype=np.int64)
    _six_block(0, 1, S, T.reshape((1, 4, 4)), fl, il, fid, var, sgn, q, perr, rerr, code)
    ok[0] = code[0] == DONE
    return code[0]
