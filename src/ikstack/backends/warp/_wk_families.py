# mypy: ignore-errors
"""Warp float64 ports of subproblems 5 and 6, the three-axis decomposition and the 6R
families (spherical wrist in every position variant, three parallel axes; either read
forwards or backwards; and 7R arms with an end joint locked at sampled values), mirroring :mod:`ikstack.ik.analytic._families6` operation by
operation. One thread per target writes its 8 candidate slots.
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._wk_geo import (
    F,
    add3,
    any_perp,
    cross3,
    dot3,
    hypot,
    mm,
    mT,
    mtv,
    mv,
    neg3,
    norm3,
    rot,
    rotm,
    scale3,
    sp1,
    sp2,
    sp3,
    sp4,
    sub3,
    trig_quartic,
    wrap,
)

SPHERICAL = 0
THREE_PARALLEL = 1
GENERAL, TWO_PARALLEL, FIRST_MEET, SECOND_MEET = 0, 1, 2, 3
LAST_MEET = 1  #: three-parallel variant: axes 5 and 6 (1-based) meet


@wp.func
def _sp6_terms(h: wp.vec3d, k: wp.vec3d, p: wp.vec3d):
    hk = dot3(h, k)
    kp = dot3(k, p)
    return hk * kp, dot3(h, cross3(k, p)), dot3(h, p) - hk * kp


@wp.func
def _sp6_polish(ta: wp.float64, tb: wp.float64, a1s: wp.float64, a1c: wp.float64,
                a2s: wp.float64, a2c: wp.float64, b1s: wp.float64, b1c: wp.float64,
                b2s: wp.float64, b2c: wp.float64, e1: wp.float64, e2: wp.float64):
    for _ in range(2):
        sa = wp.sin(ta)
        ca = wp.cos(ta)
        sb = wp.sin(tb)
        cb = wp.cos(tb)
        f1 = a1s * sa + a1c * ca + b1s * sb + b1c * cb - e1
        f2 = a2s * sa + a2c * ca + b2s * sb + b2c * cb - e2
        j11 = a1s * ca - a1c * sa
        j12 = b1s * cb - b1c * sb
        j21 = a2s * ca - a2c * sa
        j22 = b2s * cb - b2c * sb
        det = j11 * j22 - j12 * j21
        if wp.abs(det) < F(1e-12) * (wp.abs(j11 * j22) + wp.abs(j12 * j21) + F(1e-300)):
            break
        da = (j22 * f1 - j12 * f2) / det
        db = (j11 * f2 - j21 * f1) / det
        if wp.abs(da) > F(1e-3) or wp.abs(db) > F(1e-3):
            break
        ta -= da
        tb -= db
    return ta, tb


@wp.func
def _circle_line(v0: wp.float64, v1: wp.float64, alpha: wp.float64):
    r = hypot(v0, v1)
    if r < F(1e-300):
        return 0, F(0.0), F(0.0)
    c = alpha / r
    if c > F(1.0) + F(1e-9) or c < F(-1.0) - F(1e-9):
        return 0, F(0.0), F(0.0)
    c = wp.min(F(1.0), wp.max(F(-1.0), c))
    phi = wp.atan2(v0, v1)
    d = wp.acos(c)
    if d < F(1e-9):
        return 1, wrap(phi), F(0.0)
    return 2, wrap(phi + d), wrap(phi - d)


@wp.func
def _sp6_rank_one(a1s: wp.float64, a1c: wp.float64, a2s: wp.float64, a2c: wp.float64,
                  b1s: wp.float64, b1c: wp.float64, b2s: wp.float64, b2c: wp.float64,
                  e1: wp.float64, e2: wp.float64):
    z4 = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    va0 = a2s
    va1 = a2c
    ua0 = (a1s * a2s + a1c * a2c) / (a2s * a2s + a2c * a2c + F(1e-300))
    ua1 = F(1.0)
    if a1s * a1s + a1c * a1c >= a2s * a2s + a2c * a2c:
        va0 = a1s
        va1 = a1c
        ua0 = F(1.0)
        ua1 = (a2s * a1s + a2c * a1c) / (a1s * a1s + a1c * a1c + F(1e-300))
    vb0 = b2s
    vb1 = b2c
    ub0 = (b1s * b2s + b1c * b2c) / (b2s * b2s + b2c * b2c + F(1e-300))
    ub1 = F(1.0)
    if b1s * b1s + b1c * b1c >= b2s * b2s + b2c * b2c:
        vb0 = b1s
        vb1 = b1c
        ub0 = F(1.0)
        ub1 = (b2s * b1s + b2c * b1c) / (b1s * b1s + b1c * b1c + F(1e-300))
    det = ua0 * ub1 - ub0 * ua1
    if wp.abs(det) < F(1e-12):
        return 0, z4, z4
    alpha = (e1 * ub1 - ub0 * e2) / det
    beta = (ua0 * e2 - e1 * ua1) / det
    na, ta0, ta1 = _circle_line(va0, va1, alpha)
    nb, tb0, tb1 = _circle_line(vb0, vb1, beta)
    x = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    y = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    n = int(0)  # noqa: UP018 (a mutable Warp loop variable)
    for i in range(na):
        for j in range(nb):
            ta = ta0
            if i != 0:
                ta = ta1
            tb = tb0
            if j != 0:
                tb = tb1
            xa, yb = _sp6_polish(ta, tb, a1s, a1c, a2s, a2c, b1s, b1c, b2s, b2c, e1, e2)
            x[n] = xa
            y[n] = yb
            n += 1
    return n, x, y


@wp.func
def sp6(h1: wp.vec3d, h2: wp.vec3d, h3: wp.vec3d, h4: wp.vec3d, k1: wp.vec3d, k2: wp.vec3d,
        k3: wp.vec3d, k4: wp.vec3d, p1: wp.vec3d, p2: wp.vec3d, p3: wp.vec3d, p4: wp.vec3d,
        d1: wp.float64, d2: wp.float64):
    """``(count, t1 vec4d, t2 vec4d)``: subproblem 6, up to 4 exact pairs."""
    z4 = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    c1, a1s, a1c = _sp6_terms(h1, k1, p1)
    c2, b1s, b1c = _sp6_terms(h2, k2, p2)
    c3, a2s, a2c = _sp6_terms(h3, k3, p3)
    c4, b2s, b2c = _sp6_terms(h4, k4, p4)
    e1 = d1 - c1 - c2
    e2 = d2 - c3 - c4
    detA = a1s * a2c - a1c * a2s
    detB = b1s * b2c - b1c * b2s
    nA = a1s * a1s + a1c * a1c + a2s * a2s + a2c * a2c + F(1e-300)
    nB = b1s * b1s + b1c * b1c + b2s * b2s + b2c * b2c + F(1e-300)
    if wp.abs(detA) <= F(1e-6) * nA and wp.abs(detB) <= F(1e-6) * nB:
        return _sp6_rank_one(a1s, a1c, a2s, a2c, b1s, b1c, b2s, b2c, e1, e2)
    swap = wp.abs(detA) / nA > wp.abs(detB) / nB
    det = detB
    os_ = a1s
    oc = a1c
    ps = a2s
    pc = a2c
    if swap:
        det = detA
        os_ = b1s
        oc = b1c
        ps = b2s
        pc = b2c
    if det == F(0.0):
        return 0, z4, z4
    m00 = b2c / det
    m01 = -b1c / det
    m10 = -b2s / det
    m11 = b1s / det
    if swap:
        m00 = a2c / det
        m01 = -a1c / det
        m10 = -a2s / det
        m11 = a1s / det
    u0 = m00 * e1 + m01 * e2
    u1 = m10 * e1 + m11 * e2
    M00 = -(m00 * os_ + m01 * ps)
    M01 = -(m00 * oc + m01 * pc)
    M10 = -(m10 * os_ + m11 * ps)
    M11 = -(m10 * oc + m11 * pc)
    Q00 = M00 * M00 + M10 * M10
    Q01 = M00 * M01 + M10 * M11
    Q11 = M01 * M01 + M11 * M11
    n, roots = trig_quartic(u0 * u0 + u1 * u1 - F(1.0) + F(0.5) * (Q00 + Q11),
                            F(2.0) * (M01 * u0 + M11 * u1), F(2.0) * (M00 * u0 + M10 * u1),
                            F(0.5) * (Q11 - Q00), Q01)
    x = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    y = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    for i in range(n):
        s = wp.sin(roots[i])
        c = wp.cos(roots[i])
        other = wp.atan2(u0 + M00 * s + M01 * c, u1 + M10 * s + M11 * c)
        ta = roots[i]
        tb = other
        if swap:
            ta = other
            tb = roots[i]
        pa, pb = _sp6_polish(ta, tb, a1s, a1c, a2s, a2c, b1s, b1c, b2s, b2c, e1, e2)
        x[i] = pa
        y[i] = pb
    return n, x, y


@wp.func
def sp5(p0: wp.vec3d, p1: wp.vec3d, p2: wp.vec3d, p3: wp.vec3d, k1: wp.vec3d, k2: wp.vec3d,
        k3: wp.vec3d):
    """``(count, t1, t2, t3)`` (vec4d each): ``p0 + R(k1,t1) p1 = R(k2,t2) (p2 + R(k3,t3) p3)``."""
    rhs2 = F(0.5) * (dot3(p2, p2) + dot3(p3, p3) - dot3(p0, p0) - dot3(p1, p1))
    m3 = neg3(p3)
    n, a, b = sp6(k2, k2, p0, p2, k1, k3, k1, k3, p1, m3, p1, m3, dot3(k2, p2) - dot3(k2, p0),
                  rhs2)
    sc = wp.max(wp.max(F(1.0), norm3(p0) + norm3(p1)), norm3(p2) + norm3(p3))
    cnt = int(0)  # noqa: UP018 (a mutable Warp loop variable)
    x1 = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    x2 = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    x3 = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    for i in range(n):
        v1 = add3(p0, rot(k1, a[i], p1))
        v3 = add3(p2, rot(k3, b[i], p3))
        t, _ls = sp1(v3, v1, k2)
        if norm3(sub3(rot(k2, t, v3), v1)) <= F(1e-6) * sc:
            x1[cnt] = a[i]
            x2[cnt] = t
            x3[cnt] = b[i]
            cnt += 1
    return cnt, x1, x2, x3


@wp.func
def decompose3(R: wp.mat33d, a: wp.vec3d, b: wp.vec3d, c: wp.vec3d, seed_x: wp.float64):
    """``(count, X, Y, Z)`` (vec2d each): ``R = R(a, x) R(b, y) R(c, z)``, up to 2 triples."""
    Rc = mv(R, c)
    u = any_perp(c)
    Ru = mv(R, u)
    z2 = wp.vec2d(F(0.0), F(0.0))
    if norm3(cross3(a, Rc)) < F(1e-10):
        x = seed_x
        y, _l1 = sp1(c, rot(a, -x, Rc), b)
        z, _l2 = sp1(u, rot(b, -y, rot(a, -x, Ru)), c)
        return 1, wp.vec2d(x, x), wp.vec2d(y, y), wp.vec2d(z, z)
    cnt, ls, t1, _t2 = sp2(Rc, c, a, b)
    if ls:
        return 0, z2, z2, z2
    x0 = -t1[0]
    y0, _l3 = sp1(c, rot(a, -x0, Rc), b)
    z0, _l4 = sp1(u, rot(b, -y0, rot(a, -x0, Ru)), c)
    if cnt == 1:
        return 1, wp.vec2d(x0, x0), wp.vec2d(y0, y0), wp.vec2d(z0, z0)
    x1 = -t1[1]
    y1, _l5 = sp1(c, rot(a, -x1, Rc), b)
    z1, _l6 = sp1(u, rot(b, -y1, rot(a, -x1, Ru)), c)
    return 2, wp.vec2d(x0, x1), wp.vec2d(y0, y1), wp.vec2d(z0, z1)


@wp.func
def _position3(var: int, pW: wp.vec3d, H: wp.array(dtype=wp.vec3d),
               P: wp.array(dtype=wp.vec3d)):
    """``(count, t0, t1, t2)`` (vec4d each): joints 1-3 placing the wrist point at ``pW``."""
    h0 = H[0]
    h1 = H[1]
    h2 = H[2]
    P1 = P[1]
    P2 = P[2]
    P3 = P[3]
    w0 = sub3(pW, P[0])
    if var == GENERAL:
        return sp5(neg3(P1), w0, P2, P3, neg3(h0), h1, h2)
    a0 = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    a1 = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    a2 = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    cnt = int(0)  # noqa: UP018 (a mutable Warp loop variable)
    if var == TWO_PARALLEL:
        m, ls, x0, x1 = sp4(h1, w0, neg3(h0), dot3(h1, add3(add3(P1, P2), P3)))
        if ls:
            return 0, a0, a1, a2
        for i in range(m):
            q0 = x0
            if i != 0:
                q0 = x1
            w = sub3(rot(h0, -q0, w0), P1)
            k, ls2, y0, y1 = sp3(P3, neg3(P2), h2, norm3(w))
            if not ls2:
                for j in range(k):
                    q2 = y0
                    if j != 0:
                        q2 = y1
                    q1, _l = sp1(add3(P2, rot(h2, q2, P3)), w, h1)
                    a0[cnt] = q0
                    a1[cnt] = q1
                    a2[cnt] = q2
                    cnt += 1
    elif var == FIRST_MEET:
        k, ls, y0, y1 = sp3(P3, neg3(P2), h2, norm3(w0))
        if ls:
            return 0, a0, a1, a2
        for j in range(k):
            q2 = y0
            if j != 0:
                q2 = y1
            m, ls2, t1, t2 = sp2(w0, add3(P2, rot(h2, q2, P3)), neg3(h0), h1)
            if not ls2:
                for i in range(m):
                    a0[cnt] = t1[i]
                    a1[cnt] = t2[i]
                    a2[cnt] = q2
                    cnt += 1
    else:
        k, ls, x0, x1 = sp3(w0, P1, neg3(h0), norm3(P3))
        if ls:
            return 0, a0, a1, a2
        for i in range(k):
            q0 = x0
            if i != 0:
                q0 = x1
            w = sub3(rot(h0, -q0, w0), P1)
            m, ls2, t1, t2 = sp2(w, P3, h1, h2)
            if not ls2:
                for j in range(m):
                    a0[cnt] = q0
                    a1[cnt] = -t1[j]
                    a2[cnt] = t2[j]
                    cnt += 1
    return cnt, a0, a1, a2


@wp.func
def _put(Q: wp.array3d(dtype=wp.float64), i: int, slot: int, j: int, rev: int, off: int,
         v: wp.float64):
    if rev != 0:
        Q[i, slot, off + 5 - j] = v
    else:
        Q[i, slot, off + j] = v


@wp.func
def _spherical(i: int, base: int, off: int, var: int, rev: int, Rt: wp.mat33d, pt: wp.vec3d,
               H: wp.array(dtype=wp.vec3d), P: wp.array(dtype=wp.vec3d), R6T: wp.mat33d,
               s3: wp.float64, Q: wp.array3d(dtype=wp.float64), V: wp.array2d(dtype=wp.int32)):
    R06 = mm(Rt, mT(R6T))
    pW = sub3(pt, mv(R06, P[6]))
    n, t0, t1, t2 = _position3(var, pW, H, P)
    slot = int(0)  # noqa: UP018 (a mutable Warp loop variable)
    for a in range(n):
        R03 = mm(mm(rotm(H[0], t0[a]), rotm(H[1], t1[a])), rotm(H[2], t2[a]))
        R36 = mm(mT(R03), R06)
        m, X, Y, Z = decompose3(R36, H[3], H[4], H[5], s3)
        for b in range(m):
            if slot < 8:
                _put(Q, i, base + slot, 0, rev, off, t0[a])
                _put(Q, i, base + slot, 1, rev, off, t1[a])
                _put(Q, i, base + slot, 2, rev, off, t2[a])
                _put(Q, i, base + slot, 3, rev, off, X[b])
                _put(Q, i, base + slot, 4, rev, off, Y[b])
                _put(Q, i, base + slot, 5, rev, off, Z[b])
                V[i, base + slot] = 1
                slot += 1


@wp.func
def _last_meet(h0: wp.vec3d, h1: wp.vec3d, h4: wp.vec3d, h5: wp.vec3d, P5: wp.vec3d,
               d1: wp.float64, p16: wp.vec3d, R06: wp.mat33d):
    """``(count, q0 vec4d, q4 vec4d)``: joints 1 and 5 of a three-parallel arm whose axes 5
    and 6 meet, by two subproblems 4 (the CPU kernel's ``_last_meet``)."""
    x = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    y = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    g = dot3(h4, h5)
    den = F(1.0) - g * g
    a5 = dot3(P5, h4)
    b5 = dot3(P5, h5)
    al = (a5 - g * b5) / den
    be = (b5 - g * a5) / den
    v = mv(R06, h5)
    w = sub3(p16, scale3(v, be))
    m, ls, x0, x1 = sp4(h1, w, neg3(h0), d1 + al * dot3(h1, h4))
    cnt = int(0)  # noqa: UP018 (a mutable Warp loop variable)
    if not ls:
        for r in range(m):
            q0 = x0
            if r != 0:
                q0 = x1
            k, ls2, y0, y1 = sp4(h1, h5, h4, dot3(h1, rot(h0, -q0, v)))
            if not ls2:
                for j in range(k):
                    x[cnt] = q0
                    y[cnt] = y0
                    if j != 0:
                        y[cnt] = y1
                    cnt += 1
    return cnt, x, y


@wp.func
def _three_parallel(i: int, base: int, off: int, var: int, rev: int, Rt: wp.mat33d,
                    pt: wp.vec3d,
                    H: wp.array(dtype=wp.vec3d), P: wp.array(dtype=wp.vec3d), R6T: wp.mat33d,
                    sgn: wp.array(dtype=wp.float64), s5: wp.float64,
                    Q: wp.array3d(dtype=wp.float64), V: wp.array2d(dtype=wp.int32)):
    R06 = mm(Rt, mT(R6T))
    p16 = sub3(sub3(pt, mv(R06, P[6])), P[0])
    h0 = H[0]
    h1 = H[1]
    h4 = H[4]
    h5 = H[5]
    P1 = P[1]
    P2 = P[2]
    P3 = P[3]
    P4 = P[4]
    P5 = P[5]
    m0 = neg3(h0)
    d1 = (h1[0] * (P1[0] + P2[0] + P3[0] + P4[0]) + h1[1] * (P1[1] + P2[1] + P3[1] + P4[1])
          + h1[2] * (P1[2] + P2[2] + P3[2] + P4[2]))
    n = int(0)  # noqa: UP018
    a = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    b = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    if var == LAST_MEET:
        n, a, b = _last_meet(h0, h1, h4, h5, P5, d1, p16, R06)
    else:
        n, a, b = sp6(h1, h1, h1, h1, m0, h4, m0, h4, p16, neg3(P5), mv(R06, h5), neg3(h5), d1,
                      F(0.0))
    slot = int(0)  # noqa: UP018 (a mutable Warp loop variable)
    for r in range(n):
        q0 = a[r]
        q4 = b[r]
        A = mm(mT(rotm(h0, q0)), R06)
        v = rot(h4, q4, h5)
        theta = F(0.0)
        q5 = s5
        if norm3(cross3(v, h1)) < F(1e-10):
            u = any_perp(h1)
            Bt = mm(rotm(h4, q4), rotm(h5, q5))
            theta, _l1 = sp1(u, mv(A, mtv(Bt, u)), h1)
        else:
            theta, _l2 = sp1(v, mv(A, h5), h1)
            u = any_perp(h5)
            B = mm(rotm(h1, -theta), A)
            q5, _l3 = sp1(u, rot(h4, -q4, mv(B, u)), h5)
        d = sub3(sub3(rot(h0, -q0, p16), P1), rot(h1, theta, add3(P4, rot(h4, q4, P5))))
        m, ls, e0, e1 = sp3(P3, neg3(P2), h1, norm3(d))
        for j in range(m):
            if slot < 8:
                phi2 = e0
                if j != 0:
                    phi2 = e1
                phi1, _l4 = sp1(add3(P2, rot(h1, phi2, P3)), d, h1)
                phi3 = wrap(theta - phi1 - phi2)
                _put(Q, i, base + slot, 0, rev, off, q0)
                _put(Q, i, base + slot, 1, rev, off, phi1 * sgn[1])
                _put(Q, i, base + slot, 2, rev, off, phi2 * sgn[2])
                _put(Q, i, base + slot, 3, rev, off, phi3 * sgn[3])
                _put(Q, i, base + slot, 4, rev, off, q4)
                _put(Q, i, base + slot, 5, rev, off, q5)
                V[i, base + slot] = 1
                if ls:
                    V[i, base + slot] = 0
                slot += 1


@wp.func
def _solve6(i: int, base: int, off: int, fid: int, var: int, rev: int, Rt: wp.mat33d,
            pt: wp.vec3d, H: wp.array(dtype=wp.vec3d), P: wp.array(dtype=wp.vec3d),
            R6T: wp.mat33d, sgn: wp.array(dtype=wp.float64), S: wp.array2d(dtype=wp.float64),
            Q: wp.array3d(dtype=wp.float64), V: wp.array2d(dtype=wp.int32)):
    """Slots ``base .. base + 7`` of target ``i``, joints ``off .. off + 5``: the seed, then
    the family's candidates (``rev``: ``T^-1`` solved with the chain read backwards)."""
    for k in range(8):
        V[i, base + k] = 0
        for j in range(6):
            Q[i, base + k, off + j] = S[i, off + j]
    s3 = S[i, off + 3]
    s5 = S[i, off + 5]
    if rev != 0:
        pt = neg3(mtv(Rt, pt))
        Rt = mT(Rt)
        s3 = S[i, off + 2]
        s5 = S[i, off]
    if fid == SPHERICAL:
        _spherical(i, base, off, var, rev, Rt, pt, H, P, R6T, s3, Q, V)
    else:
        _three_parallel(i, base, off, var, rev, Rt, pt, H, P, R6T, sgn, s5, Q, V)


@wp.func
def _rt(Ti: wp.mat44d):
    Rt = wp.mat33d(Ti[0, 0], Ti[0, 1], Ti[0, 2], Ti[1, 0], Ti[1, 1], Ti[1, 2],
                   Ti[2, 0], Ti[2, 1], Ti[2, 2])
    return Rt, wp.vec3d(Ti[0, 3], Ti[1, 3], Ti[2, 3])


@wp.kernel
def sixr_kernel(fid: int, var: int, rev: int, T: wp.array(dtype=wp.mat44d),
                S: wp.array2d(dtype=wp.float64), H: wp.array(dtype=wp.vec3d),
                P: wp.array(dtype=wp.vec3d), R6T: wp.mat33d, sgn: wp.array(dtype=wp.float64),
                Q: wp.array3d(dtype=wp.float64), V: wp.array2d(dtype=wp.int32)):
    """Candidates ``Q`` (N, 8, 6) and masks ``V`` (N, 8) of a 6R family, one thread a target."""
    i = wp.tid()
    Rt, pt = _rt(T[i])
    _solve6(i, 0, 0, fid, var, rev, Rt, pt, H, P, R6T, sgn, S, Q, V)


@wp.func
def locked_slots(i: int, s: int, Ti: wp.mat44d, fid: int, var: int, rev: int,
                 S: wp.array2d(dtype=wp.float64), lock_first: int, lh: wp.vec3d, lr: wp.vec3d,
                 M_R: wp.mat33d, M_p: wp.vec3d, grid: wp.array(dtype=wp.float64),
                 H: wp.array(dtype=wp.vec3d), P: wp.array(dtype=wp.vec3d), R6T: wp.mat33d,
                 sgn: wp.array(dtype=wp.float64), Q: wp.array3d(dtype=wp.float64),
                 V: wp.array2d(dtype=wp.int32)):
    """7R with its first or last joint locked: sample ``s`` (0: the seed's own value, then
    ``grid[s - 1]``) of row ``i`` (target ``Ti``, seed ``S[i]``) fills slots ``8 s .. 8 s + 7``."""
    lock = 6
    off = 0
    if lock_first != 0:
        lock = 0
        off = 1
    v = S[i, lock]
    if s > 0:
        v = grid[s - 1]
    Rt, pt = _rt(Ti)
    E = rotm(lh, -v)
    Ep = sub3(lr, mv(E, lr))
    R2 = mm(E, Rt)
    p2 = add3(mv(E, pt), Ep)
    if lock_first == 0:
        G_R = mm(mm(mT(M_R), E), M_R)
        G_p = mtv(M_R, sub3(add3(mv(E, M_p), Ep), M_p))
        R2 = mm(Rt, G_R)
        p2 = add3(mv(Rt, G_p), pt)
    _solve6(i, 8 * s, off, fid, var, rev, R2, p2, H, P, R6T, sgn, S, Q, V)
    for k in range(8):
        Q[i, 8 * s + k, lock] = v


@wp.kernel
def locked_kernel(fid: int, var: int, rev: int, T: wp.array(dtype=wp.mat44d),
                  S: wp.array2d(dtype=wp.float64), lock_first: int, lh: wp.vec3d, lr: wp.vec3d,
                  M_R: wp.mat33d, M_p: wp.vec3d, grid: wp.array(dtype=wp.float64),
                  H: wp.array(dtype=wp.vec3d), P: wp.array(dtype=wp.vec3d), R6T: wp.mat33d,
                  sgn: wp.array(dtype=wp.float64), Q: wp.array3d(dtype=wp.float64),
                  V: wp.array2d(dtype=wp.int32)):
    """:func:`locked_slots` of sample ``s`` of target ``i``, one thread a pair."""
    i, s = wp.tid()
    locked_slots(i, s, T[i], fid, var, rev, S, lock_first, lh, lr, M_R, M_p, grid, H, P, R6T,
                 sgn, Q, V)
