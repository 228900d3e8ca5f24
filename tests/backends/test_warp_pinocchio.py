"""Warp's solutions (run on the CPU here) checked with Pinocchio's FK of the URDF, not only
against ikstack's CPU path: every success and every valid candidate slot reaches its target
by an independent model of the arm, within the joint limits."""

from __future__ import annotations

import numpy as np
import pytest

import ikstack

pytest.importorskip("warp")
pin = pytest.importorskip("pinocchio")
from ikstack.backends.warp import numerical as wn  # noqa: E402
from ikstack.backends.warp.analytic import WarpAnalyticIK  # noqa: E402

CASES = [
    ("ur_description/urdf/ur5_robot.urdf", "base_link", "tool0"),
    ("panda_description/urdf/panda.urdf", "panda_link0", "panda_link8"),
]


def _arm(erd_dir, rel, base, tip):
    path = erd_dir / rel
    chain = ikstack.load_urdf(path, base, tip)
    model = pin.buildModelFromUrdf(str(path))
    data = model.createData()
    fid = model.getFrameId(tip)
    idx = [model.joints[model.getJointId(n)].idx_q for n in chain.joint_names]

    def pin_fk(q):
        qp = pin.neutral(model)
        qp[idx] = q
        pin.framesForwardKinematics(model, data, qp)
        return np.array(data.oMf[fid].homogeneous)

    rng = np.random.default_rng(11)
    lo = np.maximum(chain.lower, -np.pi)
    hi = np.minimum(chain.upper, np.pi)
    q = rng.uniform(lo, hi, size=(24, chain.dof))
    T = np.array([pin_fk(qi) for qi in q])
    return chain, pin_fk, T


def _reaches(pin_fk, q, T, tol=1e-6):
    F = pin_fk(q)
    return np.linalg.norm(F[:3, 3] - T[:3, 3]) <= tol and np.abs(F[:3, :3] - T[:3, :3]).max() <= tol


@pytest.mark.parametrize("rel,base,tip", CASES)
def test_warp_analytic_solutions_meet_pinocchio_fk(erd_dir, rel, base, tip):
    chain, pin_fk, T = _arm(erd_dir, rel, base, tip)
    w = WarpAnalyticIK(chain, device="cpu", chunk_size=16)
    r = w.solve(T, return_all=True)
    assert r.success.mean() >= 0.95
    for i in np.flatnonzero(r.success):
        assert _reaches(pin_fk, r.q[i], T[i]) and chain.within_limits(r.q[i])
    slots = np.argwhere(r.valid_all)
    assert len(slots) >= len(T)
    for i, k in slots:
        assert _reaches(pin_fk, r.q_all[i, k], T[i]), (i, k)


@pytest.mark.parametrize("rel,base,tip", CASES)
def test_warp_numerical_solutions_meet_pinocchio_fk(erd_dir, rel, base, tip):
    chain, pin_fk, T = _arm(erd_dir, rel, base, tip)
    r = wn.solve(chain, T, position_tolerance=1e-6, rotation_tolerance=1e-6)
    assert r.success.mean() >= 0.95
    for i in np.flatnonzero(r.success):
        assert _reaches(pin_fk, r.q[i], T[i], tol=2e-6) and chain.within_limits(r.q[i])
    # leading batch dimensions are kept
    rb = wn.solve(chain, T[:6].reshape(2, 3, 4, 4))
    assert rb.q.shape == (2, 3, chain.dof) and rb.success.shape == (2, 3)
