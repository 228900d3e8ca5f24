"""Compiled scalar kernels of the IK-Geo subproblems 1-6 (Elias and Wen, arXiv 2211.05737).

``R(k, t) p`` is the rotation of ``p`` by angle ``t`` about the unit axis ``k``. Vectors are
3-tuples (or any 3-indexable); results are tuples, so nothing is allocated. Subproblems 1-4
also return whether the answer is a least-squares one. Public batched wrappers live in
:mod:`.subproblems`.
"""

from __future__ import annotations

import math

from numba import njit

from ikstack.spatial._tuple_math import (
    add,
    cross,
    dot,
    fatan2,
    neg,
    norm,
    rot,
    scale,
    set4,
    sub,
    trig_quartic,
    unit_cs,
    wrap,
)

#: relative tolerance below which a subproblem counts as exactly solvable
LS_TOL = 1e-8


@njit(cache=True)
def sp1(p1, p2, k):  # pragma: no cover - compiled
    """``(t, is_ls)``: ``t`` minimising ``|R(k, t) p1 - p2|``."""
    kxp = cross(k, p1)
    kxkxp = cross(k, kxp)
    x0 = dot(kxp, p2)
    x1 = -dot(kxkxp, p2)
    t = math.atan2(x0, x1)
    n1 = norm(p1)
    n2 = norm(p2)
    scale_ = max(1.0, n1, n2)
    ls = (
        abs(n1 - n2) > LS_TOL * scale_
        or abs(dot(k, p1) - dot(k, p2)) > LS_TOL * scale_
        or math.hypot(x0, x1) < 1e-14 * scale_ * scale_
    )
    return t, ls


@njit(cache=True)
def sp1_angle(p1, p2, k):  # pragma: no cover - compiled
    """:func:`sp1`'s ``t`` alone (the same operations; no least-squares verdict)."""
    kxp = cross(k, p1)
    kxkxp = cross(k, kxp)
    return math.atan2(dot(kxp, p2), -dot(kxkxp, p2))


@njit(cache=True, inline="always")
def sp1_angle_cs(p1, p2, k):  # pragma: no cover - compiled
    """:func:`sp1_angle` for the fused 6R kernels, with the angle's cosine and sine:
    ``(t, c, s)``; ``t`` by :func:`~ikstack.spatial._tuple_math.fatan2` (within 2 ulp of
    :func:`sp1_angle`'s).
    Inlined: a caller that drops ``c`` and ``s`` does not compute them."""
    kxp = cross(k, p1)
    kxkxp = cross(k, kxp)
    y = dot(kxp, p2)
    x = -dot(kxkxp, p2)
    c, s = unit_cs(y, x)
    return fatan2(y, x), c, s


@njit(cache=True, inline="always")
def _sp4_yx(h, p, k, d):  # pragma: no cover - compiled
    """:func:`sp4` before its arc tangents: ``(count, is_ls, y0, x0, y1, x1)`` with
    ``t_i = atan2(y_i, x_i)``."""
    kxp = cross(k, p)
    hk = dot(h, k)
    kp = dot(k, p)
    a0 = dot(h, kxp)  # sin coefficient
    a1 = dot(h, p) - hk * kp  # cos coefficient
    b = d - hk * kp
    na = a0 * a0 + a1 * a1
    scale_ = max(1.0, norm(h) * norm(p))
    if na < 1e-28 * scale_ * scale_:
        return 1, True, 0.0, 1.0, 0.0, 1.0
    if b * b > na * (1.0 + 2.0 * LS_TOL):
        if b != 0.0:
            return 1, True, a0 * b, a1 * b, a0 * b, a1 * b
        return 1, True, a0, a1, a0, a1
    if b * b >= na:
        return 1, False, a0 * b, a1 * b, a0 * b, a1 * b
    r = math.sqrt(na - b * b)
    # x = (a b +- J a r) / na, J a = (a1, -a0)
    return (2, False, a0 * b + a1 * r, a1 * b - a0 * r, a0 * b - a1 * r, a1 * b + a0 * r)


@njit(cache=True)
def sp4(h, p, k, d):  # pragma: no cover - compiled
    """``(count, is_ls, t0, t1)``: ``t`` with ``h . R(k, t) p = d`` (``h`` need not be unit)."""
    cnt, ls, y0, x0, y1, x1 = _sp4_yx(h, p, k, d)
    t0 = math.atan2(y0, x0)
    t1 = t0 if cnt == 1 else math.atan2(y1, x1)
    return cnt, ls, t0, t1


@njit(cache=True, inline="always")
def sp4_cs(h, p, k, d):  # pragma: no cover - compiled
    """:func:`sp4` for the fused 6R kernels, with each root's cosine and sine:
    ``(count, is_ls, t0, t1, (c0, s0), (c1, s1))``; the roots by
    :func:`~ikstack.spatial._tuple_math.fatan2` (within 2 ulp of :func:`sp4`'s)."""
    cnt, ls, y0, x0, y1, x1 = _sp4_yx(h, p, k, d)
    t0 = fatan2(y0, x0)
    cs0 = unit_cs(y0, x0)
    if cnt == 1:
        return cnt, ls, t0, t0, cs0, cs0
    return cnt, ls, t0, fatan2(y1, x1), cs0, unit_cs(y1, x1)


@njit(cache=True)
def sp3(p1, p2, k, d):  # pragma: no cover - compiled
    """``(count, is_ls, t0, t1)``: ``t`` with ``|R(k, t) p1 - p2| = d``."""
    # |R p1 - p2|^2 = |p1|^2 + |p2|^2 - 2 p2 . R p1
    return sp4(p2, p1, k, 0.5 * (dot(p1, p1) + dot(p2, p2) - d * d))


@njit(cache=True, inline="always")
def sp3_cs(p1, p2, k, d):  # pragma: no cover - compiled
    """:func:`sp3` with each root's cosine and sine (:func:`sp4_cs`)."""
    return sp4_cs(p2, p1, k, 0.5 * (dot(p1, p1) + dot(p2, p2) - d * d))


@njit(cache=True, inline="always")
def _sp2(p1, p2, k1, k2, second):  # pragma: no cover - compiled
    """:func:`sp2`; with ``second`` False the second angles are computed only where the count
    or the verdict needs them (a least-squares pair, or first angles within 1e-12 of each
    other), else returned as zeros: the count, the verdict and the first angles are the
    same numbers either way."""
    n1 = norm(p1)
    n2 = norm(p2)
    scale_ = max(1.0, n1, n2)
    ls_norm = abs(n1 - n2) > LS_TOL * scale_
    if n1 < 1e-14 or n2 < 1e-14:
        return 1, ls_norm, (0.0, 0.0), (0.0, 0.0)
    q1 = scale(p1, 1.0 / n1)
    q2 = scale(p2, 1.0 / n2)
    # k2 . R(k1, t1) q1 = k2 . q2 (the component along k2 is unchanged by R(k2, t2))
    cnt, ls, a0, a1 = sp4(k2, q1, k1, dot(k2, q2))
    if not (second or ls or ls_norm) and (cnt != 2 or abs(wrap(a0 - a1)) >= 1e-12):
        return cnt, False, (a0, a1), (0.0, 0.0)
    b0 = sp1_angle(q2, rot(k1, a0, q1), k2)
    b1 = b0
    if cnt == 2:
        b1 = sp1_angle(q2, rot(k1, a1, q1), k2)
        if abs(wrap(a0 - a1)) < 1e-12 and abs(wrap(b0 - b1)) < 1e-12:
            cnt = 1
    return cnt, ls or ls_norm, (a0, a1), (b0, b1)


@njit(cache=True)
def sp2(p1, p2, k1, k2):  # pragma: no cover - compiled
    """``(count, is_ls, (t1_0, t1_1), (t2_0, t2_1))``: ``R(k1, t1) p1 = R(k2, t2) p2``."""
    return _sp2(p1, p2, k1, k2, True)


@njit(cache=True)
def sp2_first(p1, p2, k1, k2):  # pragma: no cover - compiled
    """:func:`sp2` for callers that use the second angles only of a least-squares answer
    (``t2`` is zeros otherwise): the same count, verdict and first angles, without the
    second angles' two subproblems 1 in the common case."""
    return _sp2(p1, p2, k1, k2, False)


@njit(cache=True)
def _sp6_terms(h, k, p):  # pragma: no cover - compiled
    # h . R(k, t) p = const + s_coef sin t + c_coef cos t
    hk = dot(h, k)
    kp = dot(k, p)
    return hk * kp, dot(h, cross(k, p)), dot(h, p) - hk * kp


@njit(cache=True)
def _sp6_polish(ta, tb, a, b, e):  # pragma: no cover - compiled
    """Two bounded Newton steps on subproblem 6's original pair of equations (whose solving
    route can be ill-conditioned when a block is nearly singular; the equations are not):
    ``a1s sin ta + a1c cos ta + b1s sin tb + b1c cos tb = e1`` and the same with 2, for
    ``a = (a1s, a1c, a2s, a2c)``, ``b = (b1s, b1c, b2s, b2c)``, ``e = (e1, e2)``."""
    a1s, a1c, a2s, a2c = a
    b1s, b1c, b2s, b2c = b
    e1, e2 = e
    for _ in range(2):
        sa, ca, sb, cb = math.sin(ta), math.cos(ta), math.sin(tb), math.cos(tb)
        f1 = a1s * sa + a1c * ca + b1s * sb + b1c * cb - e1
        f2 = a2s * sa + a2c * ca + b2s * sb + b2c * cb - e2
        j11 = a1s * ca - a1c * sa
        j12 = b1s * cb - b1c * sb
        j21 = a2s * ca - a2c * sa
        j22 = b2s * cb - b2c * sb
        det = j11 * j22 - j12 * j21
        if abs(det) < 1e-12 * (abs(j11 * j22) + abs(j12 * j21) + 1e-300):
            break
        da = (j22 * f1 - j12 * f2) / det
        db = (j11 * f2 - j21 * f1) / det
        if abs(da) > 1e-3 or abs(db) > 1e-3:
            break
        ta -= da
        tb -= db
    return ta, tb


@njit(cache=True)
def _circle_line(v0, v1, alpha):  # pragma: no cover - compiled
    """``(count, t0, t1)``: angles with ``v0 sin t + v1 cos t = alpha`` (tangent: one root;
    ``|alpha|`` a hair over the reach from round-off counts as tangent)."""
    r = math.hypot(v0, v1)
    if r < 1e-300:
        return 0, 0.0, 0.0
    c = alpha / r
    if c > 1.0 + 1e-9 or c < -1.0 - 1e-9:
        return 0, 0.0, 0.0
    c = min(1.0, max(-1.0, c))
    phi = math.atan2(v0, v1)
    d = math.acos(c)
    if d < 1e-9:
        return 1, wrap(phi), 0.0
    return 2, wrap(phi + d), wrap(phi - d)


@njit(cache=True)
def _rank_one(m):  # pragma: no cover - compiled
    """Rank-one factors ``(v0, v1, u0, u1)`` of a singular 2x2 block ``m = (r1s, r1c, r2s,
    r2c)`` (rows ``(r1s, r1c)`` and ``(r2s, r2c)``): ``m x = u (v . x)``, with ``v`` the
    block's larger row and ``u`` its rows' ratios to it."""
    r1s, r1c, r2s, r2c = m
    if r1s * r1s + r1c * r1c >= r2s * r2s + r2c * r2c:
        return r1s, r1c, 1.0, (r2s * r1s + r2c * r1c) / (r1s * r1s + r1c * r1c + 1e-300)
    return r2s, r2c, (r1s * r2s + r1c * r2c) / (r2s * r2s + r2c * r2c + 1e-300), 1.0


@njit(cache=True)
def _sp6_rank_one(a, b, e):  # pragma: no cover - compiled
    """Subproblem 6 (the equations of :func:`_sp6_polish`) when both 2x2 blocks are singular
    (rank one each), as for axis-aligned targets: ``A x_a = u_A (v_A . x_a)``,
    ``B x_b = u_B (v_B . x_b)``. Two scalars follow from a 2x2 solve, then each angle from a
    line meeting the unit circle: up to 4 pairs."""
    e1, e2 = e
    z4 = (0.0, 0.0, 0.0, 0.0)
    va0, va1, ua0, ua1 = _rank_one(a)
    vb0, vb1, ub0, ub1 = _rank_one(b)
    det = ua0 * ub1 - ub0 * ua1
    if abs(det) < 1e-12:
        return 0, z4, z4
    alpha = (e1 * ub1 - ub0 * e2) / det
    beta = (ua0 * e2 - e1 * ua1) / det
    na, ta0, ta1 = _circle_line(va0, va1, alpha)
    nb, tb0, tb1 = _circle_line(vb0, vb1, beta)
    x = y = z4
    n = int(0)  # noqa: UP018 - int64, not the literal 0: a callee compiles once
    for i in range(na):
        for j in range(nb):
            xa, yb = _sp6_polish(ta0 if i == 0 else ta1, tb0 if j == 0 else tb1, a, b, e)
            x = set4(x, n, xa)
            y = set4(y, n, yb)
            n += 1
    return n, x, y


@njit(cache=True)
def sp6(H, K, P, d1, d2):  # pragma: no cover - compiled
    """``(count, t1 (4,), t2 (4,))`` with ``h1.R(k1,t1)p1 + h2.R(k2,t2)p2 = d1`` and
    ``h3.R(k3,t1)p3 + h4.R(k4,t2)p4 = d2``: up to 4 exact pairs (``H``, ``K``, ``P`` the
    4-tuples of 3-vectors ``(h1, h2, h3, h4)``...).

    Both equations are linear in ``(sin, cos)`` of each angle; the better-conditioned 2x2 block
    expresses one angle's ``(sin, cos)`` in the other's, and the unit-circle condition leaves a
    trigonometric quartic.
    """
    z4 = (0.0, 0.0, 0.0, 0.0)
    c1, a1s, a1c = _sp6_terms(H[0], K[0], P[0])
    c2, b1s, b1c = _sp6_terms(H[1], K[1], P[1])
    c3, a2s, a2c = _sp6_terms(H[2], K[2], P[2])
    c4, b2s, b2c = _sp6_terms(H[3], K[3], P[3])
    e1 = d1 - c1 - c2
    e2 = d2 - c3 - c4
    detA = a1s * a2c - a1c * a2s
    detB = b1s * b2c - b1c * b2s
    nA = a1s * a1s + a1c * a1c + a2s * a2s + a2c * a2c + 1e-300
    nB = b1s * b1s + b1c * b1c + b2s * b2s + b2c * b2c + 1e-300
    a, b, e = (a1s, a1c, a2s, a2c), (b1s, b1c, b2s, b2c), (e1, e2)
    if abs(detA) <= 1e-6 * nA and abs(detB) <= 1e-6 * nB:
        return _sp6_rank_one(a, b, e)
    swap = abs(detA) / nA > abs(detB) / nB
    if swap:
        det = detA
        os_, oc, ps, pc = b1s, b1c, b2s, b2c
        if det == 0.0:
            return 0, z4, z4
        m00, m01, m10, m11 = a2c / det, -a1c / det, -a2s / det, a1s / det
    else:
        det = detB
        os_, oc, ps, pc = a1s, a1c, a2s, a2c
        if det == 0.0:
            return 0, z4, z4
        m00, m01, m10, m11 = b2c / det, -b1c / det, -b2s / det, b1s / det
    # x_solved = u + M x_free
    u0 = m00 * e1 + m01 * e2
    u1 = m10 * e1 + m11 * e2
    M00 = -(m00 * os_ + m01 * ps)
    M01 = -(m00 * oc + m01 * pc)
    M10 = -(m10 * os_ + m11 * ps)
    M11 = -(m10 * oc + m11 * pc)
    # |u + M [s, c]|^2 - 1 = a0 + a1 cos + a2 sin + a3 cos2 + a4 sin2
    Q00 = M00 * M00 + M10 * M10
    Q01 = M00 * M01 + M10 * M11
    Q11 = M01 * M01 + M11 * M11
    n, roots = trig_quartic(
        u0 * u0 + u1 * u1 - 1.0 + 0.5 * (Q00 + Q11),
        2.0 * (M01 * u0 + M11 * u1),
        2.0 * (M00 * u0 + M10 * u1),
        0.5 * (Q11 - Q00),
        Q01,
    )
    x = y = z4
    for i in range(n):
        s = math.sin(roots[i])
        c = math.cos(roots[i])
        other = math.atan2(u0 + M00 * s + M01 * c, u1 + M10 * s + M11 * c)
        ta, tb = (other, roots[i]) if swap else (roots[i], other)
        ta, tb = _sp6_polish(ta, tb, a, b, e)
        x = set4(x, i, ta)
        y = set4(y, i, tb)
    return n, x, y


@njit(cache=True)
def sp5(p0, p1, p2, p3, k1, k2, k3):  # pragma: no cover - compiled
    """``(count, t1 (4,), t2 (4,), t3 (4,))`` with
    ``p0 + R(k1,t1) p1 = R(k2,t2) (p2 + R(k3,t3) p3)``: up to 4 exact triples.

    The component along ``k2`` and the squared norm of both sides do not depend on ``t2``;
    they give a subproblem-6 system in ``(t1, t3)``, and subproblem 1 then gives ``t2``.
    """
    rhs2 = 0.5 * (dot(p2, p2) + dot(p3, p3) - dot(p0, p0) - dot(p1, p1))
    m3 = neg(p3)
    H, K, P = (k2, k2, p0, p2), (k1, k3, k1, k3), (p1, m3, p1, m3)
    n, a, b = sp6(H, K, P, dot(k2, p2) - dot(k2, p0), rhs2)
    scale_ = max(1.0, norm(p0) + norm(p1), norm(p2) + norm(p3))
    cnt = 0
    x1 = x2 = x3 = (0.0, 0.0, 0.0, 0.0)
    for i in range(n):
        v1 = add(p0, rot(k1, a[i], p1))
        v3 = add(p2, rot(k3, b[i], p3))
        t = sp1_angle(v3, v1, k2)
        if norm(sub(rot(k2, t, v3), v1)) > 1e-6 * scale_:
            continue
        if cnt == 0:
            x1 = (a[i], 0.0, 0.0, 0.0)
            x2 = (t, 0.0, 0.0, 0.0)
            x3 = (b[i], 0.0, 0.0, 0.0)
        elif cnt == 1:
            x1 = (x1[0], a[i], 0.0, 0.0)
            x2 = (x2[0], t, 0.0, 0.0)
            x3 = (x3[0], b[i], 0.0, 0.0)
        elif cnt == 2:
            x1 = (x1[0], x1[1], a[i], 0.0)
            x2 = (x2[0], x2[1], t, 0.0)
            x3 = (x3[0], x3[1], b[i], 0.0)
        else:
            x1 = (x1[0], x1[1], x1[2], a[i])
            x2 = (x2[0], x2[1], x2[2], t)
            x3 = (x3[0], x3[1], x3[2], b[i])
        cnt += 1
    return cnt, x1, x2, x3
