# mypy: ignore-errors
"""The hand-written piece of the Warp numerical-IK kernel (:mod:`._lm`): the clock hook of the
search generated from the CPU source (``_gen_lm._solve_one``; its per-target restart seed
``_gen_lm._target_key`` and its splitmix64 draws, ``_gen_splitmix``, are generated too).
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._prims import F


# ----------------------------------------------------------------------------- hooks
@wp.func
def _now():
    """The clock of the generated search (``_gen_lm._solve_one``): none on the device, where a
    time budget is refused before launch."""
    return F(0.0)
