# mypy: ignore-errors
"""Pieces of the Warp numerical-IK loop (:mod:`._lm`) outside the portable subset, each the Warp
twin of a CPU kernel (the step, pose error, Cholesky and singularity test are generated from
the CPU source: ``_gen_lm``, ``_gen_dense``).

:func:`uniform` is splitmix64 (``ikstack.ik.numerical._kernels._uniform``) in wrapping 64-bit
unsigned arithmetic, :func:`target_key` the per-target restart seed. Row ``k`` of caller-owned
arrays is one target's scratch. (FK and the Jacobian are the kinematics layer's, generated from
the CPU source: ``_gen_kinematics._jac_into``.)
"""

from __future__ import annotations

import warp as wp

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
