"""The resumable constrained selection, rows past the retry bound: a coupled-joint constraint
held only as Python code (a type the compiled tables cannot hold) makes every re-gated row
wait for the chain's own code and resume on compiled code, once a retry. The 7R arm's many
swivel-sampled branches under a tight quadrant diamond on its last two joints give rows whose
nearest branches break the constraint more than :data:`CONSTRAINT_RETRIES` times, so they
resume past the bound and are then gated whole.

Such a row must keep its retry count and its dropped branches across its resumes: it is
decided by the chain's code at most once a retry plus the first and the whole gate, and its
flags, status and answer are those of the same constraint in the tables (no resumes at all).
The answers are checked on their own too: Pinocchio's FK and a plain NumPy diamond."""

from __future__ import annotations

import numpy as np
import pytest
from analytic_arms import pinocchio_fk

import ikstack.robots as robots
from ikstack.ik.analytic import AnalyticIK, _constrained
from ikstack.ik.analytic._constrained import CONSTRAINT_RETRIES
from ikstack.ik.result import IKStatus
from ikstack.model.constraints import JointConstraint, QuadrantPolynomialConstraint

#: |q7| + SLOPE |q6| <= BOUND [rad]: rules out most branches of most targets
SLOPE, BOUND = 1.025, 0.3
#: the constrained loop itself (each solve below records around it)
LOOP = _constrained.constrain_rows


def diamond(q):
    """The constraint, in plain NumPy: whether each configuration meets it."""
    q = np.asarray(q, dtype=np.float64)
    return np.abs(q[..., 6]) + SLOPE * np.abs(q[..., 5]) <= BOUND


class PythonDiamond(JointConstraint):
    """The diamond as Python code only (the tables do not hold this type)."""

    name = "python diamond"

    @property
    def joints(self) -> tuple[int, ...]:
        return (5, 6)

    @property
    def num_rows(self) -> int:
        return 1

    def residual(self, q):
        q = np.asarray(q, dtype=np.float64)
        return (np.abs(q[..., 6]) + SLOPE * np.abs(q[..., 5]) - BOUND)[..., None]

    def linearize(self, q, dof):
        raise NotImplementedError  # (the analytic solver does not linearize)


def _solve(chain, T, S, monkeypatch):
    """Solve, recording each constrained pass's flags after it and how many times each of
    its rows was handed to the chain's own code."""
    passes = []

    def recorded(arrays, records, lazy, piters):
        Q = arrays[0]
        count = np.zeros(len(Q), dtype=np.int64)
        decide = records[3]

        def counted(Qs):
            where = {Q[i].tobytes(): i for i in range(len(Q))}
            for row in Qs:
                count[where[row.tobytes()]] += 1
            return decide(Qs)

        LOOP(arrays, (*records[:3], counted), lazy, piters)
        OK, FK, LIM, _, _, SEL, CON, _ = arrays[4]
        flags = tuple(x.copy() for x in (Q, arrays[1], OK, FK, LIM, CON, SEL))
        passes.append((lazy, count, flags))

    monkeypatch.setattr(_constrained, "constrain_rows", recorded)
    return AnalyticIK(chain).solve(T, S), passes


@pytest.fixture(scope="module")
def arm():
    pytest.importorskip("pinocchio")
    chain = robots.load("iiwa14")
    fk = pinocchio_fk(None, str(robots.data_path("iiwa14.urdf")), "iiwa_link_ee", chain.joint_names)
    rng = np.random.default_rng(3)
    q = chain.random_q(rng, 120)
    return chain, fk, fk(q), chain.random_q(rng, len(q))


def test_rows_resumed_past_the_retry_bound_keep_their_count_and_dropped_branches(arm, monkeypatch):
    chain, fk, T, S = arm
    python, p_passes = _solve(chain.with_constraints([PythonDiamond()]), T, S, monkeypatch)
    tables, t_passes = _solve(
        chain.with_constraints([QuadrantPolynomialConstraint.abs_sum(5, 6, SLOPE, BOUND)]),
        T,
        S,
        monkeypatch,
    )
    assert p_passes and len(p_passes) == len(t_passes)
    lazy_counts = np.concatenate([c for lazy, c, _ in p_passes if lazy])
    # rows that resumed past the bound (a decision a retry, after the first gate's) ...
    assert (lazy_counts > CONSTRAINT_RETRIES + 1).sum() >= 5
    # ... and none more than once a retry plus the first gate and the whole gate
    assert lazy_counts.max() <= CONSTRAINT_RETRIES + 2, np.bincount(lazy_counts)
    # in the tables, the chain's code decides the first gate only (every row at once)
    assert all(c.max() <= 1 for _, c, _ in t_passes)
    # the loop's flags after every pass: the dropped branches count as meeting the FK gate
    # and the limits and breaking the constraint, whether or not their rows resumed
    names = ("Q", "V", "OK", "FK", "LIM", "CON", "SEL")
    for (_, _, fp), (_, _, ft) in zip(p_passes, t_passes, strict=True):
        for name, a, b in zip(names, fp, ft, strict=True):
            np.testing.assert_array_equal(a, b, err_msg=name)
    np.testing.assert_array_equal(python.status, tables.status)
    np.testing.assert_array_equal(python.q, tables.q)
    assert (python.status == IKStatus.CONSTRAINT).sum() >= 5 and python.success.sum() >= 5


def test_the_answers_meet_the_target_the_limits_and_the_constraint(arm, monkeypatch):
    """Checked without the solver's gate: a success is an exact branch (Pinocchio) within the
    limits that meets the diamond; a target failed for the constraint has exact branches
    within the limits, and every one of them breaks the diamond."""
    chain, fk, T, S = arm
    con = chain.with_constraints([PythonDiamond()])
    res, _ = _solve(con, T, S, monkeypatch)
    ok = res.success
    err = np.abs(fk(res.q[ok]) - T[ok]).max(axis=(1, 2))
    assert (err < 1e-9).all() and diamond(res.q[ok]).all()
    assert chain.within_limits(res.q[ok]).all()
    every = AnalyticIK(chain).solve(T, S, return_all=True)
    Q = every.q_all.reshape(-1, chain.dof)
    exact = np.abs(fk(Q) - np.repeat(T, every.q_all.shape[1], axis=0)).max(axis=(1, 2)) < 1e-9
    inside = chain.within_limits(Q)
    good = (exact & inside).reshape(len(T), -1)
    meets = diamond(Q).reshape(len(T), -1)
    ruled_out = good.any(axis=1) & ~(good & meets).any(axis=1)
    failed_con = res.status == IKStatus.CONSTRAINT
    np.testing.assert_array_equal(failed_con, ruled_out)
