"""MJCF loader: a serial chain read from MuJoCo's compiled model (extra ``mujoco``).

MuJoCo compiles the XML (defaults, includes, ``<frame>`` elements, angle units, ``euler`` and
``axisangle`` orientations), so this loader reads only the compiled numbers: the body tree
(``body_parentid``, ``body_pos``, ``body_quat``), the joints of each body (``jnt_type``,
``jnt_pos``, ``jnt_axis``, ``jnt_range``, ``jnt_limited``, the reference ``qpos0``) and the
sites. Forward kinematics follows MuJoCo's: a body's frame is its parent's times
``(body_pos, body_quat)``; each joint of the body then acts in turn, a hinge turning by
``qpos - qpos0`` about its axis through ``jnt_pos``, a slide moving by ``qpos - qpos0`` along
its axis. The chain's joint value is MuJoCo's ``qpos``: the reference offset is folded into the
joint's origin.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack.errors import (
    MissingExtraError,
    MJCFError,
    UnknownLinkError,
    UnsupportedJointError,
)
from ikstack.model.chain import Chain, ChainRole, JointType, per_joint
from ikstack.model.constraints import JointConstraint
from ikstack.spatial import quat_to_matrix

Array = NDArray[np.float64]

# mjtJoint and mjtObj values (stable since MuJoCo 2.x)
_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3
_OBJ_BODY, _OBJ_JOINT, _OBJ_SITE = 1, 3, 6


def _mujoco() -> Any:
    try:
        import mujoco
    except ImportError:
        raise MissingExtraError("mujoco", "mujoco") from None
    return mujoco


def _compile(path_or_string: str | os.PathLike[str] | Any) -> tuple[Any, str]:
    mujoco = _mujoco()
    if isinstance(path_or_string, mujoco.MjModel):
        return path_or_string, "<MjModel>"
    if isinstance(path_or_string, str) and path_or_string.lstrip().startswith("<"):
        src = "<mjcf string>"
        try:
            return mujoco.MjModel.from_xml_string(path_or_string), src
        except ValueError as exc:
            raise MJCFError(f"{src}: MuJoCo cannot compile it: {_first_line(exc)}") from None
    p = Path(path_or_string)
    if not p.is_file():
        raise MJCFError(f"cannot read MJCF {p}: no such file")
    try:
        return mujoco.MjModel.from_xml_path(str(p)), str(p)
    except ValueError as exc:
        raise MJCFError(f"{p}: MuJoCo cannot compile it: {_first_line(exc)}") from None


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return " ".join(t.strip() for t in text[:3]) if text else type(exc).__name__


def _name(mujoco: Any, model: Any, obj: int, i: int) -> str:
    return mujoco.mj_id2name(model, obj, i) or ""


def _translation(p: ArrayLike) -> Array:
    T = np.eye(4)
    T[:3, 3] = p
    return T


def _rotation(axis: Array, angle: float) -> Array:
    a = axis / np.linalg.norm(axis)
    K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    T = np.eye(4)
    T[:3, :3] = np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K)
    return T


def _pose(pos: Array, quat: Array) -> Array:
    T = np.eye(4)
    T[:3, :3] = quat_to_matrix(np.asarray(quat, dtype=np.float64) / np.linalg.norm(quat))
    T[:3, 3] = pos
    return T


def load_mjcf(
    path_or_string: str | os.PathLike[str] | Any,
    base: str | None = None,
    tip: str | None = None,
    *,
    acceleration_limits: ArrayLike | None = None,
    jerk_limits: ArrayLike | None = None,
    velocity_limits: ArrayLike | None = None,
    constraints: Sequence[JointConstraint] = (),
    kinematic_margin: float = 0.0,
    role: ChainRole | str = ChainRole.ARM,
    name: str | None = None,
    source: str | None = None,
) -> Chain:
    """Load a serial chain from an MJCF file, an XML string, or a compiled ``mujoco.MjModel``.

    Args:
        path_or_string: an MJCF path (includes and meshes resolved by MuJoCo relative to it),
            the XML text itself (starting with ``<``), or an ``MjModel``.
        base: base body name; default ``world``.
        tip: a site name or a body name; default the single leaf body below ``base`` (an error
            lists the leaves and the sites if there are several).
        velocity_limits, acceleration_limits, jerk_limits: (dof,) or scalar; MJCF has none.
        constraints, kinematic_margin, role, name, source: as in :func:`load_urdf`.

    Raises:
        MissingExtraError: MuJoCo is not installed (extra ``mujoco``).
        MJCFError: the file does not compile (MuJoCo's message is quoted).
        UnknownLinkError: ``base`` or ``tip`` names no body (or site); the names that exist
            are listed.
        UnsupportedJointError: a ball or free joint lies between base and tip.
    """
    mujoco = _mujoco()
    model, src = _compile(path_or_string)
    bodies = [_name(mujoco, model, _OBJ_BODY, b) or f"body{b}" for b in range(model.nbody)]
    sites = [_name(mujoco, model, _OBJ_SITE, s) for s in range(model.nsite)]
    base_name = base if base is not None else bodies[0]
    if base_name not in bodies:
        raise UnknownLinkError(base_name, bodies)
    base_id = bodies.index(base_name)
    parent = [int(p) for p in model.body_parentid]
    T_tip_extra = np.eye(4)
    if tip is None:
        leaves = _leaves(base_id, parent, bodies)
        if len(leaves) != 1:
            named = [s for s in sites if s]
            raise MJCFError(
                f"{src}: several leaf bodies below {base_name!r}: {leaves}; choose a tip body or "
                f"site" + (f" (sites: {', '.join(named)})" if named else "")
            )
        tip_name = leaves[0]
        tip_id = bodies.index(tip_name)
    elif tip in sites:
        s = sites.index(tip)
        tip_name = tip
        tip_id = int(model.site_bodyid[s])
        T_tip_extra = _pose(model.site_pos[s], model.site_quat[s])
    elif tip in bodies:
        tip_name = tip
        tip_id = bodies.index(tip)
    else:
        raise UnknownLinkError(tip, bodies + [s for s in sites if s])
    path: list[int] = []
    cur = tip_id
    while cur != base_id:
        if cur == 0:
            raise MJCFError(
                f"{src}: {tip_name!r} is not below body {base_name!r}; no chain joins them"
            )
        path.append(cur)
        cur = parent[cur]
    path.reverse()

    names: list[str] = []
    types: list[JointType] = []
    axes: list[Array] = []
    origins: list[Array] = []
    lo: list[float] = []
    hi: list[float] = []
    link_names: list[str] = []
    pending = np.eye(4)
    for b in path:
        pending = pending @ _pose(model.body_pos[b], model.body_quat[b])
        first, count = int(model.body_jntadr[b]), int(model.body_jntnum[b])
        for j in range(first, first + count) if count > 0 else ():
            jname = _name(mujoco, model, _OBJ_JOINT, j) or f"{bodies[b]}_joint{j - first}"
            jtype = int(model.jnt_type[j])
            if jtype in (_FREE, _BALL):
                kind = "free" if jtype == _FREE else "ball"
                raise UnsupportedJointError(
                    jname,
                    kind,
                    f"it moves body {bodies[b]!r} with more than one degree of "
                    "freedom; pick a base below it",
                )
            axis = np.array(model.jnt_axis[j], dtype=np.float64)
            if not np.isfinite(axis).all() or np.linalg.norm(axis) < 1e-9:
                raise MJCFError(f"{src}: joint {jname!r} of body {bodies[b]!r} has a zero axis")
            ref = float(model.qpos0[model.jnt_qposadr[j]])
            limited = bool(model.jnt_limited[j])
            rng = model.jnt_range[j]
            if jtype == _HINGE:
                anchor = np.array(model.jnt_pos[j], dtype=np.float64)
                origins.append(pending @ _translation(anchor) @ _rotation(axis, -ref))
                pending = _translation(-anchor)
                t = JointType.REVOLUTE if limited else JointType.CONTINUOUS
            else:  # slide: the anchor does not matter
                origins.append(pending @ _translation(-ref * axis / np.linalg.norm(axis)))
                pending = np.eye(4)
                t = JointType.PRISMATIC
            names.append(jname)
            types.append(t)
            axes.append(axis)
            lo.append(float(rng[0]) if limited else -math.inf)
            hi.append(float(rng[1]) if limited else math.inf)
            link_names.append(bodies[b])
    if not names:
        raise MJCFError(f"{src}: no hinge or slide joint between {base_name!r} and {tip_name!r}")

    where = f"{base_name} -> {tip_name}"

    model_name = bytes(model.names).split(b"\0", 1)[0].decode("utf-8", "replace")
    return Chain(
        joint_names=tuple(names),
        joint_types=tuple(types),
        axes=np.array(axes),
        origins=np.array(origins),
        T_last_tip=pending @ T_tip_extra,
        lower=np.array(lo),
        upper=np.array(hi),
        velocity_limits=per_joint(velocity_limits, names, "velocity_limits", where, MJCFError),
        acceleration_limits=per_joint(
            acceleration_limits, names, "acceleration_limits", where, MJCFError
        ),
        jerk_limits=per_joint(jerk_limits, names, "jerk_limits", where, MJCFError),
        base=base_name,
        tip=tip_name,
        link_names=tuple(link_names),
        constraints=tuple(constraints),
        kinematic_margin=kinematic_margin,
        role=ChainRole(role),
        name=name if name is not None else (model_name or Path(src).stem),
        source=source if source is not None else src,
    )


def _leaves(base_id: int, parent: list[int], bodies: list[str]) -> list[str]:
    below: set[int] = set()
    for b in range(1, len(parent)):
        cur = b
        while cur not in (0, base_id):
            cur = parent[cur]
        if cur == base_id and b != base_id:
            below.add(b)
    has_child = {parent[b] for b in below}
    return sorted(bodies[b] for b in below if b not in has_child)
