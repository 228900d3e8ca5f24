"""The 6R families' branch-and-bound strategy of the selection loop.

The family kernels (:mod:`._families6`) solve in two stages: a few *branches* (joints 1 and 5
of a three-parallel arm, joints 1-3 of a spherical wrist), then one or two candidates per
branch. Three joints of every candidate of a branch are the branch's own, so their weighted
squared distances to the seed (after moving each to its representative within the limits)
bound the candidates' distances from below, and a branch with one of them outside the limits
(or beyond the step bound) has no valid candidate at all.

The selection loop (:func:`._selection.select_nearest`) runs this strategy for a 6R family:
:func:`start_spherical` / :func:`start_parallel` compute the branches and their bounds,
:func:`refine_parallel` tightens a three-parallel pair's bound once its joint 6 is known, and
:func:`expand_spherical` / :func:`expand_parallel` compute a branch's candidates by the family
kernels' own functions, moved to their representatives by the operations of
:func:`._select._limits_row` (:func:`gate_at`), for the full enumeration's slots. The loop takes
candidates and branches nearest first, so the selection, its distance and its FK errors are
those of the full enumeration, bit for bit, ties included.

Nothing here takes or returns an array after the start: the loop calls the refine and expand
steps per branch, and an array argument costs reference counts on every call (which a
single-target solve of a few microseconds notices); branches travel as flat tuples of numbers
(:data:`BRANCH6`: built by :func:`pack_branch`, taken apart by :func:`unpack_branch`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ikstack._records import Flat
from ikstack.ik.analytic._families6 import (
    K6,
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
from ikstack.spatial._tuple_math import m9, mm, mT, mtv, mv, neg, rotm, sub, v3, wrap

#: a branch, carried as a flat tuple of numbers: its three joints' values (a three-parallel
#: pair: joints 1, 5 and, once refined, 6), a refined pair's theta and elbow target ``d``
#: (:func:`._families6.tp_pair_rep`; zeros until then), its state, its three joints'
#: representatives, then (three-parallel) the cosines and sines of joints 1 and 5
BRANCH6 = Flat("branch6", (("q", 3), ("theta", 1), ("d", 3), ("state", 1), ("rep", 3), ("cs", 4)))
pack_branch = BRANCH6.pack
unpack_branch = BRANCH6.unpack
load_branch = BRANCH6.load
store_branch = BRANCH6.store
#: numbers in a branch, and the offset of its state
BRANCH, STATE = BRANCH6.size, BRANCH6.at["state"]
#: a target's branches at most: each fills two of the :data:`._families6.K6` slots
CANDIDATES = 2
BRANCHES = K6 // CANDIDATES
#: branch states: bound from two joints (three-parallel pairs before joint 6), ready to expand
PARTIAL, _READY = 0.0, 1.0
#: the bound of a closed branch (expanded, or holding no valid candidate); an open branch's
#: bound is a sum of non-negative terms (finite weights)
CLOSED = -1.0
#: round-off and limit snaps the parallel joints' sum may carry [rad]
_ELBOW_SLACK = 3.0 * LIMIT_SNAP + 1e-9
_Z = 0.0
_Z3 = (0.0, 0.0, 0.0)


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
def _elbow_bound(theta, elbow_seed, elbow_w):  # pragma: no cover - compiled
    """A lower bound on the parallel joints' share of the distance once their sum is known:
    every candidate's values ``x`` (moved to representatives, maybe snapped onto a limit) have
    ``sum sgn x = theta + 2 pi k`` within :data:`_ELBOW_SLACK`, and the least
    ``sum W (x - s)^2`` under ``sum sgn x = c`` is ``(c - sum sgn s)^2 / sum(1 / W)``."""
    r = max(0.0, abs(wrap(theta - elbow_seed)) - _ELBOW_SLACK)
    return elbow_w * r * r


@njit(cache=True, inline="always")
def _gate(rev, r, pre, known, exact, box):  # pragma: no cover - compiled
    """The lazy gate's first pass (:func:`._selection.lazy_one`: the operations of
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


@njit(cache=True, inline="always")
def _branch(x, js, cs, state, box):  # pragma: no cover - compiled
    """``(bound, branch)``: a branch with joints ``js`` at ``x`` (3-tuples; ``js[2]`` -1: two
    joints only), ``cs`` its joints' cosines and sines (4-tuple), its bound :data:`CLOSED` when
    one of its joints misses the limits or the step bound."""
    live, lb, r0 = _bound(0.0, x[0], js[0], box)
    r1 = r2 = 0.0
    if live:
        live, lb, r1 = _bound(lb, x[1], js[1], box)
    if live and js[2] >= 0:
        live, lb, r2 = _bound(lb, x[2], js[2], box)
    return lb if live else CLOSED, pack_branch(x, _Z, _Z3, state, (r0, r1, r2), cs)


@njit(cache=True, inline="always")
def _start(Tt, data):  # pragma: no cover - compiled
    """The target in the family's frame (reversed: the inverse pose) and the gate's data."""
    rev, R6T, seed, (lo, hi, revolute, W, max_step) = data
    box = (seed, lo, hi, revolute, W, max_step)
    Rt = m9(Tt)
    pt = (Tt[0, 3], Tt[1, 3], Tt[2, 3])
    if rev:
        return mT(Rt), neg(mtv(Rt, pt)), box
    return Rt, pt, box


@njit(cache=True, inline="always")
def branch_at(raw, i):  # pragma: no cover - compiled
    """``(bound, branch)``: branch ``i`` of the raw branches ``raw`` (:func:`start_spherical`),
    one at a time: the loop over the branches runs one copy of the bound's code (unrolled, the
    four copies made the selection loop's code larger and slower)."""
    X, Y, Z, js, cs, state, box = raw
    return _branch((X[i], Y[i], Z[i]), js, (cs[0][i], cs[1][i], cs[2][i], cs[3][i]), state, box)


@njit(cache=True, inline="always")
def gate_at(c, g):  # pragma: no cover - compiled
    """``(row, distance, ok)`` of the candidate ``c`` of an expanded branch whose gate data
    are ``g`` (:func:`expand_spherical`): :func:`_gate`, called from the loop over a branch's
    candidates (one copy of its code)."""
    rev, pre, known, exact, box = g
    return _gate(rev, c, pre, known, exact, box)


_Z4 = (0.0, 0.0, 0.0, 0.0)


@njit(cache=True, inline="always")
def start_spherical(var, H, P, data, Tt):  # pragma: no cover - compiled
    """``(n, raw, fam)``: a spherical wrist's ``n`` branches (joints 1-3) for the target ``Tt``
    (4, 4), raw (:func:`branch_at` gives branch ``i`` as a :data:`BRANCH`-tuple and its
    bound), and the data :func:`expand_spherical` takes. ``var``: the family's
    :attr:`.families.SixR.kvar`, ``H`` and ``P`` its axes and offsets; ``data = (reverse, R6T,
    seed, (lo, hi, revolute, W, step))``: the family's reversal and ``R6T`` (a 9-tuple), the
    seed, the selection's limits, joint kinds and weights (6-tuples) and its step bound."""
    Rw, pw, box = _start(Tt, data)
    rev, R6T, seed, _ = data
    R06 = mm(Rw, mT(R6T))
    pW = sub(pw, mv(R06, P[6]))
    n, X, Y, Z = _position3(var, pW, H, P, seed[5] if rev else seed[0])
    n, X, Y, Z = _free_joint1(n, X, Y, Z, pW, R06, H, P, seed[1] if rev else seed[4])
    js = (5, 4, 3) if rev else (0, 1, 2)
    raw = (X, Y, Z, js, (_Z4, _Z4, _Z4, _Z4), _READY, box)
    hs = (v3(H[0]), v3(H[1]), v3(H[2]), v3(H[3]), v3(H[4]), v3(H[5]))
    # the seed's wrist joints: the family's seed-dependent joint and the last one
    seeds = (seed[2], seed[0]) if rev else (seed[3], seed[5])
    return n, raw, (rev, R06, hs, seeds, box)


@njit(cache=True, inline="always")
def expand_spherical(fam, b):  # pragma: no cover - compiled
    """``(m, candidates, g)``: the ``m`` candidates (at most 2; 6-tuples in the family's joint
    order) of a spherical wrist's ready branch ``b`` and the data ``g`` of their first gate:
    :func:`gate_at` gives each in the chain's joint order, moved to its representatives, its
    distance to the seed and whether it passes (exact, limits, step bound)."""
    rev, R06, hs, seeds, box = fam
    h0, h1, h2, h3, h4, h5 = hs
    (x0, x1, x2), _, _, _, rep, _ = unpack_branch(b)
    R03 = mm(mm(rotm(h0, x0), rotm(h1, x1)), rotm(h2, x2))
    m, X, Y, Z = wrist_members(mm(mT(R03), R06), h3, h4, h5, seeds[0], seeds[1])
    pre = (rep[0], rep[1], rep[2], _Z, _Z, _Z)
    known = (True, True, True, False, False, False)
    cands = ((x0, x1, x2, X[0], Y[0], Z[0]), (x0, x1, x2, X[1], Y[1], Z[1]))
    return m, cands, (rev, pre, known, True, box)


@njit(cache=True, inline="always")
def start_parallel(var, sgn, H, P, data, Tt):  # pragma: no cover - compiled
    """:func:`start_spherical` for a three-parallel arm (``sgn``: the family's
    :attr:`.families.SixR.ksgn`): its branches are pairs of joints 1 and 5, bound by those two
    joints until :func:`refine_parallel` finds their joint 6."""
    Rw, pw, box = _start(Tt, data)
    rev, R6T, seed, (_, _, _, W, _) = data
    sg = t6(sgn)
    e1, e2, e3 = (4, 3, 2) if rev else (1, 2, 3)
    elbow_seed = sg[1] * seed[e1] + sg[2] * seed[e2] + sg[3] * seed[e3]
    elbow_w = 0.0  # 1 / sum(1 / W) of the parallel joints (0: no bound from them)
    if W[e1] > 0.0 and W[e2] > 0.0 and W[e3] > 0.0:
        elbow_w = 1.0 / (1.0 / W[e1] + 1.0 / W[e2] + 1.0 / W[e3])
    n, X, Y, R06, p16, cs = tp_start(var, Rw, pw, H, P, R6T)
    js = (5, 1, -1) if rev else (0, 4, -1)
    raw = (X, Y, _Z4, js, cs, PARTIAL, box)
    hs = (v3(H[0]), v3(H[1]), v3(H[4]), v3(H[5]))
    Ps = (v3(P[1]), v3(P[2]), v3(P[3]), v3(P[4]), v3(P[5]))
    elbow = (elbow_seed, elbow_w, seed[0] if rev else seed[5])
    # joint 1's value whose A and w0 are at hand (pairs share it): none yet
    j1 = (np.nan, (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0))
    return n, raw, (rev, R06, p16, hs, Ps, sg, elbow, box, j1)


@njit(cache=True, inline="always")
def refine_parallel(fam, b, lb):  # pragma: no cover - compiled
    """``(branch, bound, fam)``: a three-parallel pair ``b`` (bound ``lb`` from joints 1 and 5)
    with its joint 6, theta and elbow target, and a tighter bound (joint 6's term and the
    parallel joints' least share), :data:`CLOSED` when joint 6 misses the limits or the step
    bound; ``fam`` keeps joint 1's data for the pair's twin (the same joint 1)."""
    rev, R06, p16, hs, Ps, sg, (elbow_seed, elbow_w, seed_free), box, (q0_at, A, w0) = fam
    h0 = hs[0]
    P1 = Ps[0]
    (q0, q4, _), _, _, _, (r0, r1, _), cs = unpack_branch(b)
    if q0 != q0_at:
        A, w0 = tp_joint1(h0, cs[0], cs[1], R06, p16, P1)
        elbow = (elbow_seed, elbow_w, seed_free)
        fam = (rev, R06, p16, hs, Ps, sg, elbow, box, (q0, A, w0))
    q5, theta, d = tp_pair_rep(hs, Ps, (A, w0), (cs[2], cs[3]), seed_free)
    # joint 6 adds its term to the pair's (joints 1 and 5, the same sum's first terms)
    live, lb, r2 = _bound(lb, q5, 0 if rev else 5, box)
    out = pack_branch((q0, q4, q5), theta, d, _READY, (r0, r1, r2), cs)
    return out, (lb + _elbow_bound(theta, elbow_seed, elbow_w) if live else CLOSED), fam


@njit(cache=True, inline="always")
def expand_parallel(fam, b):  # pragma: no cover - compiled
    """:func:`expand_spherical` for a three-parallel arm's refined pair ``b``."""
    rev, R06, p16, hs, Ps, sg, elbow, box, j1 = fam
    h1 = hs[1]
    P2, P3 = Ps[1], Ps[2]
    (q0, q4, q5), theta, d, _, rep, _ = unpack_branch(b)
    m, ls, phi1, phi2, phi3 = tp_elbow(h1, P2, P3, theta, d)
    pre = (rep[0], _Z, _Z, _Z, rep[1], rep[2])
    known = (True, False, False, False, True, True)
    exact = True
    if ls:  # one least-squares branch: exact within round-off of the tangent one
        exact = tp_exact(h1, P2, P3, ls, phi2[0], d)
    cands = (
        (q0, phi1[0] * sg[1], phi2[0] * sg[2], phi3[0] * sg[3], q4, q5),
        (q0, phi1[1] * sg[1], phi2[1] * sg[2], phi3[1] * sg[3], q4, q5),
    )
    return m, cands, (rev, pre, known, exact, box)
