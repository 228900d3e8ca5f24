# mypy: ignore-errors
"""Warp float64 ports of the 6R families' singular-configuration handling
(:mod:`ikstack.ik.analytic._families6`): least-squares subproblem roots kept as tangent
solutions when they miss by round-off only, the free first joint of a spherical-wrist arm whose
wrist point lies on the first axis, and the representative of a singular three-parallel wrist.
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._gen_sp import sp1, sp4
from ikstack.backends.warp._gen_vec import (
    add,
    any_perp,
    dot,
    mm,
    mv,
    norm,
    rot,
    rot_cs,
    rotm,
    scale,
    sub,
    wrap,
)
from ikstack.backends.warp._prims import F
from ikstack.ik.analytic._families6 import SINGULAR_WRIST as _SINGULAR_WRIST
from ikstack.ik.analytic._families6 import TANGENT as _TANGENT

#: a least-squares root whose residual is below this (relative) is a tangent solution
TANGENT = wp.constant(wp.float64(_TANGENT))
#: a three-parallel wrist this close to singular takes :func:`tp_singular`'s representative
SINGULAR_WRIST = wp.constant(wp.float64(_SINGULAR_WRIST))


@wp.func
def sp4_tangent(h: wp.vec3d, p: wp.vec3d, k: wp.vec3d, d: wp.float64, t: wp.float64):
    """Whether subproblem 4's least-squares root ``t`` misses ``h . R(k, t) p = d`` by
    round-off only."""
    return wp.abs(dot(h, rot(k, t, p)) - d) <= TANGENT * wp.max(F(1.0), norm(h) * norm(p))


@wp.func
def sp3_tangent(p1: wp.vec3d, p2: wp.vec3d, k: wp.vec3d, d: wp.float64, t: wp.float64):
    """Whether subproblem 3's least-squares root ``t`` misses ``|R(k, t) p1 - p2| = d`` by
    round-off only."""
    return wp.abs(norm(sub(rot(k, t, p1), p2)) - d) <= TANGENT * wp.max(F(1.0), d)


@wp.func
def sp2_tangent(p1: wp.vec3d, p2: wp.vec3d, k1: wp.vec3d, k2: wp.vec3d, t1: wp.float64,
                t2: wp.float64):
    """Whether subproblem 2's least-squares pair misses ``R(k1, t1) p1 = R(k2, t2) p2`` by
    round-off only."""
    sc = wp.max(wp.max(F(1.0), norm(p1)), norm(p2))
    return norm(sub(rot(k1, t1, p1), rot(k2, t2, p2))) <= TANGENT * sc


@wp.func
def on_first_axis(h0: wp.vec3d, w0: wp.vec3d):
    """Whether the wrist point ``w0`` (from the first joint's origin) lies on the first axis
    up to round-off (joint 1 free)."""
    return norm(sub(w0, scale(h0, dot(h0, w0)))) <= F(1e-9) * wp.max(F(1.0), norm(w0))


@wp.func
def free_joint1(n: int, t0: wp.vec4d, t1: wp.vec4d, t2: wp.vec4d, pW: wp.vec3d, R06: wp.mat33d,
                H: wp.array(dtype=wp.vec3d), P: wp.array(dtype=wp.vec3d), seed4: wp.float64):
    """The CPU ``_free_joint1``: with the wrist point on the first axis, each of at most two
    position solutions gains the member whose joint 1 keeps joint 5 at ``seed4`` (the root of
    subproblem 4 nearest the solution's joint 1). Returns ``(count, t0, t1, t2)``."""
    h0 = H[0]
    w0 = sub(pW, P[0])
    a0 = t0
    a1 = t1
    a2 = t2
    cnt = n
    if n > 0 and n <= 2 and on_first_axis(h0, w0):
        h5 = H[5]
        d = mv(R06, h5)
        c = dot(H[3], rot(H[4], seed4, h5))
        for i in range(n):
            u = mv(mm(rotm(H[1], t1[i]), rotm(H[2], t2[i])), H[3])
            _m, _ls, x0, x1 = sp4(d, u, h0, c)
            x = x1
            if wp.abs(wrap(x0 - t0[i])) <= wp.abs(wrap(x1 - t0[i])):
                x = x0
            a0[cnt] = x
            a1[cnt] = t1[i]
            a2[cnt] = t2[i]
            cnt += 1
    return cnt, a0, a1, a2


@wp.func
def tp_singular(h1: wp.vec3d, h4: wp.vec3d, h5: wp.vec3d, P2: wp.vec3d, P3: wp.vec3d,
                P4: wp.vec3d, P5: wp.vec3d, A: wp.mat33d, w0: wp.vec3d, c4: wp.float64,
                s4: wp.float64, theta0: wp.float64):
    """The CPU ``tp_singular``: ``(q5, theta, cos theta, sin theta, d)`` at a singular wrist,
    the sum ``theta`` nearest ``theta0`` placing the elbow at mid reach."""
    c = add(P4, rot_cs(h4, c4, s4, P5))
    hc = dot(c, h1)
    hw = dot(w0, h1)
    cp = sub(c, scale(h1, hc))
    wq = sub(w0, scale(h1, hw))
    hz = hw - hc
    a2 = dot(P2, h1)
    a3 = dot(P3, h1)
    dmid2 = dot(P2, P2) + dot(P3, P3) + F(2.0) * a2 * a3
    val = F(0.5) * (dot(wq, wq) + dot(cp, cp) + hz * hz - dmid2)
    m, _ls, r0, r1 = sp4(wq, cp, h1, val)
    theta = r0
    if m > 1 and wp.abs(wrap(r1 - theta0)) < wp.abs(wrap(r0 - theta0)):
        theta = r1
    ct = wp.cos(theta)
    st = wp.sin(theta)
    u5 = any_perp(h5)
    q5, _l = sp1(u5, rot_cs(h4, c4, -s4, rot_cs(h1, ct, -st, mv(A, u5))), h5)
    return q5, theta, ct, st, sub(w0, rot_cs(h1, ct, st, c))
