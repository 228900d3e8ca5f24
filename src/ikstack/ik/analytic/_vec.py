"""Scalar 3-vector and polynomial helpers for the compiled analytic kernels.

Every function is ``njit(cache=True)`` and works on small float64 arrays; with
``NUMBA_DISABLE_JIT=1`` they run as plain Python.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def dot(a, b):  # pragma: no cover - compiled
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@njit(cache=True, inline="always")
def cross(a, b):  # pragma: no cover - compiled
    out = np.empty(3)
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


@njit(cache=True, inline="always")
def norm(a):  # pragma: no cover - compiled
    return math.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@njit(cache=True, inline="always")
def rot(k, t, p):  # pragma: no cover - compiled
    """``R(k, t) @ p`` by Rodrigues' formula (``k`` unit)."""
    c = math.cos(t)
    s = math.sin(t)
    kp = k[0] * p[0] + k[1] * p[1] + k[2] * p[2]
    out = np.empty(3)
    out[0] = p[0] * c + (k[1] * p[2] - k[2] * p[1]) * s + k[0] * kp * (1.0 - c)
    out[1] = p[1] * c + (k[2] * p[0] - k[0] * p[2]) * s + k[1] * kp * (1.0 - c)
    out[2] = p[2] * c + (k[0] * p[1] - k[1] * p[0]) * s + k[2] * kp * (1.0 - c)
    return out


@njit(cache=True, inline="always")
def rotm(k, t):  # pragma: no cover - compiled
    """The 3x3 rotation ``R(k, t)`` (``k`` unit)."""
    c = math.cos(t)
    s = math.sin(t)
    v = 1.0 - c
    R = np.empty((3, 3))
    R[0, 0] = c + k[0] * k[0] * v
    R[0, 1] = k[0] * k[1] * v - k[2] * s
    R[0, 2] = k[0] * k[2] * v + k[1] * s
    R[1, 0] = k[1] * k[0] * v + k[2] * s
    R[1, 1] = c + k[1] * k[1] * v
    R[1, 2] = k[1] * k[2] * v - k[0] * s
    R[2, 0] = k[2] * k[0] * v - k[1] * s
    R[2, 1] = k[2] * k[1] * v + k[0] * s
    R[2, 2] = c + k[2] * k[2] * v
    return R


@njit(cache=True, inline="always")
def matvec(R, p):  # pragma: no cover - compiled
    out = np.empty(3)
    for i in range(3):
        out[i] = R[i, 0] * p[0] + R[i, 1] * p[1] + R[i, 2] * p[2]
    return out


@njit(cache=True, inline="always")
def matTvec(R, p):  # pragma: no cover - compiled
    out = np.empty(3)
    for i in range(3):
        out[i] = R[0, i] * p[0] + R[1, i] * p[1] + R[2, i] * p[2]
    return out


@njit(cache=True, inline="always")
def matmul(A, B):  # pragma: no cover - compiled
    C = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            C[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]
    return C


@njit(cache=True, inline="always")
def matTmul(A, B):  # pragma: no cover - compiled
    """``A.T @ B``."""
    C = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            C[i, j] = A[0, i] * B[0, j] + A[1, i] * B[1, j] + A[2, i] * B[2, j]
    return C


@njit(cache=True, inline="always")
def wrap(a):  # pragma: no cover - compiled
    """Angle wrapped to ``(-pi, pi]``."""
    return a - 2.0 * math.pi * math.floor((a + math.pi) / (2.0 * math.pi))


@njit(cache=True, inline="always")
def any_perp(k):  # pragma: no cover - compiled
    """A unit vector perpendicular to unit ``k``."""
    if abs(k[0]) < 0.9:
        e = np.array([1.0, 0.0, 0.0])
    else:
        e = np.array([0.0, 1.0, 0.0])
    v = cross(k, e)
    n = norm(v)
    return v / n


# ----------------------------------------------------------------------------- polynomials
@njit(cache=True)
def _cbrt(z):  # pragma: no cover - compiled
    if z == 0:
        return 0j
    return z ** (1.0 / 3.0)


@njit(cache=True)
def quartic_roots(c4, c3, c2, c1, c0, out):  # pragma: no cover - compiled
    """Complex roots of ``c4 z^4 + ... + c0`` into ``out`` (4,); returns the root count.

    Ferrari's method in complex arithmetic followed by two Newton polishes on the original
    polynomial. Lower-degree polynomials (``c4`` negligible) are handled by their own formula.
    """
    scale = max(abs(c4), abs(c3), abs(c2), abs(c1), abs(c0))
    if scale == 0.0:
        return 0
    if abs(c4) <= 1e-13 * scale:
        # cubic or lower: companion-free fallback via the quadratic/cubic formulas
        if abs(c3) <= 1e-13 * scale:
            if abs(c2) <= 1e-13 * scale:
                if abs(c1) <= 1e-13 * scale:
                    return 0
                out[0] = complex(-c0 / c1)
                return 1
            disc = complex(c1 * c1 - 4.0 * c2 * c0) ** 0.5
            out[0] = (-c1 + disc) / (2.0 * c2)
            out[1] = (-c1 - disc) / (2.0 * c2)
            return 2
        n = _cubic_roots(c2 / c3, c1 / c3, c0 / c3, out)
        return n
    b = c3 / c4
    c = c2 / c4
    d = c1 / c4
    e = c0 / c4
    # depressed quartic y^4 + p y^2 + q y + r with z = y - b/4
    b2 = b * b
    p = c - 3.0 * b2 / 8.0
    q = d - b * c / 2.0 + b2 * b / 8.0
    r = e - b * d / 4.0 + b2 * c / 16.0 - 3.0 * b2 * b2 / 256.0
    sh = -b / 4.0
    if abs(q) < 1e-14 * max(1.0, abs(p), abs(r)):
        disc = complex(p * p - 4.0 * r) ** 0.5
        w1 = (-p + disc) / 2.0
        w2 = (-p - disc) / 2.0
        s1 = w1 ** 0.5
        s2 = w2 ** 0.5
        out[0] = s1 + sh
        out[1] = -s1 + sh
        out[2] = s2 + sh
        out[3] = -s2 + sh
    else:
        # resolvent cubic m^3 + p m^2 + (p^2/4 - r) m - q^2/8 = 0: pick the root of largest |m|
        cub = np.empty(3, dtype=np.complex128)
        _cubic_roots(p, p * p / 4.0 - r, -q * q / 8.0, cub)
        m = cub[0]
        for i in range(1, 3):
            if abs(cub[i]) > abs(m):
                m = cub[i]
        s = (2.0 * m) ** 0.5
        t = q / (2.0 * s)
        # y^2 - s y + (p/2 + m + t) = 0 and y^2 + s y + (p/2 + m - t) = 0
        d1 = (s * s - 4.0 * (p / 2.0 + m + t)) ** 0.5
        d2 = (s * s - 4.0 * (p / 2.0 + m - t)) ** 0.5
        out[0] = (s + d1) / 2.0 + sh
        out[1] = (s - d1) / 2.0 + sh
        out[2] = (-s + d2) / 2.0 + sh
        out[3] = (-s - d2) / 2.0 + sh
    for i in range(4):
        z = out[i]
        for _ in range(2):
            f = (((c4 * z + c3) * z + c2) * z + c1) * z + c0
            df = ((4.0 * c4 * z + 3.0 * c3) * z + 2.0 * c2) * z + c1
            if df == 0:
                break
            z = z - f / df
        out[i] = z
    return 4


@njit(cache=True)
def _cubic_roots(a, b, c, out):  # pragma: no cover - compiled
    """Complex roots of ``m^3 + a m^2 + b m + c`` (Cardano, complex) into ``out[:3]``."""
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
    for k in range(3):
        uk = u
        if k == 1:
            uk = u * w
        elif k == 2:
            uk = u * w * w
        if abs(uk) < 1e-300:
            y = 0j
        else:
            y = uk - p / (3.0 * uk)
        out[k] = y - a / 3.0
    return 3


@njit(cache=True)
def trig_quartic(a0, a1, a2, a3, a4, out):  # pragma: no cover - compiled
    """Real roots ``t`` of ``a0 + a1 cos t + a2 sin t + a3 cos 2t + a4 sin 2t = 0``.

    Writes up to 4 angles into ``out`` and returns their count. The tangent half-angle
    substitution is taken about a shifted origin ``phi`` chosen so no root sits at infinity.
    Roots closer than 1e-7 rad merge.
    """
    best = -1.0
    phi = 0.0
    for j in range(4):
        ph = 0.5 * math.pi * j
        v = abs(a0 + a1 * math.cos(ph + math.pi) + a2 * math.sin(ph + math.pi)
                + a3 * math.cos(2.0 * (ph + math.pi)) + a4 * math.sin(2.0 * (ph + math.pi)))
        if v > best:
            best = v
            phi = ph
    cp = math.cos(phi)
    sp = math.sin(phi)
    c2p = math.cos(2.0 * phi)
    s2p = math.sin(2.0 * phi)
    b1 = a1 * cp + a2 * sp
    b2 = -a1 * sp + a2 * cp
    b3 = a3 * c2p + a4 * s2p
    b4 = -a3 * s2p + a4 * c2p
    roots = np.empty(4, dtype=np.complex128)
    n = quartic_roots(a0 - b1 + b3, 2.0 * b2 - 4.0 * b4, 2.0 * a0 - 6.0 * b3,
                      2.0 * b2 + 4.0 * b4, a0 + b1 + b3, roots)
    scale = abs(a0) + abs(a1) + abs(a2) + abs(a3) + abs(a4)
    cnt = 0
    for i in range(n):
        z = roots[i]
        if abs(z.imag) > 1e-6 * (1.0 + abs(z.real)):
            # near-tangent roots: accept if the real part nearly satisfies the equation
            t = 2.0 * math.atan(z.real) + phi
            f = (a0 + a1 * math.cos(t) + a2 * math.sin(t) + a3 * math.cos(2.0 * t)
                 + a4 * math.sin(2.0 * t))
            if abs(f) > 1e-9 * scale:
                continue
        t = wrap(2.0 * math.atan(z.real) + phi)
        dup = False
        for j in range(cnt):
            if abs(wrap(out[j] - t)) < 1e-7:
                dup = True
                break
        if not dup:
            out[cnt] = t
            cnt += 1
    return cnt
