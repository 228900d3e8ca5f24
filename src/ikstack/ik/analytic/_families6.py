"""Compiled candidate generators of the 6R families (and 7R arms with one joint locked).

Geometry arrives in IK-Geo form: ``H`` (6, 3) unit axes and ``P`` (7, 3) offsets
``p_01 .. p_6T`` at zero configuration, plus ``R6T`` (3, 3), so that
``p_0T = p_01 + R_01 p_12 + ... + R_06 p_6T`` and ``R_0T = R_06 R6T``.
Each generator writes 8 candidates ``Q`` (8, 6) and a mask ``V`` (8,) of the branches that
exist exactly; every slot stays finite (branches that do not exist hold least-squares or
seed values). Singular wrists give the seed-dependent representative of their family.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ikstack.ik.analytic._sp_kernels import sp1, sp2, sp3, sp5, sp6
from ikstack.ik.analytic._vec import (
    any_perp,
    cross,
    matmul,
    matTmul,
    matTvec,
    matvec,
    norm,
    rot,
    rotm,
    wrap,
)

SPHERICAL = 0
THREE_PARALLEL = 1
#: candidates per target of a 6R family
K6 = 8


@njit(cache=True)
def decompose3(R, a, b, c, seed_x, X, Y, Z):  # pragma: no cover - compiled
    """``R = R(a, x) R(b, y) R(c, z)``: up to 2 triples into ``X, Y, Z``; returns the count.

    When ``R c`` is parallel to ``a`` (a gimbal singularity), ``x`` takes the seed's value and
    the single representative of the continuous family is returned.
    """
    Rc = matvec(R, c)
    if norm(cross(a, Rc)) < 1e-10:
        x = seed_x
        y, _ = sp1(c, rot(a, -x, Rc), b)
        u = any_perp(c)
        z, _ = sp1(u, rot(b, -y, rot(a, -x, matvec(R, u))), c)
        X[0], Y[0], Z[0] = x, y, z
        return 1
    t1 = np.empty(2)
    t2 = np.empty(2)
    cnt, ls = sp2(Rc, c, a, b, t1, t2)
    if ls:
        return 0
    u = any_perp(c)
    Ru = matvec(R, u)
    for i in range(cnt):
        x = -t1[i]
        y = t2[i]
        z, _ = sp1(u, rot(b, -y, rot(a, -x, Ru)), c)
        X[i], Y[i], Z[i] = x, y, z
    return cnt


@njit(cache=True)
def _fill_seed(Q, V, seed):  # pragma: no cover - compiled
    for k in range(Q.shape[0]):
        V[k] = False
        for j in range(Q.shape[1]):
            Q[k, j] = seed[j]


@njit(cache=True)
def spherical_wrist(Rt, pt, H, P, R6T, seed, Q, V):  # pragma: no cover - compiled
    """6R whose last three axes meet (``P[4] = P[5] = 0``): subproblem 5, then the wrist."""
    _fill_seed(Q, V, seed)
    R06 = matmul(Rt, R6T.T.copy())
    pW = pt - matvec(R06, P[6])
    t0 = np.empty(4)
    t1 = np.empty(4)
    t2 = np.empty(4)
    n = sp5(-P[1], pW - P[0], P[2], P[3], -H[0], H[1], H[2], t0, t1, t2)
    X = np.empty(2)
    Y = np.empty(2)
    Z = np.empty(2)
    slot = 0
    for i in range(n):
        R03 = matmul(matmul(rotm(H[0], t0[i]), rotm(H[1], t1[i])), rotm(H[2], t2[i]))
        R36 = matTmul(R03, R06)
        m = decompose3(R36, H[3], H[4], H[5], seed[3], X, Y, Z)
        for j in range(m):
            if slot >= 8:
                break
            Q[slot, 0] = t0[i]
            Q[slot, 1] = t1[i]
            Q[slot, 2] = t2[i]
            Q[slot, 3] = X[j]
            Q[slot, 4] = Y[j]
            Q[slot, 5] = Z[j]
            V[slot] = True
            slot += 1


@njit(cache=True)
def three_parallel(Rt, pt, H, P, R6T, sgn, seed, Q, V):  # pragma: no cover - compiled
    """6R whose axes 2, 3, 4 (1-based) are parallel: ``H[2] = sgn[2] H[1]``, ``H[3] = sgn[3] H[1]``.

    Subproblem 6 gives joints 1 and 5, subproblem 1 the sum of the parallel joints and joint
    6, subproblem 3 the elbow (two branches), subproblem 1 the shoulder.
    """
    _fill_seed(Q, V, seed)
    R06 = matmul(Rt, R6T.T.copy())
    p16 = pt - matvec(R06, P[6]) - P[0]
    h0, h1, h4, h5 = H[0], H[1], H[4], H[5]
    m0 = -h0
    d1 = h1[0] * (P[1, 0] + P[2, 0] + P[3, 0] + P[4, 0]) \
        + h1[1] * (P[1, 1] + P[2, 1] + P[3, 1] + P[4, 1]) \
        + h1[2] * (P[1, 2] + P[2, 2] + P[3, 2] + P[4, 2])
    a = np.empty(4)
    b = np.empty(4)
    n = sp6(h1, h1, h1, h1, m0, h4, m0, h4, p16, -P[5], matvec(R06, h5), -h5, d1, 0.0, a, b)
    el = np.empty(2)
    slot = 0
    for i in range(n):
        q0 = a[i]
        q4 = b[i]
        A = matTmul(rotm(h0, q0), R06)  # R(h1, theta) R(h4, q4) R(h5, q5)
        v = rot(h4, q4, h5)
        if norm(cross(v, h1)) < 1e-10:
            q5 = seed[5]
            u = any_perp(h1)
            Bt = matmul(rotm(h4, q4), rotm(h5, q5))
            theta, _ = sp1(u, matvec(A, matTvec(Bt, u)), h1)
        else:
            theta, _ = sp1(v, matvec(A, h5), h1)
            u = any_perp(h5)
            B = matmul(rotm(h1, -theta), A)
            q5, _ = sp1(u, rot(h4, -q4, matvec(B, u)), h5)
        d = rot(h0, -q0, p16) - P[1] - rot(h1, theta, P[4] + rot(h4, q4, P[5]))
        m, ls = sp3(P[3], -P[2], h1, norm(d), el)
        for j in range(m):
            if slot >= 8:
                break
            phi2 = el[j]
            phi1, _ = sp1(P[2] + rot(h1, phi2, P[3]), d, h1)
            phi3 = wrap(theta - phi1 - phi2)
            Q[slot, 0] = q0
            Q[slot, 1] = phi1 * sgn[1]
            Q[slot, 2] = phi2 * sgn[2]
            Q[slot, 3] = phi3 * sgn[3]
            Q[slot, 4] = q4
            Q[slot, 5] = q5
            V[slot] = not ls
            slot += 1


@njit(cache=True)
def solve6(fid, rev, Rt, pt, H, P, R6T, sgn, seed, Q, V):  # pragma: no cover - compiled
    """One target of a 6R family; ``rev`` solves the chain read backwards (``T^-1``)."""
    if rev:
        Rr = Rt.T.copy()
        pr = -matTvec(Rt, pt)
        sr = seed[::-1].copy()
        Qr = np.empty_like(Q)
        if fid == SPHERICAL:
            spherical_wrist(Rr, pr, H, P, R6T, sr, Qr, V)
        else:
            three_parallel(Rr, pr, H, P, R6T, sgn, sr, Qr, V)
        for k in range(Q.shape[0]):
            for j in range(6):
                Q[k, j] = Qr[k, 5 - j]
    elif fid == SPHERICAL:
        spherical_wrist(Rt, pt, H, P, R6T, seed, Q, V)
    else:
        three_parallel(Rt, pt, H, P, R6T, sgn, seed, Q, V)


@njit(cache=True)
def _batch6_range(lo, hi, fid, rev, T, S, H, P, R6T, sgn, Q, V):  # pragma: no cover
    for i in range(lo, hi):
        solve6(fid, rev, T[i, :3, :3], T[i, :3, 3], H, P, R6T, sgn, S[i], Q[i], V[i])


@njit(cache=True, parallel=True)
def batch6(fid, rev, T, S, H, P, R6T, sgn, Q, V, parallel):  # pragma: no cover - compiled
    """Candidates ``Q`` (N, 8, 6) and masks ``V`` (N, 8) for targets ``T`` (N, 4, 4)."""
    n = T.shape[0]
    if not parallel:
        _batch6_range(0, n, fid, rev, T, S, H, P, R6T, sgn, Q, V)
        return
    nblk = (n + 63) // 64
    for b in prange(nblk):
        _batch6_range(b * 64, min(n, b * 64 + 64), fid, rev, T, S, H, P, R6T, sgn, Q, V)


@njit(cache=True)
def _locked_one(fid, rev, Rt, pt, lock_first, lh, lr, Minv_R, Minv_p, M_R, M_p, vals, H, P,
                R6T, sgn, seed, Q, V):  # pragma: no cover - compiled
    dof = seed.shape[0]
    sub_seed = np.empty(6)
    if lock_first:
        for j in range(6):
            sub_seed[j] = seed[j + 1]
    else:
        for j in range(6):
            sub_seed[j] = seed[j]
    Qs = np.empty((8, 6))
    Vs = np.empty(8, dtype=np.bool_)
    for s in range(vals.shape[0]):
        v = vals[s]
        E = rotm(lh, -v)
        Ep = lr - matvec(E, lr)  # exp(-xi v): rotation E, translation (I - E) r
        if lock_first:
            # T' = exp(-xi_1 v) T
            R2 = matmul(E, Rt)
            p2 = matvec(E, pt) + Ep
        else:
            # T' = T M^-1 exp(-xi_7 v) M
            G_R = matmul(matmul(Minv_R, E), M_R)
            G_p = matvec(Minv_R, matvec(E, M_p) + Ep) + Minv_p
            R2 = matmul(Rt, G_R)
            p2 = matvec(Rt, G_p) + pt
        solve6(fid, rev, R2, p2, H, P, R6T, sgn, sub_seed, Qs, Vs)
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


@njit(cache=True, parallel=True)
def batch_locked(fid, rev, T, S, lock_first, lh, lr, M, vals, seed_first, H, P, R6T, sgn, Q, V,
                 parallel):  # pragma: no cover - compiled
    """7R with one end joint locked at ``vals`` (and first at each seed's own value)."""
    n = T.shape[0]
    Minv_R = M[:3, :3].T.copy()
    Minv_p = -matvec(Minv_R, M[:3, 3].copy())
    M_R = M[:3, :3].copy()
    M_p = M[:3, 3].copy()
    lock_idx = 0 if lock_first else S.shape[1] - 1
    nv = vals.shape[0] + (1 if seed_first else 0)
    if parallel:
        for i in prange(n):
            vv = np.empty(nv)
            off = 0
            if seed_first:
                vv[0] = S[i, lock_idx]
                off = 1
            vv[off:] = vals
            _locked_one(fid, rev, T[i, :3, :3].copy(), T[i, :3, 3].copy(), lock_first, lh, lr,
                        Minv_R, Minv_p, M_R, M_p, vv, H, P, R6T, sgn, S[i], Q[i], V[i])
    else:
        vv = np.empty(nv)
        for i in range(n):
            off = 0
            if seed_first:
                vv[0] = S[i, lock_idx]
                off = 1
            vv[off:] = vals
            _locked_one(fid, rev, T[i, :3, :3].copy(), T[i, :3, 3].copy(), lock_first, lh, lr,
                        Minv_R, Minv_p, M_R, M_p, vv, H, P, R6T, sgn, S[i], Q[i], V[i])
