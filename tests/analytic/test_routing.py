"""Honest routing: a URDF whose offsets carry rounding is solved as its exact family (polished
and certified on the true chain), ``solve_ik(method="auto")`` picks by expected cost, and the
exactness and near-structure tolerances are options. Answers are checked with Pinocchio's FK
of the rounded URDF itself (an independent model of the true chain)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import ikstack
import ikstack.robots as robots
from ikstack.errors import UnsupportedGeometryError
from ikstack.ik import route, solve_ik
from ikstack.ik.analytic import AnalyticIK, classify

pin = pytest.importorskip("pinocchio")


def rounded_urdf(name: str, amount: float = 0.5e-6, seed: int = 0) -> str:
    """The bundled URDF with every joint origin moved by +-``amount`` per coordinate (rounding
    of the published offsets)."""
    text = robots.data_path(f"{name}.urdf").read_text()
    rng = np.random.default_rng(seed)

    def bump(m: re.Match[str]) -> str:
        v = [float(x) + float(rng.choice([-amount, amount])) for x in m.group(1).split()]
        return f'<origin xyz="{v[0]!r} {v[1]!r} {v[2]!r}"'

    return re.sub(r'<origin xyz="([^"]+)"', bump, text)


@pytest.fixture(scope="module")
def rounded_panda():
    text = rounded_urdf("panda")
    base = robots.load("panda")
    chain = ikstack.load_urdf(text, base.base, base.tip)
    model = pin.buildModelFromXML(text)
    data = model.createData()
    fid = model.getFrameId(base.tip)
    idx = [model.joints[model.getJointId(n)].idx_q for n in chain.joint_names]

    def pin_fk(q):
        qp = pin.neutral(model)
        qp[idx] = q
        pin.framesForwardKinematics(model, data, qp)
        return np.array(data.oMf[fid].homogeneous)

    return chain, pin_fk


def test_rounding_is_solved_as_the_exact_family_and_certified_on_the_true_chain(rounded_panda):
    chain, pin_fk = rounded_panda
    c = classify(chain)
    assert c.family is not None and not c.needs_near and c.polish
    assert 1e-8 < c.deviation <= 1e-5
    ik = AnalyticIK(chain)  # strict mode takes it: no near mode, no extra seed slot
    exact = AnalyticIK(robots.load("panda"))
    assert ik.K == exact.K and ik.method == exact.method
    rng = np.random.default_rng(1)
    q = chain.random_q(rng, 25)
    T = np.array([pin_fk(qi) for qi in q])
    r = ik.solve(T)
    assert r.success.mean() == 1.0
    for qi, Ti in zip(r.q, T, strict=True):
        F = pin_fk(qi)
        assert np.abs(F[:3, 3] - Ti[:3, 3]).max() <= 1e-6
        assert np.abs(F[:3, :3] - Ti[:3, :3]).max() <= 1e-6


def test_auto_routes_by_expected_cost_and_a_rounded_copy_like_its_original(rounded_panda):
    chain, pin_fk = rounded_panda
    for name in ("ur5", "panda", "iiwa14"):
        assert route(robots.load(name)).method == ("analytic" if name == "ur5" else "numerical")
    # 7R families expand a thousand candidates or more: the numerical solver is cheaper
    r = route(chain)
    assert r.method == "numerical" and r.candidates > 1000 and r.analytic_us > r.numerical_us
    q = chain.random_q(np.random.default_rng(2), 10)
    res = solve_ik(chain, np.array([pin_fk(qi) for qi in q]))
    assert res.method == "numerical:lm" and res.success.all()
    ur5 = robots.load("ur5")
    assert route(ur5).method == "analytic" and route(ur5).candidates == 8
    assert solve_ik(ur5, ur5.fk(ur5.middle())).method == "analytic:three_parallel"


def test_tolerances_are_options(rounded_panda):
    chain, _ = rounded_panda
    with pytest.raises(UnsupportedGeometryError, match="near"):
        AnalyticIK(chain, axis_alignment_tolerance=1e-9)  # rounding beyond: near mode needed
    assert classify(chain, axis_alignment_tolerance=1e-9).needs_near
    ur5 = robots.load("ur5")
    rng = np.random.default_rng(8)
    origins = ur5.origins.copy()
    origins[:, :3, 3] += rng.normal(scale=1e-3, size=(6, 3))
    axes = ur5.axes + rng.normal(scale=2e-4, size=(6, 3))
    calibrated = ur5.replace(origins=origins, axes=axes)  # a calibrated arm
    assert classify(calibrated).needs_near
    AnalyticIK(calibrated, mode="near")
    with pytest.raises(UnsupportedGeometryError):
        AnalyticIK(calibrated, mode="near", near_tolerance=1e-4)
    assert classify(calibrated, near_tolerance=1e-4).family is None
    assert not classify(calibrated, axis_alignment_tolerance=0.01).needs_near
    with pytest.raises(ValueError, match="axis_alignment_tolerance"):
        classify(ur5, axis_alignment_tolerance=-1.0)
