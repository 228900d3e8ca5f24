"""Allocation-free 3-vector, 3x3 matrix and polynomial helpers for the compiled kernels.

Vectors are 3-tuples and matrices row-major 9-tuples, so the kernels allocate nothing per
operation (numba keeps tuples in registers); functions accept any indexable with 3 (or 9)
entries, so a NumPy row works as an input. With ``NUMBA_DISABLE_JIT=1`` they run as plain
Python.

They are ordinary compiled functions, not ``inline="always"``: LLVM inlines them when a kernel
is optimized, while numba's own inlining re-typed each one at every call site and doubled the
first-run compile time of the analytic paths (UR5 solve, batch and path from an empty cache:
65 s -> 35 s; the solve times within 1.5%; ``benchmarks/bench_cold_start.py``).
The exception is :func:`mm`: LLVM keeps it a real call (a 9-tuple result), once per FK or
Jacobian of the chain kernels and the numerical search's iterations; numba inlines it.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: breakpoints of :func:`fatan2`'s table: ``atan(k / _ATAN_N)`` for ``k = 0 .. _ATAN_N``
_ATAN_N = 16
_ATAN_TAB = np.array([math.atan(k / _ATAN_N) for k in range(_ATAN_N + 1)])
_ATAN_TAB.setflags(write=False)


@njit(cache=True)
def v3(a):  # pragma: no cover - compiled
    return (a[0], a[1], a[2])


@njit(cache=True)
def m9(R):  # pragma: no cover - compiled
    """A (3, 3) array as a row-major 9-tuple."""
    return (R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2], R[2, 0], R[2, 1], R[2, 2])


@njit(cache=True)
def add(a, b):  # pragma: no cover - compiled
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@njit(cache=True)
def sub(a, b):  # pragma: no cover - compiled
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@njit(cache=True)
def neg(a):  # pragma: no cover - compiled
    return (-a[0], -a[1], -a[2])


@njit(cache=True)
def scale(a, s):  # pragma: no cover - compiled
    return (a[0] * s, a[1] * s, a[2] * s)


@njit(cache=True)
def dot(a, b):  # pragma: no cover - compiled
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True)
def cross(a, b):  # pragma: no cover - compiled
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@njit(cache=True)
def norm(a):  # pragma: no cover - compiled
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@njit(cache=True)
def rot_cs(k, c, s, p):  # pragma: no cover - compiled
    """``R(k, t) @ p`` by Rodrigues' formula from ``c = cos t``, ``s = sin t`` (``k`` unit)."""
    kp = (k[0] * p[0] + k[1] * p[1] + k[2] * p[2]) * (1.0 - c)
    return (
        p[0] * c + (k[1] * p[2] - k[2] * p[1]) * s + k[0] * kp,
        p[1] * c + (k[2] * p[0] - k[0] * p[2]) * s + k[1] * kp,
        p[2] * c + (k[0] * p[1] - k[1] * p[0]) * s + k[2] * kp,
    )


@njit(cache=True)
def rot(k, t, p):  # pragma: no cover - compiled
    """``R(k, t) @ p`` by Rodrigues' formula (``k`` unit)."""
    return rot_cs(k, math.cos(t), math.sin(t), p)


@njit(cache=True)
def rotm_cs(k, c, s):  # pragma: no cover - compiled
    """The rotation ``R(k, t)`` as a 9-tuple from ``c = cos t``, ``s = sin t`` (``k`` unit)."""
    v = 1.0 - c
    return (
        c + k[0] * k[0] * v,
        k[0] * k[1] * v - k[2] * s,
        k[0] * k[2] * v + k[1] * s,
        k[1] * k[0] * v + k[2] * s,
        c + k[1] * k[1] * v,
        k[1] * k[2] * v - k[0] * s,
        k[2] * k[0] * v - k[1] * s,
        k[2] * k[1] * v + k[0] * s,
        c + k[2] * k[2] * v,
    )


@njit(cache=True)
def rotm(k, t):  # pragma: no cover - compiled
    """The rotation ``R(k, t)`` as a 9-tuple (``k`` unit)."""
    return rotm_cs(k, math.cos(t), math.sin(t))


@njit(cache=True)
def mv(R, p):  # pragma: no cover - compiled
    """``R @ p``."""
    return (
        R[0] * p[0] + R[1] * p[1] + R[2] * p[2],
        R[3] * p[0] + R[4] * p[1] + R[5] * p[2],
        R[6] * p[0] + R[7] * p[1] + R[8] * p[2],
    )


@njit(cache=True)
def mtv(R, p):  # pragma: no cover - compiled
    """``R.T @ p``."""
    return (
        R[0] * p[0] + R[3] * p[1] + R[6] * p[2],
        R[1] * p[0] + R[4] * p[1] + R[7] * p[2],
        R[2] * p[0] + R[5] * p[1] + R[8] * p[2],
    )


@njit(cache=True, inline="always")
def mm(A, B):  # pragma: no cover - compiled
    """``A @ B``."""
    return (
        A[0] * B[0] + A[1] * B[3] + A[2] * B[6],
        A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
        A[0] * B[2] + A[1] * B[5] + A[2] * B[8],
        A[3] * B[0] + A[4] * B[3] + A[5] * B[6],
        A[3] * B[1] + A[4] * B[4] + A[5] * B[7],
        A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
        A[6] * B[0] + A[7] * B[3] + A[8] * B[6],
        A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
        A[6] * B[2] + A[7] * B[5] + A[8] * B[8],
    )


@njit(cache=True)
def mT(A):  # pragma: no cover - compiled
    return (A[0], A[3], A[6], A[1], A[4], A[7], A[2], A[5], A[8])


@njit(cache=True)
def rel_rotation(Tt, T):  # pragma: no cover - compiled
    """``M = R_t R^T``, row-major, of the rotation parts ``R_t``, ``R`` of the poses ``Tt`` and
    ``T``: the rotation taking ``T``'s orientation onto ``Tt``'s, in the base frame. Each entry
    is the dot product of a row of ``R_t`` and a row of ``R``, summed in index order. Every pose
    residual of the compiled kernels starts from these numbers
    (:func:`ikstack.ik._gate.pose_residual`, the numerical search's pose error)."""
    return (
        Tt[0, 0] * T[0, 0] + Tt[0, 1] * T[0, 1] + Tt[0, 2] * T[0, 2],
        Tt[0, 0] * T[1, 0] + Tt[0, 1] * T[1, 1] + Tt[0, 2] * T[1, 2],
        Tt[0, 0] * T[2, 0] + Tt[0, 1] * T[2, 1] + Tt[0, 2] * T[2, 2],
        Tt[1, 0] * T[0, 0] + Tt[1, 1] * T[0, 1] + Tt[1, 2] * T[0, 2],
        Tt[1, 0] * T[1, 0] + Tt[1, 1] * T[1, 1] + Tt[1, 2] * T[1, 2],
        Tt[1, 0] * T[2, 0] + Tt[1, 1] * T[2, 1] + Tt[1, 2] * T[2, 2],
        Tt[2, 0] * T[0, 0] + Tt[2, 1] * T[0, 1] + Tt[2, 2] * T[0, 2],
        Tt[2, 0] * T[1, 0] + Tt[2, 1] * T[1, 1] + Tt[2, 2] * T[1, 2],
        Tt[2, 0] * T[2, 0] + Tt[2, 1] * T[2, 1] + Tt[2, 2] * T[2, 2],
    )


@njit(cache=True)
def axial_sine(vx, vy, vz):  # pragma: no cover - compiled
    """``|v| / 2`` of the axial vector ``v = vee(M - M^T)`` of a rotation ``M``: the sine of
    its angle."""
    return 0.5 * math.sqrt(vx * vx + vy * vy + vz * vz)


@njit(cache=True)
def rotation_angle(c, vx, vy, vz):  # pragma: no cover - compiled
    """``(angle, s)`` of a rotation ``M`` given by its cosine ``c = (tr M - 1) / 2`` and its
    axial vector ``v = vee(M - M^T)`` (``2 sin(angle) axis``): ``s`` its sine
    (:func:`axial_sine`) and ``angle = atan2(s, c)`` in [0, pi], accurate near 0 and near pi
    alike (no ``acos``). Every compiled rotation error in ikstack is this angle."""
    s = axial_sine(vx, vy, vz)
    return math.atan2(s, c), s


# inlined by numba, unlike most helpers here: LLVM leaves a function of this size out of
# line, and the call made the numerical search's pose error a fifth slower (38 -> 46 ns)
@njit(cache=True, inline="always")
def rotation_vector(M):  # pragma: no cover - compiled
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
    tr = M[0] + M[4] + M[8]
    if tr >= M[0] and tr >= M[4] and tr >= M[8]:
        s = math.sqrt(1.0 + tr) * 2.0
        w = 0.25 * s
        x = (M[7] - M[5]) / s
        y = (M[2] - M[6]) / s
        z = (M[3] - M[1]) / s
    elif M[0] >= M[4] and M[0] >= M[8]:
        s = math.sqrt(1.0 + M[0] - M[4] - M[8]) * 2.0
        w = (M[7] - M[5]) / s
        x = 0.25 * s
        y = (M[1] + M[3]) / s
        z = (M[2] + M[6]) / s
    elif M[4] >= M[8]:
        s = math.sqrt(1.0 + M[4] - M[0] - M[8]) * 2.0
        w = (M[2] - M[6]) / s
        x = (M[1] + M[3]) / s
        y = 0.25 * s
        z = (M[5] + M[7]) / s
    else:
        s = math.sqrt(1.0 + M[8] - M[0] - M[4]) * 2.0
        w = (M[3] - M[1]) / s
        x = (M[2] + M[6]) / s
        y = (M[5] + M[7]) / s
        z = 0.25 * s
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    n = math.sqrt(x * x + y * y + z * z)
    if n < 1e-12:
        f = 2.0 / w
    else:
        f = 2.0 * math.atan2(n, w) / n
    return (x * f, y * f, z * f)


@njit(cache=True)
def fatan2(y, x):  # pragma: no cover - compiled
    """``atan2(y, x)`` within 2 ulp (libm's is correctly rounded but ~2x slower; the
    subproblem kernels take a few dozen per target). The octant reduces the argument to
    ``a = min/max`` in [0, 1]; ``atan(a) = atan(c) + atan((a - c) / (1 + a c))`` with ``c`` the
    nearest of 17 breakpoints ``k / 16`` leaves ``|u| <= 1/32``, where atan's Taylor series to
    ``u^11`` is exact to 1e-19 relative. Zeros, infinities and NaN go to libm."""
    ax = abs(x)
    ay = abs(y)
    swap = ay > ax
    num = ax if swap else ay
    den = ay if swap else ax
    if not (den > 0.0 and den < math.inf):
        return math.atan2(y, x)
    a = num / den
    k = int(a * _ATAN_N + 0.5)
    c = k * (1.0 / _ATAN_N)
    u = (a - c) / (1.0 + a * c)
    u2 = u * u
    p = u2 * (
        -1.0 / 3.0 + u2 * (1.0 / 5.0 + u2 * (-1.0 / 7.0 + u2 * (1.0 / 9.0 - u2 * (1.0 / 11.0))))
    )
    r = _ATAN_TAB[k] + (u + u * p)
    if swap:
        r = 0.5 * math.pi - r
    if x < 0.0:  # (x = -0 has |y| > 0 here: pi/2 either way)
        r = math.pi - r
    return math.copysign(r, y)


@njit(cache=True)
def unit_cs(y, x):  # pragma: no cover - compiled
    """``(cos t, sin t)`` of ``t = atan2(y, x)`` from the components (no libm trigonometry;
    within an ulp or two of ``cos`` and ``sin`` of the rounded angle)."""
    h = math.sqrt(x * x + y * y)
    if not h > 1e-150:  # zero, underflowed or not finite: through the angle
        t = math.atan2(y, x)
        return math.cos(t), math.sin(t)
    return x / h, y / h


@njit(cache=True)
def wrap(a):  # pragma: no cover - compiled
    """Angle wrapped to ``(-pi, pi]``."""
    return a - 2.0 * math.pi * math.floor((a + math.pi) / (2.0 * math.pi))


@njit(cache=True)
def any_perp(k):  # pragma: no cover - compiled
    """A unit vector perpendicular to unit ``k``."""
    if abs(k[0]) < 0.9:
        v = (0.0, k[2], -k[1])  # k x e_x
    else:
        v = (-k[2], 0.0, k[0])  # k x e_y
    return scale(v, 1.0 / norm(v))


@njit(cache=True)
def set4(t, i, v):  # pragma: no cover - compiled
    """The 4-tuple ``t`` with entry ``i`` replaced by ``v`` (no list allocated per target)."""
    return (
        v if i == 0 else t[0],
        v if i == 1 else t[1],
        v if i == 2 else t[2],
        v if i == 3 else t[3],
    )


# ----------------------------------------------------------------------------- polynomials
@njit(cache=True)
def _cbrt(z):  # pragma: no cover - compiled
    if z == 0:
        return 0j
    return z ** (1.0 / 3.0)


@njit(cache=True)
def _cubic_roots(a, b, c):  # pragma: no cover - compiled
    """Complex roots of ``m^3 + a m^2 + b m + c`` (Cardano in complex arithmetic)."""
    a = complex(a)
    b = complex(b)
    c = complex(c)
    p = b - a * a / 3.0
    q = 2.0 * a * a * a / 27.0 - a * b / 3.0 + c
    disc = (q * q / 4.0 + p * p * p / 27.0) ** 0.5
    u = _cbrt(-q / 2.0 + disc)
    if abs(u) < 1e-300:
        u = _cbrt(-q / 2.0 - disc)
    w = complex(-0.5, math.sqrt(3.0) / 2.0)
    u1 = u * w
    u2 = u1 * w
    r0 = (u - p / (3.0 * u) if abs(u) >= 1e-300 else 0j) - a / 3.0
    r1 = (u1 - p / (3.0 * u1) if abs(u1) >= 1e-300 else 0j) - a / 3.0
    r2 = (u2 - p / (3.0 * u2) if abs(u2) >= 1e-300 else 0j) - a / 3.0
    return r0, r1, r2


@njit(cache=True)
def _polish(c4, c3, c2, c1, c0, z):  # pragma: no cover - compiled
    """Two Newton steps, each kept only if it lowers ``|f|``: at a double root ``f`` and
    ``f'`` are both round-off, and their ratio could throw the root anywhere."""
    f = (((c4 * z + c3) * z + c2) * z + c1) * z + c0
    for _ in range(2):
        df = ((4.0 * c4 * z + 3.0 * c3) * z + 2.0 * c2) * z + c1
        if df == 0:
            break
        zn = z - f / df
        fn = (((c4 * zn + c3) * zn + c2) * zn + c1) * zn + c0
        if not abs(fn) < abs(f):
            break
        z = zn
        f = fn
    return z


@njit(cache=True)
def quartic_roots(c4, c3, c2, c1, c0):  # pragma: no cover - compiled
    """``(count, (z0, z1, z2, z3))``: complex roots of ``c4 z^4 + ... + c0``.

    Ferrari's method in complex arithmetic followed by two Newton polishes on the original
    polynomial; lower-degree polynomials (``c4`` negligible) use their own formulas.
    """
    z = 0j
    scale_ = max(abs(c4), abs(c3), abs(c2), abs(c1), abs(c0))
    if scale_ == 0.0:
        return 0, (z, z, z, z)
    eps = 1e-13 * scale_
    if abs(c4) <= eps:
        if abs(c3) <= eps:
            if abs(c2) <= eps:
                if abs(c1) <= eps:
                    return 0, (z, z, z, z)
                return 1, (complex(-c0 / c1), z, z, z)
            disc = complex(c1 * c1 - 4.0 * c2 * c0) ** 0.5
            return 2, ((-c1 + disc) / (2.0 * c2), (-c1 - disc) / (2.0 * c2), z, z)
        r0, r1, r2 = _cubic_roots(c2 / c3, c1 / c3, c0 / c3)
        return 3, (r0, r1, r2, z)
    b = c3 / c4
    c = c2 / c4
    d = c1 / c4
    e = c0 / c4
    b2 = b * b
    p = c - 3.0 * b2 / 8.0
    q = d - b * c / 2.0 + b2 * b / 8.0
    r = e - b * d / 4.0 + b2 * c / 16.0 - 3.0 * b2 * b2 / 256.0
    sh = -b / 4.0
    if abs(q) < 1e-14 * max(1.0, abs(p), abs(r)):
        disc = complex(p * p - 4.0 * r) ** 0.5
        s1 = ((-p + disc) / 2.0) ** 0.5
        s2 = ((-p - disc) / 2.0) ** 0.5
        z0, z1, z2, z3 = s1 + sh, -s1 + sh, s2 + sh, -s2 + sh
    else:
        m0, m1, m2 = _cubic_roots(p, p * p / 4.0 - r, -q * q / 8.0)
        m = m0
        if abs(m1) > abs(m):
            m = m1
        if abs(m2) > abs(m):
            m = m2
        s = (2.0 * m) ** 0.5
        t = q / (2.0 * s)
        d1 = (s * s - 4.0 * (p / 2.0 + m + t)) ** 0.5
        d2 = (s * s - 4.0 * (p / 2.0 + m - t)) ** 0.5
        z0 = (s + d1) / 2.0 + sh
        z1 = (s - d1) / 2.0 + sh
        z2 = (-s + d2) / 2.0 + sh
        z3 = (-s - d2) / 2.0 + sh
    return 4, (
        _polish(c4, c3, c2, c1, c0, z0),
        _polish(c4, c3, c2, c1, c0, z1),
        _polish(c4, c3, c2, c1, c0, z2),
        _polish(c4, c3, c2, c1, c0, z3),
    )


#: a near-tangent extremum within this (relative to the coefficients) of zero is a root
TANGENT_TOL = 1e-7


@njit(cache=True, inline="always")
def _trig4(a0, a1, a2, a3, a4, t):  # pragma: no cover - compiled
    """``(f, f', f'')`` of ``a0 + a1 cos t + a2 sin t + a3 cos 2t + a4 sin 2t``."""
    c = math.cos(t)
    s = math.sin(t)
    c2 = math.cos(2.0 * t)
    s2 = math.sin(2.0 * t)
    f = a0 + a1 * c + a2 * s + a3 * c2 + a4 * s2
    f1 = -a1 * s + a2 * c - 2.0 * a3 * s2 + 2.0 * a4 * c2
    f2 = -a1 * c - a2 * s - 4.0 * a3 * c2 - 4.0 * a4 * s2
    return f, f1, f2


@njit(cache=True)
def trig_quartic(a0, a1, a2, a3, a4):  # pragma: no cover - compiled
    """``(count, (t0, t1, t2, t3))``: real roots of
    ``a0 + a1 cos t + a2 sin t + a3 cos 2t + a4 sin 2t = 0``.

    The tangent half-angle substitution is taken about a shifted origin ``phi`` chosen so no
    root sits at infinity. Roots closer than 1e-7 rad merge. A complex pair near the real
    axis is resolved at the function's nearby extremum: two real roots either side of it, or,
    when the extremum misses zero by at most :data:`TANGENT_TOL` (round-off at a tangent, as
    at a singular configuration), the tangent root.
    """
    best = -1.0
    phi = 0.0
    for j in range(4):
        ph = 0.5 * math.pi * j + math.pi
        v = abs(
            a0
            + a1 * math.cos(ph)
            + a2 * math.sin(ph)
            + a3 * math.cos(2.0 * ph)
            + a4 * math.sin(2.0 * ph)
        )
        if v > best:
            best = v
            phi = ph - math.pi
    cp = math.cos(phi)
    sp = math.sin(phi)
    c2p = math.cos(2.0 * phi)
    s2p = math.sin(2.0 * phi)
    b1 = a1 * cp + a2 * sp
    b2 = -a1 * sp + a2 * cp
    b3 = a3 * c2p + a4 * s2p
    b4 = -a3 * s2p + a4 * c2p
    n, roots = quartic_roots(
        a0 - b1 + b3, 2.0 * b2 - 4.0 * b4, 2.0 * a0 - 6.0 * b3, 2.0 * b2 + 4.0 * b4, a0 + b1 + b3
    )
    scale_ = abs(a0) + abs(a1) + abs(a2) + abs(a3) + abs(a4)
    cnt = 0
    t0 = t1 = t2 = t3 = 0.0
    for i in range(n):
        z = roots[i]
        t = wrap(2.0 * math.atan(z.real) + phi)
        extra = 0
        te = 0.0
        if abs(z.imag) > 1e-6 * (1.0 + abs(z.real)):
            # a complex pair near the real axis: a tangent (double) root that round-off split,
            # or two close real roots. Move to the extremum of the function nearby (Newton on
            # its derivative), then: below zero, two roots either side; above zero by
            # round-off, the tangent root (a least-squares answer: the callers' gates decide)
            f, f1, f2 = _trig4(a0, a1, a2, a3, a4, t)
            for _ in range(4):
                if f2 == 0.0:
                    break
                t -= f1 / f2
                f, f1, f2 = _trig4(a0, a1, a2, a3, a4, t)
            if abs(f) > TANGENT_TOL * scale_:
                continue
            if f2 != 0.0 and -2.0 * f / f2 > 0.0:
                h = math.sqrt(-2.0 * f / f2)
                te = wrap(t - h)
                t = wrap(t + h)
                extra = 1
            else:
                t = wrap(t)
        for e in range(1 + extra):
            if e == 1:
                t = te
            if (
                (cnt > 0 and abs(wrap(t0 - t)) < 1e-7)
                or (cnt > 1 and abs(wrap(t1 - t)) < 1e-7)
                or (cnt > 2 and abs(wrap(t2 - t)) < 1e-7)
                or cnt > 3
            ):
                continue
            if cnt == 0:
                t0 = t
            elif cnt == 1:
                t1 = t
            elif cnt == 2:
                t2 = t
            else:
                t3 = t
            cnt += 1
    return cnt, (t0, t1, t2, t3)
