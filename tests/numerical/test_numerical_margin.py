"""Numerical IK keeps the chain's kinematic margin from the position limits, like the analytic
solvers: a success inside the margin band would be refused by the servo."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ikstack.robots as robots
from ikstack.errors import InputError
from ikstack.ik.numerical import LevenbergMarquardt


def _targets(chain, rng, k):
    # joint samples reaching into the margin band, so the nearest answers lie in it
    q = rng.uniform(chain.lower, chain.upper, size=(k, chain.dof))
    return q, chain.fk(q)


def test_lm_successes_keep_the_kinematic_margin():
    chain = robots.load("marvin_left")
    assert chain.kinematic_margin == pytest.approx(math.radians(5.0))
    rng = np.random.default_rng(4)
    q, T = _targets(chain, rng, 150)
    res = LevenbergMarquardt(chain).solve(T, q0=q)  # seeded at the answer: the easy way in
    # the limits written out: the published Marvin table less 5 degrees
    lo = np.radians([-170, -120, -170, -145, -170, -60, -90]) + math.radians(5.0)
    hi = np.radians([170, 120, 170, 60, 170, 60, 90]) - math.radians(5.0)
    ok = res.success
    assert ok.sum() > 50
    Q = res.q[ok]
    assert np.all(Q >= lo - 1e-12) and np.all(Q <= hi + 1e-12)


def test_the_margin_option_raises_it_never_lowers_it():
    chain = robots.load("marvin_left")
    with pytest.raises(InputError, match="never lower"):
        LevenbergMarquardt(chain, margin=0.0)
    wide = math.radians(10.0)
    rng = np.random.default_rng(5)
    q, T = _targets(chain, rng, 60)
    res = LevenbergMarquardt(chain, margin=wide).solve(T, q0=q)
    Q = res.q[res.success]
    assert Q.shape[0] > 10
    assert np.all(Q >= chain.lower + wide - 1e-12) and np.all(Q <= chain.upper - wide + 1e-12)
