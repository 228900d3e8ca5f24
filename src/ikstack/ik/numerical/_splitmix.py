"""The restarts' random stream: splitmix64 (Steele, Lea and Flood 2014), one compiled step.

Written in the Warp translator's portable subset (unsigned 64-bit integers), so the Warp
backend draws the same restarts from the same seed (``backends/warp/_gen_splitmix.py``,
generated from this source).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def uniform(state):  # pragma: no cover - compiled
    """splitmix64: ``(next state, uniform draw in [0, 1))`` from a uint64 state (53 bits)."""
    state = state + np.uint64(0x9E3779B97F4A7C15)
    z = state
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return state, np.float64(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)
