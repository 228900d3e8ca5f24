"""The 6R families' branch-and-bound strategy of the selection loop.

The family kernels (:mod:`._families6`) solve in two stages: a few *branches* (joints 1 and 5
of a three-parallel arm, joints 1-3 of a spherical wrist), then one or two candidates per
branch. Three joints of every candidate of a branch are the branch's own, so their weighted
squared distances to the seed (after moving each to its representative within the limits)
bound the candidates' distances from below, and a branch with one of them outside the limits
(or beyond the step bound) has no valid candidate at all.

:func:`nearest6` computes the branches and their bounds, then runs the one selection loop
(:func:`._select.select_nearest`) with them as its branch-and-bound strategy: the loop FK-gates
open candidates nearest first and asks for a branch whenever its bound could beat them; this
module only expands the branch asked for (its candidates, by the family kernels' own
functions, into the full enumeration's slots, moved to their representatives by the
operations of :func:`._select._limits_row`). So the selection, its distance and its FK errors
are those of the full enumeration followed by the lazy gate of :func:`._select.lazy_one`, bit
for bit, ties included.
"""

from __future__ import annotations

import numpy as np
from numba import njit

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
from ikstack.ik.analytic._select import EXPAND, LIMIT_SNAP, joint_rep, select_nearest
from ikstack.ik.analytic._tuple_math import m9, mm, mT, mtv, mv, neg, rotm, sub, v3, wrap

#: scratch columns per branch: three joint values (or q0, q4, q5, theta, d), state, then the
#: representatives of the branch's three joints (bounds and openness: their own arrays)
BRANCH_COLS = 11
_STATE, _REP = 7, 8
#: branch states: bound from two joints (three-parallel pairs before joint 6), ready to expand
_PARTIAL, _READY = 0.0, 1.0
#: round-off and limit snaps the parallel joints' sum may carry [rad]
_ELBOW_SLACK = 3.0 * LIMIT_SNAP + 1e-9


@njit(cache=True, inline="always")
def t6(a):  # pragma: no cover - compiled
    """The first six entries of ``a`` as a tuple."""
    return (a[0], a[1], a[2], a[3], a[4], a[5])


@njit(cache=True, inline="always")
def _bound(lb, v, j, box):  # pragma: no cover - compiled
    """``(live, bound, representative)`` of a branch whose bound so far is ``lb`` once joint
    ``j`` is fixed at ``v`` (``box``: seed, limits, joint kinds and weights as 6-tuples, then
    the step bound); terms add in the joints' order, as the lazy gate's distance does."""
    seed, lo, hi, revolute, W, max_step = box
    if not np.isfinite(v):
        return False, 0.0, v
    x, lim = joint_rep(v, seed[j], lo[j], hi[j], revolute[j])
    dd = x - seed[j]
    return lim and abs(dd) <= max_step, lb + W[j] * dd * dd, x


@njit(cache=True, inline="always")
def _bound3(br, i, x, js, box):  # pragma: no cover - compiled
    """Fill branch ``i``'s bound, openness and representatives (``br = (B, LB, OPEN)``) for
    joints ``js`` at ``x`` (3-tuples; ``js[2]`` -1: two joints only)."""
    B, LB, OPEN = br
    live, lb, B[i, _REP] = _bound(0.0, x[0], js[0], box)
    if live:
        live, lb, B[i, _REP + 1] = _bound(lb, x[1], js[1], box)
    if live and js[2] >= 0:
        live, lb, B[i, _REP + 2] = _bound(lb, x[2], js[2], box)
    LB[i], OPEN[i] = lb, live


@njit(cache=True, inline="always")
def _elbow_bound(theta, elbow_seed, elbow_w):  # pragma: no cover - compiled
    """A lower bound on the parallel joints' share of the distance once their sum is known:
    every candidate's values ``x`` (moved to representatives, maybe snapped onto a limit) have
    ``sum sgn x = theta + 2 pi k`` within :data:`_ELBOW_SLACK`, and the least
    ``sum W (x - s)^2`` under ``sum sgn x = c`` is ``(c - sum sgn s)^2 / sum(1 / W)``."""
    r = max(0.0, abs(wrap(theta - elbow_seed)) - _ELBOW_SLACK)
    return elbow_w * r * r


@njit(cache=True, inline="always")
def _gate(rev, r, pre, known, exact, box):  # pragma: no cover - compiled
    """The lazy gate's first pass (:func:`._select.lazy_one`: the operations of
    :func:`._select._limits_row`) for the candidate ``r`` (a 6-tuple in the family's joint
    order): ``(row, distance, ok)`` with the row in the chain's order, moved to its
    representatives. Joints with ``known`` set take ``pre`` as their representative (the
    branch's, already within the limits and the step bound: the same numbers)."""
    seed, lo, hi, revolute, W, max_step = box
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
def nearest6(fid, var, sgn, fam, Tt, seed, lim, chain, sel, work):  # pragma: no cover - compiled
    """``(index, perr, rerr)``: the candidate :func:`._families6.solve6` then the lazy gate
    (:func:`._select.lazy_one`, strict mode) select for the target ``Tt`` (4, 4) and ``seed``,
    in ``Q[index]``; ``(-1, 0, 0)`` if none passes.

    ``fid``, ``var``, ``sgn``: the family's :attr:`.families.SixR.kfid`, ``kvar`` and ``ksgn``
    (they pick its code at compile time); ``fam = (reverse, H, P, R6T)`` with ``R6T`` a
    9-tuple; ``lim = (lo, hi, revolute, W, step)``: the selection's limits, joint kinds and
    weights as 6-tuples and its step bound; ``chain`` the chain as :func:`._select.fk_gate`
    takes a revolute 6R chain's; ``sel`` the :data:`._select.SELECT` record (the FK gate's
    tolerances). ``work = (Q, D, OK, LIM, PL, B, LB, OPEN, Tbuf)``: scratch, ``Q`` (8, 6),
    ``D``, ``OK``, ``LIM``, ``PL`` (8,), ``B`` (4, :data:`BRANCH_COLS`), ``LB``, ``OPEN`` (4,),
    ``Tbuf`` (4, 4); candidate ``k`` of branch ``i`` lives in slot ``2 i + k`` (the full
    enumeration's order)."""
    rev, H, P, R6T = fam
    Q, D, OK, LIM, PL, B, LB, OPEN, Tbuf = work
    br = (B, LB, OPEN)
    Rt = m9(Tt)
    pt = (Tt[0, 3], Tt[1, 3], Tt[2, 3])
    if rev:
        Rw = mT(Rt)
        pw = neg(mtv(Rt, pt))
    else:
        Rw = Rt
        pw = pt
    for k in range(8):
        OK[k] = False
    seed = t6(seed)
    lo, hi, revolute, W, max_step = lim
    box = (seed, lo, hi, revolute, W, max_step)
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
                _bound3(br, i, (t0[i], t1[i], t2[i]), (5, 4, 3), box)
            else:
                _bound3(br, i, (t0[i], t1[i], t2[i]), (0, 1, 2), box)
            B[i, _STATE] = _READY
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
                _bound3(br, i, (a[i], b[i], 0.0), (5, 1, -1), box)
            else:
                _bound3(br, i, (a[i], b[i], 0.0), (0, 4, -1), box)
            B[i, _STATE] = _PARTIAL
    # the selection loop asks for branches (nearest bound first) until its answer is certain
    slots = (Q, D, OK, LIM, PL, Tbuf)
    branches = (LB, OPEN, n)
    while True:
        k, pe, re = select_nearest(slots, seed, Tt, chain, sel, None, branches)
        if k > EXPAND:
            return k, pe, re  # a slot, or none
        nxt = EXPAND - k
        if sgn is not None and B[nxt, _STATE] == _PARTIAL:  # (pruned for a spherical wrist)
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
            live, lb, B[nxt, _REP + 2] = _bound(LB[nxt], q5, 0 if rev else 5, box)
            LB[nxt] = lb + _elbow_bound(theta, elbow_seed, elbow_w)
            OPEN[nxt], B[nxt, _STATE] = live, _READY
            continue
        OPEN[nxt] = False  # expanded
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
                    box,
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
                    box,
                )
                for c in range(6):
                    Q[k0 + j, c] = row[c]
