"""Per-target pencil assembly (numba), and the records the 6R elimination kernels share.

:func:`prepare_rows` builds, for every item (a target and a geometry chart), the 24x24 companion
matrix of the quadratic pencil (see :mod:`._elimination`); its eigenvalues are computed in one
stacked LAPACK call by the caller, and :mod:`._backsub` turns them into joint vectors. The kernels
take three records (:data:`GEOMETRY`, :data:`SETTINGS`, :data:`ITEMS`) and the targets; a call
from Python on few items goes through :func:`prepare_fields`, which takes them as plain tuples.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
from numba import njit, prange

from ikstack._records import F, I, Record
from ikstack.ik.analytic.general6r._dense import _lu, _lu_solve, _qr_null_pinv, _rigid_inv
from ikstack.ik.analytic.general6r._elimination import (
    _GRID,
    HALF,
    MAX_ROOTS,
    NQ,
    VINV,
    _mm,
    _rz_left,
    fit_left,
    fit_right,
)

N_EIG = 24
#: chart codes
DIRECT = 0
RECIPROCAL = 1
FAILED = -1

#: 6R elimination data for G charts (one per lock value; G = 1 for a plain 6R chain):
#: ``T_base_tcp = P_1 Z(q_1) ... P_6 Z(q_6) E`` per chart. ``shift`` is the cyclic role
#: assignment of the loop (see :func:`_prepare_one`): joint ``(shift + i) mod 6`` plays role
#: ``i`` (role 2 is the eigenvalue joint).
GEOMETRY = Record(
    "Geometry",
    __name__,
    [
        ("P", F, ("G", 6, 4, 4)),
        ("E", F, ("G", 4, 4)),
        ("Ei", F, ("G", 4, 4)),
        ("left", F, ("G", NQ, 27)),  # left coefficient block (zeros when it depends on the target)
        ("shift", I, ()),
    ],
)
Geometry = GEOMETRY.type

#: a solve's settings
SETTINGS = Record(
    "PencilSettings",
    __name__,
    [
        ("phi", F, ()),  # offset of the hidden joint's half-angle chart: x = tan((q3 - phi) / 2)
        ("imag_tol", F, ()),  # |Im| <= imag_tol (1 + |lambda|): a real eigenvalue
        ("newton_iters", I, ()),  # bounded determinant-Newton corrections per root
        ("lower", F, (6,)),  # limits the joints are wrapped into [rad]
        ("upper", F, (6,)),
    ],
)
PencilSettings = SETTINGS.type

#: the K items of one batched solve: item k pairs target ``tidx[k]`` with chart ``gidx[k]``;
#: :func:`prepare_rows` fills the pencil fields, the caller the eigenvalues, and
#: :func:`._backsub.backsub_rows` the joint vectors ``q`` (chain order) and pose residuals
#: ``res`` (inf in an empty slot)
ITEMS = Record(
    "PencilItems",
    __name__,
    [
        ("tidx", I, ("K",)),
        ("gidx", I, ("K",)),
        ("M", F, ("K", N_EIG, N_EIG)),  # companion matrix
        ("S", F, ("K", 3, 12, 12)),  # Sigma(q3) = S_0 + S_1 cos q3 + S_2 sin q3
        ("pinv", F, ("K", 8, NQ)),  # the eliminated block's least-squares solution
        ("q0", F, ("K", NQ)),
        ("Pp", F, ("K", 6, 4, 4)),  # the shifted chain Pp_1 Z'_1 ... Pp_6 Z'_6 = Wp
        ("Wp", F, ("K", 4, 4)),
        ("left", F, ("K", NQ, 27)),
        ("chart", I, ("K",)),  # DIRECT, RECIPROCAL or FAILED
        ("w_re", F, ("K", N_EIG)),  # the companion matrix's eigenvalues
        ("w_im", F, ("K", N_EIG)),
        ("q", F, ("K", MAX_ROOTS, 6)),
        ("res", F, ("K", MAX_ROOTS)),
    ],
)
PencilItems = ITEMS.type


#: per field after the indices: its shape after K, and its dtype
_ITEM_TAILS = tuple(
    (tuple(shape[1:]), np.int64 if t == I else np.float64) for _, t, shape in ITEMS.fields[2:]
)


@functools.lru_cache(maxsize=64)
def _item_shapes(K: int) -> tuple[tuple[tuple[int, ...], type], ...]:
    """Per field after the indices: its shape at ``K`` items, and its dtype."""
    return tuple(((K, *tail), dt) for tail, dt in _ITEM_TAILS)


def new_items(tidx: np.ndarray, gidx: np.ndarray) -> Any:
    """:data:`ITEMS` for item indices ``tidx``, ``gidx`` (K,), the other fields uninitialised."""
    return PencilItems(
        np.ascontiguousarray(tidx, dtype=np.int64),
        np.ascontiguousarray(gidx, dtype=np.int64),
        *[np.empty(shape, dt) for shape, dt in _item_shapes(int(tidx.shape[0]))],
    )


# ----------------------------------------------------------------------------- geometry
@njit(cache=True)
def build_geometry(P7, E7, lock, lams, geom):  # pragma: no cover - compiled
    """Fill :data:`GEOMETRY` ``geom``'s charts: the locked joint of a 7-factor chain folded at
    each ``lams[g]`` (6 factors: no folding).

    ``P7 (n, 4, 4)``, ``E7`` describe an n-joint chain (n = 6 or 7); with n = 7 joint ``lock`` is
    frozen at ``lams[g]``. The left block is filled when cyclic ``geom.shift`` keeps it constant.
    """
    outP, outE, outEi, outLeft, shift = geom.P, geom.E, geom.Ei, geom.left, geom.shift
    G = lams.shape[0]
    n = P7.shape[0]
    const = shift == 0 or shift == 4 or shift == 5
    t = np.empty((4, 4))
    for g in range(G):
        c = math.cos(lams[g])
        s = math.sin(lams[g])
        if n == 6:
            for i in range(6):
                outP[g, i] = P7[i]
            outE[g] = E7
        else:
            j = 0
            for i in range(7):
                if i == lock:
                    continue
                if i == lock + 1:
                    _rz_left(c, s, P7[i], t)  # Z(lam) P_{lock+1}
                    _mm(P7[lock], t, outP[g, j])
                else:
                    outP[g, j] = P7[i]
                j += 1
            if lock == 6:
                _rz_left(c, s, E7, t)
                _mm(P7[6], t, outE[g])
            else:
                outE[g] = E7
        _rigid_inv(outE[g], outEi[g])
        if const:
            # links C_k = P_{k+1} (k < 5); roles r_i = (shift + i) mod 6; left uses r_2, r_3, r_4
            fit_left(
                outP[g, (shift + 2) % 6 + 1],
                outP[g, (shift + 3) % 6 + 1],
                outP[g, (shift + 4) % 6 + 1],
                VINV,
                _GRID,
                outLeft[g],
            )
        else:
            outLeft[g, :, :] = 0.0


# ----------------------------------------------------------------------------- pencil
@njit(cache=True, inline="always")
def _prepare_one(Ts, geom, cfg, items, k):  # pragma: no cover - compiled
    """Item ``k``'s pencil fields of :data:`ITEMS`; returns its chart. ``Pp, Wp`` receive the
    shifted chain ``Pp_1 Z'_1 ... Pp_6 Z'_6 = Wp``.

    Loop: ``Z_1 C_1 ... Z_6 C_6 = I`` with ``C_k = P_{k+1}`` (k < 6) and ``C_6 = W^{-1} P_1``;
    roles ``r_i = (shift + i) mod 6``: ``Pp = [I, C_{r_1}, ..., C_{r_5}]``, ``Wp = C_{r_6}^{-1}``.
    """
    T = Ts[items.tidx[k]]
    g = items.gidx[k]
    P, Ei, left_g, shift = geom.P[g], geom.Ei[g], geom.left[g], geom.shift
    M, S, pinv, q0 = items.M[k], items.S[k], items.pinv[k], items.q0[k]
    Pp, Wp, left = items.Pp[k], items.Wp[k], items.left[k]
    W = np.empty((4, 4))
    Wi = np.empty((4, 4))
    C = np.empty((6, 4, 4))
    _mm(T, Ei, W)
    _rigid_inv(W, Wi)
    for k in range(5):
        C[k] = P[k + 1]
    _mm(Wi, P[0], C[5])
    for a in range(4):
        for b in range(4):
            Pp[0, a, b] = 1.0 if a == b else 0.0
    for i in range(5):
        Pp[i + 1] = C[(shift + i) % 6]
    _rigid_inv(C[(shift + 5) % 6], Wp)
    if shift == 0 or shift == 4 or shift == 5:
        left[:, :] = left_g
    else:
        fit_left(Pp[3], Pp[4], Pp[5], VINV, _GRID, left)
    Pi1 = np.empty((4, 4))
    Pi2 = np.empty((4, 4))
    _rigid_inv(Pp[1], Pi1)
    _rigid_inv(Pp[2], Pi2)
    R = np.empty((NQ, 9))
    fit_right(Wp, Pp[0], Pi1, Pi2, VINV, _GRID, R)
    Qn = np.ascontiguousarray(R[:, 1:])
    Nl = np.empty((NQ - 8, NQ))
    _qr_null_pinv(Qn, Nl, pinv)
    for r in range(NQ):
        q0[r] = R[r, 0]
    # 6 eliminated equations on the 27 monomials of (q3, q4, q5)
    D = np.zeros((6, 27))
    for e in range(6):
        for r in range(NQ):
            nr = Nl[e, r]
            if nr != 0.0:
                for m in range(27):
                    D[e, m] += nr * left[r, m]
                D[e, 0] -= nr * q0[r]
    for i3 in range(3):
        for a in range(12):
            for b in range(12):
                S[i3, a, b] = 0.0
        for e in range(6):
            for i4 in range(3):
                for i5 in range(3):
                    d = D[e, i3 * 9 + i4 * 3 + i5]
                    if d == 0.0:
                        continue
                    for u in range(3):
                        hu = HALF[i4, u]
                        if hu == 0.0:
                            continue
                        for v in range(3):
                            hv = HALF[i5, v]
                            if hv != 0.0:
                                S[i3, e, u * 3 + v] += d * hu * hv
                                S[i3, 6 + e, (u + 1) * 3 + v] += d * hu * hv
    for a in range(12):  # row equilibration (does not move the roots)
        mx = 0.0
        for i3 in range(3):
            for b in range(12):
                mx = max(mx, abs(S[i3, a, b]))
        if mx > 0.0:
            for i3 in range(3):
                for b in range(12):
                    S[i3, a, b] /= mx
    cp = math.cos(cfg.phi)
    sp = math.sin(cfg.phi)
    A = np.empty((12, 12))
    B = np.empty((12, 12))
    C = np.empty((12, 12))
    for a in range(12):
        for b in range(12):
            s1 = S[1, a, b] * cp + S[2, a, b] * sp
            s2 = -S[1, a, b] * sp + S[2, a, b] * cp
            A[a, b] = S[0, a, b] - s1
            B[a, b] = 2.0 * s2
            C[a, b] = S[0, a, b] + s1
    LUa = np.empty((12, 12))
    LUc = np.empty((12, 12))
    pa = np.empty(12, dtype=np.int64)
    pc = np.empty(12, dtype=np.int64)
    _, ra, _ = _lu(A, LUa, pa)
    _, rc, _ = _lu(C, LUc, pc)
    if max(ra, rc) < 1e-14:
        for a in range(N_EIG):
            for b in range(N_EIG):
                M[a, b] = 0.0
        return FAILED
    chart = DIRECT if ra >= rc else RECIPROCAL
    LU = LUa if chart == DIRECT else LUc
    piv = pa if chart == DIRECT else pc
    lead = C if chart == DIRECT else A
    col = np.empty(12)
    for a in range(N_EIG):
        for b in range(N_EIG):
            M[a, b] = 0.0
    for a in range(12):
        M[a, 12 + a] = 1.0
    for b in range(12):
        for a in range(12):
            col[a] = -lead[a, b]
        _lu_solve(LU, piv, col)
        for a in range(12):
            M[12 + a, b] = col[a]
        for a in range(12):
            col[a] = -B[a, b]
        _lu_solve(LU, piv, col)
        for a in range(12):
            M[12 + a, 12 + b] = col[a]
    return chart


@njit(cache=True)
def prepare_rows(Ts, geom, cfg, items, start, stop):  # pragma: no cover - compiled
    """The pencils of items ``start .. stop`` of :data:`ITEMS` ``items`` (targets ``Ts``,
    charts of :data:`GEOMETRY` ``geom``, :data:`SETTINGS` ``cfg``) on the calling thread."""
    for k in range(start, stop):
        items.chart[k] = _prepare_one(Ts, geom, cfg, items, k)


@njit(cache=True, parallel=True)
def prepare_parallel(Ts, geom, cfg, items):  # pragma: no cover - compiled
    """:func:`prepare_rows` of every item on all cores (numba shares the rows out)."""
    for k in prange(items.tidx.shape[0]):
        i = np.int64(k)  # prange's index is unsigned: one int64 signature for every caller
        prepare_rows(Ts, geom, cfg, items, i, i + 1)


@njit(cache=True)
def prepare_fields(Ts, geom, cfg, items):  # pragma: no cover - compiled
    """:func:`prepare_rows` of every item, the records passed as plain tuples of their fields
    (in field order), rebuilt here.

    For a call from Python: numba types a named tuple's fields on every call through a slow
    path (about 3 us for these three records, numba 0.68) and a plain tuple through its fast
    one; inside compiled code the records cost nothing."""
    it = PencilItems(*items)
    prepare_rows(Ts, Geometry(*geom), PencilSettings(*cfg), it, np.int64(0), it.tidx.shape[0])
