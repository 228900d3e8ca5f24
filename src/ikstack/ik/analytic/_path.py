"""Compiled continuous-path selection: one loop over frames calling a family's candidate kernel.

Per frame, the family kernel writes its candidates for the target seeded by the previous
selection; :func:`._selection.lazy_one` (the same code :meth:`AnalyticIK.solve` runs) moves
them to their representatives within the limits, applies ``max_joint_step`` and the FK gate,
and the valid candidate nearest the previous selection under the weights is taken. A failed
frame holds the previous selection and records flags from which the caller derives its status.
The host certifies the selected path once afterwards (:func:`ikstack.ik.certify`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import njit

from ikstack.ik._data import CHAIN
from ikstack.ik.analytic import _families6 as F6
from ikstack.ik.analytic import _locked6 as L6
from ikstack.ik.analytic import _srs
from ikstack.ik.analytic._select import SELECT, TWO_PI
from ikstack.ik.analytic._selection import lazy_one
from ikstack.ik.analytic.families import SRS, LockedJoint, SixR
from ikstack.spatial._tuple_math import m9

#: frame outcome codes written to ``code`` (the caller maps them to IKStatus values)
FOUND = 0
NO_FK = 1
NO_LIMITS = 2
NO_STEP = 3


@njit(cache=True)
def _select(Q, V, prev, T, chain, sel, work, res, i):  # pragma: no cover - compiled
    """Select among the candidates of frame ``i`` (:func:`._selection.lazy_one`, no polish);
    write the selection (or ``prev``) to ``out[i]`` and its outcome to ``code[i]`` (``res`` is
    ``(out, code)``)."""
    FK, LIM = work[1], work[2]
    out, code = res
    best = lazy_one(Q, V, prev, T, chain, sel, None, work)
    if best >= 0:
        for j in range(Q.shape[1]):
            prev[j] = Q[best, j]
        code[i] = FOUND
    else:
        fk_any = False
        fk_lim = False
        for k in range(Q.shape[0]):
            fk_any = fk_any or FK[k]
            fk_lim = fk_lim or (FK[k] and LIM[k])
        code[i] = NO_FK if not fk_any else (NO_LIMITS if not fk_lim else NO_STEP)
    for j in range(Q.shape[1]):
        out[i, j] = prev[j]


@njit(cache=True)
def path6(fid, var, sgn, fam, T, seed, chain, sel, res):  # pragma: no cover - compiled
    """A 6R family along targets ``T`` (n, 4, 4) from ``seed`` (6,): ``fid, var, sgn`` the
    family's kernel arguments, ``fam`` its ``(reverse, H, P, R6T)``, ``chain`` and ``sel`` the
    :data:`ikstack.ik._data.CHAIN` and :data:`._select.SELECT` records, ``res`` the outputs
    ``(out (n, 6), code (n,))``."""
    rev, H, P, R6T = fam
    K = F6.K6
    Q = np.empty((K, 6))
    V = np.empty(K, dtype=np.bool_)
    OK = np.empty(K, dtype=np.bool_)
    FK = np.empty(K, dtype=np.bool_)
    LIM = np.empty(K, dtype=np.bool_)
    D = np.empty(K)
    Tbuf = np.empty((4, 4))
    prev = seed.copy()
    R6 = m9(R6T)
    for i in range(T.shape[0]):
        Ti = T[i]
        pt = (Ti[0, 3], Ti[1, 3], Ti[2, 3])
        F6.solve6(fid, var, sgn, m9(Ti), pt, (H, P, R6), prev, (Q, V, 0, 0, rev))
        _select(Q, V, prev, Ti, chain, sel, (OK, FK, LIM, D, Tbuf), res, i)


@njit(cache=True)
def path_locked(fid, var, sgn, fam, lock, T, seed, chain, sel, res):  # pragma: no cover - compiled
    """A 7R arm with an end joint locked at the previous selection's value, then ``vals``
    (``lock`` is the family's ``(lock_first, lh, lr, M, vals, K)``; the rest as in
    :func:`path6`).

    The previous selection's lock value is solved first; a grid value whose lock-joint
    distance alone (a lower bound of its candidates' weighted distance) is not below that
    selection's distance cannot win and is skipped. The selection equals the one over all
    ``K`` candidates (ties go to the earlier slot in both).
    """
    rev, H, P, R6T = fam
    lock_first, lh, lr, M, vals, K = lock
    fam6 = L6.Family6Args(fid, var, rev, H, P, R6T, sgn)
    lock6 = L6.LockData(lock_first, lh, lr, M)
    out, code = res
    W = sel.W
    dof = seed.shape[0]
    ns = vals.shape[0]
    Q = np.empty((K, dof))
    V = np.empty(K, dtype=np.bool_)
    OK = np.empty(K, dtype=np.bool_)
    FK = np.empty(K, dtype=np.bool_)
    LIM = np.empty(K, dtype=np.bool_)
    D = np.empty(K)
    Q1 = np.empty((8, dof))
    V1 = np.empty(8, dtype=np.bool_)
    OK1 = np.empty(8, dtype=np.bool_)
    FK1 = np.empty(8, dtype=np.bool_)
    LIM1 = np.empty(8, dtype=np.bool_)
    D1 = np.empty(8)
    Tbuf = np.empty((4, 4))
    prev = seed.copy()
    lock_idx = 0 if lock_first else dof - 1
    wl = W[lock_idx]
    vv = np.empty(ns + 1)
    vv[1:] = vals
    one = np.empty(1)
    sub = np.empty(ns)
    for i in range(T.shape[0]):
        pl = prev[lock_idx]
        one[0] = pl
        L6.locked_one(fam6, lock6, T[i], one, prev, Q1, V1)
        best = lazy_one(Q1, V1, prev, T[i], chain, sel, None, (OK1, FK1, LIM1, D1, Tbuf))
        if best >= 0 and wl > 0.0:
            dstar = D1[best]
            m = 0
            for s in range(ns):
                d = abs(vals[s] - pl)
                d = abs(d - TWO_PI * np.floor(d / TWO_PI + 0.5))  # distance modulo a turn
                d = max(d - 1e-5, 0.0)
                if wl * d * d <= dstar:
                    sub[m] = vals[s]
                    m += 1
            if m > 0:
                n8 = 8 * m
                L6.locked_one(fam6, lock6, T[i], sub[:m], prev, Q[:n8], V[:n8])
                b2 = lazy_one(
                    Q[:n8],
                    V[:n8],
                    prev,
                    T[i],
                    chain,
                    sel,
                    None,
                    (OK[:n8], FK[:n8], LIM[:n8], D[:n8], Tbuf),
                )
                if b2 >= 0 and D[b2] < dstar:
                    for j in range(dof):
                        prev[j] = Q[b2, j]
                    code[i] = FOUND
                    for j in range(dof):
                        out[i, j] = prev[j]
                    continue
            for j in range(dof):
                prev[j] = Q1[best, j]
            code[i] = FOUND
            for j in range(dof):
                out[i, j] = prev[j]
            continue
        # no candidate at the previous lock value (or an unweighted lock joint): all of them
        vv[0] = pl
        L6.locked_one(fam6, lock6, T[i], vv, prev, Q, V)
        _select(Q, V, prev, T[i], chain, sel, (OK, FK, LIM, D, Tbuf), res, i)


@njit(cache=True)
def path_srs(srs, T, seed, chain, sel, res):  # pragma: no cover - compiled
    """A 7R spherical-shoulder / spherical-wrist arm (swivel of the previous selection first);
    ``srs`` is the family's :data:`._srs.SRS_DATA`, the rest as in :func:`path6`."""
    K = _srs.slots(srs)
    dof = seed.shape[0]
    Q = np.empty((K, dof))
    V = np.empty(K, dtype=np.bool_)
    OK = np.empty(K, dtype=np.bool_)
    FK = np.empty(K, dtype=np.bool_)
    LIM = np.empty(K, dtype=np.bool_)
    D = np.empty(K)
    Tbuf = np.empty((4, 4))
    prev = seed.copy()
    for i in range(T.shape[0]):
        _srs.srs_target(T[i], prev, srs, Q, V)
        _select(Q, V, prev, T[i], chain, sel, (OK, FK, LIM, D, Tbuf), res, i)


def run(
    family: object, T: np.ndarray, seed: np.ndarray, gate: tuple[Any, ...]
) -> tuple[np.ndarray, np.ndarray] | None:
    """Selected path ``q`` (n, dof) and outcome codes (n,) of ``family`` along ``T``, or None
    when the family has no compiled path loop. ``gate`` is ``(lo, hi, revolute, Rs, ps, kinds,
    R_end, p_end, ptol, rtol, step, W)``."""
    n, dof = T.shape[0], seed.shape[0]
    out = np.empty((n, dof))
    code = np.empty(n, dtype=np.int64)
    lo, hi, revolute, Rs, ps, kinds, R_end, p_end, ptol, rtol, step, W = gate
    chain = CHAIN.make(Rs=Rs, ps=ps, kinds=kinds, R_end=R_end, p_end=p_end)
    sel = SELECT.make(
        lo=lo, hi=hi, W=W, revolute=revolute, step=step, max_dq=0.0, tol_p=ptol, tol_r=rtol
    )
    if isinstance(family, SixR):
        path6(
            family.kfid,
            family.kvar,
            family.ksgn,
            (family.reverse, family.H, family.P, family.R6T),
            T,
            seed,
            chain,
            sel,
            (out, code),
        )
    elif isinstance(family, LockedJoint):
        s = family.sub
        path_locked(
            s.kfid,
            s.kvar,
            s.ksgn,
            (s.reverse, s.H, s.P, s.R6T),
            (family.lock_first, family.lh, family.lr, family.M, family.grid, family.K),
            T,
            seed,
            chain,
            sel,
            (out, code),
        )
    elif isinstance(family, SRS):
        path_srs(family.data, T, seed, chain, sel, (out, code))
    else:
        return None
    return out, code
