"""Solution sets against EAIK (an independent implementation of the IK-Geo decompositions)."""

from __future__ import annotations

import numpy as np
import pytest
from analytic_arms import random_arm

import ikstack.robots as robots
from ikstack.ik.analytic import AnalyticIK
from ikstack.ik.analytic.families import _pform
from ikstack.ik.analytic.geometry import chain_lines

eaik_hp = pytest.importorskip("eaik.IK_HP")


def eaik_solutions(chain, T):
    """EAIK's solutions for each target (its end rotation is the identity: fold ours in)."""
    H, P, R_end = _pform(chain_lines(chain))
    bot = eaik_hp.HPRobot(H, P)
    out = []
    for Ti in T:
        Te = Ti.copy()
        Te[:3, :3] = Ti[:3, :3] @ R_end.T
        sol = bot.IK(Te)
        Q = np.asarray(sol.Q).reshape(-1, 6)
        out.append(Q[~np.asarray(sol.is_LS, dtype=bool)] if len(Q) else Q)
    return out


def same_angles(a, b, tol=1e-6):
    return np.abs(np.angle(np.exp(1j * (a - b)))).max(axis=-1) < tol


def in_limits_modulo_turns(chain, q):
    """Whether some whole-turn shift of each joint lies within the (margin-reduced) limits."""
    lo = chain.lower + chain.kinematic_margin
    hi = chain.upper - chain.kinematic_margin
    ok = np.ones(q.shape[:-1], dtype=bool)
    for j in range(chain.dof):
        x = q[..., j]
        any_in = np.zeros_like(ok)
        for k in range(-2, 3):
            v = x + 2 * np.pi * k
            any_in |= (v >= lo[j] - 1e-9) & (v <= hi[j] + 1e-9)
        ok &= any_in
    return ok


@pytest.mark.parametrize("arm", ["ur5", "spherical_wrist"])
def test_solution_sets_match_eaik_both_ways(arm):
    rng = np.random.default_rng(21)
    chain = robots.load("ur5") if arm == "ur5" else random_arm("spherical_two_parallel", rng)
    q = rng.uniform(-np.pi, np.pi, (100, chain.dof))
    T = chain.fk(q)
    ours = AnalyticIK(chain).solve(T, return_all=True)
    theirs = eaik_solutions(chain, T)
    for i in range(len(T)):
        mine = ours.q_all[i][ours.valid_all[i]]
        ref = theirs[i]
        ref = ref[in_limits_modulo_turns(chain, ref)]
        # keep EAIK's solutions that pass the same FK gate
        perr = np.linalg.norm(chain.fk(ref)[:, :3, 3] - T[i, :3, 3], axis=1) if len(ref) else []
        ref = ref[np.asarray(perr) < 1e-6] if len(ref) else ref
        for r in ref:
            assert same_angles(mine, r).any(), f"target {i}: EAIK solution {r} missing"
        for m in mine:
            assert len(ref) and same_angles(ref, m).any(), f"target {i}: extra solution {m}"
