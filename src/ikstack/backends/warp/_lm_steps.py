# mypy: ignore-errors
"""The hand-written pieces of the Warp numerical-IK kernel (:mod:`._lm`): the per-target
restart seed and the device hooks of the search generated from the CPU source
(``_gen_lm._solve_one``).

:func:`target_key` is the seed (``ikstack.ik.numerical._kernels._target_key``: signed 64-bit
arithmetic with Python's modulo, outside the translator's subset). The hooks: the restart
draws (``_seed_draws``, ``_draw_restart``: the CPU's context is a (1,) uint64 array, the
device's a row of :class:`Draws`; their splitmix64 step is generated from the CPU source,
``_gen_splitmix.uniform``) and the clock (``_now``: the device takes no time budget).
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._gen_splitmix import uniform
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
# the device's own steps of the generated search (``_gen_lm._solve_one``): its restart draws
# (the CPU's ``_seed_draws`` / ``_draw_restart``, whose context is a (1,) uint64 array there
# and a row of :class:`Draws` here) and its clock (no time budget on the device)
@wp.struct
class Draws:
    """The restart draws' splitmix64 state, one a thread (``dev(Draws)``)."""

    state: wp.array(dtype=wp.uint64)


@wp.func
def _seed_draws(rng: Draws, rng_row: int, key: int):
    rng.state[rng_row] = wp.uint64(key)


@wp.func
def _draw_restart(
    rng: Draws,
    rng_row: int,
    slo: wp.array(dtype=wp.float64),
    shi: wp.array(dtype=wp.float64),
    q: wp.array(dtype=wp.float64),
):
    state = rng.state[rng_row]
    for i in range(q.shape[0]):
        state, u = uniform(state)
        q[i] = slo[i] + (shi[i] - slo[i]) * u
    rng.state[rng_row] = state


@wp.func
def _now():
    """The device has no clock here: a time budget is refused before launch."""
    return F(0.0)
