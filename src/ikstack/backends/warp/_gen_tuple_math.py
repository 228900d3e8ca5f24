# mypy: ignore-errors
# ruff: noqa
"""GENERATED from ``src/ikstack/spatial/_tuple_math.py`` by :mod:`ikstack.backends.warp._translate`:
do not edit; edit the CPU source and run ``python -m ikstack.backends.warp._translate``
(a test fails when this file and its source disagree)."""

import warp as wp

from ikstack.backends.warp._prims import *  # noqa: F403

TANGENT_TOL = wp.constant(F(1e-07))
_ATAN_N = wp.constant(16)
_ATAN_TAB = wp.constant(wp.types.vector(length=17, dtype=wp.float64)(F(0.0), F(0.06241880999595735), F(0.12435499454676144), F(0.18534794999569476), F(0.24497866312686414), F(0.3028848683749714), F(0.35877067027057225), F(0.4124104415973873), F(0.4636476090008061), F(0.5123894603107377), F(0.5585993153435624), F(0.6022873461349642), F(0.6435011087932844), F(0.6823165548747481), F(0.7188299996216245), F(0.7531512809621944), F(0.7853981633974483)))


@wp.func
def add(a: wp.vec3d, b: wp.vec3d):
    return wp.vec3d(a[0] + b[0], a[1] + b[1], a[2] + b[2])


@wp.func
def sub(a: wp.vec3d, b: wp.vec3d):
    return wp.vec3d(a[0] - b[0], a[1] - b[1], a[2] - b[2])


@wp.func
def neg(a: wp.vec3d):
    return wp.vec3d(-a[0], -a[1], -a[2])


@wp.func
def scale(a: wp.vec3d, s: wp.float64):
    return wp.vec3d(a[0] * s, a[1] * s, a[2] * s)


@wp.func
def dot(a: wp.vec3d, b: wp.vec3d):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@wp.func
def cross(a: wp.vec3d, b: wp.vec3d):
    return wp.vec3d(a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@wp.func
def norm(a: wp.vec3d):
    return wp.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@wp.func
def rot_cs(k: wp.vec3d, c: wp.float64, s: wp.float64, p: wp.vec3d):
    """``R(k, t) @ p`` by Rodrigues' formula from ``c = cos t``, ``s = sin t`` (``k`` unit)."""
    kp = (k[0] * p[0] + k[1] * p[1] + k[2] * p[2]) * (F(1.0) - c)
    return wp.vec3d(p[0] * c + (k[1] * p[2] - k[2] * p[1]) * s + k[0] * kp, p[1] * c + (k[2] * p[0] - k[0] * p[2]) * s + k[1] * kp, p[2] * c + (k[0] * p[1] - k[1] * p[0]) * s + k[2] * kp)


@wp.func
def rot(k: wp.vec3d, t: wp.float64, p: wp.vec3d):
    """``R(k, t) @ p`` by Rodrigues' formula (``k`` unit)."""
    return rot_cs(k, wp.cos(t), wp.sin(t), p)


@wp.func
def rotm_cs(k: wp.vec3d, c: wp.float64, s: wp.float64):
    """The rotation ``R(k, t)`` as a 9-tuple from ``c = cos t``, ``s = sin t`` (``k`` unit)."""
    v = F(1.0) - c
    return wp.mat33d(c + k[0] * k[0] * v, k[0] * k[1] * v - k[2] * s, k[0] * k[2] * v + k[1] * s, k[1] * k[0] * v + k[2] * s, c + k[1] * k[1] * v, k[1] * k[2] * v - k[0] * s, k[2] * k[0] * v - k[1] * s, k[2] * k[1] * v + k[0] * s, c + k[2] * k[2] * v)


@wp.func
def rotm(k: wp.vec3d, t: wp.float64):
    """The rotation ``R(k, t)`` as a 9-tuple (``k`` unit)."""
    return rotm_cs(k, wp.cos(t), wp.sin(t))


@wp.func
def mv(R: wp.mat33d, p: wp.vec3d):
    """``R @ p``."""
    return wp.vec3d(R[0, 0] * p[0] + R[0, 1] * p[1] + R[0, 2] * p[2], R[1, 0] * p[0] + R[1, 1] * p[1] + R[1, 2] * p[2], R[2, 0] * p[0] + R[2, 1] * p[1] + R[2, 2] * p[2])


@wp.func
def mtv(R: wp.mat33d, p: wp.vec3d):
    """``R.T @ p``."""
    return wp.vec3d(R[0, 0] * p[0] + R[1, 0] * p[1] + R[2, 0] * p[2], R[0, 1] * p[0] + R[1, 1] * p[1] + R[2, 1] * p[2], R[0, 2] * p[0] + R[1, 2] * p[1] + R[2, 2] * p[2])


@wp.func
def mm(A: wp.mat33d, B: wp.mat33d):
    """``A @ B``."""
    return wp.mat33d(A[0, 0] * B[0, 0] + A[0, 1] * B[1, 0] + A[0, 2] * B[2, 0], A[0, 0] * B[0, 1] + A[0, 1] * B[1, 1] + A[0, 2] * B[2, 1], A[0, 0] * B[0, 2] + A[0, 1] * B[1, 2] + A[0, 2] * B[2, 2], A[1, 0] * B[0, 0] + A[1, 1] * B[1, 0] + A[1, 2] * B[2, 0], A[1, 0] * B[0, 1] + A[1, 1] * B[1, 1] + A[1, 2] * B[2, 1], A[1, 0] * B[0, 2] + A[1, 1] * B[1, 2] + A[1, 2] * B[2, 2], A[2, 0] * B[0, 0] + A[2, 1] * B[1, 0] + A[2, 2] * B[2, 0], A[2, 0] * B[0, 1] + A[2, 1] * B[1, 1] + A[2, 2] * B[2, 1], A[2, 0] * B[0, 2] + A[2, 1] * B[1, 2] + A[2, 2] * B[2, 2])


@wp.func
def mT(A: wp.mat33d):
    return wp.mat33d(A[0, 0], A[1, 0], A[2, 0], A[0, 1], A[1, 1], A[2, 1], A[0, 2], A[1, 2], A[2, 2])


@wp.func
def rel_rotation(Tt: wp.mat44d, T: wp.mat44d):
    """``M = R_t R^T``, row-major, of the rotation parts ``R_t``, ``R`` of the poses ``Tt`` and
    ``T``: the rotation taking ``T``'s orientation onto ``Tt``'s, in the base frame. Each entry
    is the dot product of a row of ``R_t`` and a row of ``R``, summed in index order. Every pose
    residual of the compiled kernels starts from these numbers
    (:func:`ikstack.ik._gate.pose_residual`, the numerical search's pose error)."""
    return wp.mat33d(Tt[0, 0] * T[0, 0] + Tt[0, 1] * T[0, 1] + Tt[0, 2] * T[0, 2], Tt[0, 0] * T[1, 0] + Tt[0, 1] * T[1, 1] + Tt[0, 2] * T[1, 2], Tt[0, 0] * T[2, 0] + Tt[0, 1] * T[2, 1] + Tt[0, 2] * T[2, 2], Tt[1, 0] * T[0, 0] + Tt[1, 1] * T[0, 1] + Tt[1, 2] * T[0, 2], Tt[1, 0] * T[1, 0] + Tt[1, 1] * T[1, 1] + Tt[1, 2] * T[1, 2], Tt[1, 0] * T[2, 0] + Tt[1, 1] * T[2, 1] + Tt[1, 2] * T[2, 2], Tt[2, 0] * T[0, 0] + Tt[2, 1] * T[0, 1] + Tt[2, 2] * T[0, 2], Tt[2, 0] * T[1, 0] + Tt[2, 1] * T[1, 1] + Tt[2, 2] * T[1, 2], Tt[2, 0] * T[2, 0] + Tt[2, 1] * T[2, 1] + Tt[2, 2] * T[2, 2])


@wp.func
def axial_sine(vx: wp.float64, vy: wp.float64, vz: wp.float64):
    """``|v| / 2`` of the axial vector ``v = vee(M - M^T)`` of a rotation ``M``: the sine of
    its angle."""
    return F(0.5) * wp.sqrt(vx * vx + vy * vy + vz * vz)


@wp.func
def rotation_angle(c: wp.float64, vx: wp.float64, vy: wp.float64, vz: wp.float64):
    """``(angle, s)`` of a rotation ``M`` given by its cosine ``c = (tr M - 1) / 2`` and its
    axial vector ``v = vee(M - M^T)`` (``2 sin(angle) axis``): ``s`` its sine
    (:func:`axial_sine`) and ``angle = atan2(s, c)`` in [0, pi], accurate near 0 and near pi
    alike (no ``acos``). Every compiled rotation error in ikstack is this angle."""
    s = axial_sine(vx, vy, vz)
    return wp.vec2d(wp.atan2(s, c), s)


@wp.func
def rotation_vector(M: wp.mat33d):
    """The rotation vector ``angle * axis`` (the log map, angle in [0, pi]) of a rotation ``M``
    (row-major 9-tuple) as a 3-tuple, through its quaternion ``(w, x, y, z)``: Shepperd's
    choice of the largest entry, then ``angle = 2 atan2(|(x, y, z)|, w)`` with ``w >= 0``,
    accurate near 0 and up to and at pi. At pi the axis's sign is the branch's choice. The
    compiled pose errors of the numerical search and of the velocity QP are this vector of
    :func:`rel_rotation`'s ``M``.

    No floor under the square root: the branch's argument (``1 + tr M`` or
    ``1 + 2 m_ii - tr M``) is the largest of the four, which add up to 4 for any matrix, so it
    is at least 1 (to round-off) and the divisor ``s`` never vanishes; a NaN entry fails every
    comparison or enters every branch's numbers, so NaN in is NaN out (a ``max`` floor would
    leave that to how ``max`` treats NaN, which differs between devices). No normalisation:
    the angle and the axis are ratios of the entries, which a scale leaves alone; only the
    small-angle factor ``2 / w`` reads the scale, and ``w`` of a rotation is 1 to round-off
    there. Below ``|(x, y, z)| = 1e-12`` the factor is ``2 / w`` (``atan2(n, w) / n`` is
    ``1 / w`` to a relative ``n^2 / 3``, 3e-25): the cut only keeps ``0 / 0`` out, and any cut
    up to ~1e-8 would give the same numbers within an ulp."""
    s = F(0.0)
    w = F(0.0)
    x = F(0.0)
    y = F(0.0)
    z = F(0.0)
    f = F(0.0)
    tr = M[0, 0] + M[1, 1] + M[2, 2]
    if tr >= M[0, 0] and tr >= M[1, 1] and tr >= M[2, 2]:
        s = wp.sqrt(F(1.0) + tr) * F(2.0)
        w = F(0.25) * s
        x = (M[2, 1] - M[1, 2]) / s
        y = (M[0, 2] - M[2, 0]) / s
        z = (M[1, 0] - M[0, 1]) / s
    elif M[0, 0] >= M[1, 1] and M[0, 0] >= M[2, 2]:
        s = wp.sqrt(F(1.0) + M[0, 0] - M[1, 1] - M[2, 2]) * F(2.0)
        w = (M[2, 1] - M[1, 2]) / s
        x = F(0.25) * s
        y = (M[0, 1] + M[1, 0]) / s
        z = (M[0, 2] + M[2, 0]) / s
    elif M[1, 1] >= M[2, 2]:
        s = wp.sqrt(F(1.0) + M[1, 1] - M[0, 0] - M[2, 2]) * F(2.0)
        w = (M[0, 2] - M[2, 0]) / s
        x = (M[0, 1] + M[1, 0]) / s
        y = F(0.25) * s
        z = (M[1, 2] + M[2, 1]) / s
    else:
        s = wp.sqrt(F(1.0) + M[2, 2] - M[0, 0] - M[1, 1]) * F(2.0)
        w = (M[1, 0] - M[0, 1]) / s
        x = (M[0, 2] + M[2, 0]) / s
        y = (M[1, 2] + M[2, 1]) / s
        z = F(0.25) * s
    if w < F(0.0):
        w = -w
        x = -x
        y = -y
        z = -z
    n = wp.sqrt(x * x + y * y + z * z)
    if n < F(1e-12):
        f = F(2.0) / w
    else:
        f = F(2.0) * wp.atan2(n, w) / n
    return wp.vec3d(x * f, y * f, z * f)


@wp.func
def fatan2(y: wp.float64, x: wp.float64):
    """``atan2(y, x)`` within 2 ulp (libm's is correctly rounded but ~2x slower; the
    subproblem kernels take a few dozen per target). The octant reduces the argument to
    ``a = min/max`` in [0, 1]; ``atan(a) = atan(c) + atan((a - c) / (1 + a c))`` with ``c`` the
    nearest of 17 breakpoints ``k / 16`` leaves ``|u| <= 1/32``, where atan's Taylor series to
    ``u^11`` is exact to 1e-19 relative. Zeros, infinities and NaN go to libm."""
    ax = wp.abs(x)
    ay = wp.abs(y)
    swap = ay > ax
    num = wp.where(swap, ax, ay)
    den = wp.where(swap, ay, ax)
    if not (den > F(0.0) and den < INF):
        return wp.atan2(y, x)
    a = num / den
    k = int(a * F(_ATAN_N) + F(0.5))
    c = F(k) * F(0.0625)
    u = (a - c) / (F(1.0) + a * c)
    u2 = u * u
    p = u2 * (F(-0.3333333333333333) + u2 * (F(0.2) + u2 * (F(-0.14285714285714285) + u2 * (F(0.1111111111111111) - u2 * F(0.09090909090909091)))))
    r = _ATAN_TAB[k] + (u + u * p)
    if swap:
        r = F(1.5707963267948966) - r
    if x < F(0.0):
        r = F(3.141592653589793) - r
    return copysign(r, y)


@wp.func
def unit_cs(y: wp.float64, x: wp.float64):
    """``(cos t, sin t)`` of ``t = atan2(y, x)`` from the components (no libm trigonometry;
    within an ulp or two of ``cos`` and ``sin`` of the rounded angle)."""
    t = F(0.0)
    h = wp.sqrt(x * x + y * y)
    if not (h > F(1e-150)):
        t = wp.atan2(y, x)
        return wp.vec2d(wp.cos(t), wp.sin(t))
    return wp.vec2d(x / h, y / h)


@wp.func
def wrap(a: wp.float64):
    """Angle wrapped to ``(-pi, pi]``."""
    return a - F(6.283185307179586) * wp.floor((a + F(3.141592653589793)) / F(6.283185307179586))


@wp.func
def any_perp(k: wp.vec3d):
    """A unit vector perpendicular to unit ``k``."""
    v = wp.vec3d()
    if wp.abs(k[0]) < F(0.9):
        v = wp.vec3d(F(0.0), k[2], -k[1])
    else:
        v = wp.vec3d(-k[2], F(0.0), k[0])
    return scale(v, F(1.0) / norm(v))


@wp.func
def set4(t: wp.vec4d, i: int, v: wp.float64):
    """The 4-tuple ``t`` with entry ``i`` replaced by ``v`` (no list allocated per target)."""
    return wp.vec4d(wp.where(i == 0, v, t[0]), wp.where(i == 1, v, t[1]), wp.where(i == 2, v, t[2]), wp.where(i == 3, v, t[3]))


@wp.func
def _cbrt(z: wp.vec2d):
    if ceq(z, cre(F(0.0))):
        return wp.vec2d(F(0.0), F(0.0))
    return cpow(z, F(0.3333333333333333))


@wp.func
def _cubic_roots(a: wp.float64, b: wp.float64, c: wp.float64):
    """Complex roots of ``m^3 + a m^2 + b m + c`` (Cardano in complex arithmetic)."""
    a_1 = cre(a)
    b_1 = cre(b)
    c_1 = cre(c)
    p = b_1 - cdiv(cmul(a_1, a_1), cre(F(3.0)))
    q = cdiv(cmul(cmul(cmul(cre(F(2.0)), a_1), a_1), a_1), cre(F(27.0))) - cdiv(cmul(a_1, b_1), cre(F(3.0))) + c_1
    disc = cpow(cdiv(cmul(q, q), cre(F(4.0))) + cdiv(cmul(cmul(p, p), p), cre(F(27.0))), F(0.5))
    u = _cbrt(cdiv(-q, cre(F(2.0))) + disc)
    if cabs(u) < F(1e-300):
        u = _cbrt(cdiv(-q, cre(F(2.0))) - disc)
    w = wp.vec2d(F(-0.5), F(0.8660254037844386))
    u1 = cmul(u, w)
    u2 = cmul(u1, w)
    r0 = (wp.where(cabs(u) >= F(1e-300), u - cdiv(p, cmul(cre(F(3.0)), u)), wp.vec2d(F(0.0), F(0.0)))) - cdiv(a_1, cre(F(3.0)))
    r1 = (wp.where(cabs(u1) >= F(1e-300), u1 - cdiv(p, cmul(cre(F(3.0)), u1)), wp.vec2d(F(0.0), F(0.0)))) - cdiv(a_1, cre(F(3.0)))
    r2 = (wp.where(cabs(u2) >= F(1e-300), u2 - cdiv(p, cmul(cre(F(3.0)), u2)), wp.vec2d(F(0.0), F(0.0)))) - cdiv(a_1, cre(F(3.0)))
    return wp.matrix_from_rows(r0, r1, r2)


@wp.func
def _polish(c4: wp.float64, c3: wp.float64, c2: wp.float64, c1: wp.float64, c0: wp.float64, z: wp.vec2d):
    """Two Newton steps, each kept only if it lowers ``|f|``: at a double root ``f`` and
    ``f'`` are both round-off, and their ratio could throw the root anywhere."""
    f = cmul(cmul(cmul(cmul(cre(c4), z) + cre(c3), z) + cre(c2), z) + cre(c1), z) + cre(c0)
    for _ in range(2):
        df = cmul(cmul(cmul(cre(F(4.0) * c4), z) + cre(F(3.0) * c3), z) + cre(F(2.0) * c2), z) + cre(c1)
        if ceq(df, cre(F(0.0))):
            break
        zn = z - cdiv(f, df)
        fn = cmul(cmul(cmul(cmul(cre(c4), zn) + cre(c3), zn) + cre(c2), zn) + cre(c1), zn) + cre(c0)
        if not (cabs(fn) < cabs(f)):
            break
        z = zn
        f = fn
    return z


@wp.func
def quartic_roots(c4: wp.float64, c3: wp.float64, c2: wp.float64, c1: wp.float64, c0: wp.float64):
    """``(count, (z0, z1, z2, z3))``: complex roots of ``c4 z^4 + ... + c0``.

    Ferrari's method in complex arithmetic followed by two Newton polishes on the original
    polynomial; lower-degree polynomials (``c4`` negligible) use their own formulas.
    """
    disc = wp.vec2d()
    r0 = wp.vec2d()
    r1 = wp.vec2d()
    r2 = wp.vec2d()
    s1 = wp.vec2d()
    s2 = wp.vec2d()
    z0 = wp.vec2d()
    z1 = wp.vec2d()
    z2 = wp.vec2d()
    z3 = wp.vec2d()
    m0 = wp.vec2d()
    m1 = wp.vec2d()
    m2 = wp.vec2d()
    m = wp.vec2d()
    s = wp.vec2d()
    t = wp.vec2d()
    d1 = wp.vec2d()
    d2 = wp.vec2d()
    z = wp.vec2d(F(0.0), F(0.0))
    scale_ = wp.max(wp.max(wp.max(wp.max(wp.abs(c4), wp.abs(c3)), wp.abs(c2)), wp.abs(c1)), wp.abs(c0))
    if scale_ == F(0.0):
        return 0, wp.matrix_from_rows(z, z, z, z)
    eps = F(1e-13) * scale_
    if wp.abs(c4) <= eps:
        if wp.abs(c3) <= eps:
            if wp.abs(c2) <= eps:
                if wp.abs(c1) <= eps:
                    return 0, wp.matrix_from_rows(z, z, z, z)
                return 1, wp.matrix_from_rows(cre(-c0 / c1), z, z, z)
            disc = cpow(cre(c1 * c1 - F(4.0) * c2 * c0), F(0.5))
            return 2, wp.matrix_from_rows(cdiv(cre(-c1) + disc, cre(F(2.0) * c2)), cdiv(cre(-c1) - disc, cre(F(2.0) * c2)), z, z)
        r0_r1_r2 = _cubic_roots(c2 / c3, c1 / c3, c0 / c3)
        r0 = r0_r1_r2[0]
        r1 = r0_r1_r2[1]
        r2 = r0_r1_r2[2]
        return 3, wp.matrix_from_rows(r0, r1, r2, z)
    b = c3 / c4
    c = c2 / c4
    d = c1 / c4
    e = c0 / c4
    b2 = b * b
    p = c - F(3.0) * b2 / F(8.0)
    q = d - b * c / F(2.0) + b2 * b / F(8.0)
    r = e - b * d / F(4.0) + b2 * c / F(16.0) - F(3.0) * b2 * b2 / F(256.0)
    sh = -b / F(4.0)
    if wp.abs(q) < F(1e-14) * wp.max(wp.max(F(1.0), wp.abs(p)), wp.abs(r)):
        disc = cpow(cre(p * p - F(4.0) * r), F(0.5))
        s1 = cpow(cdiv(cre(-p) + disc, cre(F(2.0))), F(0.5))
        s2 = cpow(cdiv(cre(-p) - disc, cre(F(2.0))), F(0.5))
        z0 = s1 + cre(sh)
        z1 = -s1 + cre(sh)
        z2 = s2 + cre(sh)
        z3 = -s2 + cre(sh)
    else:
        m0_m1_m2 = _cubic_roots(p, p * p / F(4.0) - r, -q * q / F(8.0))
        m0 = m0_m1_m2[0]
        m1 = m0_m1_m2[1]
        m2 = m0_m1_m2[2]
        m = m0
        if cabs(m1) > cabs(m):
            m = m1
        if cabs(m2) > cabs(m):
            m = m2
        s = cpow(cmul(cre(F(2.0)), m), F(0.5))
        t = cdiv(cre(q), cmul(cre(F(2.0)), s))
        d1 = cpow(cmul(s, s) - cmul(cre(F(4.0)), cre(p / F(2.0)) + m + t), F(0.5))
        d2 = cpow(cmul(s, s) - cmul(cre(F(4.0)), cre(p / F(2.0)) + m - t), F(0.5))
        z0 = cdiv(s + d1, cre(F(2.0))) + cre(sh)
        z1 = cdiv(s - d1, cre(F(2.0))) + cre(sh)
        z2 = cdiv(-s + d2, cre(F(2.0))) + cre(sh)
        z3 = cdiv(-s - d2, cre(F(2.0))) + cre(sh)
    return 4, wp.matrix_from_rows(_polish(c4, c3, c2, c1, c0, z0), _polish(c4, c3, c2, c1, c0, z1), _polish(c4, c3, c2, c1, c0, z2), _polish(c4, c3, c2, c1, c0, z3))


@wp.func
def _trig4(a0: wp.float64, a1: wp.float64, a2: wp.float64, a3: wp.float64, a4: wp.float64, t: wp.float64):
    """``(f, f', f'')`` of ``a0 + a1 cos t + a2 sin t + a3 cos 2t + a4 sin 2t``."""
    c = wp.cos(t)
    s = wp.sin(t)
    c2 = wp.cos(F(2.0) * t)
    s2 = wp.sin(F(2.0) * t)
    f = a0 + a1 * c + a2 * s + a3 * c2 + a4 * s2
    f1 = -a1 * s + a2 * c - F(2.0) * a3 * s2 + F(2.0) * a4 * c2
    f2 = -a1 * c - a2 * s - F(4.0) * a3 * c2 - F(4.0) * a4 * s2
    return wp.vec3d(f, f1, f2)


@wp.func
def trig_quartic(a0: wp.float64, a1: wp.float64, a2: wp.float64, a3: wp.float64, a4: wp.float64):
    """``(count, (t0, t1, t2, t3))``: real roots of
    ``a0 + a1 cos t + a2 sin t + a3 cos 2t + a4 sin 2t = 0``.

    The tangent half-angle substitution is taken about a shifted origin ``phi`` chosen so no
    root sits at infinity. Roots closer than 1e-7 rad merge. A complex pair near the real
    axis is resolved at the function's nearby extremum: two real roots either side of it, or,
    when the extremum misses zero by at most :data:`TANGENT_TOL` (round-off at a tangent, as
    at a singular configuration), the tangent root.
    """
    f = F(0.0)
    f1 = F(0.0)
    f2 = F(0.0)
    h = F(0.0)
    best = F(-1.0)
    phi = F(0.0)
    for j in range(4):
        ph = F(1.5707963267948966) * F(j) + F(3.141592653589793)
        v = wp.abs(a0 + a1 * wp.cos(ph) + a2 * wp.sin(ph) + a3 * wp.cos(F(2.0) * ph) + a4 * wp.sin(F(2.0) * ph))
        if v > best:
            best = v
            phi = ph - F(3.141592653589793)
    cp = wp.cos(phi)
    sp = wp.sin(phi)
    c2p = wp.cos(F(2.0) * phi)
    s2p = wp.sin(F(2.0) * phi)
    b1 = a1 * cp + a2 * sp
    b2 = -a1 * sp + a2 * cp
    b3 = a3 * c2p + a4 * s2p
    b4 = -a3 * s2p + a4 * c2p
    n, roots = quartic_roots(a0 - b1 + b3, F(2.0) * b2 - F(4.0) * b4, F(2.0) * a0 - F(6.0) * b3, F(2.0) * b2 + F(4.0) * b4, a0 + b1 + b3)
    scale_ = wp.abs(a0) + wp.abs(a1) + wp.abs(a2) + wp.abs(a3) + wp.abs(a4)
    cnt = int(0)
    t0 = F(0.0)
    t1 = F(0.0)
    t2 = F(0.0)
    t3 = F(0.0)
    for i in range(n):
        z = roots[i]
        t = wrap(F(2.0) * wp.atan(z[0]) + phi)
        extra = int(0)
        te = F(0.0)
        if wp.abs(z[1]) > F(1e-06) * (F(1.0) + wp.abs(z[0])):
            f_f1_f2 = _trig4(a0, a1, a2, a3, a4, t)
            f = f_f1_f2[0]
            f1 = f_f1_f2[1]
            f2 = f_f1_f2[2]
            for _ in range(4):
                if f2 == F(0.0):
                    break
                t = t - f1 / f2
                f_f1_f2_2 = _trig4(a0, a1, a2, a3, a4, t)
                f = f_f1_f2_2[0]
                f1 = f_f1_f2_2[1]
                f2 = f_f1_f2_2[2]
            if wp.abs(f) > TANGENT_TOL * scale_:
                continue
            if f2 != F(0.0) and F(-2.0) * f / f2 > F(0.0):
                h = wp.sqrt(F(-2.0) * f / f2)
                te = wrap(t - h)
                t = wrap(t + h)
                extra = int(1)
            else:
                t = wrap(t)
        for e in range(1 + extra):
            if e == 1:
                t = te
            if (cnt > 0 and wp.abs(wrap(t0 - t)) < F(1e-07)) or (cnt > 1 and wp.abs(wrap(t1 - t)) < F(1e-07)) or (cnt > 2 and wp.abs(wrap(t2 - t)) < F(1e-07)) or cnt > 3:
                continue
            if cnt == 0:
                t0 = t
            elif cnt == 1:
                t1 = t
            elif cnt == 2:
                t2 = t
            else:
                t3 = t
            cnt = cnt + 1
    return cnt, wp.vec4d(t0, t1, t2, t3)
