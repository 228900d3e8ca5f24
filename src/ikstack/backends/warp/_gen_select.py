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


@wp.func
def joint_rep(x: wp.float64, seed: wp.float64, lo: wp.float64, hi: wp.float64, revolute: bool):
    """One joint's value moved to its representative (revolute) and snapped onto a limit it
    misses by round-off: ``(value, within limits)``."""
    lim = bool(True)
    if revolute:
        x = representative(x, seed, lo, hi)
    if x < lo:
        if x >= lo - LIMIT_SNAP:
            x = lo
        else:
            lim = bool(False)
    if x > hi:
        if x <= hi + LIMIT_SNAP:
            x = hi
        else:
            lim = bool(False)
    return x, lim


@wp.func
def _limits_row(q: wp.array(dtype=wp.float64), seed: wp.array(dtype=wp.float64), lo: wp.array(dtype=wp.float64), hi: wp.array(dtype=wp.float64), revolute: wp.array(dtype=wp.int32), W: wp.array(dtype=wp.float64)):
    """Move ``q`` to its representatives in place; ``(within limits, distance, max step)``."""
    lim = bool(True)
    d = F(0.0)
    step = F(0.0)
    for j in range(q.shape[0]):
        x, ok = joint_rep(q[j], seed[j], lo[j], hi[j], (revolute[j] != 0))
        lim = lim and ok
        q[j] = x
        dd = x - seed[j]
        d = d + W[j] * dd * dd
        step = wp.max(step, wp.abs(dd))
    return lim, d, step


@wp.func
def _project(Q: wp.array2d(dtype=wp.float64), LIM: wp.array(dtype=wp.int32), lo: wp.array(dtype=wp.float64), hi: wp.array(dtype=wp.float64)):
    """Candidates outside the limits are projected onto them (finite, limit-projected slots)."""
    for k in range(Q.shape[0]):
        if not (LIM[k] != 0):
            for j in range(Q.shape[1]):
                Q[k, j] = wp.min(wp.max(Q[k, j], lo[j]), hi[j])
