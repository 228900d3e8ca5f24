"""Why a target failed when its coupled-joint constraint rules out every exact branch: the
one-candidate-at-a-time path (the nearest branch, dropped when it breaks a constraint, the
next one gated) and the every-candidate path must both say it was the constraint. The
targets' exact branches and their constraint values are checked here with Pinocchio's FK and
a plain ``A q <= b``, not with the solver's own gate."""

from __future__ import annotations

import numpy as np
import pytest
from analytic_arms import pinocchio_fk

import ikstack.robots as robots
from ikstack.ik.analytic import AnalyticIK
from ikstack.ik.result import IKStatus
from ikstack.model.constraints import LinearJointConstraint

#: q2 + q3 <= -1: the elbow folded one way only (rules out every branch of many targets)
A = np.array([[0.0, 1.0, 1.0, 0.0, 0.0, 0.0]])
B = np.array([-1.0])


def _case():
    """The constrained arm, its targets, and which targets the constraint rules out."""
    pytest.importorskip("pinocchio")
    ur5 = robots.load("ur5")
    fk_pin = pinocchio_fk(None, str(robots.data_path("ur5.urdf")), "tool0", ur5.joint_names)

    chain = ur5.with_constraints([LinearJointConstraint(A=A, b=B, name="fold")])
    rng = np.random.default_rng(5)
    q = rng.uniform(ur5.lower + 0.1, ur5.upper - 0.1, (60, 6))
    T = fk_pin(q)
    ik = AnalyticIK(chain)
    lazy = ik.solve(T)
    every = ik.solve(T, return_all=True)
    # the exact, in-limit branches (every candidate, checked independently)
    Q = every.q_all.reshape(-1, 6)
    err = np.abs(fk_pin(Q) - np.repeat(T, every.q_all.shape[1], axis=0)).max(axis=(1, 2))
    inside = ((Q >= ur5.lower - 1e-12) & (Q <= ur5.upper + 1e-12)).all(axis=1)
    exact = (err < 1e-9) & inside
    meets = (Q @ A.T <= B + 1e-12)[:, 0]
    exact, meets = (x.reshape(len(T), -1) for x in (exact, meets))
    ruled_out = exact.any(axis=1) & ~(exact & meets).any(axis=1)
    return chain, T, ruled_out, exact & meets, lazy, every


def test_a_target_whose_every_exact_branch_breaks_the_constraint_fails_for_the_constraint():
    chain, T, ruled_out, allowed, lazy, every = _case()
    assert ruled_out.sum() >= 5  # the sweep holds such targets
    # one candidate at a time (dropping those that break it) or every candidate at once
    assert (lazy.status == every.status).all(), np.c_[lazy.status, every.status]
    assert (lazy.status[ruled_out] == IKStatus.CONSTRAINT).all(), lazy.status[ruled_out]
    # the others are solved, within the constraint
    assert lazy.success[~ruled_out & allowed.any(axis=1)].all()
    assert (lazy.q[lazy.success] @ A.T <= B + 1e-12).all()


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
