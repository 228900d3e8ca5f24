# mypy: ignore-errors
# ruff: noqa
"""GENERATED from ``src/ikstack/ik/numerical/_splitmix.py`` by :mod:`ikstack.backends.warp._translate`:
do not edit; edit the CPU source and run ``python -m ikstack.backends.warp._translate``
(a test fails when this file and its source disagree)."""

import warp as wp

from ikstack.backends.warp._prims import *  # noqa: F403



@wp.func
def uniform(state: wp.uint64):
    """splitmix64: ``(next state, uniform draw in [0, 1))`` from a uint64 state (53 bits)."""
    state = state + wp.uint64(0x9e3779b97f4a7c15)
    z = state
    z = (z ^ (z >> wp.uint64(30))) * wp.uint64(0xbf58476d1ce4e5b9)
    z = (z ^ (z >> wp.uint64(27))) * wp.uint64(0x94d049bb133111eb)
    z = z ^ (z >> wp.uint64(31))
    return state, wp.float64(z >> wp.uint64(11)) * F(1.1102230246251565e-16)
