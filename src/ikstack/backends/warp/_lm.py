# mypy: ignore-errors
"""The Warp numerical-IK kernel: one thread a target runs the CPU path's search
(:func:`ikstack.ik.numerical._kernels._solve_one`), generated from the CPU source
(``_gen_lm._solve_one``: the seeded search, then random restarts drawn uniformly within the
limits from the same per-target splitmix64 stream, so a restart starts from the same
configuration as on the CPU; the damped step, pose error, stall rule, move and failure codes;
the per-target restart seed, ``_gen_lm._target_key``). Written here: the kernel and, in
:mod:`._lm_steps`, the generated search's clock hook (none: the device takes no time
budget). Per-target scratch is the CPU path's scratch record with a row a target
(:data:`ikstack.backends.warp._structs.SCRATCH_ROWS_T`; Warp threads have no dynamic local
arrays).
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._gen_lm import _solve_one, _target_key
from ikstack.backends.warp._structs import CHAIN_T, CONSTRAINTS_T, LM_T, SCRATCH_ROWS_T

__all__ = ["Found", "lm_kernel"]

Chain = CHAIN_T.type
Constraints = CONSTRAINTS_T.type
#: the search's settings (the CPU record's fields)
Settings = LM_T.type
#: the search's scratch, a row a target (the CPU record's fields)
Work = SCRATCH_ROWS_T.type


@wp.struct
class Found:
    """What comes back, one a target: the answer, its code, iterations and restarts."""

    q: wp.array2d(dtype=wp.float64)
    codes: wp.array(dtype=wp.int32)
    iters: wp.array(dtype=wp.int32)
    restarts: wp.array(dtype=wp.int32)


@wp.kernel
def lm_kernel(
    T: wp.array(dtype=wp.mat44d),
    Q0: wp.array2d(dtype=wp.float64),
    ch: Chain,
    st: Settings,
    key: wp.int64,
    con: Constraints,
    wk: Work,
    found: Found,
):
    """The generated ``_solve_one`` of target ``k`` (no time budget): code, iterations,
    restarts, q; its restart draws seeded from the call's key and the target."""
    k = wp.tid()
    h = int(_target_key(key, T[k]))  # below 2^31 - 1
    code, iterations, restarts = _solve_one(T[k], Q0[k], ch, con, st, h, wk, k, found.q[k])
    found.codes[k] = code
    found.iters[k] = iterations
    found.restarts[k] = restarts
