"""Targets with leading batch dimensions ``(..., 4, 4)``: every solver takes them and shapes its
result to match; each answer is checked with Pinocchio's FK of the URDF (an independent model
of the arm), never with ikstack's own."""

from __future__ import annotations

import numpy as np
import pytest

import ikstack
import ikstack.robots
from ikstack.errors import IKStackError, ShapeError, UnsupportedGeometryError
from ikstack.ik import solve_ik
from ikstack.ik.analytic import AnalyticIK
from ikstack.ik.numerical import DampedLeastSquaresIK, LevenbergMarquardt

pin = pytest.importorskip("pinocchio")

LEAD = (2, 3)


@pytest.fixture(scope="module")
def ur5(erd_dir):
    path = erd_dir / "ur_description/urdf/ur5_robot.urdf"
    chain = ikstack.load_urdf(path, "base_link", "tool0")
    model = pin.buildModelFromUrdf(str(path))
    data = model.createData()
    fid = model.getFrameId("tool0")
    idx = [model.joints[model.getJointId(n)].idx_q for n in chain.joint_names]

    def pin_fk(q: np.ndarray) -> np.ndarray:
        qp = pin.neutral(model)
        qp[idx] = q
        pin.forwardKinematics(model, data, qp)
        pin.updateFramePlacements(model, data)
        return np.array(data.oMf[fid].homogeneous)

    rng = np.random.default_rng(3)
    q = rng.uniform(-2.0, 2.0, size=LEAD + (6,))
    T = np.array([[pin_fk(q[i, j]) for j in range(LEAD[1])] for i in range(LEAD[0])])
    return chain, pin_fk, q, T


def _check(r, T, pin_fk, dof=6, K=None):
    assert r.q.shape == LEAD + (dof,)
    for f in (r.success, r.position_error, r.rotation_error, r.status):
        assert f.shape == LEAD
    assert r.success.all()
    for i in range(LEAD[0]):
        for j in range(LEAD[1]):
            F = pin_fk(r.q[i, j])
            assert np.abs(F[:3, 3] - T[i, j, :3, 3]).max() < 1e-5
            assert np.abs(F[:3, :3] - T[i, j, :3, :3]).max() < 1e-5
    if K is not None:
        assert r.q_all.shape == LEAD + (K, dof) and r.valid_all.shape == LEAD + (K,)
        for i, j, k in np.argwhere(r.valid_all):
            F = pin_fk(r.q_all[i, j, k])
            assert np.abs(F[:3, 3] - T[i, j, :3, 3]).max() < 1e-5


@pytest.mark.parametrize("method", ["auto", "analytic", "lm", "dls", "numerical"])
def test_solve_ik_takes_leading_batch_dimensions(ur5, method):
    chain, pin_fk, q, T = ur5
    opts = {"max_iterations": 200} if method == "dls" else {}
    r = solve_ik(chain, T, q0=q + 0.01, method=method, **opts)
    _check(r, T, pin_fk)


def test_solver_classes_take_leading_batch_dimensions_and_seeds_of_the_same_shape(ur5):
    chain, pin_fk, q, T = ur5
    ik = AnalyticIK(chain)
    _check(ik.solve(T), T, pin_fk)
    _check(ik.solve(T, q0=q), T, pin_fk)
    # the seed of every target is honoured: each row's answer is its own generating q
    assert np.abs(ik.solve(T, q0=q).q - q).max() < 1e-6
    _check(ik.solve(T, return_all=True), T, pin_fk, K=ik.K)
    _check(LevenbergMarquardt(chain).solve(T, q0=q + 0.01), T, pin_fk)
    _check(DampedLeastSquaresIK(chain, max_iterations=200).solve(T, q0=q + 0.01), T, pin_fk)
    # a 3-D batch of batches too
    T3 = T.reshape(1, 2, 3, 4, 4)
    r = LevenbergMarquardt(chain).solve(T3)
    assert r.q.shape == (1, 2, 3, 6) and r.iterations.shape == (1, 2, 3)


def test_a_seed_of_the_wrong_batch_shape_is_named(ur5):
    chain, _, _, T = ur5
    for solver in (AnalyticIK(chain), LevenbergMarquardt(chain)):
        with pytest.raises(ShapeError, match="q0"):
            solver.solve(T, q0=np.zeros((3, 2, 6)))


def test_unsupported_geometry_is_a_value_error():
    assert issubclass(UnsupportedGeometryError, ValueError)
    assert issubclass(UnsupportedGeometryError, IKStackError)
    chain = ikstack.robots.load("rizon4")
    with pytest.raises(ValueError):
        AnalyticIK(chain)
