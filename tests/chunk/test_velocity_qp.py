"""The published port's velocity QP: Jacobian, problem assembly, duration, failures, lag guard,
reset."""

from __future__ import annotations

import math

import numpy as np
import osqp
import pytest
import scipy.sparse as sp
from chunk_helpers import Q0_DEG
from scipy.spatial.transform import Rotation

from ikstack.diffik import (
    ActiveSetQPSolver,
    DiffIKRequest,
    DiffQPConfig,
    OsqpQPSolver,
    StepStatus,
    joint_limit_cost,
)
from ikstack.errors import (
    ConfigError,
    InputError,
    NonFiniteError,
    NotRigidTransformError,
    ShapeError,
)
from ikstack.kinematics import fk, jacobian_fd
from ikstack.model import LinearJointConstraint
from ikstack.spatial import rotvec_to_matrix, so3

D = math.pi / 180.0


def nudged(T, dx=0.0, dz=0.0, rz_deg=0.0):
    T = np.array(T, copy=True)
    T[0, 3] += dx
    T[2, 3] += dz
    T[:3, :3] = rotvec_to_matrix([0.0, 0.0, rz_deg * D]) @ T[:3, :3]
    return T


# ---------------------------------------------------------------- kinematics of the QP
def test_flange_jacobian_matches_finite_differences_including_flange_offset(taccap_arms):
    arm = taccap_arms["left"]
    qp = OsqpQPSolver(arm)
    rng = np.random.default_rng(3)
    for q in arm.random_q(rng, 5):
        T, J = qp.flange_fk_jacobian(q)
        Jfd = jacobian_fd(lambda x: qp.flange_fk_jacobian(x)[0], q, eps=1e-6)
        np.testing.assert_allclose(J, Jfd, atol=1e-8)
        # the flange is the tip (with its 95 mm static offset), not the tool and not joint 7
        np.testing.assert_allclose(T @ arm.T_tip_tcp, fk(arm, q), atol=1e-12)
        T7 = T @ np.linalg.inv(arm.T_last_tip)
        assert np.linalg.norm(T[:3, 3] - T7[:3, 3]) == pytest.approx(0.095, abs=1e-9)


def test_joint_limit_cost_gradient_matches_finite_differences_in_both_forms():
    lo = np.array([-170, -120, -170, -145, -170, -60, -90.0])
    hi = np.array([170, 120, 170, 60, 170, 60, 90.0])
    q = np.array([160.0, -110, 0, 50, 10, -45, 80])
    w = np.array([1, 2, 1, 1, 0.5, 1, 3.0])
    for band in (25.0, None):
        c, g = joint_limit_cost(q, lo, hi, w, band)
        fd = np.array(
            [
                (
                    joint_limit_cost(q + e, lo, hi, w, band)[0]
                    - joint_limit_cost(q - e, lo, hi, w, band)[0]
                )
                / 2e-6
                for e in np.eye(7) * 1e-6
            ]
        )
        np.testing.assert_allclose(g, fd, atol=1e-9)
        assert c > 0
    # band form: joints outside their band contribute nothing; the factor is 1/(2 n) = 1/14
    c, g = joint_limit_cost(q, lo, hi, None, 25.0)
    assert g[2] == 0.0 and g[4] == 0.0 and g[0] != 0.0
    inside = {0: 10.0, 1: 10.0, 3: 10.0, 5: 15.0, 6: 10.0}  # distance to the nearest limit
    assert c == pytest.approx(sum(((25 - m) / 25) ** 2 for m in inside.values()) / 14, rel=1e-12)
    c0, g0 = joint_limit_cost(np.zeros(7), lo, hi, None, 25.0)
    assert c0 == 0.0 and not g0.any()


def _reference_qp(arm, q, T_t, dt, margin_deg=5.0, cm_deg=5.0):
    """algorithms.md written out in numpy, in mm/deg."""
    Tf, J = OsqpQPSolver(arm).flange_fk_jacobian(q)
    Jm = J.copy()
    Jm[:3] *= 1000 * D
    v = (
        np.concatenate(
            [1000 * (T_t[:3, 3] - Tf[:3, 3]), np.degrees(so3.log(T_t[:3, :3] @ Tf[:3, :3].T))]
        )
        / dt
    )
    W = np.eye(6)
    lo, hi = np.degrees(arm.lower), np.degrees(arm.upper)
    _, grad = joint_limit_cost(np.degrees(q), lo, hi, None, 25.0)
    P = 2 * (Jm.T @ W @ Jm + 1e-3 * np.eye(7))
    c = -2 * Jm.T @ W @ v + 1000 * dt * grad
    vmax = np.degrees(arm.velocity_limits)
    lb = np.maximum(-vmax, (lo + margin_deg - np.degrees(q)) / dt)
    ub = np.minimum(vmax, (hi - margin_deg - np.degrees(q)) / dt)
    q6, q7 = np.degrees(q[5]), np.degrees(q[6])
    s = -1.025 if (q6 >= 0) == (q7 >= 0) else 1.025
    b = s * q6 + (110.5 if q7 >= 0 else -110.5)
    G = np.zeros(7)
    if q7 >= 0:
        gap = q7 - b
        G[5], G[6] = -s, 1.0
    else:
        gap = b - q7
        G[5], G[6] = s, -1.0
    h = (-cm_deg - gap) / dt
    return P, c, lb, ub, G, h


@pytest.mark.parametrize("q6,q7", [(30, 40), (-30, 40), (-30, -40), (30, -40)])
def test_built_qp_matches_the_published_equations_in_every_j6_j7_quadrant(marvin_left, q6, q7):
    q = np.radians([150.0, 20, 0, -60, 0, q6, q7])  # joint 1 inside its 25 deg band
    T_t = nudged(fk(marvin_left, q), dx=0.002, rz_deg=1.0)
    data = OsqpQPSolver(marvin_left).build(q, T_t, 0.004)
    P, c, lb, ub, G, h = _reference_qp(marvin_left, q, T_t, 0.004)
    np.testing.assert_allclose(data.P, P, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(data.c, c, rtol=1e-10, atol=1e-6)
    np.testing.assert_allclose(data.lower, lb, rtol=1e-12)
    np.testing.assert_allclose(data.upper, ub, rtol=1e-12)
    np.testing.assert_allclose(data.G[0], G, atol=1e-12)
    assert data.h[0] == pytest.approx(h, rel=1e-12)
    _, grad = joint_limit_cost(
        np.degrees(q), np.degrees(marvin_left.lower), np.degrees(marvin_left.upper), None, 25.0
    )
    assert grad[0] != 0.0  # the band is active on joint 1


# ---------------------------------------------------------------- caps and inputs
def test_far_target_is_velocity_capped_and_reported_as_lag_under_abort(marvin_left):
    q = np.radians(Q0_DEG["left"])
    T_far = nudged(fk(marvin_left, q), dx=0.2)
    qp = OsqpQPSolver(marvin_left)
    r = qp.step(q, T_far, 0.008)
    assert r.status == StepStatus.TRACKING_LAG and not r.success
    np.testing.assert_array_equal(r.q, q)
    rep = OsqpQPSolver(marvin_left, DiffQPConfig(lag_policy="report")).step(q, T_far, 0.008)
    assert rep.success and rep.lag_exceeded
    assert np.all(np.abs(rep.qdot) <= marvin_left.velocity_limits * (1 + 1e-9))
    assert np.abs(rep.qdot).max() == pytest.approx(marvin_left.velocity_limits[0], rel=1e-6)
    np.testing.assert_allclose(rep.q, q + rep.qdot * 0.008, atol=1e-15)
    assert rep.position_residual_m > 0.005


def test_step_integrates_the_callers_duration_uncapped_and_floored_at_a_microsecond(marvin_left):
    q = np.radians(Q0_DEG["left"])
    T = nudged(fk(marvin_left, q), dx=0.0005)
    # dt_max_s bounds the chunk decoder's substeps, never the solver's step
    qp = OsqpQPSolver(marvin_left, DiffQPConfig(dt_max_s=0.05, lag_policy="report"))
    r = qp.step(q, nudged(fk(marvin_left, q), dx=0.3), 0.5)
    assert r.dt == 0.5 and r.success
    # a far target saturates a joint for the whole half second; a 0.1 s cap would stop at 1/5
    # (to OSQP's default accuracy)
    assert np.abs(r.q - q).max() == pytest.approx(marvin_left.velocity_limits[0] * 0.5, rel=1e-3)
    np.testing.assert_allclose(r.q, q + r.qdot * 0.5, atol=1e-15)
    assert qp.step(q, T, 0.0).dt == 1e-6
    assert qp.step(q, T, 0.004).dt == 0.004


@pytest.mark.parametrize(
    "bad,err",
    [
        (dict(q=[0.0] * 6), ShapeError),
        (dict(q=[0.0] * 6 + [np.nan]), NonFiniteError),
        (dict(T="scaled"), NotRigidTransformError),
        (dict(T="nan"), NonFiniteError),
        (dict(T="shape"), ShapeError),
        (dict(dt=np.nan), InputError),
        (dict(dt=-0.004), InputError),
        (dict(dt="4ms"), InputError),
    ],
)
def test_invalid_step_inputs_raise_named_errors(marvin_left, bad, err):
    q = np.radians(Q0_DEG["left"])
    T = fk(marvin_left, q)
    if bad.get("T") == "scaled":
        T = T.copy()
        T[:3, :3] *= 1.1
    elif bad.get("T") == "nan":
        T = T.copy()
        T[0, 3] = np.nan
    elif bad.get("T") == "shape":
        T = T[:3]
    with pytest.raises(err):
        OsqpQPSolver(marvin_left).step(bad.get("q", q), T, bad.get("dt", 0.004))


def test_invalid_configs_name_the_field():
    for kw, field in (
        (dict(w_pos=-1.0), "w_pos"),
        (dict(lam=np.inf), "lam"),
        (dict(max_lag_mm=0.0), "max_lag_mm"),
        (dict(lag_policy="warn"), "lag_policy"),
        (dict(nullspace_weights=[1, -1, 1, 1, 1, 1, 1]), "nullspace_weights"),
        (dict(coupled_margin_deg=0.0), "coupled_margin_deg"),
        (dict(qp_solver="cvx"), "qp_solver"),
    ):
        with pytest.raises(ConfigError, match=field):
            DiffQPConfig(**kw)


def test_margin_below_the_kinematic_margin_and_wrong_weight_count_are_refused(marvin_left):
    with pytest.raises(ConfigError, match="kinematic margin"):
        OsqpQPSolver(marvin_left, DiffQPConfig(limit_margin_deg=4.0))
    with pytest.raises(ConfigError, match="one finite non-negative weight per joint"):
        OsqpQPSolver(marvin_left, DiffQPConfig(nullspace_weights=[1.0] * 6))
    assert OsqpQPSolver(
        marvin_left, DiffQPConfig(limit_margin_deg=8.0)
    ).limit_margin == pytest.approx(8 * D)


# ---------------------------------------------------------------- failures and post-checks
def test_empty_box_is_reported_before_the_qp_solver_is_touched(marvin_left, monkeypatch):
    q = np.radians([10.0, 30, 0, 57.0, 0, 20, 10])  # J4 inside its 5 deg margin (upper 60)
    T = fk(marvin_left, q)
    qp = OsqpQPSolver(marvin_left)

    def boom(*a, **k):
        raise AssertionError("OSQP must not be updated for an empty box")

    monkeypatch.setattr(osqp.OSQP, "setup", boom)
    monkeypatch.setattr(osqp.OSQP, "update", boom)
    monkeypatch.setattr(qp, "_solve", boom)
    r = qp.step(q, T, 0.004)
    assert r.status == StepStatus.QP_INFEASIBLE and r.qp_status == "empty_box"
    assert "joint4" in r.message
    np.testing.assert_array_equal(r.q, q)


def test_unsolved_or_non_finite_qp_output_fails_the_step(marvin_left, monkeypatch):
    q = np.radians(Q0_DEG["left"])
    T = nudged(fk(marvin_left, q), dx=0.0005)
    qp = OsqpQPSolver(marvin_left)
    monkeypatch.setattr(qp, "_solve", lambda data: (None, "primal infeasible", 7))
    r = qp.step(q, T, 0.004)
    assert r.status == StepStatus.QP_INFEASIBLE and "primal infeasible" in r.message
    monkeypatch.setattr(qp, "_solve", lambda data: (np.full(7, np.nan), "solved", 3))
    assert qp.step(q, T, 0.004).status == StepStatus.QP_FAILED


def test_solved_step_is_clipped_to_the_box_then_rechecked(marvin_left, monkeypatch):
    q = np.radians(Q0_DEG["left"])
    T = nudged(fk(marvin_left, q), dx=0.0005)
    qp = OsqpQPSolver(marvin_left, DiffQPConfig(lag_policy="report"))
    monkeypatch.setattr(qp, "_solve", lambda data: (np.full(7, 1e6), "solved", 1))
    r = qp.step(q, T, 0.004)
    assert r.success
    np.testing.assert_allclose(r.qdot, marvin_left.velocity_limits, rtol=1e-12)


def test_step_that_breaks_the_coupled_constraint_is_rejected_before_lag(marvin_left, monkeypatch):
    # q6 = 40, q7 = 69 deg: 0.5 deg inside the diamond's edge |q7| + 1.025 |q6| <= 110.5 deg
    q = np.radians([10.0, 30, 0, -60, 0, 40.0, 69.0])
    con = marvin_left.constraints[0]
    assert con.residual(q)[0] == pytest.approx(-0.5 * D)
    qp = OsqpQPSolver(marvin_left)
    x = np.zeros(7)
    x[6] = 40.0  # [deg/s] within the velocity box; over 30 ms it moves q7 by 1.2 deg: too far
    monkeypatch.setattr(qp, "_solve", lambda data: (x.copy(), "solved", 1))
    T_far = nudged(fk(marvin_left, q), dx=0.1)
    r = qp.step(q, T_far, 0.03)
    assert r.status == StepStatus.COUPLED_JOINT
    assert r.lag_exceeded  # the lag is over the guard too: coupled_joint takes priority
    np.testing.assert_array_equal(r.q, q)


def test_qp_row_keeps_the_coupled_constraint_with_its_buffer(marvin_left):
    q = np.radians([10.0, 30, 0, -60, 0, 40.0, 68.0])  # 1.5 deg inside the diamond's edge
    T = fk(marvin_left, q + np.radians([0, 0, 0, 0, 0, 0, 3.0]))  # asks q7 to rise 3 deg
    con = marvin_left.constraints[0]
    cfg = DiffQPConfig(lag_policy="report", coupled_margin_deg=1.0)  # an explicit 1 deg buffer
    free = OsqpQPSolver(marvin_left.with_constraints([]), cfg).step(q, T, 0.03)
    assert con.residual(free.q)[0] > -math.radians(1.0)  # without the row: inside the buffer
    tight = DiffQPConfig(lag_policy="report", coupled_margin_deg=1.0, eps_abs=1e-9, eps_rel=1e-9)
    for solver, c, tol in (
        (OsqpQPSolver, cfg, 1e-4),
        (OsqpQPSolver, tight, 1e-7),
        (ActiveSetQPSolver, cfg, 1e-7),
    ):
        r = solver(marvin_left, c).step(q, T, 0.03)
        assert r.success
        assert con.residual(r.q)[0] == pytest.approx(-math.radians(1.0), abs=tol)


def test_a_linear_row_reaches_osqp_after_the_quadrant_rows_and_keeps_its_buffer(marvin_left):
    """A constraint other than a quadrant polynomial is linearized in Python and written after
    the compiled quadrant rows; OSQP's data in its fixed pattern must hold both (checked against
    the dense problem rebuilt here from the constraint's own ``A q <= b``)."""
    q = np.radians([10.0, 30, 0, -60, 0, 20, 10])
    lin = LinearJointConstraint(A=np.eye(7)[[1]], b=np.array([q[1] + math.radians(1.5)]))
    arm = marvin_left.with_constraints([*marvin_left.constraints, lin])
    T = fk(arm, q + np.radians([0, 3.0, 0, 0, 0, 0, 0]))  # asks joint 2 to rise 3 deg
    cfg = DiffQPConfig(lag_policy="report", coupled_margin_deg=1.0, eps_abs=1e-9, eps_rel=1e-9)
    dt, k = 0.03, 180.0 / math.pi  # seed units: deg per rad for the row and the joint alike
    for solver in (OsqpQPSolver, ActiveSetQPSolver):
        qp = solver(arm, cfg)
        d = qp.build(q, T, dt)
        assert d.G.shape == (2, 7)  # the quadrant row, then the linear one
        np.testing.assert_array_equal(d.G[1], lin.A[0] * k / k)
        h = k * (-math.radians(1.0) - (lin.A[0] @ q - lin.b[0])) / dt
        assert d.h[1] == pytest.approx(h, rel=1e-12)
        if solver is OsqpQPSolver:  # OSQP's vectors in its pattern: [I; G] x in [l, u]
            w = qp._ws.work
            Am = qp._pattern[1]
            A = sp.csc_matrix((w.Ax, Am.indices, Am.indptr), shape=(9, 7)).toarray()
            np.testing.assert_array_equal(A, np.vstack([np.eye(7), d.G]))
            np.testing.assert_array_equal(w.l, np.r_[d.lower, -1e30, -1e30])
            np.testing.assert_array_equal(w.u, np.r_[d.upper, d.h])
        r = qp.step(q, T, dt)
        assert r.success
        assert lin.residual(r.q)[0] == pytest.approx(-math.radians(1.0), abs=1e-7)


def test_tracking_lag_under_both_policies_and_euler_guard(marvin_left):
    q = np.radians(Q0_DEG["left"])
    T = nudged(fk(marvin_left, q), rz_deg=3.0)  # pure rotation: position residual stays small
    ab = OsqpQPSolver(marvin_left, DiffQPConfig(max_lag_deg=0.5)).step(q, T, 0.004)
    assert ab.status == StepStatus.TRACKING_LAG and ab.lag_exceeded
    rep = OsqpQPSolver(marvin_left, DiffQPConfig(max_lag_deg=0.5, lag_policy="report")).step(
        q, T, 0.004
    )
    assert rep.success and rep.lag_exceeded
    Tf = OsqpQPSolver(marvin_left).flange_fk_jacobian(rep.q)[0]
    e = Rotation.from_matrix(Tf[:3, :3]).as_euler("xyz", degrees=True) - Rotation.from_matrix(
        T[:3, :3]
    ).as_euler("xyz", degrees=True)
    assert rep.euler_residual_deg == pytest.approx(np.abs((e + 180) % 360 - 180).max(), rel=1e-9)
    assert rep.position_residual_m * 1000 < 5.0
    ok = OsqpQPSolver(marvin_left, DiffQPConfig(max_lag_deg=5.0)).step(q, T, 0.004)
    assert ok.success and not ok.lag_exceeded


def test_reset_makes_a_chunk_independent_of_earlier_solves(marvin_right):
    q0 = np.radians(Q0_DEG["right"])
    T = nudged(fk(marvin_right, q0), dx=0.003)

    def run(qp):
        qp.reset()
        q, out = q0.copy(), []
        for _ in range(6):
            r = qp.step(q, T, 0.004)
            out.append(r.q)
            q = r.q
        return np.array(out)

    fresh = run(OsqpQPSolver(marvin_right))
    used = OsqpQPSolver(marvin_right)
    for k in range(5):
        used.step(q0, nudged(fk(marvin_right, q0), dx=-0.01, rz_deg=k), 0.03)
    np.testing.assert_array_equal(run(used), fresh)


# ---------------------------------------------------------------- solvers agree
def test_tight_osqp_and_active_set_solvers_agree_on_single_steps(marvin_left, marvin_right):
    rng = np.random.default_rng(7)
    tight = DiffQPConfig(eps_abs=1e-9, eps_rel=1e-9, max_iter=20000)
    for arm in (marvin_left, marvin_right):
        a, b = OsqpQPSolver(arm, tight), ActiveSetQPSolver(arm)
        for _ in range(40):
            q = np.clip(arm.random_q(rng), arm.lower + 6 * D, arm.upper - 6 * D)
            if not arm.constraints_satisfied(q, margin=2 * D):
                continue
            T = nudged(fk(arm, q), dx=rng.uniform(-3e-3, 3e-3), rz_deg=rng.uniform(-2, 2))
            dt = float(rng.choice([0.0005, 0.004, 0.008, 0.03]))
            a.reset()
            b.reset()
            ra, rb = a.step(q, T, dt), b.step(q, T, dt)
            assert ra.status == rb.status
            np.testing.assert_allclose(np.degrees(ra.q), np.degrees(rb.q), atol=1e-4)


def test_generic_request_honours_inequality_rows(marvin_left):
    rng = np.random.default_rng(1)
    J = rng.normal(size=(6, 7))
    req = DiffIKRequest(
        J,
        rng.normal(size=6),
        np.zeros(7),
        -np.ones(7),
        np.ones(7),
        np.zeros(7),
        damping=0.05,
        A_ineq=np.ones((1, 7)),
        b_ineq=np.array([-0.5]),
    )
    a = OsqpQPSolver(marvin_left, DiffQPConfig(eps_abs=1e-9, eps_rel=1e-9)).solve(req)
    b = ActiveSetQPSolver(marvin_left).solve(req)
    assert a.success and b.success and OsqpQPSolver.supports_inequalities
    assert b.dq.sum() <= -0.5 + 1e-9 and a.dq.sum() <= -0.5 + 1e-5
    np.testing.assert_allclose(a.dq, b.dq, atol=1e-5)
    empty = DiffIKRequest(J, np.zeros(6), np.zeros(7), np.ones(7), -np.ones(7), np.zeros(7))
    assert not OsqpQPSolver(marvin_left).solve(empty).success


def test_seed_units_and_si_units_weight_the_task_differently(marvin_left):
    q = np.radians(Q0_DEG["left"])
    T = nudged(fk(marvin_left, q), dx=0.003, rz_deg=2.0)
    mm = OsqpQPSolver(marvin_left).step(q, T, 0.004)
    si = OsqpQPSolver(marvin_left, DiffQPConfig(internal_units="si")).step(q, T, 0.004)
    assert mm.success and si.success
    assert np.abs(mm.q - si.q).max() > 1e-6
