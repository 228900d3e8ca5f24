# mypy: ignore-errors
# ruff: noqa
"""GENERATED from ``src/ikstack/ik/analytic/_sp_kernels.py`` by :mod:`ikstack.backends.warp._translate`:
do not edit; edit the CPU source and run ``python -m ikstack.backends.warp._translate``
(a test fails when this file and its source disagree)."""

import warp as wp

from ikstack.backends.warp._prims import *  # noqa: F403
from ikstack.backends.warp._gen_tuple_math import add, cross, dot, fatan2, neg, norm, rot, scale, set4, sub, trig_quartic, unit_cs, wrap

LS_TOL = wp.constant(F(1e-08))


@wp.func
def sp1(p1: wp.vec3d, p2: wp.vec3d, k: wp.vec3d):
    """``(t, is_ls)``: ``t`` minimising ``|R(k, t) p1 - p2|``."""
    kxp = cross(k, p1)
    kxkxp = cross(k, kxp)
    x0 = dot(kxp, p2)
    x1 = -dot(kxkxp, p2)
    t = wp.atan2(x0, x1)
    n1 = norm(p1)
    n2 = norm(p2)
    scale_ = wp.max(wp.max(F(1.0), n1), n2)
    ls = wp.abs(n1 - n2) > LS_TOL * scale_ or wp.abs(dot(k, p1) - dot(k, p2)) > LS_TOL * scale_ or hypot(x0, x1) < F(1e-14) * scale_ * scale_
    return t, ls


@wp.func
def sp1_angle(p1: wp.vec3d, p2: wp.vec3d, k: wp.vec3d):
    """:func:`sp1`'s ``t`` alone (the same operations; no least-squares verdict)."""
    kxp = cross(k, p1)
    kxkxp = cross(k, kxp)
    return wp.atan2(dot(kxp, p2), -dot(kxkxp, p2))


@wp.func
def sp1_angle_cs(p1: wp.vec3d, p2: wp.vec3d, k: wp.vec3d):
    """:func:`sp1_angle` for the fused 6R kernels, with the angle's cosine and sine:
    ``(t, c, s)``; ``t`` by :func:`~ikstack.spatial._tuple_math.fatan2` (within 2 ulp of
    :func:`sp1_angle`'s).
    Inlined: a caller that drops ``c`` and ``s`` does not compute them."""
    kxp = cross(k, p1)
    kxkxp = cross(k, kxp)
    y = dot(kxp, p2)
    x = -dot(kxkxp, p2)
    c_s = unit_cs(y, x)
    c = c_s[0]
    s = c_s[1]
    return wp.vec3d(fatan2(y, x), c, s)


@wp.func
def _sp4_yx(h: wp.vec3d, p: wp.vec3d, k: wp.vec3d, d: wp.float64):
    """:func:`sp4` before its arc tangents: ``(count, is_ls, y0, x0, y1, x1)`` with
    ``t_i = atan2(y_i, x_i)``."""
    kxp = cross(k, p)
    hk = dot(h, k)
    kp = dot(k, p)
    a0 = dot(h, kxp)
    a1 = dot(h, p) - hk * kp
    b = d - hk * kp
    na = a0 * a0 + a1 * a1
    scale_ = wp.max(F(1.0), norm(h) * norm(p))
    if na < F(1e-28) * scale_ * scale_:
        return 1, True, F(0.0), F(1.0), F(0.0), F(1.0)
    if b * b > na * F(1.00000002):
        if b != F(0.0):
            return 1, True, a0 * b, a1 * b, a0 * b, a1 * b
        return 1, True, a0, a1, a0, a1
    if b * b >= na:
        return 1, False, a0 * b, a1 * b, a0 * b, a1 * b
    r = wp.sqrt(na - b * b)
    return 2, False, a0 * b + a1 * r, a1 * b - a0 * r, a0 * b - a1 * r, a1 * b + a0 * r


@wp.func
def sp4(h: wp.vec3d, p: wp.vec3d, k: wp.vec3d, d: wp.float64):
    """``(count, is_ls, t0, t1)``: ``t`` with ``h . R(k, t) p = d`` (``h`` need not be unit)."""
    cnt, ls, y0, x0, y1, x1 = _sp4_yx(h, p, k, d)
    t0 = wp.atan2(y0, x0)
    t1 = wp.where(cnt == 1, t0, wp.atan2(y1, x1))
    return cnt, ls, t0, t1


@wp.func
def sp4_cs(h: wp.vec3d, p: wp.vec3d, k: wp.vec3d, d: wp.float64):
    """:func:`sp4` for the fused 6R kernels, with each root's cosine and sine:
    ``(count, is_ls, t0, t1, (c0, s0), (c1, s1))``; the roots by
    :func:`~ikstack.spatial._tuple_math.fatan2` (within 2 ulp of :func:`sp4`'s)."""
    cnt, ls, y0, x0, y1, x1 = _sp4_yx(h, p, k, d)
    t0 = fatan2(y0, x0)
    cs0 = unit_cs(y0, x0)
    if cnt == 1:
        return cnt, ls, t0, t0, cs0, cs0
    return cnt, ls, t0, fatan2(y1, x1), cs0, unit_cs(y1, x1)


@wp.func
def sp3(p1: wp.vec3d, p2: wp.vec3d, k: wp.vec3d, d: wp.float64):
    """``(count, is_ls, t0, t1)``: ``t`` with ``|R(k, t) p1 - p2| = d``."""
    return sp4(p2, p1, k, F(0.5) * (dot(p1, p1) + dot(p2, p2) - d * d))


@wp.func
def sp3_cs(p1: wp.vec3d, p2: wp.vec3d, k: wp.vec3d, d: wp.float64):
    """:func:`sp3` with each root's cosine and sine (:func:`sp4_cs`)."""
    return sp4_cs(p2, p1, k, F(0.5) * (dot(p1, p1) + dot(p2, p2) - d * d))


@wp.func
def _sp2(p1: wp.vec3d, p2: wp.vec3d, k1: wp.vec3d, k2: wp.vec3d, second: bool):
    """:func:`sp2`; with ``second`` False the second angles are computed only where the count
    or the verdict needs them (a least-squares pair, or first angles within 1e-12 of each
    other), else returned as zeros: the count, the verdict and the first angles are the
    same numbers either way."""
    n1 = norm(p1)
    n2 = norm(p2)
    scale_ = wp.max(wp.max(F(1.0), n1), n2)
    ls_norm = wp.abs(n1 - n2) > LS_TOL * scale_
    if n1 < F(1e-14) or n2 < F(1e-14):
        return 1, ls_norm, wp.vec2d(F(0.0), F(0.0)), wp.vec2d(F(0.0), F(0.0))
    q1 = scale(p1, F(1.0) / n1)
    q2 = scale(p2, F(1.0) / n2)
    cnt, ls, a0, a1 = sp4(k2, q1, k1, dot(k2, q2))
    if (not (second or ls or ls_norm)) and (cnt != 2 or wp.abs(wrap(a0 - a1)) >= F(1e-12)):
        return cnt, False, wp.vec2d(a0, a1), wp.vec2d(F(0.0), F(0.0))
    b0 = sp1_angle(q2, rot(k1, a0, q1), k2)
    b1 = b0
    if cnt == 2:
        b1 = sp1_angle(q2, rot(k1, a1, q1), k2)
        if wp.abs(wrap(a0 - a1)) < F(1e-12) and wp.abs(wrap(b0 - b1)) < F(1e-12):
            cnt = int(1)
    return cnt, ls or ls_norm, wp.vec2d(a0, a1), wp.vec2d(b0, b1)


@wp.func
def sp2(p1: wp.vec3d, p2: wp.vec3d, k1: wp.vec3d, k2: wp.vec3d):
    """``(count, is_ls, (t1_0, t1_1), (t2_0, t2_1))``: ``R(k1, t1) p1 = R(k2, t2) p2``."""
    return _sp2(p1, p2, k1, k2, True)


@wp.func
def sp2_first(p1: wp.vec3d, p2: wp.vec3d, k1: wp.vec3d, k2: wp.vec3d):
    """:func:`sp2` for callers that use the second angles only of a least-squares answer
    (``t2`` is zeros otherwise): the same count, verdict and first angles, without the
    second angles' two subproblems 1 in the common case."""
    return _sp2(p1, p2, k1, k2, False)


@wp.func
def _sp6_terms(h: wp.vec3d, k: wp.vec3d, p: wp.vec3d):
    hk = dot(h, k)
    kp = dot(k, p)
    return wp.vec3d(hk * kp, dot(h, cross(k, p)), dot(h, p) - hk * kp)


@wp.func
def _sp6_polish(ta: wp.float64, tb: wp.float64, a: wp.vec4d, b: wp.vec4d, e: wp.vec2d):
    """Two bounded Newton steps on subproblem 6's original pair of equations (whose solving
    route can be ill-conditioned when a block is nearly singular; the equations are not):
    ``a1s sin ta + a1c cos ta + b1s sin tb + b1c cos tb = e1`` and the same with 2, for
    ``a = (a1s, a1c, a2s, a2c)``, ``b = (b1s, b1c, b2s, b2c)``, ``e = (e1, e2)``."""
    a1s = a[0]
    a1c = a[1]
    a2s = a[2]
    a2c = a[3]
    b1s = b[0]
    b1c = b[1]
    b2s = b[2]
    b2c = b[3]
    e1 = e[0]
    e2 = e[1]
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
        if wp.abs(da) > F(0.001) or wp.abs(db) > F(0.001):
            break
        ta = ta - da
        tb = tb - db
    return wp.vec2d(ta, tb)


@wp.func
def _circle_line(v0: wp.float64, v1: wp.float64, alpha: wp.float64):
    """``(count, t0, t1)``: angles with ``v0 sin t + v1 cos t = alpha`` (tangent: one root;
    ``|alpha|`` a hair over the reach from round-off counts as tangent)."""
    r = hypot(v0, v1)
    if r < F(1e-300):
        return 0, F(0.0), F(0.0)
    c = alpha / r
    if c > F(1.000000001) or c < F(-1.000000001):
        return 0, F(0.0), F(0.0)
    c = wp.min(F(1.0), wp.max(F(-1.0), c))
    phi = wp.atan2(v0, v1)
    d = wp.acos(c)
    if d < F(1e-09):
        return 1, wrap(phi), F(0.0)
    return 2, wrap(phi + d), wrap(phi - d)


@wp.func
def _rank_one(m: wp.vec4d):
    """Rank-one factors ``(v0, v1, u0, u1)`` of a singular 2x2 block ``m = (r1s, r1c, r2s,
    r2c)`` (rows ``(r1s, r1c)`` and ``(r2s, r2c)``): ``m x = u (v . x)``, with ``v`` the
    block's larger row and ``u`` its rows' ratios to it."""
    r1s = m[0]
    r1c = m[1]
    r2s = m[2]
    r2c = m[3]
    if r1s * r1s + r1c * r1c >= r2s * r2s + r2c * r2c:
        return wp.vec4d(r1s, r1c, F(1.0), (r2s * r1s + r2c * r1c) / (r1s * r1s + r1c * r1c + F(1e-300)))
    return wp.vec4d(r2s, r2c, (r1s * r2s + r1c * r2c) / (r2s * r2s + r2c * r2c + F(1e-300)), F(1.0))


@wp.func
def _sp6_rank_one(a: wp.vec4d, b: wp.vec4d, e: wp.vec2d):
    """Subproblem 6 (the equations of :func:`_sp6_polish`) when both 2x2 blocks are singular
    (rank one each), as for axis-aligned targets: ``A x_a = u_A (v_A . x_a)``,
    ``B x_b = u_B (v_B . x_b)``. Two scalars follow from a 2x2 solve, then each angle from a
    line meeting the unit circle: up to 4 pairs."""
    e1 = e[0]
    e2 = e[1]
    z4 = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    va0_va1_ua0_ua1 = _rank_one(a)
    va0 = va0_va1_ua0_ua1[0]
    va1 = va0_va1_ua0_ua1[1]
    ua0 = va0_va1_ua0_ua1[2]
    ua1 = va0_va1_ua0_ua1[3]
    vb0_vb1_ub0_ub1 = _rank_one(b)
    vb0 = vb0_vb1_ub0_ub1[0]
    vb1 = vb0_vb1_ub0_ub1[1]
    ub0 = vb0_vb1_ub0_ub1[2]
    ub1 = vb0_vb1_ub0_ub1[3]
    det = ua0 * ub1 - ub0 * ua1
    if wp.abs(det) < F(1e-12):
        return 0, z4, z4
    alpha = (e1 * ub1 - ub0 * e2) / det
    beta = (ua0 * e2 - e1 * ua1) / det
    na, ta0, ta1 = _circle_line(va0, va1, alpha)
    nb, tb0, tb1 = _circle_line(vb0, vb1, beta)
    x = z4
    y = z4
    n = int(0)
    for i in range(na):
        for j in range(nb):
            xa_yb = _sp6_polish(wp.where(i == 0, ta0, ta1), wp.where(j == 0, tb0, tb1), a, b, e)
            xa = xa_yb[0]
            yb = xa_yb[1]
            x = set4(x, n, xa)
            y = set4(y, n, yb)
            n = n + 1
    return n, x, y


@wp.func
def sp6(H: wp.types.matrix(shape=(4, 3), dtype=wp.float64), K: wp.types.matrix(shape=(4, 3), dtype=wp.float64), P: wp.types.matrix(shape=(4, 3), dtype=wp.float64), d1: wp.float64, d2: wp.float64):
    """``(count, t1 (4,), t2 (4,))`` with ``h1.R(k1,t1)p1 + h2.R(k2,t2)p2 = d1`` and
    ``h3.R(k3,t1)p3 + h4.R(k4,t2)p4 = d2``: up to 4 exact pairs (``H``, ``K``, ``P`` the
    4-tuples of 3-vectors ``(h1, h2, h3, h4)``...).

    Both equations are linear in ``(sin, cos)`` of each angle; the better-conditioned 2x2 block
    expresses one angle's ``(sin, cos)`` in the other's, and the unit-circle condition leaves a
    trigonometric quartic.
    """
    det = F(0.0)
    os_ = F(0.0)
    oc = F(0.0)
    ps = F(0.0)
    pc = F(0.0)
    m00 = F(0.0)
    m01 = F(0.0)
    m10 = F(0.0)
    m11 = F(0.0)
    z4 = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    c1_a1s_a1c = _sp6_terms(H[0], K[0], P[0])
    c1 = c1_a1s_a1c[0]
    a1s = c1_a1s_a1c[1]
    a1c = c1_a1s_a1c[2]
    c2_b1s_b1c = _sp6_terms(H[1], K[1], P[1])
    c2 = c2_b1s_b1c[0]
    b1s = c2_b1s_b1c[1]
    b1c = c2_b1s_b1c[2]
    c3_a2s_a2c = _sp6_terms(H[2], K[2], P[2])
    c3 = c3_a2s_a2c[0]
    a2s = c3_a2s_a2c[1]
    a2c = c3_a2s_a2c[2]
    c4_b2s_b2c = _sp6_terms(H[3], K[3], P[3])
    c4 = c4_b2s_b2c[0]
    b2s = c4_b2s_b2c[1]
    b2c = c4_b2s_b2c[2]
    e1 = d1 - c1 - c2
    e2 = d2 - c3 - c4
    detA = a1s * a2c - a1c * a2s
    detB = b1s * b2c - b1c * b2s
    nA = a1s * a1s + a1c * a1c + a2s * a2s + a2c * a2c + F(1e-300)
    nB = b1s * b1s + b1c * b1c + b2s * b2s + b2c * b2c + F(1e-300)
    a = wp.vec4d(a1s, a1c, a2s, a2c)
    b = wp.vec4d(b1s, b1c, b2s, b2c)
    e = wp.vec2d(e1, e2)
    if wp.abs(detA) <= F(1e-06) * nA and wp.abs(detB) <= F(1e-06) * nB:
        return _sp6_rank_one(a, b, e)
    swap = wp.abs(detA) / nA > wp.abs(detB) / nB
    if swap:
        det = detA
        os_ = b1s
        oc = b1c
        ps = b2s
        pc = b2c
        if det == F(0.0):
            return 0, z4, z4
        m00 = a2c / det
        m01 = -a1c / det
        m10 = -a2s / det
        m11 = a1s / det
    else:
        det = detB
        os_ = a1s
        oc = a1c
        ps = a2s
        pc = a2c
        if det == F(0.0):
            return 0, z4, z4
        m00 = b2c / det
        m01 = -b1c / det
        m10 = -b2s / det
        m11 = b1s / det
    u0 = m00 * e1 + m01 * e2
    u1 = m10 * e1 + m11 * e2
    M00 = -(m00 * os_ + m01 * ps)
    M01 = -(m00 * oc + m01 * pc)
    M10 = -(m10 * os_ + m11 * ps)
    M11 = -(m10 * oc + m11 * pc)
    Q00 = M00 * M00 + M10 * M10
    Q01 = M00 * M01 + M10 * M11
    Q11 = M01 * M01 + M11 * M11
    n, roots = trig_quartic(u0 * u0 + u1 * u1 - F(1.0) + F(0.5) * (Q00 + Q11), F(2.0) * (M01 * u0 + M11 * u1), F(2.0) * (M00 * u0 + M10 * u1), F(0.5) * (Q11 - Q00), Q01)
    x = z4
    y = z4
    for i in range(n):
        s = wp.sin(roots[i])
        c = wp.cos(roots[i])
        other = wp.atan2(u0 + M00 * s + M01 * c, u1 + M10 * s + M11 * c)
        ta = wp.where(swap, other, roots[i])
        tb = wp.where(swap, roots[i], other)
        ta_tb = _sp6_polish(ta, tb, a, b, e)
        ta = ta_tb[0]
        tb = ta_tb[1]
        x = set4(x, i, ta)
        y = set4(y, i, tb)
    return n, x, y


@wp.func
def sp5(p0: wp.vec3d, p1: wp.vec3d, p2: wp.vec3d, p3: wp.vec3d, k1: wp.vec3d, k2: wp.vec3d, k3: wp.vec3d):
    """``(count, t1 (4,), t2 (4,), t3 (4,))`` with
    ``p0 + R(k1,t1) p1 = R(k2,t2) (p2 + R(k3,t3) p3)``: up to 4 exact triples.

    The component along ``k2`` and the squared norm of both sides do not depend on ``t2``;
    they give a subproblem-6 system in ``(t1, t3)``, and subproblem 1 then gives ``t2``.
    """
    rhs2 = F(0.5) * (dot(p2, p2) + dot(p3, p3) - dot(p0, p0) - dot(p1, p1))
    m3 = neg(p3)
    H = wp.matrix_from_rows(k2, k2, p0, p2)
    K = wp.matrix_from_rows(k1, k3, k1, k3)
    P = wp.matrix_from_rows(p1, m3, p1, m3)
    n, a, b = sp6(H, K, P, dot(k2, p2) - dot(k2, p0), rhs2)
    scale_ = wp.max(wp.max(F(1.0), norm(p0) + norm(p1)), norm(p2) + norm(p3))
    cnt = int(0)
    x1 = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    x2 = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    x3 = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    for i in range(n):
        v1 = add(p0, rot(k1, a[i], p1))
        v3 = add(p2, rot(k3, b[i], p3))
        t = sp1_angle(v3, v1, k2)
        if norm(sub(rot(k2, t, v3), v1)) > F(1e-06) * scale_:
            continue
        if cnt == 0:
            x1 = wp.vec4d(a[i], F(0.0), F(0.0), F(0.0))
            x2 = wp.vec4d(t, F(0.0), F(0.0), F(0.0))
            x3 = wp.vec4d(b[i], F(0.0), F(0.0), F(0.0))
        elif cnt == 1:
            x1 = wp.vec4d(x1[0], a[i], F(0.0), F(0.0))
            x2 = wp.vec4d(x2[0], t, F(0.0), F(0.0))
            x3 = wp.vec4d(x3[0], b[i], F(0.0), F(0.0))
        elif cnt == 2:
            x1 = wp.vec4d(x1[0], x1[1], a[i], F(0.0))
            x2 = wp.vec4d(x2[0], x2[1], t, F(0.0))
            x3 = wp.vec4d(x3[0], x3[1], b[i], F(0.0))
        else:
            x1 = wp.vec4d(x1[0], x1[1], x1[2], a[i])
            x2 = wp.vec4d(x2[0], x2[1], x2[2], t)
            x3 = wp.vec4d(x3[0], x3[1], x3[2], b[i])
        cnt = cnt + 1
    return cnt, x1, x2, x3
