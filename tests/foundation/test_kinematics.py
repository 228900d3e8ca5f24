"""FK and Jacobians: Pinocchio cross-checks, finite differences on every bundled robot."""

from __future__ import annotations

import numpy as np
import pytest

import ikstack
from ikstack import NonFiniteError, ShapeError
from ikstack.kinematics import fk, fk_jacobian, fk_links, jacobian, jacobian_fd
from ikstack.robots import load, names

pin = pytest.importorskip("pinocchio")

ERD_CASES = [
    ("ur_description/urdf/ur5_robot.urdf", "base_link", "tool0"),
    ("ur_description/urdf/ur10_robot.urdf", "base_link", "tool0"),
    ("panda_description/urdf/panda.urdf", "panda_link0", "panda_link8"),
    ("panda_description/urdf/panda.urdf", "panda_link0", "panda_hand_tcp"),
]


@pytest.mark.parametrize("rel,base,tip", ERD_CASES)
def test_fk_and_jacobian_match_pinocchio_on_1000_configurations(erd_dir, rel, base, tip):
    path = erd_dir / rel
    chain = ikstack.load_urdf(path, base, tip)
    model = pin.buildModelFromUrdf(str(path))
    data = model.createData()
    fid = model.getFrameId(tip)
    rng = np.random.default_rng(42)
    Q = chain.random_q(rng, 1000)
    T, J = fk_jacobian(chain, Q)
    idx = [model.joints[model.getJointId(n)].idx_q for n in chain.joint_names]
    worst_T = worst_J = 0.0
    for k in range(Q.shape[0]):
        qp = pin.neutral(model)
        qp[idx] = Q[k]
        pin.forwardKinematics(model, data, qp)
        pin.updateFramePlacements(model, data)
        worst_T = max(worst_T, np.abs(data.oMf[fid].homogeneous - T[k]).max())
        Jp = pin.computeFrameJacobian(model, data, qp, fid, pin.LOCAL_WORLD_ALIGNED)
        worst_J = max(worst_J, np.abs(Jp[:, idx] - J[k]).max())
    assert worst_T <= 1e-12
    assert worst_J <= 1e-12


@pytest.mark.parametrize("name", names())
def test_every_bundled_robot_jacobian_matches_finite_differences(name):
    chain = load(name)
    rng = np.random.default_rng(7)
    Q = chain.random_q(rng, 20)
    J = jacobian(chain, Q)
    Jfd = jacobian_fd(lambda q: fk(chain, q), Q, eps=1e-6)
    assert np.abs(J - Jfd).max() < 1e-7


def test_single_and_batched_calls_agree_and_keep_batch_shape():
    chain = load("panda")
    rng = np.random.default_rng(0)
    Q = chain.random_q(rng, 3 * 4).reshape(3, 4, 7)
    T = fk(chain, Q)
    assert T.shape == (3, 4, 4, 4)
    assert np.array_equal(T[1, 2], fk(chain, Q[1, 2]))
    J = jacobian(chain, Q)
    assert J.shape == (3, 4, 6, 7)
    assert np.allclose(J[2, 3], jacobian(chain, Q[2, 3]))
    assert fk(chain, np.zeros((0, 7))).shape == (0, 4, 4)
    assert fk(chain, Q[0, 0].tolist()).shape == (4, 4)


def test_large_batches_use_all_cores_and_agree_with_serial():
    chain = load("ur5")
    Q = chain.random_q(np.random.default_rng(3), 5000)
    T, J = fk_jacobian(chain, Q)
    T1, J1 = fk_jacobian(chain, Q[:100])
    assert np.array_equal(T[:100], T1)
    assert np.array_equal(J[:100], J1)


def test_fk_links_ends_with_the_tcp_and_matches_per_link_chains():
    chain = load("panda_hand")
    q = chain.random_q(np.random.default_rng(1))
    frames = fk_links(chain, q)
    assert frames.shape == (8, 4, 4)
    assert np.allclose(frames[-1], fk(chain, q))
    # link 4's frame equals FK of the URDF chain cut at panda_link4
    sub = ikstack.load_urdf(ikstack.robots.data_path("panda.urdf"), "panda_link0", "panda_link4")
    assert np.allclose(frames[3], fk(sub, q[:4]), atol=1e-14)


def test_prismatic_and_continuous_joints():
    urdf = """<robot name="t"><link name="a"/><link name="b"/><link name="c"/>
    <joint name="slide" type="prismatic"><parent link="a"/><child link="b"/>
      <axis xyz="1 0 0"/><limit lower="-1" upper="1" velocity="1" effort="1"/></joint>
    <joint name="spin" type="continuous"><parent link="b"/><child link="c"/>
      <origin xyz="0 0 1"/><axis xyz="0 0 1"/></joint></robot>"""
    chain = ikstack.load_urdf(urdf, "a", "c")
    assert chain.joint_types == (ikstack.JointType.PRISMATIC, ikstack.JointType.CONTINUOUS)
    assert np.isinf(chain.upper[1])
    T = fk(chain, [0.3, np.pi / 2])
    assert np.allclose(T[:3, 3], [0.3, 0, 1])
    assert np.allclose(T[:3, 0], [0, 1, 0])
    J = jacobian(chain, [0.3, 0.2])
    assert np.allclose(J[:, 0], [1, 0, 0, 0, 0, 0])
    assert np.allclose(J[3:, 1], [0, 0, 1])


class TestBadJointInput:
    def test_wrong_length_names_the_expected_shape(self):
        with pytest.raises(ShapeError, match=r"\(6,\) or \(\.\.\., 6\)"):
            fk(load("ur5"), np.zeros(7))

    def test_nan_is_refused_with_its_index(self):
        q = np.zeros((2, 6))
        q[1, 3] = np.nan
        with pytest.raises(NonFiniteError, match=r"index \(1, 3\)"):
            fk(load("ur5"), q)
        with pytest.raises(NonFiniteError):
            jacobian(load("ur5"), q[1])

    def test_scalar_is_refused(self):
        with pytest.raises(ShapeError):
            fk(load("ur5"), 0.5)


def test_jacobian_fd_on_a_black_box_matches_analytic():
    chain = load("iiwa14")
    q = chain.middle() + 0.3
    J = jacobian_fd(lambda x: fk(chain, x), q, eps=1e-5)
    assert np.abs(J - jacobian(chain, q)).max() < 1e-8
    Jf = jacobian_fd(lambda x: fk(chain, x), q, eps=1e-7, central=False)
    assert np.abs(Jf - jacobian(chain, q)).max() < 1e-5
