"""What the viewer draws of a chain: capsules between joint origins, and meshes from the
robot description where it has them (loaded with trimesh, when installed).

Everything here is plain numpy except mesh loading; poses are in each link's frame
(``chain.link_names``, index 0 = the base), so the viewer moves a link's drawings by moving
one frame.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ikstack.kinematics import fk_links
from ikstack.model import Chain
from ikstack.spatial import from_xyz_rpy

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Segment:
    """A capsule from ``start`` to ``end`` [m], both in link ``link``'s frame (0 = base)."""

    link: int
    start: Array
    end: Array


def segments(chain: Chain) -> list[Segment]:
    """Capsules joining consecutive joint origins (and the last joint to the tip and TCP).

    Link ``i`` (1-based, the link joint ``i`` moves) holds the segment from its own origin to
    joint ``i + 1``'s origin, which is fixed in it; the base holds the segment to joint 1.
    Zero-length segments are left out.
    """
    out: list[Segment] = []
    zero = np.zeros(3)
    for i in range(chain.dof + 1):
        if i < chain.dof:
            end = chain.origins[i][:3, 3]
        else:
            end = (chain.T_last_tip @ chain.T_tip_tcp)[:3, 3]
        if np.linalg.norm(end) > 1e-6:
            out.append(Segment(i, zero.copy(), np.array(end, dtype=np.float64)))
    if np.linalg.norm(chain.T_tip_tcp[:3, 3]) > 1e-6 and chain.dof:
        tip = chain.T_last_tip[:3, 3]
        if np.linalg.norm(tip) > 1e-6:  # show the flange and the tool as two pieces
            out[-1] = Segment(chain.dof, zero.copy(), np.array(tip, dtype=np.float64))
            out.append(
                Segment(
                    chain.dof,
                    np.array(tip, dtype=np.float64),
                    (chain.T_last_tip @ chain.T_tip_tcp)[:3, 3].copy(),
                )
            )
    return out


def capsule_mesh(
    start: Array, end: Array, radius: float, sides: int = 16, rings: int = 4
) -> tuple[Array, NDArray[np.int64]]:
    """Vertices (V, 3) and triangles (F, 3) of a capsule from ``start`` to ``end``."""
    start = np.asarray(start, dtype=np.float64)
    end = np.asarray(end, dtype=np.float64)
    axis = end - start
    length = float(np.linalg.norm(axis))
    z = axis / length if length > 1e-12 else np.array([0.0, 0.0, 1.0])
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    # profile: (radial, axial) from the bottom pole to the top pole
    prof: list[tuple[float, float]] = []
    for k in range(rings + 1):
        a = -math.pi / 2 + (math.pi / 2) * k / rings
        prof.append((radius * math.cos(a), radius * math.sin(a)))
    for k in range(rings + 1):
        a = (math.pi / 2) * k / rings
        prof.append((radius * math.cos(a), length + radius * math.sin(a)))
    verts = []
    for r, h in prof:
        for s in range(sides):
            t = 2 * math.pi * s / sides
            verts.append(start + h * z + r * (math.cos(t) * x + math.sin(t) * y))
    faces = []
    for k in range(len(prof) - 1):
        for s in range(sides):
            a, b = k * sides + s, k * sides + (s + 1) % sides
            c, d = a + sides, b + sides
            faces.append((a, c, b))
            faces.append((b, c, d))
    return np.array(verts), np.array(faces, dtype=np.int64)


@dataclass(frozen=True)
class LinkMesh:
    """A mesh drawn rigidly with link ``link`` (0 = base) at ``T_link_mesh``."""

    link: int
    mesh: Any  # trimesh.Trimesh
    T_link_mesh: Array
    name: str


def urdf_meshes(chain: Chain, urdf_path: str | Path) -> tuple[list[LinkMesh], list[str]]:
    """Visual meshes of a URDF attached to the chain's links, and the files that did not load.

    A link on the chain's path, or hanging from one by fixed joints, is drawn with the chain
    link it moves with. ``package://PKG/...`` is looked up in the folders above the URDF.
    Needs trimesh (returns nothing when it is missing).
    """
    try:
        import trimesh
    except ImportError:
        return [], ["trimesh is not installed"]
    path = Path(urdf_path)
    root = ET.parse(path).getroot()
    joints = root.findall("joint")
    moving = {"revolute", "continuous", "prismatic"}
    by_child = {child.get("link"): j for j in joints if (child := j.find("child")) is not None}
    chain_links = [chain.base, *chain.link_names]

    def owner(link: str) -> tuple[int, Array] | None:
        """(chain link index, T_chainlink_link) for a link rigidly attached to a chain link."""
        T = np.eye(4)
        cur = link
        for _ in range(1000):
            if cur in chain_links:
                return chain_links.index(cur), T
            j = by_child.get(cur)
            if j is None or j.get("type") in moving:
                return None
            o = j.find("origin")
            xyz = [float(v) for v in (o.get("xyz", "0 0 0") if o is not None else "0 0 0").split()]
            rpy = [float(v) for v in (o.get("rpy", "0 0 0") if o is not None else "0 0 0").split()]
            T = from_xyz_rpy(xyz, rpy) @ T
            cur = str(j.find("parent").get("link"))  # type: ignore[union-attr]
        return None

    out: list[LinkMesh] = []
    failed: list[str] = []
    for link in root.findall("link"):
        name = link.get("name", "")
        own = owner(name)
        if own is None:
            continue
        idx, T_owner_link = own
        for v, vis in enumerate(link.findall("visual")):
            geom = vis.find("geometry/mesh")
            if geom is None:
                continue
            fname = geom.get("filename", "")
            file = _resolve(fname, path)
            if file is None:
                failed.append(fname)
                continue
            try:
                mesh = trimesh.load(str(file), force="mesh")
            except Exception:  # any loader failure: draw the capsules only for this one
                failed.append(fname)
                continue
            scale = geom.get("scale")
            if scale:
                mesh.apply_scale([float(s) for s in scale.split()])
            o = vis.find("origin")
            xyz = [float(s) for s in (o.get("xyz", "0 0 0") if o is not None else "0 0 0").split()]
            rpy = [float(s) for s in (o.get("rpy", "0 0 0") if o is not None else "0 0 0").split()]
            out.append(LinkMesh(idx, mesh, T_owner_link @ from_xyz_rpy(xyz, rpy), f"{name}_{v}"))
    return out, failed


def _resolve(fname: str, urdf: Path) -> Path | None:
    if fname.startswith("file://"):
        p = Path(fname[7:])
        return p if p.is_file() else None
    if fname.startswith("package://"):
        rest = fname[len("package://") :]
        pkg, _, rel = rest.partition("/")
        for parent in urdf.resolve().parents:
            for cand in (
                (parent / pkg / rel, parent / rel) if parent.name != pkg else (parent / rel,)
            ):
                if cand.is_file():
                    return cand
        return None
    p = (urdf.parent / fname) if not Path(fname).is_absolute() else Path(fname)
    return p if p.is_file() else None


def mjcf_meshes(chain: Chain, mjcf_path: str | Path) -> tuple[list[LinkMesh], list[str]]:
    """Visual geometry of an MJCF model's bodies on the chain, as meshes (MuJoCo's compiled
    mesh and primitive geoms of visual groups 0-2), attached to the chain's links.

    Each geom's pose in its chain link comes from MuJoCo's kinematics and the chain's at the
    same configuration (a link frame sits on its joint's anchor, not always on the body)."""
    try:
        import mujoco
        import trimesh
    except ImportError:
        return [], ["mujoco or trimesh is not installed"]
    model = mujoco.MjModel.from_xml_path(str(mjcf_path))
    data = mujoco.MjData(model)
    mujoco.mj_kinematics(model, data)
    names = [
        mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or "" for b in range(model.nbody)
    ]
    q = np.array(
        [
            model.qpos0[model.jnt_qposadr[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, j)]]
            for j in chain.joint_names
        ]
    )
    frames = [np.eye(4), *fk_links(chain, q)[:-1]]
    last = {n: i + 1 for i, n in enumerate(chain.link_names)}  # last joint moving each body
    if chain.base in names:
        b0 = names.index(chain.base)
        T_world_base = _pose(data.xpos[b0], data.xmat[b0])
    else:
        T_world_base = np.eye(4)
    parent = [int(p) for p in model.body_parentid]

    def owner(b: int) -> int | None:
        cur = b
        while True:
            if names[cur] in last:
                return last[names[cur]]
            if names[cur] == chain.base:
                return 0
            if cur == 0 or model.body_jntnum[cur] > 0:
                return None
            cur = parent[cur]

    out: list[LinkMesh] = []
    for g in range(model.ngeom):
        if int(model.geom_group[g]) > 2:
            continue
        idx = owner(int(model.geom_bodyid[g]))
        if idx is None:
            continue
        T_world_link = T_world_base @ frames[idx]
        T_link_geom = np.linalg.solve(T_world_link, _pose(data.geom_xpos[g], data.geom_xmat[g]))
        gtype = int(model.geom_type[g])
        size = model.geom_size[g]
        if gtype == int(mujoco.mjtGeom.mjGEOM_MESH):
            m = int(model.geom_dataid[g])
            v0, nv = int(model.mesh_vertadr[m]), int(model.mesh_vertnum[m])
            f0, nf = int(model.mesh_faceadr[m]), int(model.mesh_facenum[m])
            mesh = trimesh.Trimesh(
                np.array(model.mesh_vert[v0 : v0 + nv]),
                np.array(model.mesh_face[f0 : f0 + nf]),
                process=False,
            )
        elif gtype == int(mujoco.mjtGeom.mjGEOM_BOX):
            mesh = trimesh.creation.box(extents=2 * size[:3])
        elif gtype == int(mujoco.mjtGeom.mjGEOM_SPHERE):
            mesh = trimesh.creation.icosphere(2, radius=size[0])
        elif gtype == int(mujoco.mjtGeom.mjGEOM_CYLINDER):
            mesh = trimesh.creation.cylinder(radius=size[0], height=2 * size[1])
        elif gtype == int(mujoco.mjtGeom.mjGEOM_CAPSULE):
            mesh = trimesh.creation.capsule(height=2 * size[1], radius=size[0])
        else:
            continue
        rgba = model.geom_rgba[g]
        mat = int(model.geom_matid[g])
        if mat >= 0:
            rgba = model.mat_rgba[mat]
        colors = np.tile((np.clip(rgba, 0, 1) * 255).astype(np.uint8), (len(mesh.faces), 1))
        mesh.visual.face_colors = colors  # type: ignore[union-attr]
        out.append(LinkMesh(idx, mesh, T_link_geom, f"geom{g}"))
    return out, []


def _pose(pos: Any, mat: Any) -> Array:
    T = np.eye(4)
    T[:3, :3] = np.asarray(mat, dtype=np.float64).reshape(3, 3)
    T[:3, 3] = pos
    return T
