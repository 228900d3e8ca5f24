"""The compiled ``return_all`` path of a 6R family (:meth:`AnalyticIK.solve` with
``return_all=True``): one pass per target does what the general path does with numpy glue
around its kernels, with the same kernels in the same order, so its numbers are the general
path's bit for bit:

1. the rigid check of the target (anything not well within the tolerance: numpy decides);
2. the family's 8 candidates (:func:`._families6.solve6`, as :func:`._families6.batch6`);
3. representatives, limits, the FK gate of every candidate, the step bound and the seed
   distances (:func:`._selection._finalize_pl`'s full pass, as :func:`._selection.finalize`, with
   :func:`ikstack.kinematics._kernels.fk_revolute6_cs`, which is ``fk_one`` to the bit; a
   joint value shared with the previous candidate gated (the families write candidates that
   share joints next to each other) takes that candidate's cosine and sine);
4. the coupled-joint constraints of every candidate, the certificate of every candidate, and the
   selection (the valid candidate nearest the seed, first on ties: the selection loop's scan,
   :func:`._selection.nearest_open`).

The certificate (:func:`ikstack.ik.certify`) is the FK gate's verdict: the gate here runs the
certificate's own error kernel (:func:`ikstack.ik._gate.fk_error_one`: its
:func:`~ikstack.ik._gate.pose_residual`, then
:func:`~ikstack.spatial._tuple_math.rotation_angle`, ``atan2(|v|/2, c)``) on the same FK
numbers with the same tolerances (the general path's gate is the same function), so only
the chain's own limits (without the kinematic margin) and the constraints remain to check. The
rotation verdict takes ``atan2`` only within a relative 1e-9 of the tolerance (:func:`_rot_ok`;
elsewhere ``|v/2| / c`` against ``tan`` of the tolerance decides it the same way), and the
selection's reported error is ``atan2`` of its own numbers, as the certificate's. Rows whose
selection fails, whose constraints are too close to call, or whose target numpy must check get
a nonzero code; the general path decides them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit, prange

from ikstack.ik._gate import RIGID, constraints_row, kernel_array, pose_residual, rigid_code
from ikstack.ik.analytic._families6 import K6, solve6
from ikstack.ik.analytic._select import _project, joint_rep
from ikstack.ik.analytic._selection import nearest_open
from ikstack.ik.analytic._single_target import (
    DONE,
    GENERAL,
    NOT_RIGID,
    _check6,
    _unpack6_unchecked,
)
from ikstack.ik.analytic.families import PARALLEL_THRESHOLD
from ikstack.ik.result import IKResult
from ikstack.kinematics._kernels import all_finite, fk_revolute6_cs
from ikstack.spatial import RIGID_ATOL, as_transforms
from ikstack.spatial._tuple_math import axial_sine, m9, v3

_F64 = np.dtype(np.float64)
_BOOL = np.dtype(np.bool_)
_I64 = np.dtype(np.int64)

#: relative margin of the rotation verdict decided without ``atan2`` (:func:`_rot_ok`)
_ROT_MARGIN = 1e-9


@njit(cache=True, inline="always")
def _rot_ok(y, c, rtol, tr):  # pragma: no cover - compiled
    """``atan2(y, c) <= rtol`` (the certificate's rotation verdict, ``y >= 0``) with
    ``tr = tan(rtol)``, negative for tolerances of 1 rad or more. ``atan2`` is monotone in
    ``y / c``, so away from the boundary (a relative margin of :data:`_ROT_MARGIN`, far above
    the round-off of ``atan2`` and ``tan``) the verdict needs no ``atan2``; within it, and for
    large tolerances, ``atan2`` decides as the certificate does."""
    if tr > 0.0:
        if c <= 0.0:
            return False  # an angle of pi/2 or more: beyond any tolerance under 1 rad
        lim = c * tr
        if y <= lim * (1.0 - _ROT_MARGIN):
            return True
        if y >= lim * (1.0 + _ROT_MARGIN):
            return False
    return math.atan2(y, c) <= rtol


@njit(cache=True)
def _all_block(i0, i1, S, T, fl, il, kfam, out):  # pragma: no cover - compiled
    """Rows ``i0 .. i1`` of :func:`all_serial` (its arguments; the packing's tag checked by the
    caller)."""
    # unpacked here, inlined (records passed into a compiled call cost a reference count per
    # array); the family's fid, var, sgn: kfam
    chain, cons, gate, sel, fam = _unpack6_unchecked(fl, il)
    fid, var, sgn = kfam
    Q, VA, q, ok, perr, rerr = out
    lo, hi, W, revolute, step = sel.lo, sel.hi, sel.W, sel.revolute, sel.step
    glo, ghi, ptol, rtol = gate.lo, gate.hi, gate.tol_p, gate.tol_r
    Rs, ps, R_end, p_end = chain.Rs, chain.ps, chain.R_end, chain.p_end
    qidx, qcoef, A, b = cons.qidx, cons.qcoef, cons.A, cons.b
    rev, H, P, R6 = fam.reverse, fam.H, fam.P, m9(fam.R6T)
    # scratch: three allocations (one per type and shape) rather than one per array
    B = np.empty((3, K6), dtype=np.bool_)
    V, OK, LIM = B[0], B[1], B[2]
    F = np.empty((4, K6))
    # seed distances, position errors, and of the rotation errors |axial vector| / 2 (the
    # sine) and the cosine: the error is atan2(RE, RC)
    D, PE, RE, RC = F[0], F[1], F[2], F[3]
    CS = np.empty((2, K6, 6))
    CQ, SQ = CS[0], CS[1]
    Tbuf = np.empty((4, 4))
    # the chain as tuples for the FK gate (a 6R family's joints are revolute)
    Rs_t = (m9(Rs[0]), m9(Rs[1]), m9(Rs[2]), m9(Rs[3]), m9(Rs[4]), m9(Rs[5]))
    ps_t = (v3(ps[0]), v3(ps[1]), v3(ps[2]), v3(ps[3]), v3(ps[4]), v3(ps[5]))
    Re_t = m9(R_end)
    pe_t = v3(p_end)
    tr = math.tan(rtol) if rtol < 1.0 else -1.0
    no_constraints = qidx.shape[0] == 0 and A.shape[0] == 0
    one_seed = S.shape[0] == 1
    code = 0
    for i in range(i0, i1):
        Ti = T[i]
        s = S[0] if one_seed else S[i]
        Qi = Q[i]
        perr[i] = 0.0
        rerr[i] = 0.0
        ok[i] = False
        for k in range(K6):
            VA[i, k] = False
        if rigid_code(Ti, RIGID_ATOL) != RIGID:
            code |= NOT_RIGID
            for k in range(K6):
                for j in range(6):
                    Qi[k, j] = s[j]
            continue
        last = -1  # the last candidate FK-gated (its cosines and sines are in CQ, SQ)
        pt = (Ti[0, 3], Ti[1, 3], Ti[2, 3])
        solve6(fid, var, sgn, m9(Ti), pt, (H, P, R6), s, (Qi, V, 0, 0, rev))
        # _selection._finalize_pl's full pass (no polish), with the tuple FK
        for k in range(K6):
            for j in range(6):
                if not np.isfinite(Qi[k, j]):
                    Qi[k, j] = s[j]
                    V[k] = False
            # _select._limits_row, in place on the slot (no row view per slot)
            lim = True
            d = 0.0
            for j in range(6):
                x, inside = joint_rep(Qi[k, j], s[j], lo[j], hi[j], revolute[j])
                lim = lim and inside
                Qi[k, j] = x
                dd = x - s[j]
                d += W[j] * dd * dd
            D[k] = d
            LIM[k] = lim
        for k in range(K6):
            st = 0.0
            for j in range(6):
                st = max(st, abs(Qi[k, j] - s[j]))
            fk_ok = False
            if V[k] and LIM[k] and st <= step:  # else invalid whatever its FK (the general
                # path's FK flag of such a slot only words a failed row's status: its to decide)
                for j in range(6):
                    # a joint value of the last candidate gated (the families write the
                    # candidates sharing joints next to each other): its cosine and sine
                    x = Qi[k, j]
                    if (
                        last >= 0
                        and Qi[last, j] == x
                        and (math.copysign(1.0, Qi[last, j]) == math.copysign(1.0, x))
                    ):
                        CQ[k, j] = CQ[last, j]
                        SQ[k, j] = SQ[last, j]
                    else:
                        CQ[k, j] = np.cos(x)
                        SQ[k, j] = np.sin(x)
                last = k
                fk_revolute6_cs(
                    (CQ[k, 0], CQ[k, 1], CQ[k, 2], CQ[k, 3], CQ[k, 4], CQ[k, 5]),
                    (SQ[k, 0], SQ[k, 1], SQ[k, 2], SQ[k, 3], SQ[k, 4], SQ[k, 5]),
                    Rs_t,
                    ps_t,
                    Re_t,
                    pe_t,
                    Tbuf,
                )
                # fk_error_one's numbers; its atan2 only where the verdict needs it, and for
                # the selection's reported error below
                pe, c, vx, vy, vz = pose_residual(Tbuf, Ti)
                y = axial_sine(vx, vy, vz)
                PE[k] = pe
                RE[k] = y
                RC[k] = c
                fk_ok = pe <= ptol and _rot_ok(y, c, rtol, tr)
            OK[k] = fk_ok
        _project(Qi, LIM, lo, hi)
        undecided = False
        for k in range(K6):
            if not OK[k]:
                continue
            c = 1 if no_constraints else constraints_row(Qi[k], qidx, qcoef, A, b)
            if c < 0:
                undecided = True
            if c != 1:
                OK[k] = False  # the selection takes slots that meet the constraints
                continue
            inside = True
            for j in range(6):
                x = Qi[k, j]
                if not (x >= glo[j] and x <= ghi[j]):
                    inside = False
            VA[i, k] = inside
        best = nearest_open(OK, D, K6)
        if undecided or best < 0 or not VA[i, best]:
            code |= GENERAL
            continue
        for j in range(6):
            q[i, j] = Qi[best, j]
        perr[i] = PE[best]
        rerr[i] = math.atan2(RE[best], RC[best])  # rotation_angle's, of the kept sine and cosine
        ok[i] = True
    return code


@njit(cache=True)
def all_serial(S, T, fl, il, kfam, out):  # pragma: no cover - compiled
    """Every candidate ``Q`` (N, 8, 6), its certified mask ``VA`` (N, 8), the selection ``q``
    (N, 6), its success ``ok`` and its errors (``out``: ``(Q, VA, q, ok, perr, rerr)``), for
    targets ``T`` (N, 4, 4) and seeds ``S`` (N or 1, 6), on the calling thread; ``fl, il``: a
    solver's :data:`._single_target.PACKING6` arrays; ``kfam``: the family's
    :attr:`.families.SixR.kfid`, ``kvar`` and ``ksgn``. Rows not ``ok`` are the general path's
    to decide; returns :data:`._single_target.DONE` when every row is ``ok``, else the codes of
    the rows that are not (:data:`._single_target.GENERAL`, and
    :data:`._single_target.NOT_RIGID` for a target numpy must check) or-ed."""
    _check6(il)
    return _all_block(np.int64(0), T.shape[0], S, T, fl, il, kfam, out)


@njit(cache=True, parallel=True)
def all_parallel(S, T, fl, il, kfam, out):  # pragma: no cover - compiled
    """:func:`all_serial` on all cores, in blocks of 64 targets."""
    n = T.shape[0]
    nblk = (n + 63) // 64
    codes = np.zeros(nblk, dtype=np.int64)
    _check6(il)
    for bk in prange(nblk):
        codes[bk] = _all_block(
            np.int64(bk) * 64, min(n, np.int64(bk) * 64 + 64), S, T, fl, il, kfam, out
        )
    code = 0
    for bk in range(nblk):
        code |= codes[bk]
    return code


def solve_all(ik: Any, T_base_tcp: Any, seed: Any) -> IKResult | None:
    """``AnalyticIK.solve(T, seed, return_all=True)`` of a strict 6R family ``ik`` for (4, 4) or
    (N, 4, 4) float64 targets, in one compiled pass per target; rows it leaves undecided are
    solved by the general path. None for any other input (the general path validates it).

    Per call: the input checks, one array per result field (a view costs as much as an
    array) and one compiled call; the result is built without the dataclass's per-field
    overhead (:func:`ikstack.ik._fixed_gate.result_one`'s way)."""
    T = T_base_tcp
    if type(T) is not np.ndarray or T.dtype is not _F64:
        return None
    shape = T.shape
    if shape == (4, 4):
        n = 1
        T = kernel_array(T)[None]
    elif len(shape) == 3 and shape[1:] == (4, 4) and shape[0]:
        n = shape[0]
        T = kernel_array(T)
    else:
        return None
    if seed is None:
        S = ik._middle1
    elif (
        type(seed) is np.ndarray
        and seed.dtype == np.float64
        and seed.size == 6
        and seed.shape[-1] == 6
        and all_finite(seed)
    ):
        S = np.minimum(np.maximum(seed.reshape(1, 6), ik._lo), ik._hi)
    else:
        S = ik._seeds(seed, n)
    empty = np.empty  # (dtypes positional: a keyword costs a tenth of the allocation)
    Q = empty((n, 8, 6))
    VA = empty((n, 8), _BOOL)
    q = empty((n, 6))
    success = empty(n, _BOOL)
    perr = empty(n)
    rerr = empty(n)
    fl, il = ik._pack6
    kern = all_parallel if n >= PARALLEL_THRESHOLD else all_serial
    code = kern(S, T, fl, il, ik._kfam, (Q, VA, q, success, perr, rerr))
    status = np.zeros(n, _I64)  # IKStatus.SUCCESS
    if code != DONE:
        if code & NOT_RIGID:
            as_transforms(T, "T_base_tcp")  # raises unless rigid within the tolerance
        rows = np.flatnonzero(~success)
        Sr = (
            S[rows] if S.shape[0] == n else np.ascontiguousarray(np.broadcast_to(S, (rows.size, 6)))
        )
        r = ik._solve(np.ascontiguousarray(T[rows]), np.ascontiguousarray(Sr), True)
        q[rows], success[rows], status[rows] = r.q, r.success, r.status
        perr[rows], rerr[rows] = r.position_error, r.rotation_error
        Q[rows], VA[rows] = r.q_all, r.valid_all
    zeros = np.zeros
    return IKResult._trusted(
        q, success, perr, rerr, status, ik.method, zeros(n, _I64), zeros(n, _I64), Q, VA
    )
