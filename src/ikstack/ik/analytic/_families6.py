"""Compiled candidate generators of the 6R families (7R arms with one joint locked:
:mod:`._locked6`).

Geometry arrives in IK-Geo form: ``H`` (6, 3) unit axes and ``P`` (7, 3) offsets
``p_01 .. p_6T`` at zero configuration, plus ``R6T`` (3, 3), so that
``p_0T = p_01 + R_01 p_12 + ... + R_06 p_6T`` and ``R_0T = R_06 R6T``.
Each generator writes 8 candidates ``Q`` (8, 6) and a mask ``V`` (8,) of the branches that
exist exactly; every slot stays finite (branches that do not exist hold least-squares or
seed values). Singular wrists give the seed-dependent representative of their family.
"""

from __future__ import annotations

import math

from numba import njit, prange

from ikstack.ik.analytic._sp_kernels import (
    sp1_angle,
    sp1_angle_cs,
    sp2,
    sp2_first,
    sp3,
    sp3_cs,
    sp4,
    sp4_cs,
    sp5,
    sp6,
)
from ikstack.spatial._tuple_math import (
    add,
    any_perp,
    cross,
    dot,
    m9,
    mm,
    mT,
    mtv,
    mv,
    neg,
    norm,
    rot,
    rot_cs,
    rotm,
    rotm_cs,
    scale,
    set4,
    sub,
    v3,
    wrap,
)

SPHERICAL = 0
THREE_PARALLEL = 1
#: candidates per target of a 6R family
K6 = 8


@njit(cache=True)
def decompose3(R, a, b, c, seed_x):  # pragma: no cover - compiled
    """``(count, X, Y, Z)``: ``R = R(a, x) R(b, y) R(c, z)`` (``R`` a 9-tuple), up to 2 triples.

    When ``R c`` is parallel to ``a`` (a gimbal singularity), ``x`` takes the seed's value and
    the single representative of the continuous family is returned.
    """
    Rc = mv(R, c)
    u = any_perp(c)
    Ru = mv(R, u)
    if norm(cross(a, Rc)) < 1e-10:
        x = seed_x
        y = sp1_angle(c, rot(a, -x, Rc), b)
        z = sp1_angle(u, rot(b, -y, rot(a, -x, Ru)), c)
        return 1, (x, x), (y, y), (z, z)
    cnt, ls, t1, t2 = sp2_first(Rc, c, a, b)  # t2 only for the least-squares check
    if ls and not sp2_tangent(Rc, c, a, b, t1[0], t2[0]):
        return 0, (0.0, 0.0), (0.0, 0.0), (0.0, 0.0)
    # y and z again from x by subproblem 1: near a gimbal singularity x carries the
    # tangent-root round-off (~sqrt(eps)); y and z absorb it so the product stays exact
    x0 = -t1[0]
    y0 = sp1_angle(c, rot(a, -x0, Rc), b)
    z0 = sp1_angle(u, rot(b, -y0, rot(a, -x0, Ru)), c)
    if cnt == 1:
        return 1, (x0, x0), (y0, y0), (z0, z0)
    x1 = -t1[1]
    y1 = sp1_angle(c, rot(a, -x1, Rc), b)
    z1 = sp1_angle(u, rot(b, -y1, rot(a, -x1, Ru)), c)
    return 2, (x0, x1), (y0, y1), (z0, z1)


#: a least-squares subproblem whose residual is below this (relative) is a tangent solution
#: that round-off (float32 targets, singular configurations) pushed past the tangent
TANGENT = 1e-6


@njit(cache=True, inline="always")
def sp4_tangent(h, p, k, d, t):  # pragma: no cover - compiled
    """Whether subproblem 4's least-squares root ``t`` misses ``h . R(k, t) p = d`` by
    round-off only (at most :data:`TANGENT` of ``|h| |p|``)."""
    return abs(dot(h, rot(k, t, p)) - d) <= TANGENT * max(1.0, norm(h) * norm(p))


@njit(cache=True, inline="always")
def sp3_tangent(p1, p2, k, d, t):  # pragma: no cover - compiled
    """Whether subproblem 3's least-squares root ``t`` misses ``|R(k, t) p1 - p2| = d`` by
    round-off only."""
    return abs(norm(sub(rot(k, t, p1), p2)) - d) <= TANGENT * max(1.0, d)


@njit(cache=True, inline="always")
def sp2_tangent(p1, p2, k1, k2, t1, t2):  # pragma: no cover - compiled
    """Whether subproblem 2's least-squares pair misses ``R(k1, t1) p1 = R(k2, t2) p2`` by
    round-off only."""
    return norm(sub(rot(k1, t1, p1), rot(k2, t2, p2))) <= TANGENT * max(1.0, norm(p1), norm(p2))


#: spherical-wrist position variants: general (subproblem 5), axes 2 and 3 parallel,
#: axes 1 and 2 meeting, axes 2 and 3 meeting (1-based)
GENERAL, TWO_PARALLEL, FIRST_MEET, SECOND_MEET = 0, 1, 2, 3
#: three-parallel variant: axes 5 and 6 (1-based) meet (joints 1 and 5 by subproblem 4 each
#: instead of subproblem 6; the general variant is :data:`GENERAL`)
LAST_MEET = 1


@njit(cache=True)
def _position3(var, pW, H, P, seed0):  # pragma: no cover - compiled
    """``(count, t0, t1, t2)``: joints 1-3 placing the wrist point at ``pW``; a wrist point on
    the first axis (joint 1 free) takes joint 1 at ``seed0``."""
    h0, h1, h2 = v3(H[0]), v3(H[1]), v3(H[2])
    P0, P1, P2, P3 = v3(P[0]), v3(P[1]), v3(P[2]), v3(P[3])
    w0 = sub(pW, P0)
    if var == GENERAL:
        n, t0, t1, t2 = sp5(neg(P1), w0, P2, P3, neg(h0), h1, h2)
        return n, t0, t1, t2
    a0 = a1 = a2 = (0.0, 0.0, 0.0, 0.0)
    cnt = int(0)  # noqa: UP018 - int64, not the literal 0: a callee compiles once
    if var == TWO_PARALLEL:
        # h1 . R(-h0, q0) w0 = h1 . (P1 + P2 + P3): q0; then the elbow by distance
        e = dot(h1, add(add(P1, P2), P3))
        m, ls, x0, x1 = sp4(h1, w0, neg(h0), e)
        if norm(sub(w0, scale(h0, dot(h0, w0)))) <= 1e-9 * max(1.0, norm(w0)):
            # the wrist point on the first axis (up to round-off): joint 1 is free (the seed)
            m, ls, x0, x1 = 1, not sp4_tangent(h1, w0, neg(h0), e, seed0), seed0, seed0
        if ls and not sp4_tangent(h1, w0, neg(h0), e, x0):
            return 0, (0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0)
        for i in range(m):
            q0 = x0 if i == 0 else x1
            w = sub(rot(h0, -q0, w0), P1)
            k, ls2, y0, y1 = sp3(P3, neg(P2), h2, norm(w))
            if ls2 and not sp3_tangent(P3, neg(P2), h2, norm(w), y0):
                continue
            for j in range(k):
                q2 = y0 if j == 0 else y1
                q1 = sp1_angle(add(P2, rot(h2, q2, P3)), w, h1)
                a0, a1, a2 = set4(a0, cnt, q0), set4(a1, cnt, q1), set4(a2, cnt, q2)
                cnt += 1
    elif var == FIRST_MEET:
        # P1 = 0: |w0| = |P2 + R(h2, q2) P3|, then subproblem 2 for (q0, q1)
        k, ls, y0, y1 = sp3(P3, neg(P2), h2, norm(w0))
        if ls and not sp3_tangent(P3, neg(P2), h2, norm(w0), y0):
            return 0, (0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0)
        for j in range(k):
            q2 = y0 if j == 0 else y1
            v = add(P2, rot(h2, q2, P3))
            m, ls2, t1, t2 = sp2(w0, v, neg(h0), h1)
            if ls2 and not sp2_tangent(w0, v, neg(h0), h1, t1[0], t2[0]):
                continue
            for i in range(m):
                a0, a1, a2 = set4(a0, cnt, t1[i]), set4(a1, cnt, t2[i]), set4(a2, cnt, q2)
                cnt += 1
    else:
        # P2 = 0: |R(-h0, q0) w0 - P1| = |P3|, then subproblem 2 for (q1, q2)
        k, ls, x0, x1 = sp3(w0, P1, neg(h0), norm(P3))
        if ls and not sp3_tangent(w0, P1, neg(h0), norm(P3), x0):
            return 0, (0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0)
        for i in range(k):
            q0 = x0 if i == 0 else x1
            w = sub(rot(h0, -q0, w0), P1)
            m, ls2, t1, t2 = sp2(w, P3, h1, h2)
            if ls2 and not sp2_tangent(w, P3, h1, h2, t1[0], t2[0]):
                continue
            for j in range(m):
                a0, a1, a2 = set4(a0, cnt, q0), set4(a1, cnt, -t1[j]), set4(a2, cnt, t2[j])
                cnt += 1
    return cnt, a0, a1, a2


@njit(cache=True)
def _free_joint1(n, t0, t1, t2, pW, R06, H, P, seed4):  # pragma: no cover - compiled
    """Joints 1-3 of :func:`_position3` with a second member per solution where the wrist
    point lies on the first axis (joint 1 free, a shoulder singularity).

    :func:`_position3` takes joint 1 at the seed's value; the dependent wrist joints may then
    leave their limits. The added member turns joint 1 (joints 2 and 3 unchanged: the wrist
    point stays put) so that joint 5 takes the seed's value ``seed4`` (subproblem 4 on
    ``(R03 h4) . (R06 h6)``; its least-squares root is the nearest reachable bend), taking the
    root nearest the seed's joint 1. At most 2 solutions are doubled (4 slots of 2 candidates).
    """
    h0 = v3(H[0])
    w0 = sub(pW, v3(P[0]))
    if n == 0 or n > 2 or norm(sub(w0, scale(h0, dot(h0, w0)))) > 1e-9 * max(1.0, norm(w0)):
        return n, t0, t1, t2
    h1, h2, h3, h4, h5 = v3(H[1]), v3(H[2]), v3(H[3]), v3(H[4]), v3(H[5])
    d = mv(R06, h5)
    c = dot(h3, rot(h4, seed4, h5))
    m0 = n
    for i in range(m0):
        u = mv(mm(rotm(h1, t1[i]), rotm(h2, t2[i])), h3)
        _, _, x0, x1 = sp4(d, u, h0, c)
        x = x0 if abs(wrap(x0 - t0[i])) <= abs(wrap(x1 - t0[i])) else x1
        t0, t1, t2 = set4(t0, n, x), set4(t1, n, t1[i]), set4(t2, n, t2[i])
        n += 1
    return n, t0, t1, t2


@njit(cache=True)
def wrist_members(R36, h3, h4, h5, seed3, seed5):  # pragma: no cover - compiled
    """``(count, X, Y, Z)``: the wrist joints 4-6 of ``R36`` (:func:`decompose3`, joint 4 at
    ``seed3`` where the wrist is singular), with a singular wrist's second member."""
    m, X, Y, Z = decompose3(R36, h3, h4, h5, seed3)
    if m == 1 and norm(cross(h3, mv(R36, h5))) < 1e-10:
        # singular wrist: joints 4 and 6 share one combined turn x + sg z. Besides joint 4
        # at the seed, the member nearest the seed in both joints (the seed's residual
        # turn split evenly), which stays within limits centred on the seed
        sg = 1.0 if dot(h3, rot(h4, Y[0], h5)) >= 0.0 else -1.0
        r = wrap(X[0] + sg * Z[0] - seed3 - sg * seed5)
        m = 2
        X = (X[0], seed3 + 0.5 * r)
        Z = (Z[0], seed5 + 0.5 * sg * r)
        Y = (Y[0], Y[0])
    return m, X, Y, Z


# A family writes its 8 candidates into slots ``base .. base + 7`` of ``Q`` (rows a slot,
# columns the chain's joints; the 6R family's joints are columns ``off .. off + 5``, read
# backwards where the family is, ``rev``) and their masks into ``V``; the seed is the chain's
# row ``seed`` (a 7R arm with an end joint locked passes its whole seed, ``off`` skipping the
# locked first joint). One source for both devices: the Warp functions are generated.


@njit(cache=True, inline="always")
def seed6(seed, rev, off, j):  # pragma: no cover - compiled
    """Joint ``j`` (the family's order) of the seed row ``seed``."""
    return seed[off + 5 - j] if rev else seed[off + j]


@njit(cache=True, inline="always")
def put6(Q, slot, rev, off, j, v):  # pragma: no cover - compiled
    """Joint ``j`` (the family's order) of candidate ``slot`` is ``v``."""
    # one store of a column picked by ``rev`` (not a store per branch: half the code, which
    # the first run compiles for every slot of both families)
    c = off + 5 - j if rev else off + j
    Q[slot, c] = v


@njit(cache=True)
def start6(Rt, pt, seed, dst):  # pragma: no cover - compiled
    """Slots ``base .. base + 7`` of the destination ``dst = (Q, V, base, off, rev)`` hold the
    seed, masked; returns the target the family solves: ``(Rt, pt)``, or its inverse where the
    chain is read backwards (``rev``)."""
    Q, V, base, off, rev = dst
    for k in range(K6):
        V[base + k] = False
        for j in range(6):
            Q[base + k, off + j] = seed[off + j]
    if rev:
        return mT(Rt), neg(mtv(Rt, pt))
    return Rt, pt


@njit(cache=True)
def spherical_wrist(var, Rt, pt, geo, seed, dst):  # pragma: no cover - compiled
    """6R whose last three axes meet (``P[4] = P[5] = 0``): joints 1-3 by ``var``, then the
    wrist by a three-axis decomposition, into the destination ``dst`` (:func:`start6`).

    ``Rt`` is a 9-tuple, ``pt`` a 3-tuple; ``geo = (H, P, R6T)``: ``H`` (6, 3), ``P`` (7, 3),
    ``R6T`` a 9-tuple.
    """
    H, P, R6T = geo
    Q, V, base, off, rev = dst
    Rt, pt = start6(Rt, pt, seed, dst)
    R06 = mm(Rt, mT(R6T))
    pW = sub(pt, mv(R06, v3(P[6])))
    h0, h1, h2 = v3(H[0]), v3(H[1]), v3(H[2])
    h3, h4, h5 = v3(H[3]), v3(H[4]), v3(H[5])
    n, t0, t1, t2 = _position3(var, pW, H, P, seed6(seed, rev, off, 0))
    n, t0, t1, t2 = _free_joint1(n, t0, t1, t2, pW, R06, H, P, seed6(seed, rev, off, 4))
    s3 = seed6(seed, rev, off, 3)
    s5 = seed6(seed, rev, off, 5)
    slot = 0
    for i in range(n):
        R03 = mm(mm(rotm(h0, t0[i]), rotm(h1, t1[i])), rotm(h2, t2[i]))
        m, X, Y, Z = wrist_members(mm(mT(R03), R06), h3, h4, h5, s3, s5)
        for j in range(m):
            if slot >= K6:
                break
            k = base + slot
            put6(Q, k, rev, off, 0, t0[i])
            put6(Q, k, rev, off, 1, t1[i])
            put6(Q, k, rev, off, 2, t2[i])
            put6(Q, k, rev, off, 3, X[j])
            put6(Q, k, rev, off, 4, Y[j])
            put6(Q, k, rev, off, 5, Z[j])
            V[k] = True
            slot += 1


@njit(cache=True)
def _last_meet(h0, h1, h4, h5, P5, d1, p16, R06):  # pragma: no cover - compiled
    """``(count, q0 (4,), q4 (4,), cos q0, sin q0, cos q4, sin q4)`` of a three-parallel arm
    whose axes 5 and 6 (1-based) meet:
    ``P5 = al h4 + be h5``, so the point ``p16 - be R06 h5`` does not depend on joints 5 and 6
    and its component along ``h1`` gives joint 1 by subproblem 4; then
    ``h1 . R(h4, q4) h5 = h1 . R01^T R06 h5`` gives joint 5 by subproblem 4."""
    z4 = (0.0, 0.0, 0.0, 0.0)
    g = dot(h4, h5)
    den = 1.0 - g * g
    a5 = dot(P5, h4)
    b5 = dot(P5, h5)
    al = (a5 - g * b5) / den
    be = (b5 - g * a5) / den
    v = mv(R06, h5)
    w = sub(p16, scale(v, be))
    # least-squares roots within round-off of a tangent (the wrist singular, the wrist centre
    # on the first axis) are kept as the tangent solution
    e = d1 + al * dot(h1, h4)
    m, ls, x0, x1, cs0, cs1 = sp4_cs(h1, w, neg(h0), e)
    if ls and not sp4_tangent(h1, w, neg(h0), e, x0):
        return 0, z4, z4, z4, z4, z4, z4
    a = b = ca = sa = cb = sb = z4
    cnt = int(0)  # noqa: UP018 - int64, not the literal 0: a callee compiles once
    for i in range(m):
        q0 = x0 if i == 0 else x1
        c0, s0 = cs0 if i == 0 else cs1
        e5 = dot(h1, rot_cs(h0, c0, -s0, v))
        k, ls2, y0, y1, e0, e1 = sp4_cs(h1, h5, h4, e5)
        if ls2 and not sp4_tangent(h1, h5, h4, e5, y0):
            continue
        for j in range(k):
            a, ca, sa = set4(a, cnt, q0), set4(ca, cnt, c0), set4(sa, cnt, s0)
            c4, s4 = e0 if j == 0 else e1
            b, cb, sb = set4(b, cnt, y0 if j == 0 else y1), set4(cb, cnt, c4), set4(sb, cnt, s4)
            cnt += 1
    return cnt, a, b, ca, sa, cb, sb


@njit(cache=True)
def tp_start(var, Rt, pt, H, P, R6T):  # pragma: no cover - compiled
    """Joints 1 and 5 of :func:`three_parallel`: ``(count, q0 (4,), q4 (4,), R06, p16, cs)``
    with ``cs`` the 4-tuples ``(cos q0, sin q0, cos q4, sin q4)``."""
    R06 = mm(Rt, mT(R6T))
    p16 = sub(sub(pt, mv(R06, v3(P[6]))), v3(P[0]))
    h0, h1, h4, h5 = v3(H[0]), v3(H[1]), v3(H[4]), v3(H[5])
    P1, P2, P3, P4, P5 = v3(P[1]), v3(P[2]), v3(P[3]), v3(P[4]), v3(P[5])
    m0 = neg(h0)
    d1 = (
        h1[0] * (P1[0] + P2[0] + P3[0] + P4[0])
        + h1[1] * (P1[1] + P2[1] + P3[1] + P4[1])
        + h1[2] * (P1[2] + P2[2] + P3[2] + P4[2])
    )
    if var is None or var == LAST_MEET:  # None: this variant alone is compiled (SixR.kvar)
        n, a, b, ca, sa, cb, sb = _last_meet(h0, h1, h4, h5, P5, d1, p16, R06)
        return n, a, b, R06, p16, (ca, sa, cb, sb)
    H4, K4, P4s = (h1, h1, h1, h1), (m0, h4, m0, h4), (p16, neg(P5), mv(R06, h5), neg(h5))
    n, a, b = sp6(H4, K4, P4s, d1, 0.0)
    ca = sa = cb = sb = (1.0, 1.0, 1.0, 1.0)
    for i in range(n):
        ca, sa = set4(ca, i, math.cos(a[i])), set4(sa, i, math.sin(a[i]))
        cb, sb = set4(cb, i, math.cos(b[i])), set4(sb, i, math.sin(b[i]))
    return n, a, b, R06, p16, (ca, sa, cb, sb)


@njit(cache=True, inline="always")
def tp_joint1(h0, c0, s0, R06, p16, P1):  # pragma: no cover - compiled
    """``(A, w0)`` of joint 1's value (cosine ``c0``, sine ``s0``): ``A = R01^T R06``,
    ``w0 = R01^T p16 - P1`` (``R(k, -t)`` from the same pair)."""
    return mm(mT(rotm_cs(h0, c0, s0)), R06), sub(rot_cs(h0, c0, -s0, p16), P1)


@njit(cache=True, inline="always")
def tp_pair(h1, h4, h5, P4, P5, A, w0, c4, s4, seed5):  # pragma: no cover - compiled
    """``(q5, theta, d)`` of a (joint 1, joint 5) pair (joint 5's cosine ``c4`` and sine
    ``s4``): joint 6, the sum ``theta`` of the parallel joints
    (``A = R(h1, theta) R(h4, q4) R(h5, q5)``) and the elbow's target ``d``."""
    v = rot_cs(h4, c4, s4, h5)
    if norm(cross(v, h1)) < 1e-10:
        q5 = seed5
        u1 = any_perp(h1)
        Bt = mm(rotm_cs(h4, c4, s4), rotm(h5, q5))
        theta = sp1_angle(u1, mv(A, mtv(Bt, u1)), h1)
        ct = math.cos(theta)
        st = math.sin(theta)
    else:
        theta, ct, st = sp1_angle_cs(v, mv(A, h5), h1)
        u5 = any_perp(h5)
        # R(h5, q5) = R(h4, -q4) R(h1, -theta) A, applied to u5 (no 3x3 product)
        q5 = sp1_angle_cs(u5, rot_cs(h4, c4, -s4, rot_cs(h1, ct, -st, mv(A, u5))), h5)[0]
    return q5, theta, sub(w0, rot_cs(h1, ct, st, add(P4, rot_cs(h4, c4, s4, P5))))


@njit(cache=True, inline="always")
def tp_elbow(h1, P2, P3, theta, d):  # pragma: no cover - compiled
    """``(count, is_ls, phi1 (2,), phi2 (2,), phi3 (2,))``: the elbow branches reaching
    ``d`` (subproblem 3), then the shoulder (subproblem 1) and the rest of ``theta``."""
    m, ls, e0, e1, u0, u1 = sp3_cs(P3, neg(P2), h1, norm(d))
    a0 = sp1_angle_cs(add(P2, rot_cs(h1, u0[0], u0[1], P3)), d, h1)[0]
    a1 = a0
    if m > 1:
        a1 = sp1_angle_cs(add(P2, rot_cs(h1, u1[0], u1[1], P3)), d, h1)[0]
    return (m, ls, (a0, a1), (e0, e1), (wrap(theta - a0 - e0), wrap(theta - a1 - e1)))


#: a wrist closer than this to singular (|joint 6 axis x parallel axis|) whose elbow misses
#: its reach at the seed's joint 6 takes :func:`tp_singular`'s representative
SINGULAR_WRIST = 1e-6


@njit(cache=True)
def tp_singular(hs, Ps, Aw, cs4, theta0):  # pragma: no cover - compiled
    """``(q5, theta, d)`` at a singular wrist: ``theta`` (the sum of the parallel joints) is
    free up to the elbow's reach; the value nearest ``theta0`` placing the elbow at mid reach
    (subproblem 4 on the wrist point's distance), then joint 6 from the rotation. Arguments as
    :func:`tp_pair_rep`'s."""
    _, h1, h4, h5 = hs
    _, P2, P3, P4, P5 = Ps
    A, w0 = Aw
    c4, s4 = cs4
    c = add(P4, rot_cs(h4, c4, s4, P5))
    hc = dot(c, h1)
    hw = dot(w0, h1)
    cp = sub(c, scale(h1, hc))
    wp = sub(w0, scale(h1, hw))
    hz = hw - hc
    a2 = dot(P2, h1)
    a3 = dot(P3, h1)
    dmid2 = dot(P2, P2) + dot(P3, P3) + 2.0 * a2 * a3  # |P2 + R P3|^2 at mid reach
    val = 0.5 * (dot(wp, wp) + dot(cp, cp) + hz * hz - dmid2)
    m, _, t0, t1 = sp4(wp, cp, h1, val)
    theta = t0
    if m > 1 and abs(wrap(t1 - theta0)) < abs(wrap(t0 - theta0)):
        theta = t1
    ct = math.cos(theta)
    st = math.sin(theta)
    u5 = any_perp(h5)
    q5 = sp1_angle(u5, rot_cs(h4, c4, -s4, rot_cs(h1, ct, -st, mv(A, u5))), h5)
    return q5, theta, sub(w0, rot_cs(h1, ct, st, c))


@njit(cache=True, inline="always")
def tp_pair_rep(hs, Ps, Aw, cs4, seed5):  # pragma: no cover - compiled
    """:func:`tp_pair`'s ``(q5, theta, d)``, or :func:`tp_singular`'s where the wrist is
    singular (joint 6 parallel to the parallel joints, up to the tangent root's round-off) and
    the seed's joint 6 leaves the elbow out of reach: the sum theta is free, so it moves to the
    nearest value with the elbow at mid reach.

    ``hs = (h0, h1, h4, h5)`` the axes and ``Ps = (P1 .. P5)`` the offsets used, ``Aw`` joint
    1's ``(A, w0)`` (:func:`tp_joint1`), ``cs4`` joint 5's ``(cos, sin)``."""
    _, h1, h4, h5 = hs
    _, P2, P3, P4, P5 = Ps
    A, w0 = Aw
    c4, s4 = cs4
    q5, theta, d = tp_pair(h1, h4, h5, P4, P5, A, w0, c4, s4, seed5)
    if norm(cross(rot_cs(h4, c4, s4, h5), h1)) < SINGULAR_WRIST:
        # whether the elbow misses its reach: subproblem 3's least-squares flag, as in
        # tp_elbow (not tp_elbow whole: its shoulder is not needed here, and each inlined copy
        # of it costs a first run's compile)
        _, ls, _, _, _, _ = sp3_cs(P3, neg(P2), h1, norm(d))
        if ls:
            q5, theta, d = tp_singular(hs, Ps, Aw, cs4, theta)
    return q5, theta, d


@njit(cache=True, inline="always")
def tp_exact(h1, P2, P3, ls, phi2, d):  # pragma: no cover - compiled
    """Whether the elbow branch with joint 3 (1-based) at ``phi2`` of :func:`tp_elbow`
    (least-squares flag ``ls``) exists: a least-squares elbow within round-off of straight (or
    folded) is the tangent one."""
    return not ls or abs(norm(add(P2, rot(h1, phi2, P3))) - norm(d)) <= TANGENT * max(1.0, norm(d))


@njit(cache=True)
def three_parallel(var, Rt, pt, geo, sgn, seed, dst):  # pragma: no cover - compiled
    """6R whose axes 2, 3, 4 (1-based) are parallel: ``H[2] = sgn[2] H[1]``, ``H[3] = sgn[3] H[1]``,
    into the destination ``dst`` (:func:`start6`; ``geo`` as :func:`spherical_wrist`'s).

    Subproblem 6 gives joints 1 and 5 (two subproblems 4 when axes 5 and 6 meet, ``var``
    :data:`LAST_MEET`), subproblem 1 the sum of the parallel joints and joint 6, subproblem 3
    the elbow (two branches), subproblem 1 the shoulder.
    """
    H, P, R6T = geo
    Q, V, base, off, rev = dst
    Rt, pt = start6(Rt, pt, seed, dst)
    n, a, b, R06, p16, cs = tp_start(var, Rt, pt, H, P, R6T)
    h0, h1, h4, h5 = v3(H[0]), v3(H[1]), v3(H[4]), v3(H[5])
    P1, P2, P3, P4, P5 = v3(P[1]), v3(P[2]), v3(P[3]), v3(P[4]), v3(P[5])
    s5 = seed6(seed, rev, off, 5)
    slot = 0
    A, w0 = tp_joint1(h0, cs[0][0], cs[1][0], R06, p16, P1)
    for i in range(n):
        q0 = a[i]
        q4 = b[i]
        if i > 0:
            if q0 != a[i - 1]:
                A, w0 = tp_joint1(h0, cs[0][i], cs[1][i], R06, p16, P1)
        q5, theta, d = tp_pair_rep(
            (h0, h1, h4, h5), (P1, P2, P3, P4, P5), (A, w0), (cs[2][i], cs[3][i]), s5
        )
        m, ls, phi1, phi2, phi3 = tp_elbow(h1, P2, P3, theta, d)
        for j in range(m):
            if slot >= K6:
                break
            k = base + slot
            put6(Q, k, rev, off, 0, q0)
            put6(Q, k, rev, off, 1, phi1[j] * sgn[1])
            put6(Q, k, rev, off, 2, phi2[j] * sgn[2])
            put6(Q, k, rev, off, 3, phi3[j] * sgn[3])
            put6(Q, k, rev, off, 4, q4)
            put6(Q, k, rev, off, 5, q5)
            V[k] = tp_exact(h1, P2, P3, ls, phi2[j], d)
            slot += 1


@njit(cache=True)
def solve6(fid, var, sgn, Rt, pt, geo, seed, dst):  # pragma: no cover - compiled
    """One target (``Rt`` 9-tuple, ``pt`` 3-tuple) of a 6R family of geometry
    ``geo = (H, P, R6T)`` into the destination ``dst = (Q, V, base, off, rev)``: slots
    ``base .. base + 7`` of ``Q`` (joints ``off .. off + 5``, seed row ``seed``:
    :func:`start6`); ``rev`` solves ``T^-1`` with the chain read backwards.

    ``fid``, ``var`` and ``sgn`` are :attr:`.families.SixR.kfid`, ``kvar`` and ``ksgn``: a
    spherical wrist has ``sgn`` None, a three-parallel arm ``fid`` None. Each family's call is
    guarded by its own argument's ``is not None``, which numba decides from the argument's type
    at compile time: a caller compiles only the family it passes. (The device picks the
    family by its ``fid`` at run time: the one function not shared.)
    """
    if sgn is not None:
        three_parallel(var, Rt, pt, geo, sgn, seed, dst)
    elif fid is not None:
        spherical_wrist(var, Rt, pt, geo, seed, dst)


@njit(cache=True)
def _batch6_range(i0, i1, fam, T, S, Q, V):  # pragma: no cover - compiled
    """Rows ``i0 .. i1`` of :func:`batch6`."""
    fid, var, rev, H, P, R6T, sgn = fam
    R6 = m9(R6T)
    for i in range(i0, i1):
        Ti = T[i]
        pt = (Ti[0, 3], Ti[1, 3], Ti[2, 3])
        solve6(fid, var, sgn, m9(Ti), pt, (H, P, R6), S[i], (Q[i], V[i], 0, 0, rev))


def batch6(fam, T, S, Q, V, parallel):
    """Candidates ``Q`` (N, 8, 6) and masks ``V`` (N, 8) of a 6R family for targets ``T``
    (N, 4, 4) from seeds ``S`` (N, 6); on all cores when ``parallel`` (a serial call never
    touches numba's thread pool).

    ``fam`` is the family as its kernels take it (:attr:`.families.SixR.kernel`): the tuple
    ``(fid, var, reverse, H, P, R6T, sgn)`` of :func:`solve6`'s arguments, ``fid``, ``var``
    and ``sgn`` each None where the arm is of the other family or variant (numba compiles the
    family passed alone). A plain tuple: numba types it from a fingerprint, where a named
    tuple costs a microsecond per call in Python (a single target's family call notices)."""
    if parallel:
        batch6_parallel(fam, T, S, Q, V)
    else:
        _batch6_range(0, T.shape[0], fam, T, S, Q, V)


@njit(cache=True, parallel=True)
def batch6_parallel(fam, T, S, Q, V):  # pragma: no cover - compiled
    """:func:`batch6` on all cores, in blocks of 64 targets."""
    n = T.shape[0]
    nblk = (n + 63) // 64
    for b in prange(nblk):
        _batch6_range(b * 64, min(n, b * 64 + 64), fam, T, S, Q, V)
