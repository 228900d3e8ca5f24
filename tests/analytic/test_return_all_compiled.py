"""``solve(T, return_all=True)`` of a strict 6R family: one compiled pass per target (no numpy
certification glue per call), and every solution set equals EAIK's, with EAIK's robot built from
Pinocchio's model of the URDF (not from ikstack's geometry) and every valid slot checked with
Pinocchio's FK."""

from __future__ import annotations

import numpy as np
import pytest

import ikstack
from ikstack.ik.analytic import AnalyticIK
from ikstack.ik.analytic import _verdict as analytic_verdict

pin = pytest.importorskip("pinocchio")
eaik_hp = pytest.importorskip("eaik.IK_HP")


@pytest.fixture(scope="module")
def ur5_pin(erd_dir):
    path = erd_dir / "ur_description/urdf/ur5_robot.urdf"
    chain = ikstack.load_urdf(path, "base_link", "tool0")
    model = pin.buildModelFromUrdf(str(path))
    data = model.createData()
    fid = model.getFrameId("tool0")
    jids = [model.getJointId(n) for n in chain.joint_names]
    idx = [model.joints[j].idx_q for j in jids]

    def pin_fk(q):
        qp = pin.neutral(model)
        qp[idx] = q
        pin.framesForwardKinematics(model, data, qp)
        return np.array(data.oMf[fid].homogeneous)

    # IK-Geo's H, P at the zero configuration, from Pinocchio's joint placements and axes
    q0 = pin.neutral(model)
    pin.framesForwardKinematics(model, data, q0)
    J = pin.computeFrameJacobian(model, data, q0, fid, pin.LOCAL_WORLD_ALIGNED)
    H = np.array([J[3:, model.joints[j].idx_v] for j in jids])
    pts = np.array([data.oMi[j].translation for j in jids])
    tool = data.oMf[fid]
    P = np.vstack([pts[0], np.diff(pts, axis=0), tool.translation - pts[-1]])
    bot = eaik_hp.HPRobot(H, P)
    R_end = np.array(tool.rotation)

    def eaik_all(T):
        Te = T.copy()
        Te[:3, :3] = T[:3, :3] @ R_end.T
        sol = bot.IK(Te)
        Q = np.asarray(sol.Q).reshape(-1, 6)
        return Q[~np.asarray(sol.is_LS, dtype=bool)] if len(Q) else Q

    return chain, pin_fk, eaik_all


def _same(a, b, tol=1e-6):
    return np.abs(np.angle(np.exp(1j * (np.asarray(a) - b)))).max(axis=-1) < tol


def test_single_return_all_calls_match_eaik_from_pinocchio(ur5_pin):
    chain, pin_fk, eaik_all = ur5_pin
    ik = AnalyticIK(chain)
    rng = np.random.default_rng(5)
    lo, hi = chain.lower + chain.kinematic_margin, chain.upper - chain.kinematic_margin
    q = rng.uniform(np.maximum(lo, -np.pi), np.minimum(hi, np.pi), (60, 6))
    for qi in q:
        T = pin_fk(qi)
        r = ik.solve(T, return_all=True)
        assert r.q_all.shape == (1, ik.K, 6) and r.valid_all.shape == (1, ik.K)
        assert r.success[0]
        mine = r.q_all[0][r.valid_all[0]]
        for m in mine:  # every valid slot reaches the target by Pinocchio's FK
            F = pin_fk(m)
            assert np.abs(F[:3, 3] - T[:3, 3]).max() < 1e-6
            assert np.abs(F[:3, :3] - T[:3, :3]).max() < 1e-6
            assert np.all((m >= lo) & (m <= hi))
        ref = eaik_all(T)
        ref = [e for e in ref if np.abs(pin_fk(e)[:3, 3] - T[:3, 3]).max() < 1e-6]
        for e in ref:  # UR5's limits (+-2 pi, elbow +-pi) hold some turn of every solution
            assert _same(mine, e).any(), f"EAIK solution {e} missing"
        for m in mine:
            assert _same(ref, m).any(), f"extra solution {m}"
        # the selection is a valid slot nearest the seed (the middle of the limits)
        d = ((mine - ik._middle) ** 2).sum(axis=1)
        assert np.allclose(r.q[0], mine[np.argmin(d)])


def test_single_return_all_call_needs_no_numpy_certification(ur5_pin, monkeypatch):
    chain, pin_fk, _ = ur5_pin
    ik = AnalyticIK(chain)
    T = pin_fk(np.array([0.3, -1.0, 1.2, -0.4, 0.8, 0.2]))
    ik.solve(T, return_all=True)

    def no_glue(*a, **k):
        raise AssertionError("a single return_all call went through the numpy path")

    monkeypatch.setattr(analytic_verdict, "certify", no_glue)  # the numpy path's certificate
    r = ik.solve(T, return_all=True)
    assert r.success[0] and r.valid_all.any()
    rb = ik.solve(np.stack([T, T]), return_all=True)
    assert rb.valid_all.shape == (2, ik.K)
