# mypy: ignore-errors
"""Pieces of the Warp numerical-IK loop (:mod:`._lm`) outside the portable subset, each the Warp
twin of a CPU kernel (the step, pose error, Cholesky and singularity test are generated from
the CPU source: ``_gen_lm``, ``_gen_dense``).

:func:`uniform` is splitmix64 (``ikstack.ik.numerical._kernels._uniform``) in wrapping 64-bit
unsigned arithmetic, :func:`target_key` the per-target restart seed, :func:`jac_into` the
kinematics layer's ``_jac_into`` (FK and Jacobian, its per-joint pieces generated from the CPU
source: ``_gen_kinematics``). Row ``k`` of caller-owned arrays is one target's scratch.
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._gen_kinematics import joint_column, joint_step, tool_pose
from ikstack.backends.warp._prims import F

INF = wp.constant(wp.float64(float("inf")))
MOD = wp.constant(wp.int64(2147483647))


# ----------------------------------------------------------------------------- restarts
@wp.func
def uniform(state: wp.uint64):
    """splitmix64 (``ikstack.ik.numerical._kernels._uniform``): the next state and a uniform
    draw in [0, 1) (53 bits), in wrapping 64-bit unsigned arithmetic."""
    state = state + wp.uint64(0x9E3779B97F4A7C15)
    z = state
    z = (z ^ (z >> wp.uint64(30))) * wp.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> wp.uint64(27))) * wp.uint64(0x94D049BB133111EB)
    z = z ^ (z >> wp.uint64(31))
    return state, wp.float64(z >> wp.uint64(11)) * F(1.0 / 9007199254740992.0)


@wp.func
def target_key(key: wp.int64, Tt: wp.mat44d):
    """:func:`ikstack.ik.numerical._kernels._target_key` (Python's non-negative modulo)."""
    h = ((key % MOD) + MOD) % MOD
    for r in range(3):
        for c in range(4):
            v = wp.int64(wp.floor(Tt[r, c] * F(1e6)))
            m = ((v % MOD) + MOD) % MOD
            h = (h * wp.int64(1000003) + m) % MOD
    return h


@wp.func
def _clip(x: wp.float64, lo: wp.float64, hi: wp.float64):
    return wp.min(wp.max(x, lo), hi)


@wp.func
def jac_into(
    q: wp.array2d(dtype=wp.float64),
    k: int,
    n: int,
    Rs: wp.array(dtype=wp.mat33d),
    ps: wp.array(dtype=wp.vec3d),
    kinds: wp.array(dtype=wp.int32),
    R_end: wp.mat33d,
    p_end: wp.vec3d,
    J: wp.array3d(dtype=wp.float64),
):
    """``ikstack.kinematics._kernels._jac_into`` at ``q[k]``: the base-frame Jacobian into
    ``J[k]`` and the TCP pose returned as ``(R, p)`` (joint axes and origins wait in ``J``).
    Each joint's step, the TCP and each column are generated from the CPU source."""
    R = wp.identity(n=3, dtype=wp.float64)
    p = wp.vec3d(F(0.0), F(0.0), F(0.0))
    for i in range(n):
        R, p = joint_step(R, p, Rs[i], ps[i], kinds[i], q[k, i])
        for r in range(3):
            J[k, 3 + r, i] = R[r, 2]
            J[k, r, i] = p[r]
    Re, t = tool_pose(R, p, R_end, p_end)
    for i in range(n):
        z = wp.vec3d(J[k, 3, i], J[k, 4, i], J[k, 5, i])
        o = wp.vec3d(J[k, 0, i], J[k, 1, i], J[k, 2, i])
        lin, ang = joint_column(kinds[i], z, o, t)
        for r in range(3):
            J[k, r, i] = lin[r]
            J[k, 3 + r, i] = ang[r]
    return Re, t
