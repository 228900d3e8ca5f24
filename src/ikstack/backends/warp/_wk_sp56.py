# mypy: ignore-errors
"""Warp float64 ports of IK-Geo subproblems 5 and 6 (:mod:`ikstack.ik.analytic._sp_kernels`),
operation by operation: subproblem 6 by the trigonometric quartic with a rank-one fallback and
a Newton polish, subproblem 5 through subproblem 6.
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._wk_geo import (
    F,
    add3,
    cross3,
    dot3,
    hypot,
    neg3,
    norm3,
    rot,
    sp1,
    sub3,
    trig_quartic,
    wrap,
)


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
