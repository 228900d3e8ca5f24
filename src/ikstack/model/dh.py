"""Chains from Denavit-Hartenberg tables, standard and modified (Craig).

Standard DH link ``i``: ``Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``, joint ``i`` about the
previous frame's z. Modified DH link ``i``: ``Rx(alpha_{i-1}) Tx(a_{i-1}) Rz(theta_i) Tz(d_i)``,
joint ``i`` about its own z. ``theta_i = q_i + offset_i`` (revolute) or ``d_i = q_i + d0``
(prismatic). Lengths in metres and angles in radians unless ``degrees=True`` / ``mm=True``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import Enum

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack.errors import ModelError
from ikstack.model.chain import Chain, ChainRole, JointType
from ikstack.model.constraints import JointConstraint

Array = NDArray[np.float64]


class DHConvention(str, Enum):
    """Denavit-Hartenberg conventions."""

    STANDARD = "standard"
    MODIFIED = "modified"


def _rx(a: float) -> Array:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1.0]])


def _rz(a: float) -> Array:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])


def _tx(x: float) -> Array:
    T = np.eye(4)
    T[0, 3] = x
    return T


def _tz(z: float) -> Array:
    T = np.eye(4)
    T[2, 3] = z
    return T


def from_dh(
    rows: ArrayLike,
    convention: DHConvention | str = DHConvention.STANDARD,
    *,
    flange: ArrayLike | None = None,
    joint_types: Sequence[JointType | str] | None = None,
    lower: ArrayLike | None = None,
    upper: ArrayLike | None = None,
    velocity_limits: ArrayLike | None = None,
    acceleration_limits: ArrayLike | None = None,
    jerk_limits: ArrayLike | None = None,
    degrees: bool = False,
    mm: bool = False,
    joint_names: Sequence[str] | None = None,
    base: str = "base",
    tip: str = "flange",
    constraints: Sequence[JointConstraint] = (),
    kinematic_margin: float = 0.0,
    role: ChainRole | str = ChainRole.ARM,
    name: str = "",
    source: str = "",
) -> Chain:
    """Build a chain from a DH table.

    Args:
        rows: (dof, 4) rows. Standard: ``(d, theta_offset, a, alpha)``. Modified:
            ``(alpha, a, d, theta_offset)`` (Craig's column order, as published tables use).
        convention: ``"standard"`` or ``"modified"``.
        flange: optional static last row in the same column order (not a joint), as in
            modified-DH tables that end with a flange offset.
        joint_types: per joint, revolute (default) or prismatic.
        lower, upper, velocity_limits, acceleration_limits, jerk_limits: (dof,) limits in the
            table's units (degrees if ``degrees``; mm for prismatic if ``mm``).
        degrees: angles (alpha, offsets, revolute limits) are in degrees.
        mm: lengths (a, d, prismatic limits) are in millimetres.
    """
    conv = DHConvention(convention)
    tab = np.atleast_2d(np.asarray(rows, dtype=np.float64))
    if tab.ndim != 2 or tab.shape[1] != 4 or tab.shape[0] == 0:
        raise ModelError(f"a DH table has shape (dof, 4); got {tab.shape}")
    if not np.isfinite(tab).all():
        raise ModelError("a DH table must be finite")
    dof = tab.shape[0]
    ang = math.pi / 180.0 if degrees else 1.0
    lin = 1e-3 if mm else 1.0
    types = (
        [JointType.REVOLUTE] * dof
        if joint_types is None
        else [JointType[t.upper()] if isinstance(t, str) else JointType(t) for t in joint_types]
    )
    if len(types) != dof:
        raise ModelError(f"{len(types)} joint types for a {dof}-row DH table")

    def scaled(v: ArrayLike | None, default: float) -> Array:
        if v is None:
            return np.full(dof, default)
        arr = np.broadcast_to(np.asarray(v, dtype=np.float64), (dof,)).copy()
        for i, t in enumerate(types):
            arr[i] *= lin if t == JointType.PRISMATIC else ang
        return arr

    lo = scaled(lower, -math.inf)
    hi = scaled(upper, math.inf)
    vel = scaled(velocity_limits, math.inf)
    acc = scaled(acceleration_limits, math.inf)
    jerk = scaled(jerk_limits, math.inf)

    if conv == DHConvention.STANDARD:
        d, th, a, al = tab[:, 0] * lin, tab[:, 1] * ang, tab[:, 2] * lin, tab[:, 3] * ang
    else:
        al, a, d, th = tab[:, 0] * ang, tab[:, 1] * lin, tab[:, 2] * lin, tab[:, 3] * ang
    fl = None
    if flange is not None:
        f = np.asarray(flange, dtype=np.float64).reshape(4)
        fl = (
            (f[0] * lin, f[1] * ang, f[2] * lin, f[3] * ang)
            if conv == DHConvention.STANDARD
            else (f[0] * ang, f[1] * lin, f[2] * lin, f[3] * ang)
        )

    origins = np.zeros((dof, 4, 4))
    axes = np.tile(np.array([0.0, 0.0, 1.0]), (dof, 1))
    if conv == DHConvention.STANDARD:
        # joint i turns about frame (i-1)'s z; the rest of link i follows the motion
        post = np.eye(4)
        for i in range(dof):
            origins[i] = post
            # Rz(q) and Tz(q) commute with Rz(theta0) Tz(d0): one form serves both joint types
            post = _rz(th[i]) @ _tz(d[i]) @ _tx(a[i]) @ _rx(al[i])
        T_last = post
        if fl is not None:
            T_last = T_last @ _rz(fl[1]) @ _tz(fl[0]) @ _tx(fl[2]) @ _rx(fl[3])
    else:
        pre = np.eye(4)
        for i in range(dof):
            origins[i] = pre @ _rx(al[i]) @ _tx(a[i]) @ _rz(th[i])
            pre = _tz(d[i])
        T_last = pre
        if fl is not None:
            T_last = T_last @ _rx(fl[0]) @ _tx(fl[1]) @ _rz(fl[3]) @ _tz(fl[2])
    names = (
        tuple(joint_names)
        if joint_names is not None
        else tuple(f"joint{i + 1}" for i in range(dof))
    )
    return Chain(
        joint_names=names,
        joint_types=tuple(types),
        axes=axes,
        origins=origins,
        T_last_tip=T_last,
        lower=lo,
        upper=hi,
        velocity_limits=vel,
        acceleration_limits=acc,
        jerk_limits=jerk,
        base=base,
        tip=tip,
        link_names=tuple(f"link{i + 1}" for i in range(dof)),
        constraints=tuple(constraints),
        kinematic_margin=kinematic_margin,
        role=ChainRole(role),
        name=name,
        source=source,
    )
