"""The algebraic mode: classify() offers it for revolute 6R/7R chains without a closed form,
AnalyticIK(mode="general") solves them behind the usual contract, and it stays explicit."""

from __future__ import annotations

import json

import numpy as np
import pytest
from analytic_arms import STRUCTURES_6R, puma560, random_arm

import ikstack.robots as robots
from ikstack.cli.main import main
from ikstack.errors import InputError, UnsupportedGeometryError
from ikstack.ik import IKStatus, certify, solve_ik
from ikstack.ik.analytic import AnalyticIK, classify
from ikstack.spatial import to_pose


@pytest.fixture(scope="module")
def rizon():
    chain = robots.load("rizon4")
    return chain, AnalyticIK(chain, mode="general")


def in_limit(chain, rng, n):
    lo = chain.lower + chain.kinematic_margin + 0.05
    hi = chain.upper - chain.kinematic_margin - 0.05
    return rng.uniform(lo, hi, (n, chain.dof))


@pytest.mark.parametrize(
    "name, general, mode",
    [
        ("rizon4", True, "general"),
        ("rizon4s", True, "general"),
        ("ur5", False, "strict"),
        ("panda", False, "strict"),
        ("scara", False, None),
        ("planar2", False, None),
    ],
)
def test_classify_offers_the_general_mode_only_without_a_closed_form(name, general, mode):
    c = classify(robots.load(name))
    assert c.general is general
    assert c.suggested_mode == mode
    if general:
        assert c.family is None and "mode='general'" in c.reason


def test_strict_mode_still_refuses_a_chain_without_a_closed_form():
    with pytest.raises(UnsupportedGeometryError):
        AnalyticIK(robots.load("rizon4"))


def test_general_mode_solves_rizon4_targets_certified(rizon):
    chain, ik = rizon
    rng = np.random.default_rng(2)
    q = in_limit(chain, rng, 30)
    T = chain.fk(q)
    r = ik.solve(T, q0=q, return_all=True)
    assert r.method == "analytic:locked7r"
    assert r.success.mean() >= 0.9, np.bincount(r.status)
    ok, _, _ = certify(chain, r.q, T, 1e-6, 1e-6)
    np.testing.assert_array_equal(ok, r.success)
    okc, _, _ = certify(chain, r.q_all, T[:, None], 1e-6, 1e-6)
    assert (okc[r.valid_all]).all() and r.valid_all.any(axis=1)[r.success].all()
    assert np.isfinite(r.q).all()
    # failed rows hold the limit-projected seed with a status
    assert (r.status[~r.success] != IKStatus.SUCCESS).all()


COMPLETE_ARMS = ("ur5", "arx_x5", "puma560", *(f"random_{s}" for s in STRUCTURES_6R))


def complete_arm(name):
    if name == "puma560":
        return puma560()
    if name.startswith("random_"):
        structure = name.removeprefix("random_")
        return random_arm(structure, np.random.default_rng(STRUCTURES_6R.index(structure) + 40))
    return robots.load(name)


def wrapped_gap(a, b):
    """Worst joint gap (mod 2 pi) between every slot of ``a (N, K, 6)`` and of ``b (N, L, 6)``."""
    return np.abs(np.angle(np.exp(1j * (a[:, :, None, :] - b[:, None, :, :])))).max(axis=-1)


@pytest.mark.parametrize("name", COMPLETE_ARMS)
def test_general_mode_contains_every_closed_form_solution(name):
    # a spherical wrist's flip pair shares the shoulder joints: with the eliminated joint among
    # them (PUMA 560) both solutions sit on one double eigenvalue and must both come back
    chain = complete_arm(name)
    rng = np.random.default_rng(3)
    q = in_limit(chain, rng, 100)
    T = chain.fk(q)
    closed = AnalyticIK(chain).solve(T, return_all=True)
    general = AnalyticIK(chain, mode="general").solve(T, return_all=True)
    assert general.method == "analytic:general6r"
    found = ((wrapped_gap(closed.q_all, general.q_all) < 1e-6) & general.valid_all[:, None, :]).any(
        axis=2
    )
    missed = closed.valid_all & ~found
    assert not missed.any(), (
        f"{int(missed.sum())} of {int(closed.valid_all.sum())} closed-form "
        f"solutions missed, in {int(missed.any(axis=1).sum())} targets"
    )
    # no two certified slots hold one solution
    same = (wrapped_gap(general.q_all, general.q_all) < 1e-6) & np.triu(np.ones((16, 16), bool), 1)
    assert not (same & general.valid_all[:, :, None] & general.valid_all[:, None, :]).any()


def test_general_mode_path_is_continuous_and_search_is_selectable(rizon):
    chain, ik = rizon
    rng = np.random.default_rng(4)
    q0 = in_limit(chain, rng, 1)[0]
    t = np.linspace(0.0, 1.0, 25)[:, None]
    qp = np.clip(
        q0 + 0.15 * np.sin(2 * np.pi * t + np.arange(7)), chain.lower + 0.05, chain.upper - 0.05
    )
    T = chain.fk(qp)
    r = ik.solve_path(T, qp[0])
    assert r.method == "analytic:locked7r"
    assert r.success.all()
    assert np.abs(np.diff(r.q, axis=0)).max() < 0.2
    fixed = AnalyticIK(chain, mode="general", search="fixed", max_joint_step=0.2)
    rf = fixed.solve_path(T, qp[0])
    assert (np.abs(np.diff(rf.q, axis=0)).max(axis=1)[rf.success[1:]] <= 0.2 + 1e-12).all()
    with pytest.raises(InputError):
        AnalyticIK(chain, mode="general", search="everywhere")


def test_general_mode_needs_revolute_6r_or_7r():
    with pytest.raises(UnsupportedGeometryError):
        AnalyticIK(robots.load("scara"), mode="general")
    with pytest.raises(InputError):
        AnalyticIK(robots.load("ur5"), mode="algebraic")


def test_solve_ik_auto_keeps_rizon4_numerical_and_analytic_general_is_explicit():
    chain = robots.load("rizon4")
    T = chain.fk(chain.middle() + 0.1)
    assert solve_ik(chain, T).method.startswith("numerical")
    with pytest.raises(UnsupportedGeometryError, match="mode='general'"):
        solve_ik(chain, T, method="analytic")
    r = solve_ik(chain, T, method="analytic", mode="general")
    assert r.method == "analytic:locked7r" and r.success.all()
    with pytest.raises(InputError):
        solve_ik(chain, T, method="analytic", max_iterations=3)
    # closed forms first: auto on a supported arm is unchanged
    ur5 = robots.load("ur5")
    assert solve_ik(ur5, ur5.fk(ur5.middle())).method == "analytic:three_parallel"


def test_cli_ik_all_lists_the_algebraic_solutions_of_rizon4(capsys):
    chain = robots.load("rizon4")
    p, quat = to_pose(chain.fk(chain.middle() + 0.2))
    assert (
        main(
            ["ik", "--robot", "rizon4", "--pose", *map(str, p), *map(str, quat), "--all", "--json"]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "analytic:locked7r" and out["success"]
    assert len(out["solutions"]) >= 2
    assert max(s["position_error"] for s in out["solutions"]) < 1e-6
