"""Chain, URDF and DH loaders, coupled-joint constraints, bundled robots."""

from __future__ import annotations

import math

import numpy as np
import pytest

import ikstack
from ikstack import (
    ModelError,
    UnknownLinkError,
    UnknownRobotError,
    UnsupportedJointError,
    URDFError,
)
from ikstack.kinematics import fk
from ikstack.model import QuadrantPolynomialConstraint, from_dh
from ikstack.robots import data_path, load, marvin_dh, names
from ikstack.spatial import from_xyz_rpy

TWO_LINK = """<?xml version="1.0"?>
<robot name="t">
  <link name="base"/><link name="l1"/><link name="l2"/><link name="tool"/><link name="side"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" velocity="2" effort="1"/></joint>
  <joint name="fixed_mid" type="fixed"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.5 0 0" rpy="0 0 0.5"/></joint>
  <joint name="j2" type="{j2type}"><parent link="l2"/><child link="tool"/>
    <origin xyz="0.5 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" velocity="2" effort="1"/>{mimic}</joint>
  <joint name="j3" type="revolute"><parent link="l1"/><child link="side"/>
    <limit lower="-1" upper="1" velocity="2" effort="1"/></joint>
</robot>
"""


def two_link(j2type="revolute", mimic=""):
    return TWO_LINK.format(j2type=j2type, mimic=mimic)


class TestUrdfLoader:
    def test_fixed_joints_are_folded_and_default_axis_is_x(self):
        chain = ikstack.load_urdf(two_link(), "base", "tool")
        assert chain.joint_names == ("j1", "j2")
        T = fk(chain, [0.0, 0.0])
        assert np.allclose(T[:3, 3], [0.5 + 0.5 * math.cos(0.5), 0.5 * math.sin(0.5), 0])
        side = ikstack.load_urdf(two_link(), "base", "side")
        assert np.allclose(side.axes[1], [1, 0, 0])

    def test_base_and_tip_can_be_any_links_of_the_tree(self):
        chain = ikstack.load_urdf(two_link(), "l2", "tool")
        assert chain.dof == 1 and chain.base == "l2"

    def test_unknown_link_lists_the_links_that_exist(self):
        with pytest.raises(UnknownLinkError, match="links that exist: base, l1, l2, side, tool"):
            ikstack.load_urdf(two_link(), "base", "nope")

    def test_tip_not_below_base_is_an_error(self):
        with pytest.raises(URDFError, match="not below"):
            ikstack.load_urdf(two_link(), "tool", "base")

    def test_several_leaves_need_a_tip(self):
        with pytest.raises(URDFError, match="choose one of"):
            ikstack.load_urdf(two_link(), "base")

    @pytest.mark.parametrize("jtype", ["floating", "planar"])
    def test_floating_and_planar_joints_on_the_path_name_the_joint(self, jtype):
        with pytest.raises(UnsupportedJointError, match=f"joint 'j2' has type '{jtype}'"):
            ikstack.load_urdf(two_link(jtype), "base", "tool")

    def test_mimic_joint_on_the_path_names_the_joint(self):
        with pytest.raises(UnsupportedJointError, match="'j2'.*mimic"):
            ikstack.load_urdf(two_link(mimic='<mimic joint="j1"/>'), "base", "tool")

    def test_mimic_joint_off_the_path_is_fine(self):
        chain = ikstack.load_urdf(two_link(mimic='<mimic joint="j1"/>'), "base", "side")
        assert chain.joint_names == ("j1", "j3")

    def test_malformed_xml_reports_the_parser_line(self):
        bad = two_link().replace('<link name="l1"/>', '<link name="l1">')
        with pytest.raises(URDFError, match="line"):
            ikstack.load_urdf(bad, "base", "tool")

    def test_missing_limit_on_revolute_joint(self):
        bad = two_link().replace(
            '<limit lower="-1" upper="1" velocity="2" effort="1"/></joint>\n'
            '  <joint name="fixed_mid"',
            '</joint>\n  <joint name="fixed_mid"',
        )
        with pytest.raises(URDFError, match="j1.*no <limit>"):
            ikstack.load_urdf(bad, "base", "tool")

    def test_bad_numbers_name_the_joint(self):
        bad = two_link().replace('xyz="0.5 0 0" rpy="0 0 0.5"', 'xyz="0.5 zero 0"')
        with pytest.raises(URDFError, match="fixed_mid.*xyz"):
            ikstack.load_urdf(bad, "base", "tool")

    def test_missing_file_is_a_clear_error(self, tmp_path):
        with pytest.raises(URDFError, match="cannot read"):
            ikstack.load_urdf(tmp_path / "nope.urdf")

    def test_acceleration_limits_must_match_the_chain(self):
        with pytest.raises(URDFError, match="2 joints"):
            ikstack.load_urdf(two_link(), "base", "tool", acceleration_limits=[1, 2, 3])
        chain = ikstack.load_urdf(two_link(), "base", "tool", acceleration_limits=[3.0, 4.0])
        assert chain.acceleration_limits.tolist() == [3.0, 4.0]
        assert chain.velocity_limits.tolist() == [2.0, 2.0]


class TestChain:
    def test_chain_is_immutable(self):
        chain = load("ur5")
        with pytest.raises(ValueError):
            chain.lower[0] = 0.0
        with pytest.raises(AttributeError):
            chain.base = "x"  # type: ignore[misc]

    def test_with_tcp_moves_the_fk_frame(self):
        chain = load("ur5")
        T_tcp = from_xyz_rpy([0, 0, 0.1], [0, 0, 0.3])
        tool = chain.with_tcp(T_tcp, "gripper_tcp")
        q = chain.middle() + 0.2
        assert np.allclose(fk(tool, q), fk(chain, q) @ T_tcp)
        assert tool.tcp_frame == "gripper_tcp"
        assert np.allclose(fk(tool.without_tcp(), q), fk(chain, q))

    def test_with_tcp_rejects_a_non_rigid_tool(self):
        from ikstack import NotRigidTransformError

        with pytest.raises(NotRigidTransformError):
            load("ur5").with_tcp(np.diag([2.0, 1, 1, 1]))

    def test_describe_lists_joints_limits_tool_and_constraints(self):
        text = load("marvin_right_taccap").describe()
        assert "joint6" in text and "-58.00" in text and "taccap" in text
        assert "|q7| + 1.025 |q6| <= 110.5 deg" in text

    def test_within_limits_and_clip(self):
        chain = load("panda")
        q = chain.middle()
        assert chain.within_limits(q)
        q2 = q.copy()
        q2[3] = 0.5
        assert not chain.within_limits(q2)
        assert chain.within_limits(chain.clip(q2))
        with pytest.raises(ikstack.JointLimitError, match="panda_joint4"):
            chain.require_within_limits(q2)

    def test_bad_limits_are_a_model_error(self):
        chain = load("planar2")
        with pytest.raises(ModelError, match="lower > upper"):
            chain.with_limits(lower=[1.0, 0.0], upper=[0.0, 1.0])


class TestCoupledConstraint:
    def test_marvin_diamond_matches_its_published_inequality(self):
        c = load("marvin_left").constraints[0]
        rng = np.random.default_rng(0)
        q = np.zeros((5000, 7))
        q[:, 5] = rng.uniform(-1.2, 1.2, 5000)
        q[:, 6] = rng.uniform(-1.7, 1.7, 5000)
        expected = np.abs(np.degrees(q[:, 6])) + 1.025 * np.abs(np.degrees(q[:, 5])) <= 110.5
        assert np.array_equal(c.satisfied(q), expected)
        g = c.residual(q)[:, 0]
        assert np.allclose(
            np.degrees(g), np.abs(np.degrees(q[:, 6])) + 1.025 * np.abs(np.degrees(q[:, 5])) - 110.5
        )

    def test_linearization_matches_finite_differences_in_each_quadrant(self):
        c = load("marvin_left").constraints[0]
        for s6 in (1, -1):
            for s7 in (1, -1):
                q = np.zeros(7)
                q[5], q[6] = 0.4 * s6, 0.7 * s7
                g, G = c.linearize(q, 7)
                dq = np.zeros(7)
                dq[5], dq[6] = 1e-6, -2e-6
                assert np.isclose(c.residual(q + dq)[0], g[0] + G[0] @ dq, atol=1e-12)

    def test_abs_sum_equals_degree_rows(self):
        a = QuadrantPolynomialConstraint.abs_sum(5, 6, 1.025, math.radians(110.5))
        b = load("marvin_left").constraints[0]
        q = np.random.default_rng(1).uniform(-2, 2, (200, 7))
        assert np.allclose(a.residual(q), b.residual(q))

    def test_a_constraint_on_a_missing_joint_is_refused(self):
        c = QuadrantPolynomialConstraint.abs_sum(5, 6, 1.0, 1.0)
        with pytest.raises(ModelError, match="joint index 5"):
            load("planar2").with_constraints([c])


class TestDH:
    def test_marvin_from_dh_and_from_urdf_agree(self):
        rng = np.random.default_rng(3)
        for side in ("left", "right"):
            dh = marvin_dh(side)
            urdf = load(f"marvin_{side}")
            from_file = ikstack.load_urdf(data_path(f"marvin_{side}.urdf"), "base", "flange")
            Q = dh.random_q(rng, 500)
            assert np.abs(fk(dh, Q) - fk(from_file, Q)).max() < 1e-12
            assert np.allclose(from_file.lower, dh.lower) and np.allclose(from_file.upper, dh.upper)
            assert np.allclose(urdf.lower, dh.lower)
        assert math.degrees(load("marvin_right").upper[5]) == pytest.approx(58.0)
        assert math.degrees(load("marvin_left").kinematic_margin) == pytest.approx(5.0)

    def test_marvin_flange_at_zero_matches_hand_computed_dh_product(self):
        # Modified DH: prod Rx(alpha) Tx(a) Rz(theta) Tz(d), written out here independently.
        def rx(a):
            c, s = math.cos(a), math.sin(a)
            return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])

        def rz(a):
            c, s = math.cos(a), math.sin(a)
            return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])

        def tr(x, z):
            T = np.eye(4)
            T[0, 3], T[2, 3] = x, z
            return T

        rows = [
            (0, 0, 174.5, 0),
            (90, 0, 0, 0),
            (-90, 0, 287, 0),
            (90, 18, 0, 180),
            (90, 18, 314, 180),
            (90, 0, 0, 90),
            (90, 0, 0, 90),
            (90, 0, 95, 90),
        ]
        q = np.array([0.1, -0.2, 0.3, -0.4, 0.5, -0.3, 0.2])
        T = np.eye(4)
        for i, (al, a, d, th) in enumerate(rows):
            qi = q[i] if i < 7 else 0.0
            T = (
                T
                @ rx(math.radians(al))
                @ tr(a / 1000, 0)
                @ rz(math.radians(th) + qi)
                @ tr(0, d / 1000)
            )
        assert np.allclose(fk(marvin_dh("left"), q), T, atol=1e-14)

    def test_ur5_standard_dh_equals_its_urdf_up_to_constant_frames(self):
        d = [0.089159, 0, 0, 0.10915, 0.09465, 0.0823]
        a = [0, -0.425, -0.39225, 0, 0, 0]
        al = [math.pi / 2, 0, 0, math.pi / 2, -math.pi / 2, 0]
        dh = from_dh(np.column_stack([d, np.zeros(6), a, al]), "standard")
        urdf = load("ur5")
        q0 = np.zeros(6)
        # T_dh(q) = A T_urdf(q) B for constant A (base) and B (tool); find them at q = 0 and q1
        rng = np.random.default_rng(5)
        Q = rng.uniform(-3, 3, (50, 6))
        A = np.diag([-1.0, -1.0, 1.0, 1.0])  # ROS base_link is the DH base turned by pi about z
        B = np.linalg.inv(A @ fk(urdf, q0)) @ fk(dh, q0)
        assert np.allclose(A @ fk(urdf, Q) @ B, fk(dh, Q), atol=1e-12)

    def test_bad_dh_table(self):
        with pytest.raises(ModelError, match=r"\(dof, 4\)"):
            from_dh(np.zeros((3, 3)))
        with pytest.raises(ModelError, match="finite"):
            from_dh([[0, np.nan, 0, 0]])


class TestBundledRobots:
    def test_catalog_has_the_promised_models(self):
        expected = {
            "planar2",
            "ur5",
            "panda",
            "panda_hand",
            "iiwa14",
            "marvin_left",
            "marvin_right",
            "rizon4",
            "rizon4s",
            "arx_x5",
            "scara",
            "parallel_gripper",
        }
        assert expected <= set(names())

    @pytest.mark.parametrize("name", names())
    def test_each_model_builds_with_provenance_and_finite_fk(self, name):
        chain = load(name)
        assert "provenance" in chain.source
        assert np.isfinite(fk(chain, chain.middle())).all()
        assert np.all(chain.lower < chain.upper)

    def test_gripper_is_marked(self):
        assert load("parallel_gripper").role == ikstack.ChainRole.GRIPPER
        assert load("ur5").role == ikstack.ChainRole.ARM

    def test_unknown_robot_lists_the_bundled_names(self):
        with pytest.raises(UnknownRobotError, match="bundled robots: .*ur5"):
            load("ur55")

    def test_panda_hand_tcp_is_the_published_offset(self):
        q = load("panda").middle()
        T_flange = fk(load("panda"), q)
        T_hand = fk(load("panda_hand"), q)
        rel = np.linalg.inv(T_flange) @ T_hand
        assert np.allclose(rel[:3, 3], [0, 0, 0.1034], atol=1e-12)
        assert np.allclose(rel[:3, :3], ikstack.spatial.rpy_to_matrix([0, 0, -math.pi / 4]))

    def test_planar2_example_file_matches_the_bundled_model(self):
        from pathlib import Path

        ex = Path(__file__).resolve().parents[2] / "examples" / "planar2.urdf"
        chain = ikstack.load_urdf(ex, base="base", tip="tool", acceleration_limits=[3.0, 3.0])
        assert np.allclose(fk(chain, [0.7, -0.7]), fk(load("planar2"), [0.7, -0.7]))
