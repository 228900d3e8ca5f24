"""The ``solve_ik`` front door: method selection, the analytic hand-off, options, errors."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass

import numpy as np
import pytest

import ikstack
import ikstack.robots as robots
from ikstack.errors import InputError, UnsupportedGeometryError
from ikstack.ik import IKResult, IKStatus, solve_ik
from ikstack.kinematics import fk


@dataclass
class _Classification:
    family: str | None
    needs_near: bool = False


class _FakeAnalytic:
    calls: list[tuple[str, str]] = []

    def __init__(self, chain, mode="strict"):
        self.chain = chain
        self.mode = mode

    def solve(self, T, q0=None):
        _FakeAnalytic.calls.append((self.chain.name, self.mode))
        T = np.asarray(T).reshape(-1, 4, 4)
        n = T.shape[0]
        return IKResult(
            q=np.zeros((n, self.chain.dof)),
            success=np.zeros(n, bool),
            position_error=np.zeros(n),
            rotation_error=np.zeros(n),
            status=np.full(n, IKStatus.UNREACHABLE),
            method=f"analytic:fake-{self.mode}",
        )


def _install_fake(monkeypatch, family_of):
    mod = types.ModuleType("ikstack.ik.analytic")
    mod.classify = lambda chain: _Classification(*family_of(chain))  # type: ignore[attr-defined]
    mod.AnalyticIK = _FakeAnalytic  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "ikstack.ik.analytic", mod)
    _FakeAnalytic.calls = []


def _target(name, seed=0):
    chain = robots.load(name)
    q = chain.random_q(np.random.default_rng(seed))
    return chain, fk(chain, q)


def test_auto_falls_back_to_numerical_when_no_analytic_classifier_exists(monkeypatch):
    monkeypatch.setitem(sys.modules, "ikstack.ik.analytic", types.ModuleType("ikstack.ik.analytic"))
    chain, T = _target("ur5")
    res = solve_ik(chain, T)
    assert res.method == "numerical:lm"
    assert res.success.all()


def test_auto_uses_the_analytic_solver_for_supported_families_in_the_mode_it_asks(monkeypatch):
    _install_fake(monkeypatch, lambda c: ("three_parallel", c.name == "arx_x5"))
    chain, T = _target("ur5")
    assert solve_ik(chain, T).method == "analytic:fake-strict"
    chain, T = _target("arx_x5")
    assert solve_ik(chain, T).method == "analytic:fake-near"
    assert _FakeAnalytic.calls == [("ur5", "strict"), ("arx_x5", "near")]


def test_auto_uses_numerical_for_families_the_classifier_does_not_support(monkeypatch):
    _install_fake(monkeypatch, lambda c: (None, False))
    chain, T = _target("rizon4")
    res = solve_ik(chain, T)
    assert res.method == "numerical:lm" and res.success.all()
    assert _FakeAnalytic.calls == []


def test_method_analytic_on_an_unsupported_chain_raises_naming_the_alternative(monkeypatch):
    _install_fake(monkeypatch, lambda c: (None, False))
    chain, T = _target("rizon4")
    with pytest.raises(UnsupportedGeometryError, match="numerical"):
        solve_ik(chain, T, method="analytic")
    monkeypatch.setitem(sys.modules, "ikstack.ik.analytic", types.ModuleType("ikstack.ik.analytic"))
    with pytest.raises(UnsupportedGeometryError):
        solve_ik(chain, T, method="analytic")


@pytest.mark.parametrize(
    "method, expected",
    [("numerical", "numerical:lm"), ("lm", "numerical:lm"), ("dls", "numerical:dls")],
)
def test_numerical_methods_select_their_step(method, expected):
    chain, T = _target("panda", seed=3)
    seed = chain.clip(np.zeros(chain.dof))
    opts = {"max_iterations": 300} if method == "dls" else {}
    res = solve_ik(chain, T, q0=seed, method=method, **opts)
    assert res.method == expected
    assert res.success.all()
    assert res.position_error[0] <= 1e-5


def test_options_reach_the_numerical_solver_and_bad_ones_are_named():
    chain, T = _target("panda", seed=4)
    res = solve_ik(chain, T, method="numerical", mask="position", position_tolerance=1e-3)
    assert res.success.all() and res.position_error[0] <= 1e-3
    with pytest.raises(InputError, match="valid options"):
        solve_ik(chain, T, method="numerical", tolerance=1e-3)
    with pytest.raises(InputError, match="valid methods"):
        solve_ik(chain, T, method="newton")
    with pytest.raises(InputError):
        solve_ik("panda", T)  # type: ignore[arg-type]


def test_solve_ik_is_exported_at_the_top_level_and_deterministic():
    chain, T = _target("iiwa14", seed=5)
    a = ikstack.solve_ik(chain, T, method="numerical")
    b = ikstack.solve_ik(chain, T, method="numerical")
    np.testing.assert_array_equal(a.q, b.q)
