"""The per-cycle solvers against independent references (scipy BVLS, OSQP, closed forms)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import lsq_linear

from ikstack.diffik import (
    BoxQPSolver,
    DifferentialIK,
    DiffIKRequest,
    DiffIKResult,
    DLSVelocitySolver,
    as_result,
    solve_box_qp,
)
from ikstack.errors import InputError, NonFiniteError, ShapeError

ACTIVE_TOL = 1e-9


def random_problem(rng: np.random.Generator):
    """A random damped task QP with a mix of bound kinds (finite, infinite, fixed, off-zero)."""
    n = int(rng.integers(1, 9))
    m = int(rng.integers(1, 7))
    J = rng.normal(size=(m, n))
    if rng.random() < 0.3 and m > 1:
        J[-1] = J[0]  # rank-deficient task
    t = rng.normal(size=m) * rng.choice([0.1, 1.0, 5.0])
    p = rng.normal(size=n) * 0.3
    lam = float(10 ** rng.uniform(-3, 0))
    lo = -rng.uniform(0.01, 1.0, n)
    hi = rng.uniform(0.01, 1.0, n)
    kind = rng.random(n)
    lo[kind < 0.1] = -np.inf
    hi[(kind > 0.1) & (kind < 0.2)] = np.inf
    shift = (kind > 0.2) & (kind < 0.3)  # a box that excludes zero (must keep braking)
    lo[shift] += 1.2
    hi[shift] += 1.2
    fixed = (kind > 0.3) & (kind < 0.33)
    hi[fixed] = lo[fixed]
    return J, t, p, lam, lo, hi


def kkt_residual(H, g, x, lo, hi):
    """Largest violation of the box-QP KKT conditions at ``x``."""
    grad = H @ x + g
    at_lo = np.abs(x - lo) <= ACTIVE_TOL
    at_hi = np.abs(x - hi) <= ACTIVE_TOL
    free = ~at_lo & ~at_hi
    viol = [np.max(np.maximum(lo - x, 0)), np.max(np.maximum(x - hi, 0))]
    if free.any():
        viol.append(np.max(np.abs(grad[free])))
    fixed = at_lo & at_hi
    if (at_lo & ~fixed).any():
        viol.append(np.max(np.maximum(-grad[at_lo & ~fixed], 0)))
    if (at_hi & ~fixed).any():
        viol.append(np.max(np.maximum(grad[at_hi & ~fixed], 0)))
    return max(viol)


def bvls_reference(J, t, p, lam, lo, hi):
    """scipy's BVLS on the stacked least squares, with fixed joints substituted out."""
    n = J.shape[1]
    A = np.vstack([J, lam * np.eye(n)])
    b = np.concatenate([t, lam * p])
    fixed = lo == hi
    x = np.where(fixed, lo, 0.0)
    free = ~fixed
    if free.any():
        b_free = b - A[:, fixed] @ lo[fixed]
        x[free] = lsq_linear(
            A[:, free], b_free, bounds=(lo[free], hi[free]), method="bvls", tol=1e-14
        ).x
    return np.clip(x, lo, hi)


def active_set(x, lo, hi):
    return tuple(np.where(np.abs(x - lo) <= 1e-7, -1, np.where(np.abs(x - hi) <= 1e-7, 1, 0)))


def test_box_qp_meets_kkt_and_matches_scipy_bvls_on_random_qps():
    rng = np.random.default_rng(0)
    solver = BoxQPSolver()
    for _ in range(2000):
        J, t, p, lam, lo, hi = random_problem(rng)
        n = J.shape[1]
        res = solver.solve(DiffIKRequest(J, t, np.zeros(n), lo, hi, p, lam))
        assert res.success, res.message
        H = J.T @ J + lam**2 * np.eye(n)
        g = -(J.T @ t + lam**2 * p)
        assert kkt_residual(H, g, res.dq, lo, hi) < 1e-9
        ref = bvls_reference(J, t, p, lam, lo, hi)
        assert active_set(res.dq, lo, hi) == active_set(ref, lo, hi)
        assert np.allclose(res.dq, ref, atol=1e-7)
        assert res.active is not None
        assert np.array_equal(res.active, np.array(active_set(res.dq, lo, hi)) != 0)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_box_qp_matches_osqp_active_set(capfd):
    osqp = pytest.importorskip("osqp")
    rng = np.random.default_rng(1)
    for _ in range(300):
        J, t, p, lam, lo, hi = random_problem(rng)
        n = J.shape[1]
        H = J.T @ J + lam**2 * np.eye(n)
        g = -(J.T @ t + lam**2 * p)
        x, state, code, _ = solve_box_qp(H, g, lo, hi)
        assert code == 0
        prob = osqp.OSQP()
        prob.setup(
            sp.csc_matrix(np.triu(H)),
            g,
            sp.identity(n, format="csc"),
            np.where(np.isfinite(lo), lo, -1e30),
            np.where(np.isfinite(hi), hi, 1e30),
            eps_abs=1e-11,
            eps_rel=1e-11,
            polishing=True,
            verbose=False,
            max_iter=200000,
        )
        ref = np.clip(prob.solve(raise_error=False).x, lo, hi)
        assert active_set(x, lo, hi) == active_set(ref, lo, hi)
        # OSQP's first-order iterate is less accurate on ill-conditioned H; ours is no worse
        f_ours = 0.5 * x @ H @ x + g @ x
        f_osqp = 0.5 * ref @ H @ ref + g @ ref
        assert f_ours <= f_osqp + 1e-9 * (1.0 + abs(f_osqp))


def test_box_qp_past_its_iteration_cap_reports_failure_not_an_iterate():
    rng = np.random.default_rng(2)
    failures = 0
    for _ in range(200):
        n = 7
        J = rng.normal(size=(6, n))
        t = rng.normal(size=6) * 20.0  # far outside the box: many bounds to add and drop
        lo, hi = -0.05 * np.ones(n), 0.05 * np.ones(n)
        full = BoxQPSolver().solve(DiffIKRequest(J, t, np.zeros(n), lo, hi, np.zeros(n), 1e-3))
        capped = BoxQPSolver(max_iterations=1).solve(
            DiffIKRequest(J, t, np.zeros(n), lo, hi, np.zeros(n), 1e-3)
        )
        assert full.success
        if full.iterations > 1:
            failures += 1
            assert not capped.success
            assert "iteration cap" in capped.message
            assert np.array_equal(capped.dq, np.zeros(n))
        else:
            assert capped.success
    assert failures > 20  # the cap was actually exercised


def test_box_qp_reports_an_empty_box_and_a_nonconvex_problem():
    J = np.array([[1.0, 1.0]])
    res = BoxQPSolver().solve(
        DiffIKRequest(
            J,
            np.ones(1),
            np.zeros(2),
            np.array([0.0, 1.0]),
            np.array([1.0, 0.5]),
            np.zeros(2),
            1e-3,
        )
    )
    assert not res.success and "empty" in res.message
    res = BoxQPSolver().solve(
        DiffIKRequest(J, np.ones(1), np.zeros(2), -np.ones(2), np.ones(2), np.zeros(2), 0.0)
    )
    assert not res.success and "positive definite" in res.message


def test_box_qp_refuses_inequality_rows():
    J = np.eye(2)
    res = BoxQPSolver().solve(
        DiffIKRequest(
            J,
            np.ones(2),
            np.zeros(2),
            -np.ones(2),
            np.ones(2),
            np.zeros(2),
            1e-3,
            A_ineq=np.ones((1, 2)),
            b_ineq=np.ones(1),
        )
    )
    assert not res.success and "inequality" in res.message


def test_dls_equals_the_closed_form_inside_the_box():
    rng = np.random.default_rng(3)
    for _ in range(200):
        m, n = 6, 7
        J = rng.normal(size=(m, n))
        t = rng.normal(size=m) * 0.01
        p = rng.normal(size=n) * 0.01
        lam = 0.05
        res = DLSVelocitySolver().solve(
            DiffIKRequest(J, t, np.zeros(n), -10 * np.ones(n), 10 * np.ones(n), p, lam)
        )
        ref = p + J.T @ np.linalg.solve(J @ J.T + lam**2 * np.eye(m), t - J @ p)
        assert res.success
        assert np.allclose(res.dq, ref, atol=1e-12)
        # the same vector minimizes the damped objective (normal equations)
        grad = J.T @ (J @ res.dq - t) + lam**2 * (res.dq - p)
        assert np.max(np.abs(grad)) < 1e-10


def test_dls_scales_into_the_box_keeping_direction():
    J = np.eye(3)
    t = np.array([2.0, 1.0, 0.5])
    res = DLSVelocitySolver().solve(
        DiffIKRequest(J, t, np.zeros(3), -np.ones(3), np.ones(3), np.zeros(3), 1e-6)
    )
    assert np.allclose(res.dq / np.linalg.norm(res.dq), t / np.linalg.norm(t))
    assert np.isclose(np.max(np.abs(res.dq)), 1.0)
    # a box that excludes zero clips that joint and still scales the rest
    lo = np.array([-1.0, 0.2, -1.0])
    hi = np.array([1.0, 0.3, 1.0])
    res = DLSVelocitySolver().solve(
        DiffIKRequest(J, np.array([2.0, 0.0, 1.0]), np.zeros(3), lo, hi, np.zeros(3), 1e-6)
    )
    assert np.all(res.dq >= lo - 1e-15) and np.all(res.dq <= hi + 1e-15)
    assert np.isclose(res.dq[1], 0.2)


def test_requests_with_bad_shapes_or_nan_raise_named_errors():
    J = np.eye(2)
    with pytest.raises(ShapeError, match="task"):
        BoxQPSolver().solve(
            DiffIKRequest(J, np.ones(3), np.zeros(2), -np.ones(2), np.ones(2), np.zeros(2))
        )
    with pytest.raises(NonFiniteError, match="jacobian"):
        DLSVelocitySolver().solve(
            DiffIKRequest(J * np.nan, np.ones(2), np.zeros(2), -np.ones(2), np.ones(2), np.zeros(2))
        )


def test_as_result_turns_wrong_shapes_and_nan_into_failures():
    assert not as_result(np.ones(3), 2).success
    assert not as_result(np.array([np.nan, 0.0]), 2).success
    assert not as_result("nonsense", 2).success
    ok = as_result(np.array([0.1, 0.2]), 2)
    assert ok.success and np.allclose(ok.dq, [0.1, 0.2])

    class Plain(DifferentialIK):
        def solve(self, request):
            return request.task[: request.jacobian.shape[1]]

    out = as_result(
        Plain().solve(
            DiffIKRequest(np.eye(2), np.ones(2), np.zeros(2), -np.ones(2), np.ones(2), np.zeros(2))
        ),
        2,
    )
    assert isinstance(out, DiffIKResult) and out.success


def test_a_result_says_why_with_a_step_status():
    from ikstack.diffik import StepStatus

    assert DiffIKResult(np.zeros(2)).status is StepStatus.OK
    gave_up = DiffIKResult(np.zeros(2), False, "gave up", 4)  # no status given: did not solve
    assert (gave_up.success, gave_up.status, gave_up.message) == (
        False,
        StepStatus.QP_INFEASIBLE,
        "gave up",
    )
    assert DiffIKResult(np.zeros(2), False, status="qp_failed").status is StepStatus.QP_FAILED
    with pytest.raises(InputError, match="success=True with status 'qp_failed'"):
        DiffIKResult(np.zeros(2), True, status=StepStatus.QP_FAILED)
    # unusable output is QP_FAILED; a solver's own failure keeps its status through as_result
    for bad in (np.ones(3), np.array([np.nan, 0.0]), "nonsense"):
        assert as_result(bad, 2).status is StepStatus.QP_FAILED
    assert as_result(gave_up, 2).status is StepStatus.QP_INFEASIBLE
    assert as_result(np.zeros(2), 2).status is StepStatus.OK
    # undamped DLS on a rank-deficient task: J J^T is singular
    J = np.array([[1.0, 0.0], [1.0, 0.0]])
    req = DiffIKRequest(J, np.ones(2), np.zeros(2), -np.ones(2), np.ones(2), np.zeros(2), 0.0)
    r = DLSVelocitySolver().solve(req)
    assert not r.success and r.status is StepStatus.QP_FAILED and "singular" in r.message
    rows = DiffIKRequest(
        np.eye(2),
        np.ones(2),
        np.zeros(2),
        -np.ones(2),
        np.ones(2),
        np.zeros(2),
        A_ineq=np.ones((1, 2)),
        b_ineq=np.ones(1),
    )
    r = BoxQPSolver().solve(rows)
    assert not r.success and r.status is StepStatus.QP_INFEASIBLE
