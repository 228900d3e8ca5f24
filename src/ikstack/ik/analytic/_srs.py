"""Compiled candidate generator of 7R SRS arms (shoulder and wrist axes meet), by swivel angle.

Shoulder point ``S`` (axes 1-3 meet), wrist point ``W`` (axes 5-7 meet). The distance
``|W - S|`` depends on the elbow joint alone (subproblem 3, two branches; any elbow offset is
allowed). For a swivel angle ``psi`` the shoulder rotation is the one taking the elbow-local
shoulder-to-wrist vector onto the target's, turned by ``psi`` about the S-W line; the elbow
reference point (on axis 4) then lies at angle ``psi`` from the base ``z`` projected normal to
S-W (base ``x`` when S-W is within 8 degrees of ``z``). Shoulder and wrist angles come from
three-axis decompositions: 8 candidates per swivel sample.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ikstack.ik.analytic._families6 import decompose3
from ikstack.ik.analytic._sp_kernels import sp3
from ikstack.ik.analytic._vec import (
    add,
    any_perp,
    cross,
    dot,
    m9,
    mm,
    mT,
    mv,
    neg,
    norm,
    rot,
    rotm,
    scale,
    sub,
    v3,
)


@njit(cache=True)
def _frame(what):  # pragma: no cover - compiled
    if abs(what[2]) < 0.99:
        ref = (0.0, 0.0, 1.0)
    else:
        ref = (1.0, 0.0, 0.0)
    e1 = sub(ref, scale(what, dot(ref, what)))
    e1 = scale(e1, 1.0 / norm(e1))
    return e1, cross(what, e1)


@njit(cache=True)
def _wrist_dir(Rt, pt, Sp, p7T, R7T):  # pragma: no cover - compiled
    R07 = mm(Rt, mT(R7T))
    w = sub(sub(pt, mv(R07, p7T)), Sp)
    dw = norm(w)
    what = scale(w, 1.0 / dw) if dw > 1e-12 else (0.0, 0.0, 1.0)
    return R07, dw, what


@njit(cache=True)
def seed_swivel(Rt, pt, H, Sp, pS3, p7T, R7T, seed):  # pragma: no cover - compiled
    """The swivel angle of the seed's elbow reference point about the target's S-W line."""
    _, _, what = _wrist_dir(Rt, pt, Sp, p7T, R7T)
    e1, e2 = _frame(what)
    R03 = mm(mm(rotm(v3(H[0]), seed[0]), rotm(v3(H[1]), seed[1])), rotm(v3(H[2]), seed[2]))
    e = mv(R03, pS3)
    return math.atan2(dot(e, e2), dot(e, e1))


@njit(cache=True)
def srs_one(Rt, pt, H, Sp, pS3, p3W, p7T, R7T, psis, seed, Q, V):  # pragma: no cover - compiled
    """Candidates ``Q`` (8 * len(psis), 7) and masks ``V`` for one target."""
    for k in range(Q.shape[0]):
        V[k] = False
        for j in range(7):
            Q[k, j] = seed[j]
    R07, dw, what = _wrist_dir(Rt, pt, Sp, p7T, R7T)
    e1, e2 = _frame(what)
    h0, h1, h2, h3 = v3(H[0]), v3(H[1]), v3(H[2]), v3(H[3])
    h4, h5, h6 = v3(H[4]), v3(H[5]), v3(H[6])
    m, ls, el0, el1 = sp3(p3W, neg(pS3), h3, dw)
    for j in range(m):
        q3 = el0 if j == 0 else el1
        v = add(pS3, rot(h3, q3, p3W))
        nv = norm(v)
        vhat = scale(v, 1.0 / nv) if nv > 1e-12 else what
        ax = cross(vhat, what)
        sn = norm(ax)
        cs = dot(vhat, what)
        if sn > 1e-12:
            R0 = rotm(scale(ax, 1.0 / sn), math.atan2(sn, cs))
        elif cs > 0:
            R0 = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
        else:
            R0 = rotm(any_perp(vhat), math.pi)
        e0 = mv(R0, pS3)
        psi0 = math.atan2(dot(e0, e2), dot(e0, e1))
        R3e = rotm(h3, q3)
        for s in range(psis.shape[0]):
            R03 = mm(rotm(what, psis[s] - psi0), R0)
            na, X, Y, Z = decompose3(R03, h0, h1, h2, seed[0])
            R47 = mm(mT(mm(R03, R3e)), R07)
            nb, X2, Y2, Z2 = decompose3(R47, h4, h5, h6, seed[4])
            for a in range(na):
                for b in range(nb):
                    slot = s * 8 + j * 4 + a * 2 + b
                    Q[slot, 0] = X[a]
                    Q[slot, 1] = Y[a]
                    Q[slot, 2] = Z[a]
                    Q[slot, 3] = q3
                    Q[slot, 4] = X2[b]
                    Q[slot, 5] = Y2[b]
                    Q[slot, 6] = Z2[b]
                    V[slot] = not ls


@njit(cache=True)
def _srs_target(T, seed, H, Sp, pS3, p3W, p7T, R7T, grid, seed_first, Q, V):  # pragma: no cover
    Rt = m9(T)
    pt = (T[0, 3], T[1, 3], T[2, 3])
    Sp, pS3, p3W, p7T, R7T = v3(Sp), v3(pS3), v3(p3W), v3(p7T), m9(R7T)
    ns = grid.shape[0] + (1 if seed_first else 0)
    psis = np.empty(ns)
    off = 0
    if seed_first:
        psis[0] = seed_swivel(Rt, pt, H, Sp, pS3, p7T, R7T, seed)
        off = 1
    psis[off:] = grid
    srs_one(Rt, pt, H, Sp, pS3, p3W, p7T, R7T, psis, seed, Q, V)


@njit(cache=True, parallel=True)
def batch_srs(T, S, H, Sp, pS3, p3W, p7T, R7T, grid, seed_first, Q, V,
              parallel):  # pragma: no cover - compiled
    """Candidates ``Q`` (N, 8 * (len(grid) + seed_first), 7) for targets ``T`` (N, 4, 4)."""
    n = T.shape[0]
    if parallel:
        for i in prange(n):
            _srs_target(T[i], S[i], H, Sp, pS3, p3W, p7T, R7T, grid, seed_first, Q[i], V[i])
    else:
        for i in range(n):
            _srs_target(T[i], S[i], H, Sp, pS3, p3W, p7T, R7T, grid, seed_first, Q[i], V[i])
