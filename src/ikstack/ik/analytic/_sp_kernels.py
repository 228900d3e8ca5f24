"""Compiled scalar kernels of the IK-Geo subproblems 1-6 (Elias and Wen, arXiv 2211.05737).

``R(k, t) p`` is the rotation of ``p`` by angle ``t`` about the unit axis ``k``. Every kernel
writes its angles into caller-provided arrays and returns the count (and, for 1-4, whether the
answer is a least-squares one). Public batched wrappers live in :mod:`.subproblems`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ikstack.ik.analytic._vec import cross, dot, norm, rot, trig_quartic, wrap

#: relative tolerance below which a subproblem counts as exactly solvable
LS_TOL = 1e-8


@njit(cache=True)
def sp1(p1, p2, k):  # pragma: no cover - compiled
    """``t`` minimising ``|R(k, t) p1 - p2|``; returns ``(t, is_ls)``."""
    kxp = cross(k, p1)
    kxkxp = cross(k, kxp)
    x0 = dot(kxp, p2)
    x1 = -dot(kxkxp, p2)
    t = math.atan2(x0, x1)
    scale = max(1.0, norm(p1), norm(p2))
    ls = (abs(norm(p1) - norm(p2)) > LS_TOL * scale
          or abs(dot(k, p1) - dot(k, p2)) > LS_TOL * scale
          or math.hypot(x0, x1) < 1e-14 * scale * scale)
    return t, ls


@njit(cache=True)
def sp4(h, p, k, d, out):  # pragma: no cover - compiled
    """``t`` with ``h . R(k, t) p = d`` (``h`` need not be unit): up to 2 angles, or 1 LS."""
    kxp = cross(k, p)
    a0 = dot(h, kxp)  # sin coefficient
    a1 = dot(h, p) - dot(h, k) * dot(k, p)  # cos coefficient
    b = d - dot(h, k) * dot(k, p)
    na = a0 * a0 + a1 * a1
    scale = max(1.0, norm(h) * norm(p))
    if na < 1e-28 * scale * scale:
        out[0] = 0.0
        return 1, True
    if b * b > na * (1.0 + 2.0 * LS_TOL):
        out[0] = math.atan2(a0 * b, a1 * b) if b != 0.0 else math.atan2(a0, a1)
        return 1, True
    if b * b >= na:
        out[0] = math.atan2(a0 * b, a1 * b)
        return 1, False
    r = math.sqrt(na - b * b)
    # x = (a b +- J a r) / na, J a = (a1, -a0)
    out[0] = math.atan2(a0 * b + a1 * r, a1 * b - a0 * r)
    out[1] = math.atan2(a0 * b - a1 * r, a1 * b + a0 * r)
    return 2, False


@njit(cache=True)
def sp3(p1, p2, k, d, out):  # pragma: no cover - compiled
    """``t`` with ``|R(k, t) p1 - p2| = d``: up to 2 angles, or 1 LS."""
    # |R p1 - p2|^2 = |p1|^2 + |p2|^2 - 2 p2 . R p1
    rhs = 0.5 * (dot(p1, p1) + dot(p2, p2) - d * d)
    return sp4(p2, p1, k, rhs, out)


@njit(cache=True)
def sp2(p1, p2, k1, k2, t1, t2):  # pragma: no cover - compiled
    """``(t1, t2)`` with ``R(k1, t1) p1 = R(k2, t2) p2``: up to 2 pairs, or 1 LS pair."""
    n1 = norm(p1)
    n2 = norm(p2)
    scale = max(1.0, n1, n2)
    ls_norm = abs(n1 - n2) > LS_TOL * scale
    if n1 < 1e-14 or n2 < 1e-14:
        t1[0] = 0.0
        t2[0] = 0.0
        return 1, ls_norm
    q1 = p1 / n1
    q2 = p2 / n2
    # k2 . R(k1, t1) q1 = k2 . q2 (the component along k2 is unchanged by R(k2, t2))
    cnt, ls = sp4(k2, q1, k1, dot(k2, q2), t1)
    for i in range(cnt):
        v = rot(k1, t1[i], q1)
        t2[i], _ = sp1(q2, v, k2)
    if cnt == 2 and abs(wrap(t1[0] - t1[1])) < 1e-12 and abs(wrap(t2[0] - t2[1])) < 1e-12:
        cnt = 1
    return cnt, ls or ls_norm


@njit(cache=True)
def _sp6_terms(h, k, p):  # pragma: no cover - compiled
    # h . R(k, t) p = const + s_coef sin t + c_coef cos t
    hk = dot(h, k)
    kp = dot(k, p)
    return hk * kp, dot(h, cross(k, p)), dot(h, p) - hk * kp


@njit(cache=True)
def sp6(h1, h2, h3, h4, k1, k2, k3, k4, p1, p2, p3, p4, d1, d2, t1, t2):  # pragma: no cover
    """``(t1, t2)`` with ``h1.R(k1,t1)p1 + h2.R(k2,t2)p2 = d1`` and
    ``h3.R(k3,t1)p3 + h4.R(k4,t2)p4 = d2``: up to 4 exact pairs (count returned)."""
    c1, a1s, a1c = _sp6_terms(h1, k1, p1)
    c2, b1s, b1c = _sp6_terms(h2, k2, p2)
    c3, a2s, a2c = _sp6_terms(h3, k3, p3)
    c4, b2s, b2c = _sp6_terms(h4, k4, p4)
    e1 = d1 - c1 - c2
    e2 = d2 - c3 - c4
    detA = a1s * a2c - a1c * a2s
    detB = b1s * b2c - b1c * b2s
    nA = a1s * a1s + a1c * a1c + a2s * a2s + a2c * a2c + 1e-300
    nB = b1s * b1s + b1c * b1c + b2s * b2s + b2c * b2c + 1e-300
    swap = abs(detA) / nA > abs(detB) / nB
    if swap:
        # solve for x1 in terms of x2: x1 = A^-1 (e - B x2)
        det = detA
        m00, m01, m10, m11 = a2c / det, -a1c / det, -a2s / det, a1s / det
        os, oc, ps, pc = b1s, b1c, b2s, b2c
    else:
        det = detB
        m00, m01, m10, m11 = b2c / det, -b1c / det, -b2s / det, b1s / det
        os, oc, ps, pc = a1s, a1c, a2s, a2c
    if det == 0.0:
        return 0
    # x_solved = u + M x_free,  u = Minv e, M = -Minv [[os, oc], [ps, pc]]
    u0 = m00 * e1 + m01 * e2
    u1 = m10 * e1 + m11 * e2
    M00 = -(m00 * os + m01 * ps)
    M01 = -(m00 * oc + m01 * pc)
    M10 = -(m10 * os + m11 * ps)
    M11 = -(m10 * oc + m11 * pc)
    # |u + M [s, c]|^2 - 1 = 0 -> a0 + a1 cos + a2 sin + a3 cos2 + a4 sin2
    Mtu0 = M00 * u0 + M10 * u1
    Mtu1 = M01 * u0 + M11 * u1
    Q00 = M00 * M00 + M10 * M10
    Q01 = M00 * M01 + M10 * M11
    Q11 = M01 * M01 + M11 * M11
    roots = np.empty(4)
    n = trig_quartic(u0 * u0 + u1 * u1 - 1.0 + 0.5 * (Q00 + Q11), 2.0 * Mtu1, 2.0 * Mtu0,
                     0.5 * (Q11 - Q00), Q01, roots)
    for i in range(n):
        s = math.sin(roots[i])
        c = math.cos(roots[i])
        xs = u0 + M00 * s + M01 * c
        xc = u1 + M10 * s + M11 * c
        other = math.atan2(xs, xc)
        if swap:
            t2[i] = roots[i]
            t1[i] = other
        else:
            t1[i] = roots[i]
            t2[i] = other
    return n


@njit(cache=True)
def sp5(p0, p1, p2, p3, k1, k2, k3, t1, t2, t3):  # pragma: no cover - compiled
    """``(t1, t2, t3)`` with ``p0 + R(k1,t1) p1 = R(k2,t2) (p2 + R(k3,t3) p3)``: up to 4.

    The component along ``k2`` and the squared norm of both sides do not depend on ``t2``;
    they give a subproblem-6 system in ``(t1, t3)``, and subproblem 1 then gives ``t2``.
    """
    rhs2 = 0.5 * (dot(p2, p2) + dot(p3, p3) - dot(p0, p0) - dot(p1, p1))
    m3 = -p3
    a = np.empty(4)
    b = np.empty(4)
    n = sp6(k2, k2, p0, p2, k1, k3, k1, k3, p1, m3, p1, m3, dot(k2, p2) - dot(k2, p0), rhs2,
            a, b)
    cnt = 0
    scale = max(1.0, norm(p0) + norm(p1), norm(p2) + norm(p3))
    for i in range(n):
        v1 = p0 + rot(k1, a[i], p1)
        v3 = p2 + rot(k3, b[i], p3)
        t, _ = sp1(v3, v1, k2)
        if norm(rot(k2, t, v3) - v1) > 1e-6 * scale:
            continue
        t1[cnt] = a[i]
        t2[cnt] = t
        t3[cnt] = b[i]
        cnt += 1
    return cnt
