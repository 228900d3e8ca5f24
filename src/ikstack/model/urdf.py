"""URDF loader: any kinematic tree, a serial chain picked by base and tip link names.

Fixed joints on the path are folded into the next joint's origin (or the tip transform).
Mimic, floating and planar joints on the path are refused with an error naming the joint.
"""

from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.parsers import expat

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack.errors import UnknownLinkError, UnsupportedJointError, URDFError
from ikstack.model.chain import Chain, ChainRole, JointType, per_joint
from ikstack.model.constraints import JointConstraint
from ikstack.spatial import from_xyz_rpy

Array = NDArray[np.float64]


#: URDF joint types; the last two cannot sit on a serial chain's path
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
#: largest |value| accepted in an origin's xyz [m]: beyond it a model is a typo (or an overflow
#: waiting to happen in FK), not a robot
MAX_LENGTH = 1e4
#: largest |value| accepted in an origin's rpy [rad] and in position limits [rad or m]
MAX_ANGLE = 1e4
#: what a velocity limit of 0 means here: many URDF writers emit 0 for a limit they do not
#: know, so ikstack reads 0 as "not given" (unlimited, +inf) and says so in the chain's notes;
#: a negative velocity is an error
ZERO_VELOCITY_NOTE = "a URDF velocity limit of 0 is read as 'not given' (unlimited) for joint(s): "


@dataclass
class _UJoint:
    name: str
    type: str
    parent: str
    child: str
    origin: Array
    axis: Array
    lower: float
    upper: float
    velocity: float
    mimic: bool
    line: int = 0
    zero_velocity: bool = False


def _floats(
    text: str | None, n: int, what: str, default: Sequence[float], bound: float = math.inf
) -> Array:
    if text is None:
        return np.array(default, dtype=np.float64)
    parts = text.split()
    try:
        vals = [float(p) for p in parts]
    except ValueError:
        raise URDFError(f"{what}: {text!r} is not {n} numbers") from None
    if len(vals) != n or not all(math.isfinite(v) for v in vals):
        raise URDFError(f"{what}: {text!r} is not {n} finite numbers")
    if any(abs(v) > bound for v in vals):
        raise URDFError(
            f"{what}: {text!r} has a value beyond +-{bound:g}; not a plausible robot dimension"
        )
    return np.array(vals)


def _attr_float(
    el: ET.Element, key: str, what: str, default: float, bound: float = math.inf
) -> float:
    v = el.get(key)
    if v is None:
        return default
    try:
        out = float(v)
    except ValueError:
        raise URDFError(f"{what}: {key}={v!r} is not a number") from None
    if not math.isfinite(out):
        raise URDFError(f"{what}: {key}={v!r} is not finite")
    if abs(out) > bound:
        raise URDFError(f"{what}: {key}={v!r} is beyond +-{bound:g}; not a plausible limit")
    return out


def _xml(data: bytes, source: str) -> tuple[ET.Element, dict[int, int]]:
    """The element tree of ``data`` and each element's line (by ``id``).

    The encoding comes from the XML declaration (UTF-8 without one).
    """
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()
    lines: dict[int, int] = {}

    def start(tag: str, attrs: dict[str, str]) -> None:
        lines[id(builder.start(tag, attrs))] = parser.CurrentLineNumber

    parser.StartElementHandler = start
    parser.EndElementHandler = builder.end
    try:
        parser.Parse(data, True)
        root = builder.close()
    except expat.ExpatError as exc:
        hint = ""
        if b"encoding=" not in data[:200]:
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as u:
                hint = (
                    f"; byte {data[u.start]:#04x} at offset {u.start} is not UTF-8 (declare "
                    "the file's encoding in its <?xml ... encoding=...?> line)"
                )
        msg = expat.ErrorString(exc.code)
        raise URDFError(
            f"{source}: malformed XML at line {exc.lineno}, column {exc.offset}: {msg}{hint}"
        ) from None
    except (AssertionError, LookupError, ValueError) as exc:  # unknown encoding, empty tree
        raise URDFError(f"{source}: not a readable XML document ({exc})") from None
    return root, lines


def _parse(data: bytes, source: str) -> tuple[str, list[str], dict[str, _UJoint]]:
    root, lines = _xml(data, source)

    def at(el: ET.Element) -> str:
        return f" (line {lines[id(el)]})" if id(el) in lines else ""

    if root.tag != "robot":
        raise URDFError(f"{source}: root element is <{root.tag}>; a URDF's root is <robot>")
    links: list[str] = []
    link_line: dict[str, int] = {}
    for ln in root.findall("link"):
        lname = ln.get("name", "")
        if not lname:
            raise URDFError(f"{source}: a <link>{at(ln)} has no name")
        if lname in link_line:
            raise URDFError(
                f"{source}: link {lname!r}{at(ln)} is defined twice (first at line "
                f"{link_line[lname]}); link names must be unique"
            )
        link_line[lname] = lines.get(id(ln), 0)
        links.append(lname)
    joints: dict[str, _UJoint] = {}
    for el in root.findall("joint"):
        name = el.get("name")
        jtype = el.get("type")
        if not name:
            raise URDFError(f"{source}: a <joint>{at(el)} has no name attribute")
        what = f"{source}: joint {name!r}{at(el)}"
        if name in joints:
            first = joints[name].line
            raise URDFError(
                f"{what} is defined twice (first at line {first}); joint names must be unique"
            )
        if not jtype:
            raise URDFError(
                f"{what} has no type attribute; URDF types are {', '.join(JOINT_TYPES)}"
            )
        if jtype not in JOINT_TYPES:
            raise URDFError(f"{what} has type {jtype!r}; URDF types are {', '.join(JOINT_TYPES)}")
        p, c = el.find("parent"), el.find("child")
        if p is None or c is None or not p.get("link") or not c.get("link"):
            raise URDFError(f"{what} lacks <parent link=...> or <child link=...>")
        o = el.find("origin")
        xyz = _floats(
            o.get("xyz") if o is not None else None, 3, f"{what} origin xyz", (0, 0, 0), MAX_LENGTH
        )
        rpy = _floats(
            o.get("rpy") if o is not None else None, 3, f"{what} origin rpy", (0, 0, 0), MAX_ANGLE
        )
        a = el.find("axis")
        axis = _floats(
            a.get("xyz") if a is not None else None, 3, f"{what} axis", (1, 0, 0), MAX_LENGTH
        )
        lim = el.find("limit")
        lower, upper, vel = -math.inf, math.inf, math.inf
        zero_vel = False
        if lim is not None:
            lower = _attr_float(lim, "lower", f"{what} <limit>", 0.0, MAX_ANGLE)
            upper = _attr_float(lim, "upper", f"{what} <limit>", 0.0, MAX_ANGLE)
            vel = _attr_float(lim, "velocity", f"{what} <limit>", math.inf)
            if vel < 0:
                raise URDFError(
                    f"{what} <limit>: velocity={lim.get('velocity')!r} is negative; "
                    "a velocity limit is >= 0 (0: not given)"
                )
            if vel == 0:
                vel, zero_vel = math.inf, True
            if jtype in ("revolute", "prismatic") and lower > upper:
                raise URDFError(f"{what} <limit>: lower={lower:g} > upper={upper:g}")
        elif jtype in ("revolute", "prismatic"):
            raise URDFError(f"{what} of type {jtype} has no <limit>; URDF requires one")
        joints[name] = _UJoint(
            name,
            jtype,
            str(p.get("link")),
            str(c.get("link")),
            from_xyz_rpy(xyz, rpy),
            axis,
            lower,
            upper,
            vel,
            el.find("mimic") is not None,
            lines.get(id(el), 0),
            zero_vel,
        )
    name = root.get("name", "")
    return name, links, joints


def _named(j: _UJoint) -> str:
    """``'name' (line N)`` of a parsed joint."""
    return f"{j.name!r} (line {j.line})" if j.line else repr(j.name)


def _check_cycles(src: str, by_child: dict[str, _UJoint]) -> None:
    """Raise :class:`URDFError` naming the joints of the first cycle (a -> b -> a)."""
    state: dict[str, int] = {}  # 1: on the current walk, 2: known to reach a root
    for start in by_child:
        walk: list[str] = []
        cur: str | None = start
        while cur is not None and cur in by_child and state.get(cur) != 2:
            if state.get(cur) == 1:
                loop = walk[walk.index(cur) :] + [cur]
                names = [_named(by_child[ln]) for ln in walk[walk.index(cur) :]]
                raise URDFError(
                    f"{src}: joints {', '.join(reversed(names))} form a cycle "
                    f"({' -> '.join(reversed(loop))}); a URDF is a tree"
                )
            state[cur] = 1
            walk.append(cur)
            cur = by_child[cur].parent
        for ln in walk:
            state[ln] = 2


def load_urdf(
    path_or_string: str | os.PathLike[str],
    base: str | None = None,
    tip: str | None = None,
    *,
    acceleration_limits: ArrayLike | None = None,
    jerk_limits: ArrayLike | None = None,
    constraints: Sequence[JointConstraint] = (),
    kinematic_margin: float = 0.0,
    role: ChainRole | str = ChainRole.ARM,
    name: str | None = None,
    source: str | None = None,
) -> Chain:
    """Load a serial chain from a URDF file (or an XML string starting with ``<``).

    Args:
        path_or_string: a URDF path, or the URDF text itself.
        base: base link name; default the tree's root.
        tip: tip link name; default the single leaf reached by following the tree from
            ``base`` (an error lists the leaves if there are several).
        acceleration_limits, jerk_limits: (dof,) or scalar [rad/s^2, rad/s^3]; URDF has none.
        constraints: coupled-joint constraints to attach.
        kinematic_margin: distance [rad] to keep from position limits.

    Raises:
        URDFError: malformed XML (with the parser's line) or malformed elements.
        UnknownLinkError: ``base`` or ``tip`` does not exist (lists the links that do).
        UnsupportedJointError: a mimic, floating or planar joint on the path.
    """
    data, src = _read(path_or_string)
    robot_name, links, joints = _parse(data, src)
    link_set = set(links)
    by_child: dict[str, _UJoint] = {}
    children: dict[str, list[str]] = {ln: [] for ln in links}
    for j in joints.values():
        for ln in (j.parent, j.child):
            if ln not in link_set:
                raise URDFError(
                    f"{src}: joint {_named(j)} refers to link {ln!r}, which is not defined"
                )
        if j.child in by_child:
            raise URDFError(
                f"{src}: link {j.child!r} is the child of two joints "
                f"({_named(by_child[j.child])} and {_named(j)}); a URDF is a tree"
            )
        by_child[j.child] = j
        children[j.parent].append(j.child)
    _check_cycles(src, by_child)
    roots = [ln for ln in links if ln not in by_child]
    if len(roots) != 1:
        raise URDFError(f"{src}: a URDF tree has one root link; found {roots}")
    if base is None:
        base = roots[0]
    if base not in link_set:
        raise UnknownLinkError(base, links)
    if tip is None:
        leaves = _leaves(base, children)
        if len(leaves) != 1:
            raise URDFError(f"{src}: several tip links below {base!r}; choose one of {leaves}")
        tip = leaves[0]
    if tip not in link_set:
        raise UnknownLinkError(tip, links)
    path: list[_UJoint] = []
    cur = tip
    while cur != base:
        parent_joint = by_child.get(cur)
        if parent_joint is None:
            raise URDFError(f"{src}: link {tip!r} is not below {base!r}; no chain joins them")
        path.append(parent_joint)
        cur = parent_joint.parent
    path.reverse()
    where = f"{base} -> {tip}"
    joints_of_path = _path_joints(path, base, tip, src)
    names = joints_of_path["joint_names"]
    return Chain(
        **joints_of_path,
        acceleration_limits=per_joint(
            acceleration_limits, names, "acceleration_limits", where, URDFError
        ),
        jerk_limits=per_joint(jerk_limits, names, "jerk_limits", where, URDFError),
        base=base,
        tip=tip,
        constraints=tuple(constraints),
        kinematic_margin=kinematic_margin,
        role=ChainRole(role),
        name=name if name is not None else robot_name,
        source=source if source is not None else src,
    )


def urdf_moving_joints(path_or_string: str | os.PathLike[str]) -> list[tuple[str, str, Array]]:
    """Every moving joint of a URDF's whole tree: ``(name, type, axis)`` with the unit axis in
    the root link's frame at the zero configuration (what a model check needs to tell an arm
    from a gripper without choosing a tip).

    Raises:
        URDFError: malformed XML or elements.
    """
    text, src = _read(path_or_string)
    _, _, joints = _parse(text, src)
    by_child = {j.child: j for j in joints.values()}
    out = []
    for j in joints.values():
        if j.type in ("fixed",):
            continue
        R = np.eye(3)
        cur: _UJoint | None = j
        seen = 0
        while cur is not None and seen <= len(joints):
            R = cur.origin[:3, :3] @ R
            cur = by_child.get(cur.parent)
            seen += 1
        a = R @ (j.axis / max(float(np.linalg.norm(j.axis)), 1e-300))
        out.append((j.name, j.type, a))
    return out


def _read(path_or_string: str | os.PathLike[str]) -> tuple[bytes, str]:
    if isinstance(path_or_string, str) and path_or_string.lstrip().startswith("<"):
        # already text: drop a declared encoding, which described the bytes it came from
        text = _DECLARED_ENCODING.sub(r"\1", path_or_string, count=1)
        return text.encode("utf-8"), "<urdf string>"
    p = Path(path_or_string)
    try:
        return p.read_bytes(), str(p)
    except OSError as exc:
        raise URDFError(f"cannot read URDF {p}: {exc.strerror}") from None


_DECLARED_ENCODING = re.compile(r"(<\?xml[^>]*?)\sencoding=[\"'][^\"']*[\"']")


def _leaves(base: str, children: dict[str, list[str]]) -> list[str]:
    out, stack = [], [base]
    while stack:
        ln = stack.pop()
        if children[ln]:
            stack.extend(children[ln])
        else:
            out.append(ln)
    return sorted(out)


def _path_joints(path: list[_UJoint], base: str, tip: str, src: str) -> dict[str, Any]:
    """The :class:`~ikstack.model.Chain` keywords the joints of ``path`` (base to tip) give:
    names, types, axes, origins, position and velocity limits, links and the TCP."""
    names, types, axes, origins, lo, hi, vel, link_names = [], [], [], [], [], [], [], []
    zero_velocity: list[str] = []
    pending = np.eye(4)
    for j in path:
        if j.type == "fixed":
            pending = pending @ j.origin
            continue
        if j.type in ("floating", "planar"):
            raise UnsupportedJointError(
                j.name, j.type, f"it has more than one degree of freedom (line {j.line})"
            )
        if j.type not in ("revolute", "continuous", "prismatic"):
            raise UnsupportedJointError(j.name, j.type, f"unknown URDF joint type (line {j.line})")
        if j.mimic:
            raise UnsupportedJointError(
                j.name,
                f"{j.type} (mimic)",
                f"a mimic joint (line {j.line}) follows another joint; "
                "ikstack chains model independent joints only",
            )
        if np.linalg.norm(j.axis) < 1e-9:
            raise URDFError(f"{src}: joint {_named(j)} has a zero axis")
        t = {
            "revolute": JointType.REVOLUTE,
            "continuous": JointType.CONTINUOUS,
            "prismatic": JointType.PRISMATIC,
        }[j.type]
        names.append(j.name)
        types.append(t)
        axes.append(j.axis)
        origins.append(pending @ j.origin)
        pending = np.eye(4)
        lo.append(j.lower if t != JointType.CONTINUOUS else -math.inf)
        hi.append(j.upper if t != JointType.CONTINUOUS else math.inf)
        vel.append(j.velocity)
        if j.zero_velocity:
            zero_velocity.append(j.name)
        link_names.append(j.child)
    if not names:
        raise URDFError(f"{src}: no moving joint between {base!r} and {tip!r}")
    return {
        "joint_names": tuple(names),
        "joint_types": tuple(types),
        "axes": np.array(axes),
        "origins": np.array(origins),
        "T_last_tip": pending,
        "lower": np.array(lo),
        "upper": np.array(hi),
        "velocity_limits": np.array(vel),
        "link_names": tuple(link_names),
        "notes": (ZERO_VELOCITY_NOTE + ", ".join(zero_velocity),) if zero_velocity else (),
    }
