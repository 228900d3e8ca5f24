# mypy: ignore-errors
"""Warp float64 ports of the analytic kernels' vector helpers, polynomial roots and IK-Geo
subproblems 1-6 (:mod:`ikstack.ik.analytic._vec` and ``_sp_kernels``).

The arithmetic mirrors the compiled CPU code operation by operation (same formulas, same
evaluation order, the same complex-arithmetic algorithms as NumPy/CPython: Smith's division
and the polar power), so candidates agree with the CPU path to rounding. Imported only after
:func:`ikstack.backends.warp.runtime.warp` succeeded.
"""

from __future__ import annotations

import math

import warp as wp

from ikstack.ik.analytic._vec import _ATAN_N, _ATAN_TAB

F = wp.float64
PI = wp.constant(wp.float64(math.pi))
TWO_PI = wp.constant(wp.float64(2.0 * math.pi))
LS_TOL = wp.constant(wp.float64(1e-8))
INF = wp.constant(wp.float64(math.inf))
ATAN_N = wp.constant(wp.float64(_ATAN_N))
# Warp folds arithmetic on literals (``1.0 / 3.0``) in float32: exact values live here
_C3, _C5, _C7, _C9, _C11 = (wp.constant(wp.float64(1.0 / n)) for n in (3.0, 5.0, 7.0, 9.0, 11.0))
ATAN_TAB = wp.constant(wp.types.vector(length=_ATAN_N + 1, dtype=wp.float64)(
    *[wp.float64(v) for v in _ATAN_TAB]))


# ----------------------------------------------------------------------------- vectors
@wp.func
def dot3(a: wp.vec3d, b: wp.vec3d) -> wp.float64:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@wp.func
def cross3(a: wp.vec3d, b: wp.vec3d) -> wp.vec3d:
    return wp.vec3d(a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                    a[0] * b[1] - a[1] * b[0])


@wp.func
def norm3(a: wp.vec3d) -> wp.float64:
    return wp.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@wp.func
def add3(a: wp.vec3d, b: wp.vec3d) -> wp.vec3d:
    return wp.vec3d(a[0] + b[0], a[1] + b[1], a[2] + b[2])


@wp.func
def sub3(a: wp.vec3d, b: wp.vec3d) -> wp.vec3d:
    return wp.vec3d(a[0] - b[0], a[1] - b[1], a[2] - b[2])


@wp.func
def neg3(a: wp.vec3d) -> wp.vec3d:
    return wp.vec3d(-a[0], -a[1], -a[2])


@wp.func
def scale3(a: wp.vec3d, s: wp.float64) -> wp.vec3d:
    return wp.vec3d(a[0] * s, a[1] * s, a[2] * s)


@wp.func
def rot_cs(k: wp.vec3d, c: wp.float64, s: wp.float64, p: wp.vec3d) -> wp.vec3d:
    """``R(k, t) p`` from ``c = cos t``, ``s = sin t`` (Rodrigues; ``k`` unit)."""
    kp = (k[0] * p[0] + k[1] * p[1] + k[2] * p[2]) * (F(1.0) - c)
    return wp.vec3d(p[0] * c + (k[1] * p[2] - k[2] * p[1]) * s + k[0] * kp,
                    p[1] * c + (k[2] * p[0] - k[0] * p[2]) * s + k[1] * kp,
                    p[2] * c + (k[0] * p[1] - k[1] * p[0]) * s + k[2] * kp)


@wp.func
def rot(k: wp.vec3d, t: wp.float64, p: wp.vec3d) -> wp.vec3d:
    return rot_cs(k, wp.cos(t), wp.sin(t), p)


@wp.func
def rotm_cs(k: wp.vec3d, c: wp.float64, s: wp.float64) -> wp.mat33d:
    """``R(k, t)`` from ``c = cos t``, ``s = sin t`` (``k`` unit)."""
    v = F(1.0) - c
    return wp.mat33d(c + k[0] * k[0] * v, k[0] * k[1] * v - k[2] * s, k[0] * k[2] * v + k[1] * s,
                     k[1] * k[0] * v + k[2] * s, c + k[1] * k[1] * v, k[1] * k[2] * v - k[0] * s,
                     k[2] * k[0] * v - k[1] * s, k[2] * k[1] * v + k[0] * s, c + k[2] * k[2] * v)


@wp.func
def rotm(k: wp.vec3d, t: wp.float64) -> wp.mat33d:
    return rotm_cs(k, wp.cos(t), wp.sin(t))


@wp.func
def mv(R: wp.mat33d, p: wp.vec3d) -> wp.vec3d:
    return wp.vec3d(R[0, 0] * p[0] + R[0, 1] * p[1] + R[0, 2] * p[2],
                    R[1, 0] * p[0] + R[1, 1] * p[1] + R[1, 2] * p[2],
                    R[2, 0] * p[0] + R[2, 1] * p[1] + R[2, 2] * p[2])


@wp.func
def mtv(R: wp.mat33d, p: wp.vec3d) -> wp.vec3d:
    return wp.vec3d(R[0, 0] * p[0] + R[1, 0] * p[1] + R[2, 0] * p[2],
                    R[0, 1] * p[0] + R[1, 1] * p[1] + R[2, 1] * p[2],
                    R[0, 2] * p[0] + R[1, 2] * p[1] + R[2, 2] * p[2])


@wp.func
def mm(A: wp.mat33d, B: wp.mat33d) -> wp.mat33d:
    return wp.mat33d(
        A[0, 0] * B[0, 0] + A[0, 1] * B[1, 0] + A[0, 2] * B[2, 0],
        A[0, 0] * B[0, 1] + A[0, 1] * B[1, 1] + A[0, 2] * B[2, 1],
        A[0, 0] * B[0, 2] + A[0, 1] * B[1, 2] + A[0, 2] * B[2, 2],
        A[1, 0] * B[0, 0] + A[1, 1] * B[1, 0] + A[1, 2] * B[2, 0],
        A[1, 0] * B[0, 1] + A[1, 1] * B[1, 1] + A[1, 2] * B[2, 1],
        A[1, 0] * B[0, 2] + A[1, 1] * B[1, 2] + A[1, 2] * B[2, 2],
        A[2, 0] * B[0, 0] + A[2, 1] * B[1, 0] + A[2, 2] * B[2, 0],
        A[2, 0] * B[0, 1] + A[2, 1] * B[1, 1] + A[2, 2] * B[2, 1],
        A[2, 0] * B[0, 2] + A[2, 1] * B[1, 2] + A[2, 2] * B[2, 2])


@wp.func
def mT(A: wp.mat33d) -> wp.mat33d:
    return wp.mat33d(A[0, 0], A[1, 0], A[2, 0], A[0, 1], A[1, 1], A[2, 1],
                     A[0, 2], A[1, 2], A[2, 2])


@wp.func
def wrap(a: wp.float64) -> wp.float64:
    return a - TWO_PI * wp.floor((a + PI) / TWO_PI)


@wp.func
def any_perp(k: wp.vec3d) -> wp.vec3d:
    v = wp.vec3d(-k[2], F(0.0), k[0])
    if wp.abs(k[0]) < F(0.9):
        v = wp.vec3d(F(0.0), k[2], -k[1])
    return scale3(v, F(1.0) / norm3(v))


@wp.func
def fatan2(y: wp.float64, x: wp.float64) -> wp.float64:
    """The CPU kernels' ``fatan2`` (table of ``atan(k / 16)``, Taylor series to ``u^11``),
    operation for operation; zeros, infinities and NaN go to ``atan2``."""
    ax = wp.abs(x)
    ay = wp.abs(y)
    swap = ay > ax
    num = ay
    den = ax
    if swap:
        num = ax
        den = ay
    if not (den > F(0.0) and den < INF):
        return wp.atan2(y, x)
    a = num / den
    k = int(a * ATAN_N + F(0.5))
    c = F(k) * (F(1.0) / ATAN_N)
    u = (a - c) / (F(1.0) + a * c)
    u2 = u * u
    p = u2 * (-_C3 + u2 * (_C5 + u2 * (-_C7 + u2 * (_C9 - u2 * _C11))))
    r = ATAN_TAB[k] + (u + u * p)
    if swap:
        r = F(0.5) * PI - r
    if x < F(0.0):
        r = PI - r
    if y < F(0.0) or (y == F(0.0) and F(1.0) / y < F(0.0)):
        r = -r
    return r


@wp.func
def hypot(x: wp.float64, y: wp.float64) -> wp.float64:
    return wp.sqrt(x * x + y * y)


# ----------------------------------------------------------------------------- complex
@wp.func
def cmul(a: wp.vec2d, b: wp.vec2d) -> wp.vec2d:
    return wp.vec2d(a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0])


@wp.func
def cdiv(a: wp.vec2d, b: wp.vec2d) -> wp.vec2d:
    """CPython's ``_Py_c_quot`` (Smith's algorithm), as the CPU path's complex division."""
    if wp.abs(b[0]) >= wp.abs(b[1]):
        ratio = b[1] / b[0]
        denom = b[0] + b[1] * ratio
        return wp.vec2d((a[0] + a[1] * ratio) / denom, (a[1] - a[0] * ratio) / denom)
    ratio = b[0] / b[1]
    denom = b[0] * ratio + b[1]
    return wp.vec2d((a[0] * ratio + a[1]) / denom, (a[1] * ratio - a[0]) / denom)


@wp.func
def cre(x: wp.float64) -> wp.vec2d:
    return wp.vec2d(x, F(0.0))


@wp.func
def cadd(a: wp.vec2d, b: wp.vec2d) -> wp.vec2d:
    return wp.vec2d(a[0] + b[0], a[1] + b[1])


@wp.func
def csub(a: wp.vec2d, b: wp.vec2d) -> wp.vec2d:
    return wp.vec2d(a[0] - b[0], a[1] - b[1])


@wp.func
def cabs(a: wp.vec2d) -> wp.float64:
    return hypot(a[0], a[1])


@wp.func
def cpow(a: wp.vec2d, e: wp.float64) -> wp.vec2d:
    """CPython's ``_Py_c_pow`` for a real exponent ``e > 0``."""
    if a[0] == F(0.0) and a[1] == F(0.0):
        return wp.vec2d(F(0.0), F(0.0))
    ln = wp.pow(cabs(a), e)
    ph = wp.atan2(a[1], a[0]) * e
    return wp.vec2d(ln * wp.cos(ph), ln * wp.sin(ph))


@wp.func
def cbrt_(z: wp.vec2d) -> wp.vec2d:
    if z[0] == F(0.0) and z[1] == F(0.0):
        return wp.vec2d(F(0.0), F(0.0))
    return cpow(z, F(1.0) / F(3.0))


@wp.func
def _cubic_branch(u: wp.vec2d, p: wp.vec2d, a3: wp.vec2d) -> wp.vec2d:
    r = wp.vec2d(F(0.0), F(0.0))
    if cabs(u) >= F(1e-300):
        r = csub(u, cdiv(p, cmul(cre(F(3.0)), u)))
    return csub(r, a3)


@wp.func
def cubic_roots(ar: wp.float64, br: wp.float64, cr: wp.float64):
    """Complex roots of ``m^3 + a m^2 + b m + c`` (Cardano in complex arithmetic)."""
    a = cre(ar)
    b = cre(br)
    c = cre(cr)
    p = csub(b, cdiv(cmul(a, a), cre(F(3.0))))
    t1 = cdiv(cmul(cmul(cmul(cre(F(2.0)), a), a), a), cre(F(27.0)))
    t2 = cdiv(cmul(a, b), cre(F(3.0)))
    q = cadd(csub(t1, t2), c)
    d1 = cdiv(cmul(q, q), cre(F(4.0)))
    d2 = cdiv(cmul(cmul(p, p), p), cre(F(27.0)))
    disc = cpow(cadd(d1, d2), F(0.5))
    mq2 = cdiv(wp.vec2d(-q[0], -q[1]), cre(F(2.0)))
    u = cbrt_(cadd(mq2, disc))
    if cabs(u) < F(1e-300):
        u = cbrt_(csub(mq2, disc))
    w = wp.vec2d(F(-0.5), wp.sqrt(F(3.0)) / F(2.0))
    u1 = cmul(u, w)
    u2 = cmul(u1, w)
    a3 = cdiv(a, cre(F(3.0)))
    return _cubic_branch(u, p, a3), _cubic_branch(u1, p, a3), _cubic_branch(u2, p, a3)


@wp.func
def _qf(c4: wp.float64, c3: wp.float64, c2: wp.float64, c1: wp.float64, c0: wp.float64,
        z: wp.vec2d) -> wp.vec2d:
    return cadd(cmul(cadd(cmul(cadd(cmul(cadd(cmul(cre(c4), z), cre(c3)), z), cre(c2)), z),
                          cre(c1)), z), cre(c0))


@wp.func
def _qpolish(c4: wp.float64, c3: wp.float64, c2: wp.float64, c1: wp.float64, c0: wp.float64,
             z: wp.vec2d) -> wp.vec2d:
    """Two Newton steps, each kept only if it lowers ``|f|`` (the CPU ``_polish``)."""
    f = _qf(c4, c3, c2, c1, c0, z)
    for _ in range(2):
        g = cmul(cre(F(4.0)), cre(c4))
        df = cadd(cmul(cadd(cmul(cadd(cmul(g, z), cmul(cre(F(3.0)), cre(c3))), z),
                            cmul(cre(F(2.0)), cre(c2))), z), cre(c1))
        if df[0] == F(0.0) and df[1] == F(0.0):
            break
        zn = csub(z, cdiv(f, df))
        fn = _qf(c4, c3, c2, c1, c0, zn)
        if not cabs(fn) < cabs(f):
            break
        z = zn
        f = fn
    return z


@wp.func
def quartic_roots(c4: wp.float64, c3: wp.float64, c2: wp.float64, c1: wp.float64,
                  c0: wp.float64):
    """``(count, z0, z1, z2, z3)``: complex roots of ``c4 z^4 + ... + c0`` (Ferrari)."""
    zz = wp.vec2d(F(0.0), F(0.0))
    scale_ = wp.max(wp.max(wp.max(wp.abs(c4), wp.abs(c3)), wp.max(wp.abs(c2), wp.abs(c1))),
                    wp.abs(c0))
    if scale_ == F(0.0):
        return 0, zz, zz, zz, zz
    eps = F(1e-13) * scale_
    if wp.abs(c4) <= eps:
        if wp.abs(c3) <= eps:
            if wp.abs(c2) <= eps:
                if wp.abs(c1) <= eps:
                    return 0, zz, zz, zz, zz
                return 1, cre(-c0 / c1), zz, zz, zz
            disc = cpow(cre(c1 * c1 - F(4.0) * c2 * c0), F(0.5))
            den = cmul(cre(F(2.0)), cre(c2))
            return (2, cdiv(cadd(cre(-c1), disc), den), cdiv(csub(cre(-c1), disc), den), zz,
                    zz)
        r0, r1, r2 = cubic_roots(c2 / c3, c1 / c3, c0 / c3)
        return 3, r0, r1, r2, zz
    b = c3 / c4
    c = c2 / c4
    d = c1 / c4
    e = c0 / c4
    b2 = b * b
    p = c - F(3.0) * b2 / F(8.0)
    q = d - b * c / F(2.0) + b2 * b / F(8.0)
    r = e - b * d / F(4.0) + b2 * c / F(16.0) - F(3.0) * b2 * b2 / F(256.0)
    sh = cre(-b / F(4.0))
    z0 = zz
    z1 = zz
    z2 = zz
    z3 = zz
    if wp.abs(q) < F(1e-14) * wp.max(wp.max(F(1.0), wp.abs(p)), wp.abs(r)):
        disc = cpow(cre(p * p - F(4.0) * r), F(0.5))
        s1 = cpow(cdiv(cadd(cre(-p), disc), cre(F(2.0))), F(0.5))
        s2 = cpow(cdiv(csub(cre(-p), disc), cre(F(2.0))), F(0.5))
        z0 = cadd(s1, sh)
        z1 = cadd(wp.vec2d(-s1[0], -s1[1]), sh)
        z2 = cadd(s2, sh)
        z3 = cadd(wp.vec2d(-s2[0], -s2[1]), sh)
    else:
        m0, m1, m2 = cubic_roots(p, p * p / F(4.0) - r, -q * q / F(8.0))
        m = m0
        if cabs(m1) > cabs(m):
            m = m1
        if cabs(m2) > cabs(m):
            m = m2
        s = cpow(cmul(cre(F(2.0)), m), F(0.5))
        t = cdiv(cre(q), cmul(cre(F(2.0)), s))
        hp = cadd(cdiv(cre(p), cre(F(2.0))), m)
        ss = cmul(s, s)
        d1 = cpow(csub(ss, cmul(cre(F(4.0)), cadd(hp, t))), F(0.5))
        d2 = cpow(csub(ss, cmul(cre(F(4.0)), csub(hp, t))), F(0.5))
        ms = wp.vec2d(-s[0], -s[1])
        z0 = cadd(cdiv(cadd(s, d1), cre(F(2.0))), sh)
        z1 = cadd(cdiv(csub(s, d1), cre(F(2.0))), sh)
        z2 = cadd(cdiv(cadd(ms, d2), cre(F(2.0))), sh)
        z3 = cadd(cdiv(csub(ms, d2), cre(F(2.0))), sh)
    return (4, _qpolish(c4, c3, c2, c1, c0, z0), _qpolish(c4, c3, c2, c1, c0, z1),
            _qpolish(c4, c3, c2, c1, c0, z2), _qpolish(c4, c3, c2, c1, c0, z3))


#: a near-tangent extremum within this (relative to the coefficients) of zero is a root
TANGENT_TOL = wp.constant(wp.float64(1e-7))


@wp.func
def _tq_f(a0: wp.float64, a1: wp.float64, a2: wp.float64, a3: wp.float64, a4: wp.float64,
          t: wp.float64) -> wp.float64:
    return (a0 + a1 * wp.cos(t) + a2 * wp.sin(t) + a3 * wp.cos(F(2.0) * t)
            + a4 * wp.sin(F(2.0) * t))


@wp.func
def _trig4(a0: wp.float64, a1: wp.float64, a2: wp.float64, a3: wp.float64, a4: wp.float64,
           t: wp.float64):
    """``(f, f', f'')`` of the trigonometric quartic at ``t`` (the CPU ``_trig4``)."""
    c = wp.cos(t)
    s = wp.sin(t)
    c2 = wp.cos(F(2.0) * t)
    s2 = wp.sin(F(2.0) * t)
    f = a0 + a1 * c + a2 * s + a3 * c2 + a4 * s2
    f1 = -a1 * s + a2 * c - F(2.0) * a3 * s2 + F(2.0) * a4 * c2
    f2 = -a1 * c - a2 * s - F(4.0) * a3 * c2 - F(4.0) * a4 * s2
    return f, f1, f2


@wp.func
def _tq_add(roots: wp.vec4d, cnt: int, t: wp.float64):
    """``(roots, count)`` with ``t`` appended unless within 1e-7 of a root already there."""
    out = roots
    c = cnt
    keep = c < 4
    for m in range(3):
        if c > m and wp.abs(wrap(out[m] - t)) < F(1e-7):
            keep = False
    if keep:
        out[c] = t
        c += 1
    return out, c


@wp.func
def trig_quartic(a0: wp.float64, a1: wp.float64, a2: wp.float64, a3: wp.float64,
                 a4: wp.float64):
    """``(count, roots vec4d)``: real roots of ``a0 + a1 cos t + a2 sin t + a3 cos 2t +
    a4 sin 2t = 0`` (tangent half-angle about a shifted origin; roots within 1e-7 merge; a
    complex pair near the real axis resolves at the nearby extremum: two roots either side,
    or the tangent root when the extremum misses zero by round-off, as the CPU kernel)."""
    best = F(-1.0)
    phi = F(0.0)
    for j in range(4):
        ph = F(0.5) * PI * F(j) + PI
        v = wp.abs(_tq_f(a0, a1, a2, a3, a4, ph))
        if v > best:
            best = v
            phi = ph - PI
    cp = wp.cos(phi)
    sp = wp.sin(phi)
    c2p = wp.cos(F(2.0) * phi)
    s2p = wp.sin(F(2.0) * phi)
    b1 = a1 * cp + a2 * sp
    b2 = -a1 * sp + a2 * cp
    b3 = a3 * c2p + a4 * s2p
    b4 = -a3 * s2p + a4 * c2p
    n, r0, r1, r2, r3 = quartic_roots(a0 - b1 + b3, F(2.0) * b2 - F(4.0) * b4,
                                      F(2.0) * a0 - F(6.0) * b3, F(2.0) * b2 + F(4.0) * b4,
                                      a0 + b1 + b3)
    scale_ = wp.abs(a0) + wp.abs(a1) + wp.abs(a2) + wp.abs(a3) + wp.abs(a4)
    out = wp.vec4d(F(0.0), F(0.0), F(0.0), F(0.0))
    cnt = int(0)  # noqa: UP018 (a mutable Warp loop variable)
    for i in range(n):
        z = r0
        if i == 1:
            z = r1
        elif i == 2:
            z = r2
        elif i == 3:
            z = r3
        t = wrap(F(2.0) * wp.atan(z[0]) + phi)
        keep = True
        extra = False
        te = F(0.0)
        if wp.abs(z[1]) > F(1e-6) * (F(1.0) + wp.abs(z[0])):
            # a complex pair near the real axis: Newton on the derivative to the extremum
            f, f1, f2 = _trig4(a0, a1, a2, a3, a4, t)
            for _k in range(4):
                if f2 != F(0.0):
                    t = t - f1 / f2
                    f, f1, f2 = _trig4(a0, a1, a2, a3, a4, t)
            if wp.abs(f) > TANGENT_TOL * scale_:
                keep = False
            elif f2 != F(0.0) and F(-2.0) * f / f2 > F(0.0):
                h = wp.sqrt(F(-2.0) * f / f2)
                te = wrap(t - h)
                t = wrap(t + h)
                extra = True
            else:
                t = wrap(t)
        if keep:
            out, cnt = _tq_add(out, cnt, t)
            if extra:
                out, cnt = _tq_add(out, cnt, te)
    return cnt, out


# ----------------------------------------------------------------------------- subproblems
@wp.func
def sp1(p1: wp.vec3d, p2: wp.vec3d, k: wp.vec3d):
    """``(t, is_ls)``: ``t`` minimising ``|R(k, t) p1 - p2|``."""
    kxp = cross3(k, p1)
    kxkxp = cross3(k, kxp)
    x0 = dot3(kxp, p2)
    x1 = -dot3(kxkxp, p2)
    t = wp.atan2(x0, x1)
    n1 = norm3(p1)
    n2 = norm3(p2)
    sc = wp.max(wp.max(F(1.0), n1), n2)
    ls = (wp.abs(n1 - n2) > LS_TOL * sc
          or wp.abs(dot3(k, p1) - dot3(k, p2)) > LS_TOL * sc
          or hypot(x0, x1) < F(1e-14) * sc * sc)
    return t, ls


@wp.func
def _sp4_yx(h: wp.vec3d, p: wp.vec3d, k: wp.vec3d, d: wp.float64):
    """``(count, is_ls, y0, x0, y1, x1)``: subproblem 4's roots ``atan2(y_i, x_i)``."""
    kxp = cross3(k, p)
    hk = dot3(h, k)
    kp = dot3(k, p)
    a0 = dot3(h, kxp)
    a1 = dot3(h, p) - hk * kp
    b = d - hk * kp
    na = a0 * a0 + a1 * a1
    sc = wp.max(F(1.0), norm3(h) * norm3(p))
    if na < F(1e-28) * sc * sc:
        return 1, True, F(0.0), F(1.0), F(0.0), F(1.0)
    if b * b > na * (F(1.0) + F(2.0) * LS_TOL):
        if b != F(0.0):
            return 1, True, a0 * b, a1 * b, a0 * b, a1 * b
        return 1, True, a0, a1, a0, a1
    if b * b >= na:
        return 1, False, a0 * b, a1 * b, a0 * b, a1 * b
    r = wp.sqrt(na - b * b)
    return 2, False, a0 * b + a1 * r, a1 * b - a0 * r, a0 * b - a1 * r, a1 * b + a0 * r


@wp.func
def sp4(h: wp.vec3d, p: wp.vec3d, k: wp.vec3d, d: wp.float64):
    """``(count, is_ls, t0, t1)``: ``t`` with ``h . R(k, t) p = d``."""
    cnt, ls, y0, x0, y1, x1 = _sp4_yx(h, p, k, d)
    t0 = wp.atan2(y0, x0)
    t1 = t0
    if cnt != 1:
        t1 = wp.atan2(y1, x1)
    return cnt, ls, t0, t1


@wp.func
def unit_cs(y: wp.float64, x: wp.float64):
    """``(cos t, sin t)`` of ``t = atan2(y, x)`` from the components (the CPU ``unit_cs``)."""
    h = wp.sqrt(x * x + y * y)
    if not (h > F(1e-150)):
        t = wp.atan2(y, x)
        return wp.cos(t), wp.sin(t)
    return x / h, y / h


@wp.func
def sp4_cs(h: wp.vec3d, p: wp.vec3d, k: wp.vec3d, d: wp.float64):
    """The CPU ``sp4_cs``: ``(count, is_ls, t0, t1, c0, s0, c1, s1)``, roots by
    :func:`fatan2` with their cosines and sines."""
    cnt, ls, y0, x0, y1, x1 = _sp4_yx(h, p, k, d)
    t0 = fatan2(y0, x0)
    c0, s0 = unit_cs(y0, x0)
    t1 = t0
    c1 = c0
    s1 = s0
    if cnt != 1:
        t1 = fatan2(y1, x1)
        c1, s1 = unit_cs(y1, x1)
    return cnt, ls, t0, t1, c0, s0, c1, s1


@wp.func
def sp1_angle_cs(p1: wp.vec3d, p2: wp.vec3d, k: wp.vec3d):
    """The CPU ``sp1_angle_cs``: ``(t, cos t, sin t)`` with ``t`` by :func:`fatan2`."""
    kxp = cross3(k, p1)
    kxkxp = cross3(k, kxp)
    y = dot3(kxp, p2)
    x = -dot3(kxkxp, p2)
    c, s = unit_cs(y, x)
    return fatan2(y, x), c, s


@wp.func
def sp3(p1: wp.vec3d, p2: wp.vec3d, k: wp.vec3d, d: wp.float64):
    """``(count, is_ls, t0, t1)``: ``t`` with ``|R(k, t) p1 - p2| = d``."""
    return sp4(p2, p1, k, F(0.5) * (dot3(p1, p1) + dot3(p2, p2) - d * d))


@wp.func
def sp3_cs(p1: wp.vec3d, p2: wp.vec3d, k: wp.vec3d, d: wp.float64):
    """:func:`sp3` by :func:`sp4_cs`."""
    return sp4_cs(p2, p1, k, F(0.5) * (dot3(p1, p1) + dot3(p2, p2) - d * d))


@wp.func
def sp2(p1: wp.vec3d, p2: wp.vec3d, k1: wp.vec3d, k2: wp.vec3d):
    """``(count, is_ls, (t1_0, t1_1) vec2d, (t2_0, t2_1) vec2d)``: ``R(k1,t1)p1 = R(k2,t2)p2``."""
    n1 = norm3(p1)
    n2 = norm3(p2)
    sc = wp.max(wp.max(F(1.0), n1), n2)
    ls_norm = wp.abs(n1 - n2) > LS_TOL * sc
    z2 = wp.vec2d(F(0.0), F(0.0))
    if n1 < F(1e-14) or n2 < F(1e-14):
        return 1, ls_norm, z2, z2
    q1 = scale3(p1, F(1.0) / n1)
    q2 = scale3(p2, F(1.0) / n2)
    cnt, ls, a0, a1 = sp4(k2, q1, k1, dot3(k2, q2))
    b0, _l0 = sp1(q2, rot(k1, a0, q1), k2)
    b1 = b0
    if cnt == 2:
        b1, _l1 = sp1(q2, rot(k1, a1, q1), k2)
        if wp.abs(wrap(a0 - a1)) < F(1e-12) and wp.abs(wrap(b0 - b1)) < F(1e-12):
            cnt = 1
    return cnt, ls or ls_norm, wp.vec2d(a0, a1), wp.vec2d(b0, b1)
