"""Completeness at the edges, against Pinocchio: 7R arms whose lock or swivel sampling can miss
a narrow feasible interval (coarse grids, the elbow nearly straight on a rounded URDF), and the
general (elimination) mode at nearly double roots. Targets come from Pinocchio's FK of URDF
files (example-robot-data's Panda and UR5, the bundled iiwa14 URDF with its origins moved by
URDF-level rounding) and every answer is checked with Pinocchio's FK."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ikstack.ik.analytic import AnalyticIK
from ikstack.model.urdf import load_urdf
from ikstack.robots import data_path

pin = pytest.importorskip("pinocchio")


def _pin(path, tip):
    model = pin.buildModelFromUrdf(str(path))
    return model, model.createData(), model.getFrameId(tip)


def _fk(model, data, fid, q):
    out = np.empty((len(q), 4, 4))
    for i, x in enumerate(q):
        pin.framesForwardKinematics(model, data, x)
        out[i] = data.oMf[fid].homogeneous
    return out


def _pin_errors(model, data, fid, q, T):
    F = _fk(model, data, fid, q)
    pe = np.linalg.norm(F[:, :3, 3] - T[:, :3, 3], axis=1)
    R = np.einsum("nji,njk->nik", F[:, :3, :3], T[:, :3, :3])
    re = np.arccos(np.clip((np.trace(R, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0))
    return pe, re


def _inside(chain, rng, n):
    km = chain.kinematic_margin
    return rng.uniform(chain.lower + km, chain.upper - km, (n, chain.dof))


def test_a_coarse_lock_grid_is_refined_where_no_slot_certifies(erd_dir):
    # 8 lock samples are 0.8 rad apart on Panda's joint 7: a feasible interval of the locked
    # angle narrower than that is missed by the grid (several in 150 targets before adaptive
    # refinement); refinement finds every one
    path = erd_dir / "panda_description" / "urdf" / "panda.urdf"
    model, data, fid = _pin(path, "panda_link8")
    chain = load_urdf(path, "panda_link0", "panda_link8")
    q = _inside(chain, np.random.default_rng(3), 150)
    T = _fk(model, data, fid, np.hstack([q, np.zeros((len(q), model.nq - 7))]))
    ik = AnalyticIK(chain, num_samples=8)
    assert ik.method == "analytic:locked_joint7+spherical_shoulder"
    r = ik.solve(T)
    assert r.success.all(), np.flatnonzero(~r.success)
    pe, re = _pin_errors(model, data, fid, np.hstack([r.q, np.zeros((len(q), model.nq - 7))]), T)
    assert pe.max() <= 1e-6 and re.max() <= 1e-6
    assert chain.within_limits(r.q, margin=chain.kinematic_margin, tol=1e-12).all()


def _rounded_iiwa(tmp_path, rng):
    """The bundled iiwa14 URDF with every joint origin coordinate moved by +-0.5 um."""
    text = data_path("iiwa14.urdf").read_text()

    def move(m):
        xyz = np.array([float(v) for v in m.group(2).split()])
        xyz += rng.choice([-0.5e-6, 0.5e-6], 3)
        return f'{m.group(1)}"{" ".join(repr(float(v)) for v in xyz)}"'

    parts = re.split(r"(<joint\b.*?</joint>)", text, flags=re.S)
    for k, part in enumerate(parts):
        if part.startswith("<joint") and 'type="revolute"' in part:
            parts[k] = re.sub(r'(<origin[^>]*?xyz=)"([^"]*)"', move, part, count=1)
    path = tmp_path / "iiwa14_rounded.urdf"
    path.write_text("".join(parts))
    return path


def test_a_rounded_iiwa_with_the_elbow_nearly_straight_is_solved(tmp_path):
    path = _rounded_iiwa(tmp_path, np.random.default_rng(0))
    chain = load_urdf(path, "iiwa_link_0", "iiwa_link_ee")
    model, data, fid = _pin(path, "iiwa_link_ee")
    ik = AnalyticIK(chain, num_samples=16)
    assert ik.classification.polish  # within rounding of an exact family
    rng = np.random.default_rng(4)
    q = _inside(chain, rng, 60)
    q[:, 3] = rng.choice([-1.0, 1.0], len(q)) * 10.0 ** rng.uniform(-6, -1.5, len(q))
    T = _fk(model, data, fid, q)
    r = ik.solve(T)
    assert r.success.all(), np.flatnonzero(~r.success)
    pe, re = _pin_errors(model, data, fid, r.q, T)
    assert pe.max() <= 1e-6 and re.max() <= 1e-6


def test_general_mode_7r_refines_its_locks_with_the_elbow_nearly_straight():
    # the general mode's locked-joint 7R solver (16 lock samples) on Flexiv Rizon 4: with the
    # elbow nearly straight the feasible locked angles shrink to a sliver (3% missed before)
    path = data_path("rizon4.urdf")
    chain = load_urdf(path, "base_link", "flange")
    model, data, fid = _pin(path, "flange")
    rng = np.random.default_rng(5)
    q = _inside(chain, rng, 60)
    q[:, 3] = rng.choice([-1.0, 1.0], len(q)) * 10.0 ** rng.uniform(-6, -1.5, len(q))
    q = q[chain.within_limits(q)]
    T = _fk(model, data, fid, q)
    ik = AnalyticIK(chain, mode="general")
    assert ik.method == "analytic:locked7r"
    r = ik.solve(T)
    assert r.success.all(), np.flatnonzero(~r.success)
    pe, re = _pin_errors(model, data, fid, r.q, T)
    assert pe.max() <= 1e-6 and re.max() <= 1e-6


def _gaps(a, b):
    return np.abs(np.angle(np.exp(1j * (a[:, None, :] - b[None, :, :])))).max(axis=-1)


def test_general_mode_contains_the_closed_form_set_a_little_beyond_a_tangent(erd_dir):
    # the elbow straight and the target moved 0.5 um further out: no exact solution, but the
    # closed form's tangent point meets the 1e-6 gate; the elimination sees a complex pair of
    # eigenvalues (before: a quarter of these targets had no valid general-mode slot)
    path = erd_dir / "ur_description" / "urdf" / "ur5_robot.urdf"
    model, data, fid = _pin(path, "tool0")
    chain = load_urdf(path, "base_link", "tool0")
    rng = np.random.default_rng(11)
    q = rng.uniform(-np.pi, np.pi, (40, 6))
    q[:, 2] = 0.0
    T = _fk(model, data, fid, q)
    for i, x in enumerate(q):
        pin.framesForwardKinematics(model, data, x)
        u = data.oMi[4].translation - data.oMi[2].translation  # shoulder to wrist, straight
        T[i, :3, 3] += 5e-7 * u / np.linalg.norm(u)
    closed = AnalyticIK(chain).solve(T, return_all=True)
    general = AnalyticIK(chain, mode="general").solve(T, return_all=True)
    assert closed.success.all()
    assert general.success.all(), np.flatnonzero(~general.success)
    for i in range(len(T)):
        mine = general.q_all[i][general.valid_all[i]]
        pe, re = _pin_errors(model, data, fid, mine, np.repeat(T[i : i + 1], len(mine), 0))
        assert pe.max() <= 1e-6 and re.max() <= 1e-6
        ref = closed.q_all[i][closed.valid_all[i]]
        # at a tangent the gate admits a joint-space region about sqrt(1e-6) wide: a
        # closed-form solution is contained when a general one lies within that region
        assert _gaps(ref, mine).min(axis=1).max() < 2e-3, i


def test_refining_a_single_target_never_launches_the_thread_pool():
    # a failed target within reach runs every refinement stage (Newton, denser grids, zoom) on
    # one target, in the closed-form family and in the general mode: all on the calling thread
    code = textwrap.dedent("""
        import numpy as np
        import numba.np.ufunc.parallel as pool
        import ikstack.robots as robots
        from ikstack.ik.analytic import AnalyticIK
        chain = robots.load("panda")
        T = chain.fk(chain.middle())
        T[:3, 3] = (0.5, 0.4, 1.6)  # beyond reach
        for samples in (8, 128):
            r = AnalyticIK(chain, num_samples=samples).solve(T)
            assert not r.success[0], r
        T[:3, 3] = (0.02, 0.0, 0.05)  # within reach, near the base: refined (solved or not)
        AnalyticIK(chain, num_samples=8).solve(T)
        chain = robots.load("rizon4")  # the elbow nearly straight: lock grid misses
        rng = np.random.default_rng(5)
        km = chain.kinematic_margin
        q = rng.uniform(chain.lower + km, chain.upper - km, (20, 7))
        q[:, 3] = rng.choice([-1.0, 1.0], 20) * 10.0 ** rng.uniform(-6, -1.5, 20)
        ik = AnalyticIK(chain, mode="general")
        for Ti in chain.fk(q):
            ik.solve(Ti)
        assert not pool._is_initialized, "thread pool launched"
        print("ok")
    """)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=1200
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok" in proc.stdout
