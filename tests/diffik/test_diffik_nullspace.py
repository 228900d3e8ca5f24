"""The nullspace projector and the posture / joint-centering preferred velocity."""

from __future__ import annotations

import numpy as np

import ikstack.robots as robots
from ikstack.diffik import joint_difference, nullspace_projector, preferred_velocity
from ikstack.kinematics import jacobian
from ikstack.model import JointType


def test_projector_is_the_orthogonal_projector_onto_the_jacobian_nullspace():
    panda = robots.load("panda")
    rng = np.random.default_rng(0)
    for q in panda.random_q(rng, 50):
        J = jacobian(panda, q)
        N = nullspace_projector(J)
        assert np.allclose(J @ N, 0.0, atol=1e-12)
        assert np.allclose(N @ N, N, atol=1e-12)
        assert np.allclose(N, N.T, atol=1e-12)
        assert np.allclose(N, np.eye(7) - np.linalg.pinv(J) @ J, atol=1e-9)
        assert np.isclose(np.trace(N), 1.0)


def test_projector_counts_lost_directions_at_a_singularity():
    planar = robots.load("planar2")
    J = jacobian(planar, np.zeros(2))[:2]  # stretched: rank 1
    N = nullspace_projector(J)
    assert np.isclose(np.trace(N), 1.0)
    assert np.allclose(J @ N, 0.0, atol=1e-12)


def test_preferred_velocity_is_projected_posture_plus_centering():
    panda = robots.load("panda")
    q = panda.middle() + 0.2
    J = jacobian(panda, q)
    posture = panda.middle() - 0.1
    p = preferred_velocity(panda, J, q, posture, nullspace_gain=0.5, joint_centering_gain=0.2)
    raw = 0.5 * (posture - q) + 0.2 * (panda.middle() - q)
    N = np.eye(7) - np.linalg.pinv(J) @ J
    assert np.allclose(p, N @ raw, atol=1e-10)
    assert np.allclose(J @ p, 0.0, atol=1e-10)


def test_posture_term_wraps_continuous_joints_and_centering_skips_unbounded():
    planar = robots.load("planar2")
    chain = planar.replace(joint_types=(JointType.CONTINUOUS, JointType.REVOLUTE))
    assert not chain.bounded[0]
    d = joint_difference(chain, [3.1, 0.0], [-3.1, 0.0])
    assert np.isclose(d[0], 6.2 - 2 * np.pi)
    J = np.zeros((0, 2))  # no task: the projector is the identity
    p = preferred_velocity(
        chain,
        J,
        np.array([-3.1, 1.0]),
        posture=np.array([3.1, 1.0]),
        nullspace_gain=1.0,
        joint_centering_gain=0.5,
    )
    assert np.isclose(p[0], 6.2 - 2 * np.pi)  # the short way round, no centering pull
    assert np.isclose(p[1], 0.5 * (0.0 - 1.0))  # bounded joint: centered toward 0
