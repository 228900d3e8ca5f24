"""from_pinocchio: the chain of a Pinocchio model against Pinocchio's own frame FK."""

from __future__ import annotations

import numpy as np
import pytest

from ikstack.errors import ModelError, UnknownLinkError, UnsupportedJointError
from ikstack.model import JointType, from_pinocchio

pin = pytest.importorskip("pinocchio")

CASES = [
    ("ur_description/urdf/ur5_robot.urdf", None, "tool0"),
    ("panda_description/urdf/panda.urdf", None, "panda_hand_tcp"),
    ("panda_description/urdf/panda.urdf", "panda_link2", "panda_link8"),
    ("kinova_description/robots/kinova.urdf", None, None),
    ("xarm_description/urdf/xarm7.urdf", None, None),
    ("so_arm_description/urdf/so101.urdf", None, None),
]


def _pin_q(model, chain, q: np.ndarray) -> np.ndarray:
    """Pinocchio's configuration for chain values ``q`` (other joints at their neutral)."""
    out = pin.neutral(model)
    for k, name in enumerate(chain.joint_names):
        jm = model.joints[model.getJointId(name)]
        if jm.nq == 2:  # unbounded revolute: (cos, sin)
            out[jm.idx_q : jm.idx_q + 2] = np.cos(q[k]), np.sin(q[k])
        else:
            out[jm.idx_q] = q[k]
    return out


def _last_body_frame(model) -> str:
    return [f.name for f in model.frames if f.type == pin.FrameType.BODY][-1]


@pytest.mark.parametrize(
    "rel,base,frame", CASES, ids=[f"{c[0].split('/')[0]}-{c[2]}" for c in CASES]
)
def test_from_pinocchio_matches_pinocchio_fk(erd_dir, rel, base, frame) -> None:
    model = pin.buildModelFromUrdf(str(erd_dir / rel))
    frame = frame or _last_body_frame(model)
    chain = from_pinocchio(model, frame, base=base)
    data = model.createData()
    fid = model.getFrameId(frame)
    bid = model.getFrameId(base) if base else None
    rng = np.random.default_rng(7)
    worst = 0.0
    for q in chain.random_q(rng, 200):
        pin.framesForwardKinematics(model, data, _pin_q(model, chain, q))
        T = data.oMf[fid]
        if bid is not None:
            T = data.oMf[bid].actInv(T)
        worst = max(worst, float(np.abs(chain.fk(q) - T.homogeneous).max()))
    assert worst < 1e-12


def test_limits_and_unbounded_joints(erd_dir) -> None:
    model = pin.buildModelFromUrdf(str(erd_dir / "ur_description/urdf/ur5_robot.urdf"))
    chain = from_pinocchio(model, "tool0")
    assert chain.dof == 6
    np.testing.assert_array_equal(chain.lower, model.lowerPositionLimit)
    np.testing.assert_array_equal(chain.velocity_limits, model.velocityLimit)
    kin = pin.buildModelFromUrdf(str(erd_dir / "kinova_description/robots/kinova.urdf"))
    kchain = from_pinocchio(kin, _last_body_frame(kin))
    rub = [kin.joints[kin.getJointId(n)].nq == 2 for n in kchain.joint_names]
    assert any(rub)
    for k, is_rub in enumerate(rub):
        assert (kchain.joint_types[k] == JointType.CONTINUOUS) == is_rub


def test_errors(erd_dir) -> None:
    path = str(erd_dir / "ur_description/urdf/ur5_robot.urdf")
    model = pin.buildModelFromUrdf(path)
    with pytest.raises(UnknownLinkError, match="'flange_x'.*tool0"):
        from_pinocchio(model, "flange_x")
    with pytest.raises(ModelError, match="not below frame 'wrist_3_link'"):
        from_pinocchio(model, "upper_arm_link", base="wrist_3_link")
    floating = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    with pytest.raises(UnsupportedJointError, match="root_joint.*JointModelFreeFlyer"):
        from_pinocchio(floating, "tool0")
    assert from_pinocchio(floating, "tool0", base="base_link").dof == 6
