# mypy: ignore-errors
# ruff: noqa
"""GENERATED from ``src/ikstack/ik/analytic/_select.py`` by :mod:`ikstack.backends.warp._translate`:
do not edit; edit the CPU source and run ``python -m ikstack.backends.warp._translate``
(a test fails when this file and its source disagree)."""

import warp as wp

from ikstack.backends.warp._prims import *  # noqa: F403

LIMIT_SNAP = wp.constant(F(1e-06))
TWO_PI = wp.constant(F(6.283185307179586))
_ONE_TURN_INSIDE = wp.constant(F(6.28))


@wp.func
def representative(q: wp.float64, seed: wp.float64, lo: wp.float64, hi: wp.float64):
    """The ``q + 2 pi k`` nearest ``seed`` within ``[lo, hi]`` (nearest the range if none)."""
    c = F(0.0)
    d = q - seed
    t = d + F(3.141592653589793)
    turns = wp.where(t >= F(0.0) and t <= _ONE_TURN_INSIDE, F(0.0), wp.floor(t / TWO_PI))
    base = seed + d - TWO_PI * turns
    if base >= lo - LIMIT_SNAP and base <= hi + LIMIT_SNAP:
        return base
    if base < lo:
        c = base + TWO_PI * wp.ceil((lo - LIMIT_SNAP - base) / TWO_PI)
        if c <= hi + LIMIT_SNAP:
            return c
        return wp.where(lo - base <= c - hi, base, c)
    c = base - TWO_PI * wp.ceil((base - hi - LIMIT_SNAP) / TWO_PI)
    if c >= lo - LIMIT_SNAP:
        return c
    return wp.where(base - hi <= lo - c, base, c)
