"""Compiled candidate generators of 7R arms with one end joint locked: each lock value turns
the target into one of a 6R family's (:mod:`._families6`), whose 8 candidates fill the lock
value's slots with the locked joint's value added."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np
from numba import njit, prange

from ikstack._records import B, F, Record
from ikstack.ik.analytic._families6 import K6, solve6
from ikstack.spatial._tuple_math import add, m9, mm, mT, mtv, mv, rotm, sub, v3

#: a 6R family's kernel arguments (:attr:`.families.SixR.kfid`, ``kvar``, ``reverse``, ``H``,
#: ``P``, ``R6T``, ``ksgn``), handed to :func:`._families6.solve6` (the geometry as one tuple,
#: ``rev`` in the destination's): a family's ``fid``, ``var`` or ``sgn`` is None where it has
#: none, which numba decides at compile time
Family6Args = namedtuple("Family6Args", ["fid", "var", "rev", "H", "P", "R6T", "sgn"])


def family6(six: Any) -> Any:
    """:data:`Family6Args` of a :class:`.families.SixR`."""
    return Family6Args(six.kfid, six.kvar, six.reverse, six.H, six.P, six.R6T, six.ksgn)


#: the locked end joint of a 7R arm: ``first`` (joint 1, else joint 7), its axis ``h`` through
#: ``r`` (base frame) and the zero-configuration tool pose ``M``
LOCK = Record(
    "LockData",
    __name__,
    [("first", B, ()), ("h", F, (3,)), ("r", F, (3,)), ("M", F, (4, 4))],
)
LockData = LOCK.type


@njit(cache=True, inline="always")
def lock_target(first, h, r, M_R, M_p, Rt, pt, v):  # pragma: no cover - compiled
    """The 6R family's target ``(R, p)`` of target ``(Rt, pt)`` with the locked joint (axis
    ``h`` through ``r``; ``first``: joint 1, else the last, whose fixed transform to the tool
    is ``(M_R, M_p)``) at ``v``: ``exp(-xi_1 v) T``, or ``T M^-1 exp(-xi_7 v) M``."""
    E = rotm(h, -v)
    Ep = sub(r, mv(E, r))  # exp(-xi v): rotation E, translation (I - E) r
    if first:
        return mm(E, Rt), add(mv(E, pt), Ep)
    G_R = mm(mm(mT(M_R), E), M_R)
    G_p = mtv(M_R, sub(add(mv(E, M_p), Ep), M_p))
    return mm(Rt, G_R), add(mv(Rt, G_p), pt)


@njit(cache=True, inline="always")
def lock_slots(Q, base, idx, v):  # pragma: no cover - compiled
    """The locked joint (column ``idx``) of slots ``base .. base + 7`` is ``v``."""
    for k in range(K6):
        Q[base + k, idx] = v


@njit(cache=True)
def locked_one(fam, lock, Ti, vals, seed, Q, V):  # pragma: no cover - compiled
    """The candidates ``Q`` (8 len(vals), dof) and masks ``V`` of target ``Ti`` (4, 4) with the
    :data:`LOCK` joint at each of ``vals``: 8 slots per value, from the 6R family ``fam``
    (:data:`Family6Args`) seeded by ``seed`` (dof,)."""
    fid, var, rev, H, P, R6T, sgn = fam
    lock_first, lh, lr, M = lock
    off = 1 if lock_first else 0  # the 6R family's first joint
    idx = 0 if lock_first else seed.shape[0] - 1
    Rt = m9(Ti)
    pt = (Ti[0, 3], Ti[1, 3], Ti[2, 3])
    lh = v3(lh)
    lr = v3(lr)
    R6T = m9(R6T)
    M_R = m9(M)
    M_p = (M[0, 3], M[1, 3], M[2, 3])
    for s in range(vals.shape[0]):
        v = vals[s]
        R2, p2 = lock_target(lock_first, lh, lr, M_R, M_p, Rt, pt, v)
        solve6(fid, var, sgn, R2, p2, (H, P, R6T), seed, (Q, V, K6 * s, off, rev))
        lock_slots(Q, K6 * s, idx, v)


def batch_locked(fam, lock, vals, T, S, out, parallel):
    """Candidates ``out = (Q (N, 8 (len(vals) + 1), 7), V)`` of a 7R arm with the :data:`LOCK`
    joint at each seed's own value (seeds ``S`` (N, 7)), then at ``vals``, for targets ``T``
    (N, 4, 4); on all cores when ``parallel`` (a serial call never touches numba's thread
    pool)."""
    if parallel:
        batch_locked_parallel(fam, lock, vals, T, S, out)
    else:
        locked_rows(fam, lock, vals, T, S, out, 0, T.shape[0])


@njit(cache=True)
def locked_rows(fam, lock, vals, T, S, out, start, stop):  # pragma: no cover - compiled
    """:func:`batch_locked` of targets ``start .. stop`` on the calling thread."""
    Q, V = out
    lock_idx = 0 if lock.first else S.shape[1] - 1
    for i in range(start, stop):
        vv = np.empty(vals.shape[0] + 1)
        vv[0] = S[i, lock_idx]
        for k in range(vals.shape[0]):
            vv[1 + k] = vals[k]
        locked_one(fam, lock, T[i], vv, S[i], Q[i], V[i])


@njit(cache=True, parallel=True)
def batch_locked_parallel(fam, lock, vals, T, S, out):  # pragma: no cover - compiled
    """:func:`batch_locked` on all cores (numba shares the targets out)."""
    for i in prange(T.shape[0]):
        locked_rows(fam, lock, vals, T, S, out, i, i + 1)
