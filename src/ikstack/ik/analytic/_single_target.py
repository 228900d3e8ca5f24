"""The compiled fast paths of :class:`~ikstack.ik.analytic.AnalyticIK`.

:func:`select_batch` (and :func:`select_one`, the same row kernel for one target) selects
each target's valid candidate nearest the seed (:func:`._selection.lazy_one`, the kernel the
general path gates with), checks it against the coupled-joint constraints and certifies it
(:func:`ikstack.ik._gate.certify_rows`, the kernel behind :func:`ikstack.ik.certify`), so a
success here carries exactly the general path's numbers. :func:`six_batch` (and
:func:`six_one`, the same row kernel for one target) does the whole solve of a 6R family per
row in one pass: rigid check, candidates, representatives, limits, lazy FK gate (the selection
loop :func:`._selection.select_nearest` with branch-and-bound: branches in order of a bound on
their distance), certificate, with no scratch allocated per row. Anything else (no
candidate, a broken constraint, a failed certificate, a target to check with numpy) returns a
nonzero code and the general path decides.

A solver's records (chain, constraints, gate, selection settings and, for a 6R family, the
family's data) travel packed in one float and one int array (a compiled call pays per argument,
and more for a named tuple): :data:`PACKING` and :data:`PACKING6` pack them and unpack them
inside the kernels, both from the records' definitions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit, prange
from numpy.typing import NDArray

from ikstack._records import B, F, I, Packing, Record
from ikstack.ik._data import CHAIN, CONSTRAINTS, GATE, chain_data, constraint_data
from ikstack.ik._gate import RIGID, certify_rows, constraints_row, rigid_code
from ikstack.ik.analytic._branches6 import t6
from ikstack.ik.analytic._families6 import K6
from ikstack.ik.analytic._select import SELECT
from ikstack.ik.analytic._selection import SCRATCH6_SIZE, lazy_one, select_nearest
from ikstack.spatial import RIGID_ATOL
from ikstack.spatial._tuple_math import m9, v3

Array = NDArray[np.float64]
Packed = tuple[Array, NDArray[np.int64]]

#: codes of :func:`select_batch`, :func:`select_one`, :func:`six_one` and :func:`six_batch`
DONE = 0
GENERAL = 1  #: let the general path decide
NOT_RIGID = 2  #: the target is not finite and rigid well within the tolerance: numpy decides


#: a 6R family's data (:class:`.families.SixR`)
FAMILY6 = Record(
    "Family6Data",
    __name__,
    [
        ("fid", I, ()),
        ("var", I, ()),
        ("reverse", B, ()),
        ("H", F, (6, 3)),
        ("P", F, (7, 3)),
        ("R6T", F, (3, 3)),
        ("sgn", F, (6,)),
    ],
)
Family6Data = FAMILY6.type

#: chain, constraints, gate and selection settings of :func:`select_one`
PACKING = Packing(CHAIN, CONSTRAINTS, GATE, SELECT)
#: the same and a 6R family's data, of :func:`six_one` and :func:`six_batch`
PACKING6 = Packing(CHAIN, CONSTRAINTS, GATE, SELECT, FAMILY6)
_check = PACKING.check
_unpack_unchecked = PACKING.unpack_unchecked  # in a prange body, after _check
_unpack6 = PACKING6.unpack
_check6 = PACKING6.check
_unpack6_unchecked = PACKING6.unpack_unchecked  # in a prange body, after _check6


def solver_records(
    ik: Any, tabs: Any, six: Any, max_dq: float
) -> tuple[Any, Any, Packed, Packed | None]:
    """``(chain, selection, pack, pack6)`` of an :class:`~ikstack.ik.analytic.AnalyticIK`:
    its :data:`CHAIN` and :data:`SELECT` records (the FK gate at the solver's tolerances, the
    polish's largest step ``max_dq``) and
    the :data:`PACKING` (and for a 6R family ``six``, :data:`PACKING6`) of its records, with
    ``tabs`` its :class:`ikstack.ik._fixed_gate.ConstraintTables`."""
    chain = chain_data(ik._cc)
    sel = SELECT.make(
        lo=ik._lo,
        hi=ik._hi,
        W=ik.weights,
        revolute=ik._revolute,
        step=np.inf if ik.max_joint_step is None else ik.max_joint_step,
        max_dq=max_dq,
        tol_p=ik.position_tolerance,
        tol_r=ik.rotation_tolerance,
    )
    records = (
        chain,
        constraint_data(tabs),
        GATE.make(
            lo=ik.chain.lower,
            hi=ik.chain.upper,  # certify: limit tolerance 0
            tol_p=ik.position_tolerance,
            tol_r=ik.rotation_tolerance,
        ),
        sel,
    )
    pack6 = (
        None
        if six is None
        else PACKING6.pack(
            *records,
            FAMILY6.make(
                fid=six.fid,
                var=six.var,
                reverse=six.reverse,
                H=six.H,
                P=six.P,
                R6T=six.R6T,
                sgn=six.sgn,
            ),
        )
    )
    return chain, sel, PACKING.pack(*records), pack6


@njit(cache=True)
def _select_block(i0, i1, Q, V, S, T, fl, il, piters, out):  # pragma: no cover - compiled
    """Rows ``i0 .. i1`` of :func:`select_batch` (``fl, il``: :data:`PACKING`'s arrays, their
    tag checked by the caller; ``out``: ``(q, ok, perr, rerr, code)``). Per row: the rigid
    check, the valid candidate nearest the seed (:func:`._selection.lazy_one`, the kernel the
    general path gates with), the coupled-joint constraints, then the certificate
    (:func:`ikstack.ik._gate.certify_rows`, the kernel behind :func:`ikstack.ik.certify`)."""
    chain, cons, gate, sel = _unpack_unchecked(fl, il)
    q, ok, perr, rerr, code = out
    k = Q.shape[1]
    OK = np.empty(k, dtype=np.bool_)
    FK = np.empty(k, dtype=np.bool_)
    LIM = np.empty(k, dtype=np.bool_)
    D = np.empty(k)
    Tbuf = np.empty((4, 4))
    one_seed = S.shape[0] == 1
    for i in range(i0, i1):
        code[i] = GENERAL
        ok[i] = False
        perr[i] = 0.0
        rerr[i] = 0.0
        if rigid_code(T[i], RIGID_ATOL) != RIGID:
            code[i] = NOT_RIGID
            continue
        s = S[0] if one_seed else S[i]
        best = lazy_one(Q[i], V[i], s, T[i], chain, sel, piters, (OK, FK, LIM, D, Tbuf))
        if best < 0:
            continue
        q[i, :] = Q[i, best]
        if constraints_row(q[i], cons.qidx, cons.qcoef, cons.A, cons.b) != 1:
            continue  # broken (the general path re-selects) or too close to call here
        certify_rows(
            q[i : i + 1],
            T[i : i + 1],
            chain,
            cons,
            gate,
            ok[i : i + 1],
            perr[i : i + 1],
            rerr[i : i + 1],
            Tbuf,
        )
        if ok[i]:
            code[i] = DONE


def select_batch(Q, V, S, T, fl, il, piters, out, parallel):
    """Select and certify the candidates ``Q`` (N, K, dof) (``V`` (N, K) their exact mask)
    of targets ``T`` (N, 4, 4) from seeds ``S`` (N or 1, dof): per row the selection, its
    certificate and a code (:data:`DONE`, :data:`GENERAL` or :data:`NOT_RIGID`) in ``out =
    (q (N, dof), ok, perr, rerr, code)``; rows not :data:`DONE` are the general path's to
    decide. ``fl, il``: :data:`PACKING`'s arrays. On all cores when ``parallel``."""
    if parallel:
        select_batch_parallel(Q, V, S, T, fl, il, piters, out)
        return
    # on the calling thread: the row kernel itself (a compiled wrapper would be one more
    # function a first run compiles, re-optimizing the whole kernel below it)
    PACKING.check_here(il)
    _select_block(np.int64(0), np.int64(T.shape[0]), Q, V, S, T, fl, il, piters, out)


@njit(cache=True, parallel=True)
def select_batch_parallel(Q, V, S, T, fl, il, piters, out):  # pragma: no cover - compiled
    """:func:`select_batch` on all cores, in blocks of 64 targets."""
    _check(il)
    n = T.shape[0]
    nblk = (n + 63) // 64
    for bk in prange(nblk):
        _select_block(
            np.int64(bk) * 64, min(n, np.int64(bk) * 64 + 64), Q, V, S, T, fl, il, piters, out
        )


@njit(cache=True)
def select_one(Q, V, S, T, fl, il, piters, q, perr, rerr):  # pragma: no cover - compiled
    """:func:`select_batch` for one target (a batch of one: ``Q`` (1, K, dof), ``V`` (1, K),
    ``S`` (1, dof), ``T`` (1, 4, 4), outputs (1, dof) and (1,)); returns the code (the target
    is certified when it is :data:`DONE`: no ``ok`` to pass, one array fewer per call)."""
    code = np.empty(1, dtype=np.int64)
    ok = np.empty(1, dtype=np.bool_)
    _check(il)
    _select_block(np.int64(0), np.int64(1), Q, V, S, T, fl, il, piters, (q, ok, perr, rerr, code))
    return code[0]


@njit(cache=True)
def _six_block(i0, i1, S, T, fl, il, fid, var, sgn, out):  # pragma: no cover - compiled
    """Rows ``i0 .. i1`` of :func:`six_batch` (``fl, il``: :data:`PACKING6`'s arrays, their tag
    checked by the caller; ``out``: ``(q, perr, rerr, code)``). Per row: the rigid check, the
    family's nearest valid candidate (:func:`._selection.select_nearest`, branch-and-bound),
    then the certificate: it is
    :func:`ikstack.ik._gate.certify_rows`'s for the row, since the FK gate that selected it ran
    the same FK and error kernels on the same row and target with the same tolerances, so only
    the chain limits and the constraints remain to check. ``fid``, ``var`` and ``sgn`` are the
    family's :attr:`.families.SixR.kfid`, ``kvar`` and ``ksgn`` (which pick the family's code
    at compile time: separate arguments, since only an argument's None prunes a branch)."""
    # unpacked here, inlined: records passed into a compiled call cost a reference count per
    # array, which a single-target call notices
    chain, cons, gate, sel, fam = _unpack6_unchecked(fl, il)  # fid, var, sgn: the arguments
    q, perr, rerr, code = out
    glo, ghi = gate.lo, gate.hi
    qidx, qcoef, A, b = cons.qidx, cons.qcoef, cons.A, cons.b
    Ha, Pa, rev, R6 = fam.H, fam.P, fam.reverse, m9(fam.R6T)
    # the axes and offsets as numbers: an array in the per-row strategy tuple costs reference
    # counts on every row
    H = (v3(Ha[0]), v3(Ha[1]), v3(Ha[2]), v3(Ha[3]), v3(Ha[4]), v3(Ha[5]))
    P = (v3(Pa[0]), v3(Pa[1]), v3(Pa[2]), v3(Pa[3]), v3(Pa[4]), v3(Pa[5]), v3(Pa[6]))
    # the selection's per-joint data as 6-tuples and the chain as tuples for the FK gate (a 6R
    # family's joints are revolute), once per block
    Rs, ps = chain.Rs, chain.ps
    lim = (t6(sel.lo), t6(sel.hi), t6(sel.revolute), t6(sel.W), sel.step)
    chain6 = (
        (m9(Rs[0]), m9(Rs[1]), m9(Rs[2]), m9(Rs[3]), m9(Rs[4]), m9(Rs[5])),
        (v3(ps[0]), v3(ps[1]), v3(ps[2]), v3(ps[3]), v3(ps[4]), v3(ps[5])),
        m9(chain.R_end),
        v3(chain.p_end),
    )
    gate6 = (chain6, (sel.tol_p, sel.tol_r))
    Q = np.empty((K6, 6))
    D = np.empty(SCRATCH6_SIZE)  # the slots' distances, the branches' bounds, branches
    OK = np.empty(K6, dtype=np.bool_)
    Tbuf = np.empty((4, 4))
    one_seed = S.shape[0] == 1
    for i in range(i0, i1):
        Ti = T[i]
        s = S[0] if one_seed else S[i]
        perr[i] = 0.0
        rerr[i] = 0.0
        if rigid_code(Ti, RIGID_ATOL) != RIGID:
            code[i] = NOT_RIGID
            continue
        data = (rev, R6, t6(s), lim)  # numbers only
        # the family's strategy, decided at compile time (the None argument's branch is pruned)
        best, pe, re = -1, 0.0, 0.0
        if fid is not None and sgn is None:  # a spherical wrist
            best, pe, re = select_nearest(Q, D, OK, Ti, Tbuf, gate6, None, (var, H, P, data), None)
        elif sgn is not None:  # three-parallel
            tp = (var, t6(sgn), H, P, data)  # numbers only: no reference counts per row
            best, pe, re = select_nearest(Q, D, OK, Ti, Tbuf, gate6, None, None, tp)
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


def six_batch(S, T, fl, il, kfam, out, parallel):
    """Targets ``T`` (N, 4, 4) of a 6R family, seeds ``S`` (N or 1, 6): per row the selection
    ``q``, its certified errors and a code (:data:`DONE`, :data:`GENERAL` or
    :data:`NOT_RIGID`) into ``out = (q, perr, rerr, code)``; rows not :data:`DONE` are the
    general path's to decide. ``fl, il``: :data:`PACKING6`'s arrays; ``kfam``: the family's
    ``(kfid, kvar, ksgn)`` (:attr:`.families.SixR.kfid`...; its code picked at compile time).
    On all cores when ``parallel`` (a serial call never touches numba's thread pool)."""
    if parallel:
        q, perr, rerr, code = out  # separate arrays: a tuple argument costs more per call
        six_batch_parallel(S, T, fl, il, kfam, q, perr, rerr, code)
        return
    # on the calling thread: the row kernel itself (see select_batch)
    PACKING6.check_here(il)
    fid, var, sgn = kfam
    _six_block(np.int64(0), np.int64(T.shape[0]), S, T, fl, il, fid, var, sgn, out)


@njit(cache=True, parallel=True)
def six_batch_parallel(S, T, fl, il, kfam, q, perr, rerr, code):  # pragma: no cover - compiled
    """:func:`six_batch` on all cores, in blocks of 64 targets."""
    _check6(il)
    fid, var, sgn = kfam
    n = T.shape[0]
    nblk = (n + 63) // 64
    for bk in prange(nblk):
        i0 = np.int64(bk) * 64
        i1 = min(n, i0 + 64)
        _six_block(i0, i1, S, T, fl, il, fid, var, sgn, (q, perr, rerr, code))


@njit(cache=True)
def six_one(S, T, fl, il, kfam, q, perr, rerr):  # pragma: no cover - compiled
    """:func:`six_batch` for one C-contiguous (4, 4) target ``T`` and seed ``S`` (1, 6);
    returns the code (the target is certified when it is :data:`DONE`: no ``ok`` to pass, one
    array fewer per call). ``kfam`` travels as one tuple: a tuple of ``None``s and an array
    costs no more per call than its entries as separate arguments (the outputs stay separate:
    a tuple of three arrays costs more)."""
    code = np.empty(1, dtype=np.int64)
    _check6(il)
    fid, var, sgn = kfam
    i0 = np.int64(0)  # a literal 0 would type, and compile, _six_block once more
    _six_block(i0, i0 + 1, S, T.reshape((1, 4, 4)), fl, il, fid, var, sgn, (q, perr, rerr, code))
    return code[0]
