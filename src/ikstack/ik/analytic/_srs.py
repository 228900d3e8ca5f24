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
from ikstack.ik.analytic._vec import any_perp, cross, dot, matmul, matTmul, matvec, norm, rot, rotm


@njit(cache=True)
def _frame(what):  # pragma: no cover - compiled
    if abs(what[2]) < 0.99:
        ref = np.array([0.0, 0.0, 1.0])
    else:
        ref = np.array([1.0, 0.0, 0.0])
    e1 = ref - dot(ref, what) * what
    e1 = e1 / norm(e1)
    return e1, cross(what, e1)


@njit(cache=True)
def seed_swivel(Rt, pt, H, Sp, pS3, p7T, R7T, seed):  # pragma: no cover - compiled
    """The swivel angle of the seed's elbow reference point about the target's S-W line."""
    R07 = matmul(Rt, R7T.T.copy())
    w = pt - matvec(R07, p7T) - Sp
    dw = norm(w)
    what = w / dw if dw > 1e-12 else np.array([0.0, 0.0, 1.0])
    e1, e2 = _frame(what)
    R03 = matmul(matmul(rotm(H[0], seed[0]), rotm(H[1], seed[1])), rotm(H[2], seed[2]))
    e = matvec(R03, pS3)
    return math.atan2(dot(e, e2), dot(e, e1))


@njit(cache=True)
def srs_one(Rt, pt, H, Sp, pS3, p3W, p7T, R7T, psis, seed, Q, V):  # pragma: no cover - compiled
    """Candidates ``Q`` (8 * len(psis), 7) and masks ``V`` for one target."""
    for k in range(Q.shape[0]):
        V[k] = False
        for j in range(7):
            Q[k, j] = seed[j]
    R07 = matmul(Rt, R7T.T.copy())
    w = pt - matvec(R07, p7T) - Sp
    dw = norm(w)
    what = w / dw if dw > 1e-12 else np.array([0.0, 0.0, 1.0])
    e1, e2 = _frame(what)
    el = np.empty(2)
    m, ls = sp3(p3W, -pS3, H[3], dw, el)
    X = np.empty(2)
    Y = np.empty(2)
    Z = np.empty(2)
    X2 = np.empty(2)
    Y2 = np.empty(2)
    Z2 = np.empty(2)
    for j in range(m):
        q3 = el[j]
        v = pS3 + rot(H[3], q3, p3W)
        nv = norm(v)
        vhat = v / nv if nv > 1e-12 else what
        ax = cross(vhat, what)
        sn = norm(ax)
        cs = dot(vhat, what)
        if sn > 1e-12:
            R0 = rotm(ax / sn, math.atan2(sn, cs))
        elif cs > 0:
            R0 = np.eye(3)
        else:
            R0 = rotm(any_perp(vhat), math.pi)
        e0 = matvec(R0, pS3)
        psi0 = math.atan2(dot(e0, e2), dot(e0, e1))
        R3e = rotm(H[3], q3)
        for s in range(psis.shape[0]):
            R03 = matmul(rotm(what, psis[s] - psi0), R0)
            na = decompose3(R03, H[0], H[1], H[2], seed[0], X, Y, Z)
            R04 = matmul(R03, R3e)
            R47 = matTmul(R04, R07)
            nb = decompose3(R47, H[4], H[5], H[6], seed[4], X2, Y2, Z2)
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
    Rt = T[:3, :3].copy()
    pt = T[:3, 3].copy()
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
