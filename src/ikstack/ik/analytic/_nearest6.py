"""The nearest valid candidate of a 6R family without computing every candidate.

The family kernels (:mod:`._families6`) solve in two stages: a few *branches* (joints 1 and 5
of a three-parallel arm, joints 1-3 of a spherical wrist), then one or two candidates per
branch. Three joints of every candidate of a branch are the branch's own, so their weighted
squared distances to the seed (after moving each to its representative within the limits)
bound the candidates' distances from below, and a branch with one of them outside the limits
(or beyond the step bound) has no valid candidate at all.

:func:`nearest6` expands branches in order of that bound and stops as soon as the nearest
expanded candidate that passed every gate is nearer than every unexpanded branch's bound:
the selection, its distance and its FK errors are exactly those of the full enumeration
followed by the lazy gate of :func:`._select.lazy_one` (same candidates bit for bit, same
representatives, the same order of FK checks, ties broken by the same candidate order), since
every candidate expanded is computed by the family kernels' own functions.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ikstack.ik._gate import fk_error_one
from ikstack.ik.analytic._families6 import (
    _free_joint1,
    _position3,
    tp_elbow,
    tp_exact,
    tp_joint1,
    tp_pair_rep,
    tp_start,
    wrist_members,
)
from ikstack.ik.analytic._select import LIMIT_SNAP, joint_rep
from ikstack.ik.analytic._tuple_math import mm, mT, mtv, mv, neg, rotm, sub, v3, wrap
from ikstack.kinematics._kernels import fk_revolute6_tuples

#: scratch columns per branch: three joint values (or q0, q4, q5, theta, d), bound, live, state,
#: then the representatives of the branch's three joints
BRANCH_COLS = 13
_LB, _LIVE, _DONE, _REP = 7, 8, 9, 10
#: branch states: bound from two joints (three-parallel pairs before joint 6), ready, expanded
_PARTIAL, _READY, _EXPANDED = 0.0, 1.0, 2.0
#: a candidate is certainly nearer than a branch's bound below this fraction of it (the bound
#: sums three of the six terms of the distance; round-off is far smaller)
_BOUND_MARGIN = 1.0 - 1e-9
#: round-off and limit snaps the parallel joints' sum may carry [rad]
_ELBOW_SLACK = 3.0 * LIMIT_SNAP + 1e-9


@njit(cache=True, inline="always")
def _t6(a):  # pragma: no cover - compiled
    return (a[0], a[1], a[2], a[3], a[4], a[5])


@njit(cache=True, inline="always")
def _bound(lb, v, j, seed, lo, hi, revolute, W, max_step):  # pragma: no cover - compiled
    """``(live, bound, representative)`` of a branch whose bound so far is ``lb`` once joint
    ``j`` is fixed at ``v`` (the per-joint data as 6-tuples); terms add in the joints' order,
    as the lazy gate's distance does."""
    if not np.isfinite(v):
        return False, 0.0, v
    x, lim = joint_rep(v, seed[j], lo[j], hi[j], revolute[j])
    dd = x - seed[j]
    return lim and abs(dd) <= max_step, lb + W[j] * dd * dd, x


@njit(cache=True, inline="always")
def _bound3(B, i, x0, x1, x2, j0, j1, j2, seed, lo, hi, revolute, W, max_step):  # pragma: no cover
    """Fill branch ``i``'s bound, liveness and representatives for joints ``j0, j1, j2`` at
    ``x0, x1, x2`` (``j2`` -1: two joints only)."""
    live, lb, B[i, _REP] = _bound(0.0, x0, j0, seed, lo, hi, revolute, W, max_step)
    if live:
        live, lb, B[i, _REP + 1] = _bound(lb, x1, j1, seed, lo, hi, revolute, W, max_step)
    if live and j2 >= 0:
        live, lb, B[i, _REP + 2] = _bound(lb, x2, j2, seed, lo, hi, revolute, W, max_step)
    B[i, _LB], B[i, _LIVE] = lb, 1.0 if live else 0.0


@njit(cache=True, inline="always")
def _elbow_bound(theta, elbow_seed, elbow_w):  # pragma: no cover - compiled
    """A lower bound on the parallel joints' share of the distance once their sum is known:
    every candidate's values ``x`` (moved to representatives, maybe snapped onto a limit) have
    ``sum sgn x = theta + 2 pi k`` within :data:`_ELBOW_SLACK`, and the least
    ``sum W (x - s)^2`` under ``sum sgn x = c`` is ``(c - sum sgn s)^2 / sum(1 / W)``."""
    r = max(0.0, abs(wrap(theta - elbow_seed)) - _ELBOW_SLACK)
    return elbow_w * r * r


@njit(cache=True, inline="always")
def _gate(rev, r, pre, known, exact, seed, lo, hi, revolute, W, max_step):  # pragma: no cover
    """The lazy gate's first pass (:func:`._select.lazy_one`: the operations of
    :func:`._select._limits_row`) for the candidate ``r`` (a 6-tuple in the family's joint
    order): ``(row, distance, ok)`` with the row in the chain's order, moved to its
    representatives. Joints with ``known`` set take ``pre`` as their representative (the
    branch's, already within the limits and the step bound: the same numbers)."""
    v = exact
    q = (r[5], r[4], r[3], r[2], r[1], r[0]) if rev else r
    pk = (pre[5], pre[4], pre[3], pre[2], pre[1], pre[0]) if rev else pre
    kn = (known[5], known[4], known[3], known[2], known[1], known[0]) if rev else known
    lim = True
    d = 0.0
    step = 0.0
    for j in range(6):
        if not np.isfinite(q[j]):
            v = False
    if not v:
        return q, 0.0, False  # inexact or not finite: fails whatever its limits
    o0 = o1 = o2 = o3 = o4 = o5 = 0.0
    for j in range(6):
        if kn[j]:
            xj, ok = pk[j], True
        else:
            xj, ok = joint_rep(q[j], seed[j], lo[j], hi[j], revolute[j])
        lim = lim and ok
        dd = xj - seed[j]
        d += W[j] * dd * dd
        step = max(step, abs(dd))
        if j == 0:
            o0 = xj
        elif j == 1:
            o1 = xj
        elif j == 2:
            o2 = xj
        elif j == 3:
            o3 = xj
        elif j == 4:
            o4 = xj
        else:
            o5 = xj
    return (o0, o1, o2, o3, o4, o5), d, lim and step <= max_step


@njit(cache=True)
def nearest6(
    fid,
    var,
    rev,
    Rt,
    pt,
    H,
    P,
    R6T,
    sgn,
    seed,
    Tt,
    lo,
    hi,
    revolute,
    W,
    max_step,
    Rs,
    ps,
    R_end,
    p_end,
    ptol,
    rtol,
    Q,
    D,
    OK,
    B,
    Tbuf,
):  # pragma: no cover - compiled
    """``(index, perr, rerr)``: the candidate :func:`._families6.solve6` then the lazy gate
    (:func:`._select.lazy_one`, strict mode) select for the target ``(Rt, pt)`` (9- and
    3-tuples) and ``seed``, in ``Q[index]``; ``(-1, 0, 0)`` if none passes. ``Q`` (8, 6),
    ``D`` (8,), ``OK`` (8,) and ``B`` (4, :data:`BRANCH_COLS`) are scratch; candidate ``k`` of
    branch ``i`` lives in slot ``2 i + k`` (the full enumeration's order)."""
    if rev:
        Rw = mT(Rt)
        pw = neg(mtv(Rt, pt))
    else:
        Rw = Rt
        pw = pt
    for k in range(8):
        OK[k] = False
    seed = _t6(seed)
    lo = _t6(lo)
    hi = _t6(hi)
    revolute = _t6(revolute)
    W = _t6(W)
    h0, h1, h2 = v3(H[0]), v3(H[1]), v3(H[2])
    h3, h4, h5 = v3(H[3]), v3(H[4]), v3(H[5])
    P1, P2, P3, P4, P5 = v3(P[1]), v3(P[2]), v3(P[3]), v3(P[4]), v3(P[5])
    seed_free = seed[2] if rev else seed[3]  # the family's seed-dependent joint, reversed or not
    q0_at = np.nan  # three-parallel: joint 1's value whose A and w0 are at hand
    A = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    w0 = p16 = (0.0, 0.0, 0.0)
    z4 = (0.0, 0.0, 0.0, 0.0)
    cs = (z4, z4, z4, z4)  # three-parallel: cosines and sines of joints 1 and 5
    if fid is not None and sgn is None:  # spherical wrist (decided at compile time: solve6)
        R06 = mm(Rw, mT(R6T))
        pW = sub(pw, mv(R06, P[6]))
        n, t0, t1, t2 = _position3(var, pW, H, P, seed[5] if rev else seed[0])
        n, t0, t1, t2 = _free_joint1(n, t0, t1, t2, pW, R06, H, P, seed[1] if rev else seed[4])
        known = (True, True, True, False, False, False)
        for i in range(n):
            B[i, 0], B[i, 1], B[i, 2] = t0[i], t1[i], t2[i]
            if rev:
                _bound3(B, i, t0[i], t1[i], t2[i], 5, 4, 3, seed, lo, hi, revolute, W, max_step)
            else:
                _bound3(B, i, t0[i], t1[i], t2[i], 0, 1, 2, seed, lo, hi, revolute, W, max_step)
            B[i, _DONE] = _READY
    elif sgn is not None:
        seed_free = seed[0] if rev else seed[5]
        e1, e2, e3 = (4, 3, 2) if rev else (1, 2, 3)
        elbow_seed = sgn[1] * seed[e1] + sgn[2] * seed[e2] + sgn[3] * seed[e3]
        elbow_w = 0.0  # 1 / sum(1 / W) of the parallel joints (0: no bound from them)
        if W[e1] > 0.0 and W[e2] > 0.0 and W[e3] > 0.0:
            elbow_w = 1.0 / (1.0 / W[e1] + 1.0 / W[e2] + 1.0 / W[e3])
        n, a, b, R06, p16, cs = tp_start(var, Rw, pw, H, P, R6T)
        known = (True, False, False, False, True, True)
        for i in range(n):
            # joints 1 and 5 bound the pair until its joint 6 is known
            B[i, 0], B[i, 1] = a[i], b[i]
            if rev:
                _bound3(B, i, a[i], b[i], 0.0, 5, 1, -1, seed, lo, hi, revolute, W, max_step)
            else:
                _bound3(B, i, a[i], b[i], 0.0, 0, 4, -1, seed, lo, hi, revolute, W, max_step)
            B[i, _DONE] = _PARTIAL
    while True:
        best = -1
        for k in range(8):
            if OK[k] and (best < 0 or D[k] < D[best]):
                best = k
        nxt = -1
        for i in range(n):
            if (
                B[i, _LIVE] > 0.0
                and B[i, _DONE] != _EXPANDED
                and (nxt < 0 or B[i, _LB] < B[nxt, _LB])
            ):
                nxt = i
        if best >= 0 and (nxt < 0 or D[best] < B[nxt, _LB] * _BOUND_MARGIN):
            fk_revolute6_tuples(
                (Q[best, 0], Q[best, 1], Q[best, 2], Q[best, 3], Q[best, 4], Q[best, 5]),
                Rs,
                ps,
                R_end,
                p_end,
                Tbuf,
            )
            pe, re = fk_error_one(Tbuf, Tt)
            if pe <= ptol and re <= rtol:
                return best, pe, re
            OK[best] = False
            continue
        if nxt < 0:
            return -1, 0.0, 0.0
        if sgn is not None and B[nxt, _DONE] == _PARTIAL:  # (pruned for a spherical wrist)
            # three-parallel pair: joint 6, theta and the elbow target; a tighter bound
            q0, q4 = B[nxt, 0], B[nxt, 1]
            if q0 != q0_at:
                A, w0 = tp_joint1(h0, cs[0][nxt], cs[1][nxt], R06, p16, P1)
                q0_at = q0
            q5, theta, d = tp_pair_rep(
                h1, h4, h5, P2, P3, P4, P5, A, w0, cs[2][nxt], cs[3][nxt], seed_free
            )
            B[nxt, 2], B[nxt, 3], B[nxt, 4], B[nxt, 5], B[nxt, 6] = q5, theta, d[0], d[1], d[2]
            # joint 6 adds its term to the pair's (joints 1 and 5, the same sum's first terms)
            live, lb, B[nxt, _REP + 2] = _bound(
                B[nxt, _LB], q5, 0 if rev else 5, seed, lo, hi, revolute, W, max_step
            )
            B[nxt, _LB] = lb + _elbow_bound(theta, elbow_seed, elbow_w)
            B[nxt, _LIVE], B[nxt, _DONE] = 1.0 if live else 0.0, _READY
            continue
        B[nxt, _DONE] = _EXPANDED
        k0 = 2 * nxt
        if fid is not None and sgn is None:
            x0, x1, x2 = B[nxt, 0], B[nxt, 1], B[nxt, 2]
            R03 = mm(mm(rotm(h0, x0), rotm(h1, x1)), rotm(h2, x2))
            m, X, Y, Z = wrist_members(
                mm(mT(R03), R06), h3, h4, h5, seed_free, seed[0] if rev else seed[5]
            )
            pre = (B[nxt, _REP], B[nxt, _REP + 1], B[nxt, _REP + 2], 0.0, 0.0, 0.0)
            for j in range(m):
                row, D[k0 + j], OK[k0 + j] = _gate(
                    rev,
                    (x0, x1, x2, X[j], Y[j], Z[j]),
                    pre,
                    known,
                    True,
                    seed,
                    lo,
                    hi,
                    revolute,
                    W,
                    max_step,
                )
                for c in range(6):
                    Q[k0 + j, c] = row[c]
        elif sgn is not None:
            q0, q4, q5, theta = B[nxt, 0], B[nxt, 1], B[nxt, 2], B[nxt, 3]
            d = (B[nxt, 4], B[nxt, 5], B[nxt, 6])
            m, ls, phi1, phi2, phi3 = tp_elbow(h1, P2, P3, theta, d)
            pre = (B[nxt, _REP], 0.0, 0.0, 0.0, B[nxt, _REP + 1], B[nxt, _REP + 2])
            exact = True
            if ls:  # one least-squares branch: exact within round-off of the tangent one
                exact = tp_exact(h1, P2, P3, ls, phi2[0], d)
            for j in range(m):
                row, D[k0 + j], OK[k0 + j] = _gate(
                    rev,
                    (q0, phi1[j] * sgn[1], phi2[j] * sgn[2], phi3[j] * sgn[3], q4, q5),
                    pre,
                    known,
                    exact,
                    seed,
                    lo,
                    hi,
                    revolute,
                    W,
                    max_step,
                )
                for c in range(6):
                    Q[k0 + j, c] = row[c]
