"""Compiled candidate generators of 7R arms with one end joint locked: each lock value turns
the target into one of a 6R family's (:mod:`._families6`), whose 8 candidates fill the lock
value's slots with the locked joint's value added."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ikstack.ik.analytic._families6 import solve6
from ikstack.ik.analytic._tuple_math import add, m9, mm, mT, mtv, mv, rotm, sub, v3


@njit(cache=True)
def locked_one(
    fid, var, rev, Ti, lock_first, lh, lr, M, vals, H, P, R6T, sgn, seed, Q, V
):  # pragma: no cover - compiled
    dof = seed.shape[0]
    sub_seed = seed[1:].copy() if lock_first else seed[:6].copy()
    Qs = np.empty((8, 6))
    Vs = np.empty(8, dtype=np.bool_)
    Rt = m9(Ti)
    pt = (Ti[0, 3], Ti[1, 3], Ti[2, 3])
    lh = v3(lh)
    lr = v3(lr)
    R6T = m9(R6T)
    M_R = m9(M)
    M_p = (M[0, 3], M[1, 3], M[2, 3])
    for s in range(vals.shape[0]):
        v = vals[s]
        E = rotm(lh, -v)
        Ep = sub(lr, mv(E, lr))  # exp(-xi v): rotation E, translation (I - E) r
        if lock_first:
            # T' = exp(-xi_1 v) T
            R2 = mm(E, Rt)
            p2 = add(mv(E, pt), Ep)
        else:
            # T' = T M^-1 exp(-xi_7 v) M
            G_R = mm(mm(mT(M_R), E), M_R)
            G_p = mtv(M_R, sub(add(mv(E, M_p), Ep), M_p))
            R2 = mm(Rt, G_R)
            p2 = add(mv(Rt, G_p), pt)
        solve6(fid, var, rev, R2, p2, H, P, R6T, sgn, sub_seed, Qs, Vs)
        for k in range(8):
            slot = s * 8 + k
            V[slot] = Vs[k]
            if lock_first:
                Q[slot, 0] = v
                for j in range(6):
                    Q[slot, j + 1] = Qs[k, j]
            else:
                for j in range(6):
                    Q[slot, j] = Qs[k, j]
                Q[slot, dof - 1] = v


def batch_locked(
    fid, var, rev, T, S, lock_first, lh, lr, M, vals, seed_first, H, P, R6T, sgn, Q, V, parallel
):
    """7R with one end joint locked at ``vals`` (and first at each seed's own value); on all
    cores when ``parallel`` (a serial call never touches numba's thread pool)."""
    kern = batch_locked_parallel if parallel else batch_locked_serial
    kern(fid, var, rev, T, S, lock_first, lh, lr, M, vals, seed_first, H, P, R6T, sgn, Q, V)


@njit(cache=True, inline="always")
def _locked_row(
    i, fid, var, rev, T, S, lock_first, lh, lr, M, vals, seed_first, H, P, R6T, sgn, Q, V
):  # pragma: no cover - compiled
    lock_idx = 0 if lock_first else S.shape[1] - 1
    off = 1 if seed_first else 0
    vv = np.empty(vals.shape[0] + off)
    if seed_first:
        vv[0] = S[i, lock_idx]
    for k in range(vals.shape[0]):
        vv[off + k] = vals[k]
    locked_one(fid, var, rev, T[i], lock_first, lh, lr, M, vv, H, P, R6T, sgn, S[i], Q[i], V[i])


@njit(cache=True)
def batch_locked_serial(
    fid, var, rev, T, S, lock_first, lh, lr, M, vals, seed_first, H, P, R6T, sgn, Q, V
):  # pragma: no cover - compiled
    """:func:`batch_locked` on the calling thread."""
    for i in range(T.shape[0]):
        _locked_row(
            i, fid, var, rev, T, S, lock_first, lh, lr, M, vals, seed_first, H, P, R6T, sgn, Q, V
        )


@njit(cache=True, parallel=True)
def batch_locked_parallel(
    fid, var, rev, T, S, lock_first, lh, lr, M, vals, seed_first, H, P, R6T, sgn, Q, V
):  # pragma: no cover - compiled
    """:func:`batch_locked` on all cores."""
    for i in prange(T.shape[0]):
        _locked_row(
            i, fid, var, rev, T, S, lock_first, lh, lr, M, vals, seed_first, H, P, R6T, sgn, Q, V
        )
