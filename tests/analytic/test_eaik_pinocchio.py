"""Solution sets against EAIK, with EAIK's robot built from Pinocchio's reading of
example-robot-data URDFs (not from ikstack's geometry) and its solutions filtered by Pinocchio's
FK; ikstack reads the same URDF files with its own parser. Targets include singular ones."""

from __future__ import annotations

import numpy as np
import pytest

from ikstack.ik.analytic import AnalyticIK
from ikstack.model.urdf import load_urdf

pin = pytest.importorskip("pinocchio")
eaik_hp = pytest.importorskip("eaik.IK_HP")

URDFS = {"ur3": "ur3_robot.urdf", "ur5": "ur5_robot.urdf", "ur10": "ur10_robot.urdf"}


def pinocchio_arm(path):
    model = pin.buildModelFromUrdf(str(path))
    data = model.createData()
    return model, data, model.getFrameId("tool0")


def fk_pin(model, data, fid, q):
    out = np.empty((len(q), 4, 4))
    for i, x in enumerate(q):
        pin.framesForwardKinematics(model, data, x)
        out[i] = data.oMf[fid].homogeneous
    return out


def hp_from_pinocchio(model, data, fid):
    """IK-Geo's H (6, 3), P (7, 3) and the end rotation, from joint placements at zero."""
    q0 = pin.neutral(model)
    pin.framesForwardKinematics(model, data, q0)
    H = np.empty((6, 3))
    pts = []
    for j in range(1, 7):
        M = data.oMi[j]
        axis = model.joints[j].shortname()[-1].lower()  # JointModelRX / RY / RZ
        H[j - 1] = M.rotation[:, "xyz".index(axis)]
        pts.append(M.translation.copy())
    tool = data.oMf[fid]
    pts.append(tool.translation.copy())
    pts = np.array(pts)
    P = np.vstack([pts[0], np.diff(pts, axis=0)])
    return H, P, tool.rotation.copy()


def same_angles(a, b, tol=1e-6):
    return np.abs(np.angle(np.exp(1j * (a - b)))).max(axis=-1) < tol


@pytest.mark.parametrize("arm", list(URDFS))
def test_solution_sets_match_eaik_built_from_pinocchio(erd_dir, arm):
    path = erd_dir / "ur_description" / "urdf" / URDFS[arm]
    model, data, fid = pinocchio_arm(path)
    H, P, R_end = hp_from_pinocchio(model, data, fid)
    bot = eaik_hp.HPRobot(H, P)
    chain = load_urdf(path, "base_link", "tool0")
    rng = np.random.default_rng(23)
    q = rng.uniform(-np.pi, np.pi, (120, 6))
    q[:60, 4] = 0.0  # wrist singular
    q[60:80, 2] = 0.0  # elbow straight
    T = fk_pin(model, data, fid, q)
    ours = AnalyticIK(chain).solve(T, return_all=True)
    assert ours.success.all()
    for i in range(len(T)):
        Te = T[i].copy()
        Te[:3, :3] = T[i, :3, :3] @ R_end.T
        sol = bot.IK(Te)
        ref = np.asarray(sol.Q).reshape(-1, 6)
        if len(ref):
            e = fk_pin(model, data, fid, ref)
            good = (np.linalg.norm(e[:, :3, 3] - T[i, :3, 3], axis=1) < 1e-6) & (
                np.abs(e[:, :3, :3] - T[i, :3, :3]).max(axis=(1, 2)) < 1e-6
            )
            ref = ref[good]
        mine = ours.q_all[i][ours.valid_all[i]]
        # our answers pass Pinocchio's FK
        e = fk_pin(model, data, fid, mine)
        assert np.abs(e[:, :3, 3] - T[i, :3, 3]).max() < 1e-6
        if i < 60:
            # a singular wrist: a one-parameter family; EAIK and ikstack each return
            # representatives of it, so only the non-singular joints are compared
            continue
        for r in ref:
            assert same_angles(mine, r).any(), f"target {i}: EAIK solution {r} missing"
        for m in mine:
            assert len(ref) and same_angles(ref, m).any(), f"target {i}: extra solution {m}"
