# mypy: ignore-errors
# ruff: noqa
"""GENERATED from ``src/ikstack/ik/analytic/_families6.py`` by :mod:`ikstack.backends.warp._translate`:
do not edit; edit the CPU source and run ``python -m ikstack.backends.warp._translate``
(a test fails when this file and its source disagree)."""

import warp as wp

from ikstack.backends.warp._prims import *  # noqa: F403
from ikstack.backends.warp._gen_sp import sp1_angle, sp1_angle_cs, sp2, sp2_first, sp3, sp3_cs, sp4, sp4_cs, sp5, sp6
from ikstack.backends.warp._gen_tuple_math import add, any_perp, cross, dot, mT, mm, mtv, mv, neg, norm, rot, rot_cs, rotm, rotm_cs, scale, set4, sub, wrap

FIRST_MEET = wp.constant(2)
GENERAL = wp.constant(0)
K6 = wp.constant(8)
LAST_MEET = wp.constant(1)
SINGULAR_WRIST = wp.constant(F(1e-06))
TANGENT = wp.constant(F(1e-06))
TWO_PARALLEL = wp.constant(1)


@wp.func
def sp2_tangent(p1: wp.vec3d, p2: wp.vec3d, k1: wp.vec3d, k2: wp.vec3d, t1: wp.float64, t2: wp.float64):
    """Whether subproblem 2's least-squares pair misses ``R(k1, t1) p1 = R(k2, t2) p2`` by
    round-off only."""
    return norm(sub(rot(k1, t1, p1), rot(k2, t2, p2))) <= TANGENT * wp.max(wp.max(F(1.0), norm(p1)), norm(p2))


@wp.func
def decompose3(R: wp.mat33d, a: wp.vec3d, b: wp.vec3d, c: wp.vec3d, seed_x: wp.float64):
    """``(count, X, Y, Z)``: ``R = R(a, x) R(b, y) R(c, z)`` (``R`` a 9-tuple), up to 2 triples.

    When ``R c`` is parallel to ``a`` (a gimbal singularity), ``x`` takes the seed's value and
    the single representative of the continuous family is returned.
    """
    x = F(0.0)
    y = F(0.0)
    z = F(0.0)
    Rc = mv(R, c)
    u = any_perp(c)
    Ru = mv(R, u)
    if norm(cross(a, Rc)) < F(1e-10):
        x = seed_x
        y = sp1_angle(c, rot(a, -x, Rc), b)
        z = sp1_angle(u, rot(b, -y, rot(a, -x, Ru)), c)
        return 1, wp.vec2d(x, x), wp.vec2d(y, y), wp.vec2d(z, z)
    cnt, ls, t1, t2 = sp2_first(Rc, c, a, b)
    if ls and (not sp2_tangent(Rc, c, a, b, t1[0], t2[0])):
        return 0, wp.vec2d(F(0.0), F(0.0)), wp.vec2d(F(0.0), F(0.0)), wp.vec2d(F(0.0), F(0.0))
    x0 = -t1[0]
    y0 = sp1_angle(c, rot(a, -x0, Rc), b)
    z0 = sp1_angle(u, rot(b, -y0, rot(a, -x0, Ru)), c)
    if cnt == 1:
        return 1, wp.vec2d(x0, x0), wp.vec2d(y0, y0), wp.vec2d(z0, z0)
    x1 = -t1[1]
    y1 = sp1_angle(c, rot(a, -x1, Rc), b)
    z1 = sp1_angle(u, rot(b, -y1, rot(a, -x1, Ru)), c)
    return 2, wp.vec2d(x0, x1), wp.vec2d(y0, y1), wp.vec2d(z0, z1)


@wp.func
def sp4_tangent(h: wp.vec3d, p: wp.vec3d, k: wp.vec3d, d: wp.float64, t: wp.float64):
    """Whether subproblem 4's least-squares root ``t`` misses ``h . R(k, t) p = d`` by
    round-off only (at most :data:`TANGENT` of ``|h| |p|``)."""
    return wp.abs(dot(h, rot(k, t, p)) - d) <= TANGENT * wp.max(F(1.0), norm(h) * norm(p))


@wp.func
def sp3_tangent(p1: wp.vec3d, p2: wp.vec3d, k: wp.vec3d, d: wp.float64, t: wp.float64):
    """Whether subproblem 3's least-squares root ``t`` misses ``|R(k, t) p1 - p2| = d`` by
    round-off only."""
    return wp.abs(norm(sub(rot(k, t, p1), p2)) - d) <= TANGENT * wp.max(F(1.0), d)


@wp.func
def _position3(var: int, pW: wp.vec3d, H: wp.array(dtype=wp.vec3d), P: wp.array(dtype=wp.vec3d), seed0: wp.float64):
    """``(count, t0, t1, t2)``: joints 1-3 placing the wrist point at ``pW``; a wrist point on
    the first axis (joint 1 free) takes joint 1 at ``seed0``."""
    n = int(0)
    t0 = wp.vec4d()
    t1 = wp.vec4d()
    t2 = wp.vec4d()
    e = F(0.0)
    m = int(0)
    ls = bool(False)
    x0 = F(0.0)
    x1 = F(0.0)
    q0 = F(0.0)
    w = wp.vec3d()
    k = int(0)
    ls2 = bool(False)
    y0 = F(0.0)
    y1 = F(0.0)
    q2 = F(0.0)
    q1 = F(0.0)
    v = wp.vec3d()
    t1_1 = wp.vec2d()
    t2_1 = wp.vec2d()
    h0 = H[0]
    h1 = H[1]
    h2 = H[2]
    P0 = P[0]
    P1 = P[1]
    P2 = P[2]
    P3 = P[3]
    w0 = sub(pW, P0)
    if var == GENERAL:
        n, t0, t1, t2 = sp5(neg(P1), w0, P2, P3, neg(h0), h1, h2)
        return n, t0, t1, t2
    a0 = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    a1 = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    a2 = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    cnt = int(0)
    if var == TWO_PARALLEL:
        e = dot(h1, add(add(P1, P2), P3))
        m, ls, x0, x1 = sp4(h1, w0, neg(h0), e)
        if norm(sub(w0, scale(h0, dot(h0, w0)))) <= F(1e-09) * wp.max(F(1.0), norm(w0)):
            m = int(1)
            ls = not sp4_tangent(h1, w0, neg(h0), e, seed0)
            x0 = seed0
            x1 = seed0
        if ls and (not sp4_tangent(h1, w0, neg(h0), e, x0)):
            return 0, wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0)), wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0)), wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
        for i in range(m):
            q0 = wp.where(i == 0, x0, x1)
            w = sub(rot(h0, -q0, w0), P1)
            k, ls2, y0, y1 = sp3(P3, neg(P2), h2, norm(w))
            if ls2 and (not sp3_tangent(P3, neg(P2), h2, norm(w), y0)):
                continue
            for j in range(k):
                q2 = wp.where(j == 0, y0, y1)
                q1 = sp1_angle(add(P2, rot(h2, q2, P3)), w, h1)
                a0 = set4(a0, cnt, q0)
                a1 = set4(a1, cnt, q1)
                a2 = set4(a2, cnt, q2)
                cnt = cnt + 1
    elif var == FIRST_MEET:
        k, ls, y0, y1 = sp3(P3, neg(P2), h2, norm(w0))
        if ls and (not sp3_tangent(P3, neg(P2), h2, norm(w0), y0)):
            return 0, wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0)), wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0)), wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
        for j in range(k):
            q2 = wp.where(j == 0, y0, y1)
            v = add(P2, rot(h2, q2, P3))
            m, ls2, t1_1, t2_1 = sp2(w0, v, neg(h0), h1)
            if ls2 and (not sp2_tangent(w0, v, neg(h0), h1, t1_1[0], t2_1[0])):
                continue
            for i in range(m):
                a0 = set4(a0, cnt, t1_1[i])
                a1 = set4(a1, cnt, t2_1[i])
                a2 = set4(a2, cnt, q2)
                cnt = cnt + 1
    else:
        k, ls, x0, x1 = sp3(w0, P1, neg(h0), norm(P3))
        if ls and (not sp3_tangent(w0, P1, neg(h0), norm(P3), x0)):
            return 0, wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0)), wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0)), wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
        for i in range(k):
            q0 = wp.where(i == 0, x0, x1)
            w = sub(rot(h0, -q0, w0), P1)
            m, ls2, t1_1, t2_1 = sp2(w, P3, h1, h2)
            if ls2 and (not sp2_tangent(w, P3, h1, h2, t1_1[0], t2_1[0])):
                continue
            for j in range(m):
                a0 = set4(a0, cnt, q0)
                a1 = set4(a1, cnt, -t1_1[j])
                a2 = set4(a2, cnt, t2_1[j])
                cnt = cnt + 1
    return cnt, a0, a1, a2


@wp.func
def _free_joint1(n: int, t0: wp.vec4d, t1: wp.vec4d, t2: wp.vec4d, pW: wp.vec3d, R06: wp.mat33d, H: wp.array(dtype=wp.vec3d), P: wp.array(dtype=wp.vec3d), seed4: wp.float64):
    """Joints 1-3 of :func:`_position3` with a second member per solution where the wrist
    point lies on the first axis (joint 1 free, a shoulder singularity).

    :func:`_position3` takes joint 1 at the seed's value; the dependent wrist joints may then
    leave their limits. The added member turns joint 1 (joints 2 and 3 unchanged: the wrist
    point stays put) so that joint 5 takes the seed's value ``seed4`` (subproblem 4 on
    ``(R03 h4) . (R06 h6)``; its least-squares root is the nearest reachable bend), taking the
    root nearest the seed's joint 1. At most 2 solutions are doubled (4 slots of 2 candidates).
    """
    h0 = H[0]
    w0 = sub(pW, P[0])
    if n == 0 or n > 2 or norm(sub(w0, scale(h0, dot(h0, w0)))) > F(1e-09) * wp.max(F(1.0), norm(w0)):
        return n, t0, t1, t2
    h1 = H[1]
    h2 = H[2]
    h3 = H[3]
    h4 = H[4]
    h5 = H[5]
    d = mv(R06, h5)
    c = dot(h3, rot(h4, seed4, h5))
    m0 = n
    for i in range(m0):
        u = mv(mm(rotm(h1, t1[i]), rotm(h2, t2[i])), h3)
        _u1, _u2, x0, x1 = sp4(d, u, h0, c)
        x = wp.where(wp.abs(wrap(x0 - t0[i])) <= wp.abs(wrap(x1 - t0[i])), x0, x1)
        t0 = set4(t0, n, x)
        t1 = set4(t1, n, t1[i])
        t2 = set4(t2, n, t2[i])
        n = n + 1
    return n, t0, t1, t2


@wp.func
def wrist_members(R36: wp.mat33d, h3: wp.vec3d, h4: wp.vec3d, h5: wp.vec3d, seed3: wp.float64, seed5: wp.float64):
    """``(count, X, Y, Z)``: the wrist joints 4-6 of ``R36`` (:func:`decompose3`, joint 4 at
    ``seed3`` where the wrist is singular), with a singular wrist's second member."""
    sg = F(0.0)
    r = F(0.0)
    m, X, Y, Z = decompose3(R36, h3, h4, h5, seed3)
    if m == 1 and norm(cross(h3, mv(R36, h5))) < F(1e-10):
        sg = wp.where(dot(h3, rot(h4, Y[0], h5)) >= F(0.0), F(1.0), F(-1.0))
        r = wrap(X[0] + sg * Z[0] - seed3 - sg * seed5)
        m = int(2)
        X = wp.vec2d(X[0], seed3 + F(0.5) * r)
        Z = wp.vec2d(Z[0], seed5 + F(0.5) * sg * r)
        Y = wp.vec2d(Y[0], Y[0])
    return m, X, Y, Z


@wp.func
def seed6(seed: wp.array(dtype=wp.float64), rev: bool, off: int, j: int):
    """Joint ``j`` (the family's order) of the seed row ``seed``."""
    return wp.where(rev, seed[off + 5 - j], seed[off + j])


@wp.func
def put6(Q: wp.array2d(dtype=wp.float64), slot: int, rev: bool, off: int, j: int, v: wp.float64):
    """Joint ``j`` (the family's order) of candidate ``slot`` is ``v``."""
    c = wp.where(rev, off + 5 - j, off + j)
    Q[slot, c] = v


@wp.func
def start6(Rt: wp.mat33d, pt: wp.vec3d, seed: wp.array(dtype=wp.float64), Q: wp.array2d(dtype=wp.float64), V: wp.array(dtype=wp.int32), base: int, off: int, rev: bool):
    """Slots ``base .. base + 7`` of the destination ``dst = (Q, V, base, off, rev)`` hold the
    seed, masked; returns the target the family solves: ``(Rt, pt)``, or its inverse where the
    chain is read backwards (``rev``).

    On the device (generated from ``ikstack.ik.analytic._families6.start6``): ``dst`` is passed
    as ``Q``, ``V``, ``base``, ``off`` and ``rev``."""
    for k in range(K6):
        V[base + k] = 0
        for j in range(6):
            Q[base + k, off + j] = seed[off + j]
    if rev:
        return mT(Rt), neg(mtv(Rt, pt))
    return Rt, pt


@wp.func
def spherical_wrist(var: int, Rt: wp.mat33d, pt: wp.vec3d, H: wp.array(dtype=wp.vec3d), P: wp.array(dtype=wp.vec3d), R6T: wp.mat33d, seed: wp.array(dtype=wp.float64), Q: wp.array2d(dtype=wp.float64), V: wp.array(dtype=wp.int32), base: int, off: int, rev: bool):
    """6R whose last three axes meet (``P[4] = P[5] = 0``): joints 1-3 by ``var``, then the
    wrist by a three-axis decomposition, into the destination ``dst`` (:func:`start6`).

    ``Rt`` is a 9-tuple, ``pt`` a 3-tuple; ``geo = (H, P, R6T)``: ``H`` (6, 3), ``P`` (7, 3),
    ``R6T`` a 9-tuple.

    On the device (generated from ``ikstack.ik.analytic._families6.spherical_wrist``): ``geo``
    is passed as ``H``, ``P`` and ``R6T``; ``dst`` is passed as ``Q``, ``V``, ``base``, ``off``
    and ``rev``.
    """
    Rt, pt = start6(Rt, pt, seed, Q, V, base, off, rev)
    R06 = mm(Rt, mT(R6T))
    pW = sub(pt, mv(R06, P[6]))
    h0 = H[0]
    h1 = H[1]
    h2 = H[2]
    h3 = H[3]
    h4 = H[4]
    h5 = H[5]
    n, t0, t1, t2 = _position3(var, pW, H, P, seed6(seed, rev, off, 0))
    n, t0, t1, t2 = _free_joint1(n, t0, t1, t2, pW, R06, H, P, seed6(seed, rev, off, 4))
    s3 = seed6(seed, rev, off, 3)
    s5 = seed6(seed, rev, off, 5)
    slot = int(0)
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
            V[k] = 1
            slot = slot + 1


@wp.func
def _last_meet(h0: wp.vec3d, h1: wp.vec3d, h4: wp.vec3d, h5: wp.vec3d, P5: wp.vec3d, d1: wp.float64, p16: wp.vec3d, R06: wp.mat33d):
    """``(count, q0 (4,), q4 (4,), cos q0, sin q0, cos q4, sin q4)`` of a three-parallel arm
    whose axes 5 and 6 (1-based) meet:
    ``P5 = al h4 + be h5``, so the point ``p16 - be R06 h5`` does not depend on joints 5 and 6
    and its component along ``h1`` gives joint 1 by subproblem 4; then
    ``h1 . R(h4, q4) h5 = h1 . R01^T R06 h5`` gives joint 5 by subproblem 4."""
    z4 = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    g = dot(h4, h5)
    den = F(1.0) - g * g
    a5 = dot(P5, h4)
    b5 = dot(P5, h5)
    al = (a5 - g * b5) / den
    be = (b5 - g * a5) / den
    v = mv(R06, h5)
    w = sub(p16, scale(v, be))
    e = d1 + al * dot(h1, h4)
    m, ls, x0, x1, cs0, cs1 = sp4_cs(h1, w, neg(h0), e)
    if ls and (not sp4_tangent(h1, w, neg(h0), e, x0)):
        return 0, z4, z4, z4, z4, z4, z4
    a = z4
    b = z4
    ca = z4
    sa = z4
    cb = z4
    sb = z4
    cnt = int(0)
    for i in range(m):
        q0 = wp.where(i == 0, x0, x1)
        c0_s0 = wp.where(i == 0, cs0, cs1)
        c0 = c0_s0[0]
        s0 = c0_s0[1]
        e5 = dot(h1, rot_cs(h0, c0, -s0, v))
        k, ls2, y0, y1, e0, e1 = sp4_cs(h1, h5, h4, e5)
        if ls2 and (not sp4_tangent(h1, h5, h4, e5, y0)):
            continue
        for j in range(k):
            a = set4(a, cnt, q0)
            ca = set4(ca, cnt, c0)
            sa = set4(sa, cnt, s0)
            c4_s4 = wp.where(j == 0, e0, e1)
            c4 = c4_s4[0]
            s4 = c4_s4[1]
            b = set4(b, cnt, wp.where(j == 0, y0, y1))
            cb = set4(cb, cnt, c4)
            sb = set4(sb, cnt, s4)
            cnt = cnt + 1
    return cnt, a, b, ca, sa, cb, sb


@wp.func
def tp_start(var: int, Rt: wp.mat33d, pt: wp.vec3d, H: wp.array(dtype=wp.vec3d), P: wp.array(dtype=wp.vec3d), R6T: wp.mat33d):
    """Joints 1 and 5 of :func:`three_parallel`: ``(count, q0 (4,), q4 (4,), R06, p16, cs)``
    with ``cs`` the 4-tuples ``(cos q0, sin q0, cos q4, sin q4)``.

    On the device (generated from ``ikstack.ik.analytic._families6.tp_start``): ``var`` is
    always passed."""
    n = int(0)
    a = wp.vec4d()
    b = wp.vec4d()
    ca = wp.vec4d()
    sa = wp.vec4d()
    cb = wp.vec4d()
    sb = wp.vec4d()
    R06 = mm(Rt, mT(R6T))
    p16 = sub(sub(pt, mv(R06, P[6])), P[0])
    h0 = H[0]
    h1 = H[1]
    h4 = H[4]
    h5 = H[5]
    P1 = P[1]
    P2 = P[2]
    P3 = P[3]
    P4 = P[4]
    P5 = P[5]
    m0 = neg(h0)
    d1 = h1[0] * (P1[0] + P2[0] + P3[0] + P4[0]) + h1[1] * (P1[1] + P2[1] + P3[1] + P4[1]) + h1[2] * (P1[2] + P2[2] + P3[2] + P4[2])
    if var == LAST_MEET:
        n, a, b, ca, sa, cb, sb = _last_meet(h0, h1, h4, h5, P5, d1, p16, R06)
        return n, a, b, R06, p16, wp.matrix_from_rows(ca, sa, cb, sb)
    H4 = wp.matrix_from_rows(h1, h1, h1, h1)
    K4 = wp.matrix_from_rows(m0, h4, m0, h4)
    P4s = wp.matrix_from_rows(p16, neg(P5), mv(R06, h5), neg(h5))
    n, a, b = sp6(H4, K4, P4s, d1, F(0.0))
    ca = wp.vec4d(F(1.0), F(1.0), F(1.0), F(1.0))
    sa = wp.vec4d(F(1.0), F(1.0), F(1.0), F(1.0))
    cb = wp.vec4d(F(1.0), F(1.0), F(1.0), F(1.0))
    sb = wp.vec4d(F(1.0), F(1.0), F(1.0), F(1.0))
    for i in range(n):
        ca = set4(ca, i, wp.cos(a[i]))
        sa = set4(sa, i, wp.sin(a[i]))
        cb = set4(cb, i, wp.cos(b[i]))
        sb = set4(sb, i, wp.sin(b[i]))
    return n, a, b, R06, p16, wp.matrix_from_rows(ca, sa, cb, sb)


@wp.func
def tp_joint1(h0: wp.vec3d, c0: wp.float64, s0: wp.float64, R06: wp.mat33d, p16: wp.vec3d, P1: wp.vec3d):
    """``(A, w0)`` of joint 1's value (cosine ``c0``, sine ``s0``): ``A = R01^T R06``,
    ``w0 = R01^T p16 - P1`` (``R(k, -t)`` from the same pair)."""
    return mm(mT(rotm_cs(h0, c0, s0)), R06), sub(rot_cs(h0, c0, -s0, p16), P1)


@wp.func
def tp_pair(h1: wp.vec3d, h4: wp.vec3d, h5: wp.vec3d, P4: wp.vec3d, P5: wp.vec3d, A: wp.mat33d, w0: wp.vec3d, c4: wp.float64, s4: wp.float64, seed5: wp.float64):
    """``(q5, theta, d)`` of a (joint 1, joint 5) pair (joint 5's cosine ``c4`` and sine
    ``s4``): joint 6, the sum ``theta`` of the parallel joints
    (``A = R(h1, theta) R(h4, q4) R(h5, q5)``) and the elbow's target ``d``."""
    q5 = F(0.0)
    u1 = wp.vec3d()
    Bt = wp.mat33d()
    theta = F(0.0)
    ct = F(0.0)
    st = F(0.0)
    u5 = wp.vec3d()
    v = rot_cs(h4, c4, s4, h5)
    if norm(cross(v, h1)) < F(1e-10):
        q5 = seed5
        u1 = any_perp(h1)
        Bt = mm(rotm_cs(h4, c4, s4), rotm(h5, q5))
        theta = sp1_angle(u1, mv(A, mtv(Bt, u1)), h1)
        ct = wp.cos(theta)
        st = wp.sin(theta)
    else:
        theta_ct_st = sp1_angle_cs(v, mv(A, h5), h1)
        theta = theta_ct_st[0]
        ct = theta_ct_st[1]
        st = theta_ct_st[2]
        u5 = any_perp(h5)
        q5 = sp1_angle_cs(u5, rot_cs(h4, c4, -s4, rot_cs(h1, ct, -st, mv(A, u5))), h5)[0]
    return q5, theta, sub(w0, rot_cs(h1, ct, st, add(P4, rot_cs(h4, c4, s4, P5))))


@wp.func
def tp_elbow(h1: wp.vec3d, P2: wp.vec3d, P3: wp.vec3d, theta: wp.float64, d: wp.vec3d):
    """``(count, is_ls, phi1 (2,), phi2 (2,), phi3 (2,))``: the elbow branches reaching
    ``d`` (subproblem 3), then the shoulder (subproblem 1) and the rest of ``theta``."""
    m, ls, e0, e1, u0, u1 = sp3_cs(P3, neg(P2), h1, norm(d))
    a0 = sp1_angle_cs(add(P2, rot_cs(h1, u0[0], u0[1], P3)), d, h1)[0]
    a1 = a0
    if m > 1:
        a1 = sp1_angle_cs(add(P2, rot_cs(h1, u1[0], u1[1], P3)), d, h1)[0]
    return m, ls, wp.vec2d(a0, a1), wp.vec2d(e0, e1), wp.vec2d(wrap(theta - a0 - e0), wrap(theta - a1 - e1))


@wp.func
def tp_singular(h0: wp.vec3d, h1: wp.vec3d, h4: wp.vec3d, h5: wp.vec3d, P1: wp.vec3d, P2: wp.vec3d, P3: wp.vec3d, P4: wp.vec3d, P5: wp.vec3d, A: wp.mat33d, w0: wp.vec3d, c4: wp.float64, s4: wp.float64, theta0: wp.float64):
    """``(q5, theta, d)`` at a singular wrist: ``theta`` (the sum of the parallel joints) is
    free up to the elbow's reach; the value nearest ``theta0`` placing the elbow at mid reach
    (subproblem 4 on the wrist point's distance), then joint 6 from the rotation. Arguments as
    :func:`tp_pair_rep`'s.

    On the device (generated from ``ikstack.ik.analytic._families6.tp_singular``): ``hs`` is
    passed as ``h0``, ``h1``, ``h4`` and ``h5``; ``Ps`` is passed as ``P1``, ``P2``, ``P3``,
    ``P4`` and ``P5``; ``Aw`` is passed as ``A`` and ``w0``; ``cs4`` is passed as ``c4`` and
    ``s4``."""
    c = add(P4, rot_cs(h4, c4, s4, P5))
    hc = dot(c, h1)
    hw = dot(w0, h1)
    cp = sub(c, scale(h1, hc))
    wp_ = sub(w0, scale(h1, hw))
    hz = hw - hc
    a2 = dot(P2, h1)
    a3 = dot(P3, h1)
    dmid2 = dot(P2, P2) + dot(P3, P3) + F(2.0) * a2 * a3
    val = F(0.5) * (dot(wp_, wp_) + dot(cp, cp) + hz * hz - dmid2)
    m, _u1, t0, t1 = sp4(wp_, cp, h1, val)
    theta = t0
    if m > 1 and wp.abs(wrap(t1 - theta0)) < wp.abs(wrap(t0 - theta0)):
        theta = t1
    ct = wp.cos(theta)
    st = wp.sin(theta)
    u5 = any_perp(h5)
    q5 = sp1_angle(u5, rot_cs(h4, c4, -s4, rot_cs(h1, ct, -st, mv(A, u5))), h5)
    return q5, theta, sub(w0, rot_cs(h1, ct, st, c))


@wp.func
def tp_pair_rep(h0: wp.vec3d, h1: wp.vec3d, h4: wp.vec3d, h5: wp.vec3d, P1: wp.vec3d, P2: wp.vec3d, P3: wp.vec3d, P4: wp.vec3d, P5: wp.vec3d, A: wp.mat33d, w0: wp.vec3d, c4: wp.float64, s4: wp.float64, seed5: wp.float64):
    """:func:`tp_pair`'s ``(q5, theta, d)``, or :func:`tp_singular`'s where the wrist is
    singular (joint 6 parallel to the parallel joints, up to the tangent root's round-off) and
    the seed's joint 6 leaves the elbow out of reach: the sum theta is free, so it moves to the
    nearest value with the elbow at mid reach.

    ``hs = (h0, h1, h4, h5)`` the axes and ``Ps = (P1 .. P5)`` the offsets used, ``Aw`` joint
    1's ``(A, w0)`` (:func:`tp_joint1`), ``cs4`` joint 5's ``(cos, sin)``.

    On the device (generated from ``ikstack.ik.analytic._families6.tp_pair_rep``): ``hs`` is
    passed as ``h0``, ``h1``, ``h4`` and ``h5``; ``Ps`` is passed as ``P1``, ``P2``, ``P3``,
    ``P4`` and ``P5``; ``Aw`` is passed as ``A`` and ``w0``; ``cs4`` is passed as ``c4`` and
    ``s4``."""
    _u1 = int(0)
    ls = bool(False)
    _u2 = F(0.0)
    _u3 = F(0.0)
    _u4 = wp.vec2d()
    _u5 = wp.vec2d()
    q5, theta, d = tp_pair(h1, h4, h5, P4, P5, A, w0, c4, s4, seed5)
    if norm(cross(rot_cs(h4, c4, s4, h5), h1)) < SINGULAR_WRIST:
        _u1, ls, _u2, _u3, _u4, _u5 = sp3_cs(P3, neg(P2), h1, norm(d))
        if ls:
            q5, theta, d = tp_singular(h0, h1, h4, h5, P1, P2, P3, P4, P5, A, w0, c4, s4, theta)
    return q5, theta, d


@wp.func
def tp_exact(h1: wp.vec3d, P2: wp.vec3d, P3: wp.vec3d, ls: bool, phi2: wp.float64, d: wp.vec3d):
    """Whether the elbow branch with joint 3 (1-based) at ``phi2`` of :func:`tp_elbow`
    (least-squares flag ``ls``) exists: a least-squares elbow within round-off of straight (or
    folded) is the tangent one."""
    return (not ls) or wp.abs(norm(add(P2, rot(h1, phi2, P3))) - norm(d)) <= TANGENT * wp.max(F(1.0), norm(d))


@wp.func
def three_parallel(var: int, Rt: wp.mat33d, pt: wp.vec3d, H: wp.array(dtype=wp.vec3d), P: wp.array(dtype=wp.vec3d), R6T: wp.mat33d, sgn: wp.array(dtype=wp.float64), seed: wp.array(dtype=wp.float64), Q: wp.array2d(dtype=wp.float64), V: wp.array(dtype=wp.int32), base: int, off: int, rev: bool):
    """6R whose axes 2, 3, 4 (1-based) are parallel: ``H[2] = sgn[2] H[1]``, ``H[3] = sgn[3] H[1]``,
    into the destination ``dst`` (:func:`start6`; ``geo`` as :func:`spherical_wrist`'s).

    Subproblem 6 gives joints 1 and 5 (two subproblems 4 when axes 5 and 6 meet, ``var``
    :data:`LAST_MEET`), subproblem 1 the sum of the parallel joints and joint 6, subproblem 3
    the elbow (two branches), subproblem 1 the shoulder.

    On the device (generated from ``ikstack.ik.analytic._families6.three_parallel``): ``var`` is
    always passed; ``geo`` is passed as ``H``, ``P`` and ``R6T``; ``dst`` is passed as ``Q``,
    ``V``, ``base``, ``off`` and ``rev``.
    """
    Rt, pt = start6(Rt, pt, seed, Q, V, base, off, rev)
    n, a, b, R06, p16, cs = tp_start(var, Rt, pt, H, P, R6T)
    h0 = H[0]
    h1 = H[1]
    h4 = H[4]
    h5 = H[5]
    P1 = P[1]
    P2 = P[2]
    P3 = P[3]
    P4 = P[4]
    P5 = P[5]
    s5 = seed6(seed, rev, off, 5)
    slot = int(0)
    A, w0 = tp_joint1(h0, cs[0][0], cs[1][0], R06, p16, P1)
    for i in range(n):
        q0 = a[i]
        q4 = b[i]
        if i > 0:
            if q0 != a[i - 1]:
                A, w0 = tp_joint1(h0, cs[0][i], cs[1][i], R06, p16, P1)
        q5, theta, d = tp_pair_rep(h0, h1, h4, h5, P1, P2, P3, P4, P5, A, w0, cs[2][i], cs[3][i], s5)
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
            V[k] = wp.where(tp_exact(h1, P2, P3, ls, phi2[j], d), 1, 0)
            slot = slot + 1
