# mypy: ignore-errors
# ruff: noqa
"""GENERATED from ``src/ikstack/kinematics/_kernels.py`` by :mod:`ikstack.backends.warp._translate`:
do not edit; edit the CPU source and run ``python -m ikstack.backends.warp._translate``
(a test fails when this file and its source disagree)."""

import warp as wp

from ikstack.backends.warp._prims import *  # noqa: F403
from ikstack.backends.warp._gen_tuple_math import mm

ROT = wp.constant(0)


@wp.func
def joint_step(R: wp.mat33d, p: wp.vec3d, A: wp.mat33d, b: wp.vec3d, kind: int, qi: wp.float64):
    """The frame ``(R, p)`` (a row-major 9-tuple and a 3-tuple) carried through one joint:
    to the joint (``p + R b``, ``R A``; ``A``, ``b`` the joint's canonical data as tuples),
    then by its value ``qi`` (a revolute joint turns columns 0 and 1 about column 2, a
    prismatic one moves along column 2). The joint's axis is column 2 of the result; a
    revolute joint's origin is its ``p``."""
    c = F(0.0)
    s = F(0.0)
    p0 = p[0] + R[0, 0] * b[0] + R[0, 1] * b[1] + R[0, 2] * b[2]
    p1 = p[1] + R[1, 0] * b[0] + R[1, 1] * b[1] + R[1, 2] * b[2]
    p2 = p[2] + R[2, 0] * b[0] + R[2, 1] * b[1] + R[2, 2] * b[2]
    r00 = R[0, 0] * A[0, 0] + R[0, 1] * A[1, 0] + R[0, 2] * A[2, 0]
    r01 = R[0, 0] * A[0, 1] + R[0, 1] * A[1, 1] + R[0, 2] * A[2, 1]
    r02 = R[0, 0] * A[0, 2] + R[0, 1] * A[1, 2] + R[0, 2] * A[2, 2]
    r10 = R[1, 0] * A[0, 0] + R[1, 1] * A[1, 0] + R[1, 2] * A[2, 0]
    r11 = R[1, 0] * A[0, 1] + R[1, 1] * A[1, 1] + R[1, 2] * A[2, 1]
    r12 = R[1, 0] * A[0, 2] + R[1, 1] * A[1, 2] + R[1, 2] * A[2, 2]
    r20 = R[2, 0] * A[0, 0] + R[2, 1] * A[1, 0] + R[2, 2] * A[2, 0]
    r21 = R[2, 0] * A[0, 1] + R[2, 1] * A[1, 1] + R[2, 2] * A[2, 1]
    r22 = R[2, 0] * A[0, 2] + R[2, 1] * A[1, 2] + R[2, 2] * A[2, 2]
    if kind == ROT:
        c = wp.cos(qi)
        s = wp.sin(qi)
        r00_new = c * r00 + s * r01
        r01_new = -s * r00 + c * r01
        r00 = r00_new
        r01 = r01_new
        r10_new = c * r10 + s * r11
        r11_new = -s * r10 + c * r11
        r10 = r10_new
        r11 = r11_new
        r20_new = c * r20 + s * r21
        r21_new = -s * r20 + c * r21
        r20 = r20_new
        r21 = r21_new
    else:
        p0 = p0 + r02 * qi
        p1 = p1 + r12 * qi
        p2 = p2 + r22 * qi
    return wp.mat33d(r00, r01, r02, r10, r11, r12, r20, r21, r22), wp.vec3d(p0, p1, p2)


@wp.func
def tool_pose(R: wp.mat33d, p: wp.vec3d, E: wp.mat33d, f: wp.vec3d):
    """The frame ``(R, p)`` followed by the fixed transform ``(E, f)`` (the TCP after the last
    joint): ``(R E, p + R f)`` as a 9-tuple and a 3-tuple."""
    t0 = p[0] + R[0, 0] * f[0] + R[0, 1] * f[1] + R[0, 2] * f[2]
    t1 = p[1] + R[1, 0] * f[0] + R[1, 1] * f[1] + R[1, 2] * f[2]
    t2 = p[2] + R[2, 0] * f[0] + R[2, 1] * f[1] + R[2, 2] * f[2]
    return mm(R, E), wp.vec3d(t0, t1, t2)


@wp.func
def joint_column(kind: int, z: wp.vec3d, o: wp.vec3d, t: wp.vec3d):
    """One column of the base-frame geometric Jacobian at the TCP position ``t``, from the
    joint's axis ``z`` and origin ``o``: ``(linear, angular)`` 3-tuples (``z x (t - o)`` and
    ``z`` for a revolute joint, ``z`` and zero for a prismatic one)."""
    dx = F(0.0)
    dy = F(0.0)
    dz = F(0.0)
    if kind == ROT:
        dx = t[0] - o[0]
        dy = t[1] - o[1]
        dz = t[2] - o[2]
        return wp.vec3d(z[1] * dz - z[2] * dy, z[2] * dx - z[0] * dz, z[0] * dy - z[1] * dx), z
    return z, wp.vec3d(F(0.0), F(0.0), F(0.0))


@wp.func
def _chain_pose(q: wp.array(dtype=wp.float64), Rs: wp.array(dtype=wp.mat33d), ps: wp.array(dtype=wp.vec3d), kinds: wp.array(dtype=wp.int32)):
    """The frame after the last joint, ``(R, p)`` as tuples."""
    R = wp.mat33d(F(1.0), F(0.0), F(0.0), F(0.0), F(1.0), F(0.0), F(0.0), F(0.0), F(1.0))
    p = wp.vec3d(F(0.0), F(0.0), F(0.0))
    for i in range(Rs.shape[0]):
        R, p = joint_step(R, p, Rs[i], ps[i], kinds[i], q[i])
    return R, p


@wp.func
def _store(R: wp.mat33d, p: wp.vec3d, out: wp.array2d(dtype=wp.float64)):
    """The pose ``(R, p)`` (tuples) into the (4, 4) ``out``."""
    out[0, 0] = R[0, 0]
    out[0, 1] = R[0, 1]
    out[0, 2] = R[0, 2]
    out[0, 3] = p[0]
    out[1, 0] = R[1, 0]
    out[1, 1] = R[1, 1]
    out[1, 2] = R[1, 2]
    out[1, 3] = p[1]
    out[2, 0] = R[2, 0]
    out[2, 1] = R[2, 1]
    out[2, 2] = R[2, 2]
    out[2, 3] = p[2]
    out[3, 0] = F(0.0)
    out[3, 1] = F(0.0)
    out[3, 2] = F(0.0)
    out[3, 3] = F(1.0)


@wp.func
def _finish(R: wp.mat33d, p: wp.vec3d, R_end: wp.mat33d, p_end: wp.vec3d, out: wp.array2d(dtype=wp.float64)):
    """The TCP of the frame ``(R, p)`` (tuples) and the (3, 3), (3,) arrays of the fixed end
    transform into ``out``."""
    E = wp.mat33d(R_end[0, 0], R_end[0, 1], R_end[0, 2], R_end[1, 0], R_end[1, 1], R_end[1, 2], R_end[2, 0], R_end[2, 1], R_end[2, 2])
    Rt, pt = tool_pose(R, p, E, wp.vec3d(p_end[0], p_end[1], p_end[2]))
    _store(Rt, pt, out)


@wp.func
def fk_one(q: wp.array(dtype=wp.float64), Rs: wp.array(dtype=wp.mat33d), ps: wp.array(dtype=wp.vec3d), kinds: wp.array(dtype=wp.int32), R_end: wp.mat33d, p_end: wp.vec3d, out: wp.array2d(dtype=wp.float64)):
    """FK of one configuration into ``out``; returns False (computing nothing) if q is not
    finite."""
    for _k1 in range(q.shape[0]):
        v = q[_k1]
        if not wp.isfinite(v):
            return False
    R, p = _chain_pose(q, Rs, ps, kinds)
    _finish(R, p, R_end, p_end, out)
    return True


@wp.func
def _jac_into(q: wp.array(dtype=wp.float64), Rs: wp.array(dtype=wp.mat33d), ps: wp.array(dtype=wp.vec3d), kinds: wp.array(dtype=wp.int32), R_end: wp.mat33d, p_end: wp.vec3d, J: wp.array2d(dtype=wp.float64), T: wp.array2d(dtype=wp.float64)):
    """FK into ``T`` and the base-frame geometric Jacobian into ``J (6, n)``; allocates nothing
    (the running frame lives in tuples; joint axes and origins wait in ``J``'s columns)."""
    n = Rs.shape[0]
    R = wp.mat33d(F(1.0), F(0.0), F(0.0), F(0.0), F(1.0), F(0.0), F(0.0), F(0.0), F(1.0))
    p = wp.vec3d(F(0.0), F(0.0), F(0.0))
    for i in range(n):
        R, p = joint_step(R, p, Rs[i], ps[i], kinds[i], q[i])
        J[3, i] = R[0, 2]
        J[4, i] = R[1, 2]
        J[5, i] = R[2, 2]
        J[0, i] = p[0]
        J[1, i] = p[1]
        J[2, i] = p[2]
    _finish(R, p, R_end, p_end, T)
    t = wp.vec3d(T[0, 3], T[1, 3], T[2, 3])
    for i in range(n):
        lin, ang = joint_column(kinds[i], wp.vec3d(J[3, i], J[4, i], J[5, i]), wp.vec3d(J[0, i], J[1, i], J[2, i]), t)
        J[0, i] = lin[0]
        J[1, i] = lin[1]
        J[2, i] = lin[2]
        J[3, i] = ang[0]
        J[4, i] = ang[1]
        J[5, i] = ang[2]


@wp.func
def jac_one(q: wp.array(dtype=wp.float64), Rs: wp.array(dtype=wp.mat33d), ps: wp.array(dtype=wp.vec3d), kinds: wp.array(dtype=wp.int32), R_end: wp.mat33d, p_end: wp.vec3d, J: wp.array2d(dtype=wp.float64), T: wp.array2d(dtype=wp.float64)):
    """Jacobian and FK of one configuration; returns False (computing nothing) if q is not
    finite."""
    for _k1 in range(q.shape[0]):
        v = q[_k1]
        if not wp.isfinite(v):
            return False
    _jac_into(q, Rs, ps, kinds, R_end, p_end, J, T)
    return True
