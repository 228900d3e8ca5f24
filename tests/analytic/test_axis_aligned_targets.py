"""Axis-aligned target orientations (a tool pointing straight down, ...) are the commonest in
practice and the most degenerate for subproblem 6: the exact families must solve every one that
the numerical solver can."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ikstack.ik import solve_ik
from ikstack.ik.analytic import AnalyticIK
from ikstack.robots import load
from ikstack.spatial import from_pose, make_transform


def axis_aligned_rotations() -> np.ndarray:
    out = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product([1.0, -1.0], repeat=3):
            R = np.zeros((3, 3))
            for i, (j, s) in enumerate(zip(perm, signs, strict=True)):
                R[i, j] = s
            if np.linalg.det(R) > 0:
                out.append(R)
    return np.array(out)


@pytest.mark.parametrize("name", ["ur5", "iiwa14", "panda"])
def test_analytic_solves_every_axis_aligned_target_the_numerical_solver_solves(name):
    chain = load(name)
    pts = chain.fk(chain.random_q(np.random.default_rng(0), 8))[:, :3, 3]
    T = np.array([make_transform(R, p) for p in pts for R in axis_aligned_rotations()])
    analytic = AnalyticIK(chain).solve(T)
    numerical = solve_ik(chain, T, method="numerical")
    assert numerical.success.sum() > len(T) // 3
    assert not np.any(numerical.success & ~analytic.success)


def test_ur5_tool_pointing_down_has_all_eight_branches():
    T = from_pose([0.4, 0.2, 0.3], [0.0, 1.0, 0.0, 0.0])
    res = AnalyticIK(load("ur5")).solve(T[None], return_all=True)
    assert res.success[0] and res.valid_all.sum() == 8
    assert res.position_error[0] < 1e-10 and res.rotation_error[0] < 1e-10
