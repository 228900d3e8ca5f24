"""The C++ library through its Python module: chains (arrays, text), FK and Jacobian against
Pinocchio, and the two built-in solvers against plain NumPy / SciPy references."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import lsq_linear

import ikstack
import ikstack.robots
from ikstack.errors import InputError

native = pytest.importorskip("ikstack._native", reason="the C++ module is not built")
pin = pytest.importorskip("pinocchio")


def native_chain(chain: ikstack.Chain):
    """The C++ chain of a Python one, from its arrays."""
    return native.Chain.from_arrays(
        list(chain.joint_names),
        [t.name.lower() for t in chain.joint_types],
        chain.origins,
        chain.axes,
        list(chain.lower),
        list(chain.upper),
        list(chain.velocity_limits),
        list(chain.acceleration_limits),
        list(chain.jerk_limits),
        T_last_tip=chain.T_last_tip,
        T_tip_tcp=chain.T_tip_tcp,
        name=chain.name,
    )


@pytest.mark.parametrize(
    "rel,base,tip",
    [
        ("ur_description/urdf/ur5_robot.urdf", "base_link", "tool0"),
        ("panda_description/urdf/panda.urdf", "panda_link0", "panda_hand_tcp"),
    ],
)
def test_fk_and_jacobian_match_pinocchio(erd_dir, rel, base, tip):
    path = erd_dir / rel
    chain = ikstack.load_urdf(path, base, tip)
    c = native_chain(chain)
    assert c.dof == chain.dof and c.joint_names == list(chain.joint_names)
    model = pin.buildModelFromUrdf(str(path))
    data = model.createData()
    fid = model.getFrameId(tip)
    idx = [model.joints[model.getJointId(n)].idx_q for n in chain.joint_names]
    rng = np.random.default_rng(7)
    worst_T = worst_J = 0.0
    for q in chain.random_q(rng, 200):
        qp = pin.neutral(model)
        qp[idx] = q
        pin.forwardKinematics(model, data, qp)
        pin.updateFramePlacements(model, data)
        worst_T = max(worst_T, np.abs(data.oMf[fid].homogeneous - c.fk(q)).max())
        Jp = pin.computeFrameJacobian(model, data, qp, fid, pin.LOCAL_WORLD_ALIGNED)
        worst_J = max(worst_J, np.abs(Jp[:, idx] - c.jacobian(q)).max())
    assert worst_T <= 1e-12
    assert worst_J <= 1e-12


def test_a_chain_survives_its_text_form_and_limits_come_back():
    chain = ikstack.robots.load("panda")
    c = native_chain(chain)
    again = native.Chain.from_string(c.to_string(), "panda.chain")
    q = chain.middle() + 0.1
    np.testing.assert_array_equal(again.fk(q), c.fk(q))
    np.testing.assert_array_equal(again.lower, chain.lower)
    np.testing.assert_array_equal(again.velocity_limits, chain.velocity_limits)


def test_bad_input_is_an_ikstack_error_naming_the_problem():
    c = native_chain(ikstack.robots.load("planar2"))
    with pytest.raises(InputError, match=r"q must have shape \(2,\)"):
        c.fk(np.zeros(3))
    with pytest.raises(InputError, match="finite"):
        c.jacobian(np.array([0.0, np.nan]))
    with pytest.raises(InputError, match="bad.chain:1"):
        native.Chain.from_string("not a chain file\n", "bad.chain")
    with pytest.raises(InputError, match="joint type 'hinge'"):
        native.Chain.from_arrays(
            ["a"], ["hinge"], np.eye(4)[None], np.array([[0, 0, 1.0]]), T_last_tip=np.eye(4)
        )


def test_damped_least_squares_matches_the_closed_form():
    rng = np.random.default_rng(3)
    J, t, p = rng.normal(size=(6, 7)), rng.normal(size=6), rng.normal(size=7)
    lam = 0.05
    wide = np.full(7, 1e3)
    dq, ok, message, _ = native.DampedLeastSquares().solve(J, t, -wide, wide, p, lam)
    # the closed form from the normal equations (no shared code)
    ref = np.linalg.solve(J.T @ J + lam**2 * np.eye(7), J.T @ t + lam**2 * p)
    assert ok and message == "ok"
    np.testing.assert_allclose(dq, ref, atol=1e-10)


def test_box_qp_matches_scipy_bounded_least_squares():
    rng = np.random.default_rng(5)
    for _ in range(20):
        J, t = rng.normal(size=(6, 7)), 3.0 * rng.normal(size=6)
        lam = 0.1
        lo, hi = -rng.uniform(0.1, 1.0, 7), rng.uniform(0.1, 1.0, 7)
        dq, ok, _, iters = native.BoxQPSolver().solve(J, t, lo, hi, None, lam)
        # the same objective as a stacked bounded least-squares problem
        A = np.vstack([J, lam * np.eye(7)])
        b = np.concatenate([t, np.zeros(7)])
        ref = lsq_linear(A, b, bounds=(lo, hi), tol=1e-14, lsmr_tol="auto", method="bvls").x
        assert ok and iters >= 1
        np.testing.assert_allclose(dq, ref, atol=1e-8)
