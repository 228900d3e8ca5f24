# mypy: ignore-errors
"""The hand-written pieces of the Warp numerical-IK kernel (:mod:`._lm`): the per-target
restart seed :func:`target_key` (``ikstack.ik.numerical._kernels._target_key``: signed 64-bit
arithmetic with Python's modulo, outside the translator's subset) and the clock hook of the
search generated from the CPU source (``_gen_lm._solve_one``; its splitmix64 draws are
generated too, ``_gen_splitmix``).
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._prims import F

MOD = wp.constant(wp.int64(2147483647))


# ----------------------------------------------------------------------------- restarts
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


# ----------------------------------------------------------------------------- hooks
@wp.func
def _now():
    """The clock of the generated search (``_gen_lm._solve_one``): none on the device, where a
    time budget is refused before launch."""
    return F(0.0)
