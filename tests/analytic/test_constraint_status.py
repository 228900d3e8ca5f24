"""Why a target failed when its coupled-joint constraint rules out every exact branch: the
one-candidate-at-a-time path (the nearest branch, dropped when it breaks a constraint, the
next one gated) and the every-candidate path must both say it was the constraint. The
targets' exact branches and their constraint values are checked here with Pinocchio's FK and
a plain ``A q <= b``, not with the solver's own gate.

The constraint is held three ways: in the compiled tables (a :class:`LinearJointConstraint`),
only as Python code (a constraint type the tables cannot hold: the host decides every
target), and as a linear row some targets' branches lie exactly on (too close to call for the
tables: the host decides those targets)."""

from __future__ import annotations

import numpy as np
import pytest
from analytic_arms import pinocchio_fk

import ikstack.robots as robots
from ikstack.ik.analytic import AnalyticIK
from ikstack.ik.result import IKStatus
from ikstack.model.constraints import JointConstraint, LinearJointConstraint

#: q2 + q3 <= -1: the elbow folded one way only (rules out every branch of many targets)
A = np.array([[0.0, 1.0, 1.0, 0.0, 0.0, 0.0]])
B = np.array([-1.0])


class PythonFold(JointConstraint):
    """``A q <= B`` as Python code only (a type the compiled tables do not hold)."""

    name = "python fold"

    @property
    def joints(self) -> tuple[int, ...]:
        return (1, 2)

    @property
    def num_rows(self) -> int:
        return 1

    def residual(self, q):
        return np.asarray(q, dtype=np.float64) @ A.T - B

    def linearize(self, q, dof):
        return self.residual(q), A.copy()


def _constraint(kind):
    return PythonFold() if kind == "python" else LinearJointConstraint(A=A, b=B, name="fold")


def _case(kind="tables"):
    """The constrained arm, its targets, and which targets the constraint rules out."""
    pytest.importorskip("pinocchio")
    ur5 = robots.load("ur5")
    fk_pin = pinocchio_fk(None, str(robots.data_path("ur5.urdf")), "tool0", ur5.joint_names)

    chain = ur5.with_constraints([_constraint(kind)])
    rng = np.random.default_rng(5)
    q = rng.uniform(ur5.lower + 0.1, ur5.upper - 0.1, (60, 6))
    if kind == "edge":  # branches exactly on the bound q2 + q3 = -1
        q[:20, 2] = -1.0 - q[:20, 1]
    T = fk_pin(q)
    ik = AnalyticIK(chain)
    lazy = ik.solve(T)
    every = ik.solve(T, return_all=True)
    # the exact, in-limit branches (every candidate, checked independently)
    Q = every.q_all.reshape(-1, 6)
    err = np.abs(fk_pin(Q) - np.repeat(T, every.q_all.shape[1], axis=0)).max(axis=(1, 2))
    inside = ((Q >= ur5.lower - 1e-12) & (Q <= ur5.upper + 1e-12)).all(axis=1)
    exact = (err < 1e-9) & inside
    # (on the bound: exactly, as the chain's own code decides there)
    meets = (Q @ A.T <= B + (0.0 if kind == "edge" else 1e-12))[:, 0]
    exact, meets = (x.reshape(len(T), -1) for x in (exact, meets))
    ruled_out = exact.any(axis=1) & ~(exact & meets).any(axis=1)
    return chain, T, ruled_out, exact & meets, lazy, every


@pytest.mark.parametrize("kind", ["tables", "python", "edge"])
def test_a_target_whose_every_exact_branch_breaks_the_constraint_fails_for_the_constraint(kind):
    chain, T, ruled_out, allowed, lazy, every = _case(kind)
    assert ruled_out.sum() >= 5  # the sweep holds such targets
    # one candidate at a time (dropping those that break it) or every candidate at once
    assert (lazy.status == every.status).all(), np.c_[lazy.status, every.status]
    assert (lazy.status[ruled_out] == IKStatus.CONSTRAINT).all(), lazy.status[ruled_out]
    # the others are solved, within the constraint (exactly: a certified output)
    assert lazy.success[~ruled_out & allowed.any(axis=1)].all()
    assert (lazy.q[lazy.success] @ A.T <= B).all()
    assert (every.q_all[every.valid_all] @ A.T <= B).all()


def test_a_failed_target_says_what_it_missed_first_fk_then_limits_then_the_constraint():
    """The status of a failed target, from an independent account of its branches: no exact
    branch (Pinocchio's FK), else none within the limits, else none meeting the constraint."""
    pytest.importorskip("pinocchio")
    ur5 = robots.load("ur5")
    fk_pin = pinocchio_fk(None, str(robots.data_path("ur5.urdf")), "tool0", ur5.joint_names)
    rng = np.random.default_rng(12)
    q = rng.uniform(ur5.lower + 0.1, ur5.upper - 0.1, (150, 6))
    T = fk_pin(q)
    T[:6, :3, 3] *= 20.0  # out of reach
    S = ur5.random_q(rng, len(T))
    # the shoulder pan within +-0.6 rad: many targets' every branch lies outside
    lo, hi = ur5.lower.copy(), ur5.upper.copy()
    lo[0], hi[0] = -0.6, 0.6
    chain = ur5.replace(lower=lo, upper=hi).with_constraints([_constraint("tables")])
    # every branch of each target (the arm's own limits span the circle twice: none lost),
    # and whether some turn of its pan joint lies within the narrow limits
    Q = AnalyticIK(ur5).solve(T, S, return_all=True).q_all
    err = np.abs(fk_pin(Q.reshape(-1, 6)) - np.repeat(T, Q.shape[1], axis=0)).max(axis=(1, 2))
    exact = (err < 1e-9).reshape(Q.shape[:2])
    turns = Q[..., :1] + 2.0 * np.pi * np.arange(-2, 3)
    inside = ((turns >= lo[0] - 1e-12) & (turns <= hi[0] + 1e-12)).any(axis=-1)
    meets = (Q @ A.T <= B + 1e-12)[..., 0]
    expected = np.where(
        ~exact.any(axis=1),
        IKStatus.UNREACHABLE,
        np.where(
            ~(exact & inside).any(axis=1),
            IKStatus.JOINT_LIMITS,
            np.where(~(exact & inside & meets).any(axis=1), IKStatus.CONSTRAINT, 0),
        ),
    )
    for s in (IKStatus.UNREACHABLE, IKStatus.JOINT_LIMITS, IKStatus.CONSTRAINT):
        assert (expected == s).sum() >= 3, np.bincount(expected)  # each kind is exercised
    ik = AnalyticIK(chain)
    results = [ik.solve(T, S), ik.solve(T, S, return_all=True)]
    pytest.importorskip("warp")
    from ikstack.backends.warp.analytic import WarpAnalyticIK

    w = WarpAnalyticIK(chain)
    assert w.device_selection
    results += [w.solve(T, S), w.solve(T, S, return_all=True)]
    for r in results:
        failed = expected != 0
        np.testing.assert_array_equal(r.status[failed], expected[failed])
        assert r.success[~failed].all()


def test_the_warp_device_says_the_same_as_the_cpu_path():
    """The device's own retry loop (Warp on its CPU device here) decides the same statuses."""
    pytest.importorskip("warp")
    from ikstack.backends.warp.analytic import WarpAnalyticIK

    chain, T, ruled_out, _, lazy, _ = _case()
    assert ruled_out.any()
    w = WarpAnalyticIK(chain)
    assert w.device_selection
    dev = w.solve(T)
    assert (dev.status == lazy.status).all(), np.c_[dev.status, lazy.status]
    assert (dev.success == lazy.success).all()
