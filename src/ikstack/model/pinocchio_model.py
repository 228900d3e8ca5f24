"""A serial chain from a Pinocchio model a user already holds (Pinocchio is not a dependency).

Pinocchio places joint ``i`` at ``jointPlacements[i]`` in its parent joint's frame and a frame
at ``frames[f].placement`` in its parent joint's frame; its FK is
``oMi = oMi_parent * jointPlacements[i] * motion_i(q)``. The chain takes these numbers as they
are: origins are the joint placements, the tip transform the frame's placement. Unbounded
revolute joints (``RUB*``, stored by Pinocchio as ``(cos, sin)``) become continuous joints
whose value is the angle.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack.errors import ModelError, UnknownLinkError, UnsupportedJointError
from ikstack.model.chain import Chain, ChainRole, JointType, per_joint
from ikstack.model.constraints import JointConstraint

Array = NDArray[np.float64]

_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}


def _se3(M: Any) -> Array:
    T = np.eye(4)
    T[:3, :3] = np.asarray(M.rotation, dtype=np.float64)
    T[:3, 3] = np.asarray(M.translation, dtype=np.float64)
    return T


def _joint_kind(jmodel: Any, jname: str) -> tuple[JointType, Array]:
    short = jmodel.shortname()
    if short in ("JointModelRX", "JointModelRY", "JointModelRZ"):
        return JointType.REVOLUTE, np.array(_AXES[short[-1]])
    if short in ("JointModelRUBX", "JointModelRUBY", "JointModelRUBZ"):
        return JointType.CONTINUOUS, np.array(_AXES[short[-1]])
    if short in ("JointModelPX", "JointModelPY", "JointModelPZ"):
        return JointType.PRISMATIC, np.array(_AXES[short[-1]])
    if short == "JointModelRevoluteUnaligned":
        return JointType.REVOLUTE, np.array(jmodel.axis, dtype=np.float64)
    if short == "JointModelRevoluteUnboundedUnaligned":
        return JointType.CONTINUOUS, np.array(jmodel.axis, dtype=np.float64)
    if short == "JointModelPrismaticUnaligned":
        return JointType.PRISMATIC, np.array(jmodel.axis, dtype=np.float64)
    raise UnsupportedJointError(
        jname,
        short,
        "only one-degree-of-freedom revolute and prismatic Pinocchio joints map to a serial chain",
    )


def from_pinocchio(
    model: Any,
    frame: str,
    *,
    base: str | None = None,
    acceleration_limits: ArrayLike | None = None,
    jerk_limits: ArrayLike | None = None,
    constraints: Sequence[JointConstraint] = (),
    kinematic_margin: float = 0.0,
    role: ChainRole | str = ChainRole.ARM,
    name: str | None = None,
) -> Chain:
    """The serial chain of a ``pinocchio.Model`` from its root (or frame ``base``) to ``frame``.

    Args:
        model: a ``pinocchio.Model``.
        frame: the tip frame's name (a body, joint or operational frame).
        base: a frame to start from (its parent joint's subtree); default the universe.
        acceleration_limits, jerk_limits: (dof,) or scalar; Pinocchio has none.

    The chain's joint values are Pinocchio's ``q`` entries of these joints, except unbounded
    revolute joints, whose value is the angle ``atan2(sin, cos)`` of their two entries.

    Raises:
        UnknownLinkError: ``frame`` or ``base`` is not a frame of the model (lists them).
        UnsupportedJointError: a joint on the path has more than one degree of freedom
            (free flyer, spherical, planar, ...) or is a mimic joint.
    """
    frames = [f.name for f in model.frames]
    if frame not in frames:
        raise UnknownLinkError(frame, frames)
    fid = frames.index(frame)
    tip_frame = model.frames[fid]
    base_joint = 0
    T_base_prefix: Array = np.eye(4)
    base_name = model.names[0]
    if base is not None:
        if base not in frames:
            raise UnknownLinkError(base, frames)
        bf = model.frames[frames.index(base)]
        base_joint = int(bf.parentJoint) if hasattr(bf, "parentJoint") else int(bf.parent)
        T_base_prefix = np.asarray(np.linalg.inv(_se3(bf.placement)), dtype=np.float64)
        base_name = base
    parent_joint = (
        int(tip_frame.parentJoint) if hasattr(tip_frame, "parentJoint") else int(tip_frame.parent)
    )
    path: list[int] = []
    j = parent_joint
    while j != base_joint:
        if j == 0:
            raise ModelError(f"frame {frame!r} is not below frame {base!r}; no chain joins them")
        path.append(j)
        j = int(model.parents[j])
    path.reverse()
    if not path:
        raise ModelError(f"no moving joint between {base_name!r} and {frame!r}")
    names: list[str] = []
    types: list[JointType] = []
    axes: list[Array] = []
    origins: list[Array] = []
    lo: list[float] = []
    hi: list[float] = []
    vel: list[float] = []
    for k, jid in enumerate(path):
        jname = str(model.names[jid])
        jm = model.joints[jid]
        t, axis = _joint_kind(jm, jname)
        O = _se3(model.jointPlacements[jid])
        origins.append(T_base_prefix @ O if k == 0 else O)
        names.append(jname)
        types.append(t)
        axes.append(axis)
        iq, iv = int(jm.idx_q), int(jm.idx_v)
        if t == JointType.CONTINUOUS:
            lo.append(-math.inf)
            hi.append(math.inf)
        else:
            lo.append(float(model.lowerPositionLimit[iq]))
            hi.append(float(model.upperPositionLimit[iq]))
        v = float(model.velocityLimit[iv])
        vel.append(v if math.isfinite(v) and v > 0 else math.inf)

    where = f"to {frame!r}"

    # Pinocchio leaves unlimited joints at +-max float; the chain spells them +-inf
    lo_a = np.where(np.asarray(lo) < -1e300, -math.inf, lo)
    hi_a = np.where(np.asarray(hi) > 1e300, math.inf, hi)
    return Chain(
        joint_names=tuple(names),
        joint_types=tuple(types),
        axes=np.array(axes),
        origins=np.array(origins),
        T_last_tip=_se3(tip_frame.placement),
        lower=lo_a,
        upper=hi_a,
        velocity_limits=np.array(vel),
        acceleration_limits=per_joint(acceleration_limits, names, "acceleration_limits", where),
        jerk_limits=per_joint(jerk_limits, names, "jerk_limits", where),
        base=base_name,
        tip=frame,
        link_names=tuple(str(model.names[j]) for j in path),
        constraints=tuple(constraints),
        kinematic_margin=kinematic_margin,
        role=ChainRole(role),
        name=name if name is not None else str(model.name),
        source="pinocchio model",
    )
