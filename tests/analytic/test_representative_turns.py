"""``_select.representative`` skips the whole-turn division where the turn count is 0: its
values must be those of the plain formula ``q - 2 pi floor((q - seed + pi) / 2 pi)`` (bit for
bit) wherever that lands within the limits, near the skipped range's edges included."""

from __future__ import annotations

import math

import numpy as np

from ikstack.ik.analytic._select import representative


def test_whole_turns_match_the_plain_formula_bit_for_bit() -> None:
    rng = np.random.default_rng(3)
    seed = rng.uniform(-3.0, 3.0, size=3000)
    # differences q - seed spread over several turns, and within a few ulp of the edges of
    # the division-free range (t = d + pi in [0, 6.28]) and of a whole turn
    d = np.concatenate(
        [
            rng.uniform(-20.0, 20.0, size=1000),
            np.nextafter(-math.pi, rng.choice([-np.inf, np.inf], size=500)),
            6.28 - math.pi + rng.integers(-4, 5, size=500) * 1e-15,
            math.pi + rng.integers(-4, 5, size=500) * 1e-15,
            rng.uniform(-math.pi, math.pi, size=500),
        ]
    )
    q = seed + d
    big = 100.0  # limits that hold every representative
    for qi, si in zip(q, seed, strict=True):
        di = qi - si
        plain = si + di - 2.0 * math.pi * math.floor((di + math.pi) / (2.0 * math.pi))
        got = representative(qi, si, -big, big)
        assert got == plain and math.copysign(1.0, got) == math.copysign(1.0, plain), (qi, si)
