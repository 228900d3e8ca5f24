# mypy: ignore-errors
# ruff: noqa
"""GENERATED from ``src/ikstack/ik/analytic/_srs.py`` by :mod:`ikstack.backends.warp._translate`:
do not edit; edit the CPU source and run ``python -m ikstack.backends.warp._translate``
(a test fails when this file and its source disagree)."""

import warp as wp

from ikstack.backends.warp._prims import *  # noqa: F403
from ikstack.backends.warp._gen_tuple_math import add, any_perp, cross, dot, mT, mm, mv, norm, rot, rotm, scale, sub, wrap



@wp.func
def _frame(what: wp.vec3d):
    ref = wp.vec3d()
    if wp.abs(what[2]) < F(0.99):
        ref = wp.vec3d(F(0.0), F(0.0), F(1.0))
    else:
        ref = wp.vec3d(F(1.0), F(0.0), F(0.0))
    e1 = sub(ref, scale(what, dot(ref, what)))
    e1 = scale(e1, F(1.0) / norm(e1))
    return e1, cross(what, e1)


@wp.func
def _wrist_dir(Rt: wp.mat33d, pt: wp.vec3d, Sp: wp.vec3d, p7T: wp.vec3d, R7T: wp.mat33d):
    R07 = mm(Rt, mT(R7T))
    w = sub(sub(pt, mv(R07, p7T)), Sp)
    dw = norm(w)
    what = wp.where(dw > F(1e-12), scale(w, F(1.0) / dw), wp.vec3d(F(0.0), F(0.0), F(1.0)))
    return R07, dw, what


@wp.func
def _elbow_frame(q3: wp.float64, h3: wp.vec3d, pS3: wp.vec3d, p3W: wp.vec3d, what: wp.vec3d, e1: wp.vec3d, e2: wp.vec3d):
    """``(R0, psi0)``: the shoulder rotation at swivel ``psi0`` for elbow angle ``q3``."""
    R0 = wp.mat33d()
    v = add(pS3, rot(h3, q3, p3W))
    nv = norm(v)
    vhat = wp.where(nv > F(1e-12), scale(v, F(1.0) / nv), what)
    ax = cross(vhat, what)
    sn = norm(ax)
    cs = dot(vhat, what)
    if sn > F(1e-12):
        R0 = rotm(scale(ax, F(1.0) / sn), wp.atan2(sn, cs))
    elif cs > F(0.0):
        R0 = wp.mat33d(F(1.0), F(0.0), F(0.0), F(0.0), F(1.0), F(0.0), F(0.0), F(0.0), F(1.0))
    else:
        R0 = rotm(any_perp(vhat), F(3.141592653589793))
    e0 = mv(R0, pS3)
    return R0, wp.atan2(dot(e0, e2), dot(e0, e1))


@wp.func
def _swivel_roots(what: wp.vec3d, R0: wp.mat33d, psi0: wp.float64, x: wp.vec3d, y: wp.vec3d, target: wp.float64, out: wp.array(dtype=wp.float64), cnt: int):
    """Append to ``out`` the swivels where ``x . R(what, psi - psi0) R0 y = target`` (<= 2)."""
    z = mv(R0, y)
    xw = dot(x, what)
    wz = dot(what, z)
    c0 = xw * wz
    sn = dot(x, cross(what, z))
    cs = dot(x, z) - xw * wz
    amp2 = sn * sn + cs * cs
    b = target - c0
    if amp2 < F(1e-24) or b * b > amp2:
        return cnt
    r = wp.sqrt(amp2 - b * b)
    for _k1 in range(2):
        sign = wp.where(_k1 == 0, F(1.0), F(-1.0))
        phi = wp.atan2(sn * b + sign * cs * r, cs * b - sign * sn * r)
        if cnt < out.shape[0]:
            out[cnt] = wrap(phi + psi0)
            cnt = cnt + 1
    return cnt
