"""ikstack's chunk decoder against an independent re-implementation of the published Tianji
differential-IK port (``diffik_reference``: numpy, SciPy and OSQP only, no ikstack code).

A small version of ``benchmarks/parity_diffik.py``: random two-arm H16 chunks of every kind
(nominal, lag-tripping, J6/J7-pushing, starting inside an edge, jumps) under both lag
policies must get the same verdicts, and the same joints within 1e-4 deg after every substep.
"""

from __future__ import annotations

import ast
import math
import subprocess
import sys
from pathlib import Path

import diffik_reference as ref
import numpy as np
import osqp
import pytest
from diffik_parity import Side
from scipy.spatial.transform import Rotation

from ikstack.diffik import DiffQPConfig, OsqpQPSolver, StepStatus
from ikstack.diffik import _qp_kernels as QK
from ikstack.kinematics import fk
from ikstack.robots import load

HERE = Path(__file__).resolve().parent


# ---------------------------------------------------------------- the reference is independent
def test_the_reference_imports_no_ikstack_code():
    tree = ast.parse((HERE / "diffik_reference.py").read_text())
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert names and not [
        m
        for m in names
        if m.split(".")[0] not in ("__future__", "math", "dataclasses", "numpy", "osqp", "scipy")
    ]
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import diffik_reference; "
        "bad = [m for m in sys.modules if m.split('.')[0] == 'ikstack']; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code, str(HERE)], check=True, timeout=120)


def test_the_references_geometry_and_rotations_agree_with_ikstack_and_scipy():
    rng = np.random.default_rng(0)
    for side in ("left", "right"):
        arm = load(f"marvin_{side}_taccap")
        lo, hi = ref.limits_deg(side)
        np.testing.assert_allclose(np.radians(lo), arm.lower, atol=1e-15)
        np.testing.assert_allclose(np.radians(hi), arm.upper, atol=1e-15)
        for q in rng.uniform(-2, 2, (5, 7)):
            np.testing.assert_allclose(ref.tcp_fk(q), fk(arm, q), atol=1e-12)
    for w in rng.normal(size=(200, 3)) * rng.uniform(0, 1, (200, 1)):
        R = Rotation.from_rotvec(w).as_matrix()
        np.testing.assert_allclose(ref.rotvec(R), Rotation.from_matrix(R).as_rotvec(), atol=1e-12)
        np.testing.assert_allclose(ref.rotation_matrix(w), R, atol=1e-12)


# ---------------------------------------------------------------- the sweep
@pytest.fixture(scope="module")
def sweep():
    chunks = ref.random_chunks(seed=20261201, count=24)
    return {
        policy: [Side(policy).compare(kind, c) for kind, c in chunks]
        for policy in ("abort", "report")
    }


@pytest.mark.parametrize("policy", ["abort", "report"])
def test_verdicts_and_every_substeps_joints_agree_with_the_reference(sweep, policy):
    rows = sweep[policy]
    bad = [(r.kind, r.ikstack, r.reference, r.exceedances) for r in rows if not r.verdicts_agree]
    assert not bad, bad
    assert max(r.max_joint_diff_deg for r in rows) < 1e-4
    assert max(r.max_target_diff for r in rows) < 1e-9  # segments from the reached FK
    assert max(r.max_lag_mm_diff for r in rows) < 1e-6
    assert sum(r.substeps_compared for r in rows) > 24 * 100


def test_the_sweep_covers_every_verdict_and_edge(sweep):
    ab, rep = sweep["abort"], sweep["report"]
    reasons = {v[0] for r in ab for v in r.reference.values()}
    assert {"ok", "tracking_lag", "qp_infeasible"} <= reasons
    assert any(e[1] > 0 for r in rep for e in r.exceedances.values())  # reported lag
    assert any(r.j67_binding for r in ab if r.kind == "j67_push")  # the J6/J7 row holds
    inside = [v for r in ab if r.kind == "inside_edge" for v in r.reference.values()]
    assert ("ok", -1, -1) in inside and any(v[0] == "qp_infeasible" for v in inside)


# ---------------------------------------------------------------- single points of the port
def _j67_start(gap_deg: float) -> np.ndarray:
    """Left-arm joints [rad] whose J6/J7 gap is ``gap_deg`` (q6 = 30, q7 > 0)."""
    q = np.array([10.0, 30, 0, -60, 0, 30, 0])
    q[6] = 110.5 - 1.025 * 30 + gap_deg
    assert ref.j67_gap_deg(q) == pytest.approx(gap_deg, abs=1e-12)
    return np.radians(q)


@pytest.mark.parametrize("j67_margin,verdict", [(None, "qp_infeasible"), (1.0, "ok")])
def test_a_step_starting_inside_the_inherited_j67_buffer_is_infeasible(j67_margin, verdict):
    arm = load("marvin_left")
    q = _j67_start(-2.5)  # 2.5 deg inside the J6/J7 edge: inside the inherited 5 deg buffer
    T = ref.flange_fk_jacobian(q)[0]
    cfg = DiffQPConfig(coupled_margin_deg=j67_margin)
    mine = OsqpQPSolver(arm, cfg).step(q, T, 0.004)
    theirs = ref.RefDiffIK("left", ref.RefConfig(j67_margin_deg=j67_margin)).step(q, T, 0.004)
    assert theirs.reason == verdict
    assert mine.status.value == verdict
    if verdict == "ok":
        np.testing.assert_allclose(np.degrees(mine.q), np.degrees(theirs.q_rad), atol=1e-6)
    # just inside the buffer the first step must (and can) move out of it
    q = _j67_start(-4.9)
    mine = OsqpQPSolver(arm, cfg).step(q, T, 0.004)
    assert mine.success
    assert ref.j67_gap_deg(np.degrees(mine.q)) <= -(5.0 if j67_margin is None else 1.0) + 1e-3


def _rotations(rng: np.random.Generator, n: int) -> np.ndarray:
    R = Rotation.random(n, random_state=rng).as_matrix()
    # and some at or near the gimbal lock of the extrinsic xyz angles (pitch +-90 deg)
    lock = Rotation.from_euler(
        "xyz",
        np.column_stack(
            [
                rng.uniform(-180, 180, 40),
                np.repeat([90.0, -90.0], 20)
                + rng.choice([0.0, 1e-9, -1e-9, 1e-6, -1e-6, 1e-3, -1e-3, 0.05], 40),
                rng.uniform(-180, 180, 40),
            ]
        ),
        degrees=True,
    ).as_matrix()
    return np.concatenate([R, lock])


def _scipy_residual(Rt: np.ndarray, R: np.ndarray) -> float:
    e = Rotation.from_matrix(R).as_euler("xyz", degrees=True) - Rotation.from_matrix(Rt).as_euler(
        "xyz", degrees=True
    )
    return float(np.abs((e + 180.0) % 360.0 - 180.0).max())


@pytest.mark.filterwarnings("ignore:Gimbal lock detected")  # SciPy's, on the test's own calls
def test_euler_residual_is_scipys_extrinsic_xyz_wrapped():
    from ikstack.diffik.qp_step import euler_residual_deg

    rng = np.random.default_rng(5)
    Rs = _rotations(rng, 400)
    for Rt in Rs[::7]:
        for R in Rs[::11]:
            want = _scipy_residual(Rt, R)
            got = QK.euler_residual_deg(Rt, R)
            if math.isnan(got):  # near the lock: the step defers to SciPy
                assert min(1 - abs(R[2, 0]), 1 - abs(Rt[2, 0])) < QK.EULER_LOCK_TOL
                got = euler_residual_deg(Rt, R)
            assert got == pytest.approx(want, abs=1e-9)
    # 2,000 random 1-degree perturbations judged against a 1 deg guard: SciPy's verdicts
    flips = 0
    for R in Rotation.random(2000, random_state=rng).as_matrix():
        axis = rng.normal(size=3)
        Rp = Rotation.from_rotvec(np.radians(1.0) * axis / np.linalg.norm(axis)).as_matrix() @ R
        got = QK.euler_residual_deg(R, Rp)
        if math.isnan(got):
            got = euler_residual_deg(R, Rp)
        flips += (got > 1.0) != (_scipy_residual(R, Rp) > 1.0)
    assert flips == 0


def test_a_steps_euler_residual_and_guard_follow_scipy():
    arm = load("marvin_left")
    q = np.radians([10.0, 30, 0, -60, 0, 20, 10])
    T = ref.flange_fk_jacobian(q)[0]
    T[:3, :3] = Rotation.from_rotvec([0, 0, np.radians(3.0)]).as_matrix() @ T[:3, :3]
    for guard in (0.5, 5.0):
        r = OsqpQPSolver(arm, DiffQPConfig(max_lag_deg=guard, lag_policy="report")).step(
            q, T, 0.004
        )
        reached = ref.flange_fk_jacobian(r.q)[0]  # the reference's own FK of the reached joints
        want = _scipy_residual(T[:3, :3], reached[:3, :3])
        assert r.euler_residual_deg == pytest.approx(want, abs=1e-9)
        assert r.lag_exceeded == (want > guard)
    # a target exactly at the gimbal lock (extrinsic pitch 90 deg): SciPy's own split of angles
    T_lock = T.copy()
    T_lock[:3, :3] = Rotation.from_euler("xyz", [20.0, 90.0, 0.0], degrees=True).as_matrix()
    r = OsqpQPSolver(arm, DiffQPConfig(max_lag_deg=1.0, lag_policy="report")).step(q, T_lock, 0.004)
    reached = ref.flange_fk_jacobian(r.q)[0]
    with pytest.warns(UserWarning, match="Gimbal lock"):
        want = _scipy_residual(T_lock[:3, :3], reached[:3, :3])
    assert r.euler_residual_deg == pytest.approx(want, abs=1e-9)


def test_osqp_runs_with_its_defaults_as_the_port_does():
    arm = load("marvin_left")
    q = np.radians([10.0, 30, 0, -60, 0, 20, 10])
    T = fk(arm, q)
    T[0, 3] += 0.002
    defaults = osqp.OSQP()
    defaults.setup(None, np.zeros(1), None, None, None)
    qp = OsqpQPSolver(arm)
    qp.reset()
    qp.step(q, T, 0.004)
    got = qp._prob.settings
    for name in (
        "eps_abs",
        "eps_rel",
        "max_iter",
        "scaling",
        "adaptive_rho",
        "adaptive_rho_interval",
        "rho",
        "sigma",
        "alpha",
        "check_termination",
        "eps_prim_inf",
        "eps_dual_inf",
    ):
        assert getattr(got, name) == getattr(defaults.settings, name), name
    assert (got.polishing, got.warm_starting, got.verbose) == (0, 1, 0)
    tight = OsqpQPSolver(arm, DiffQPConfig(eps_abs=1e-9, eps_rel=1e-9, max_iter=20000))
    tight.step(q, T, 0.004)
    assert (tight._prob.settings.eps_abs, tight._prob.settings.max_iter) == (1e-9, 20000)
    # a reset drops the problem: the next step sets OSQP up afresh from its own data
    qp.reset()
    assert qp._prob is None
    assert qp.step(q, T, 0.004).status == StepStatus.OK and qp._prob is not None
