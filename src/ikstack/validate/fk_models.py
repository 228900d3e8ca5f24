"""Forward-kinematics models the model check can run against.

An FK model is anything with the :class:`FKModel` attributes: joint limits, a neutral
configuration, what kind of robot it is, and ``fk(q) -> (4, 4)`` of its end effector. The check
treats ``fk`` as a black box (it differentiates it numerically), so the same check runs on an
ikstack chain, a MuJoCo model, or any user function.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack import robots
from ikstack._deprecated import renamed_module_names, warn_renamed
from ikstack.errors import InputError, MissingExtraError, ModelError, ShapeError
from ikstack.kinematics import fk as chain_fk
from ikstack.kinematics import jacobian
from ikstack.model import Chain, ChainRole, JointType, load_urdf
from ikstack.model.urdf import urdf_moving_joints
from ikstack.vocabulary import FK_KINEMATICS

Array = NDArray[np.float64]

_PARALLEL_TOL = 1e-6  # |a x b| below this: parallel axes


@runtime_checkable
class FKModel(Protocol):
    """What the model check needs from a robot model.

    Attributes:
        name: display name.
        joint_names: (dof,) joint names, base to tip.
        lower, upper: (dof,) position limits [rad or m]; +-inf where unbounded.
        neutral: (dof,) the configuration every solve starts from (the default pose).
        is_gripper: the robot is a gripper (the check does not apply).
        end_effector: name of the end-effector frame, or None when none was found.
        scara: a SCARA-like arm (every axis parallel to one direction).
        float32: the model computes in float32 (the check then uses a larger epsilon).
    """

    name: str
    joint_names: tuple[str, ...]
    lower: Array
    upper: Array
    neutral: Array
    is_gripper: bool
    end_effector: str | None
    scara: bool
    float32: bool

    def fk(self, q: Array) -> Array:
        """End-effector pose (4, 4) in the base frame for joints ``q`` (dof,)."""
        ...


def _limits(lower: ArrayLike, upper: ArrayLike, dof: int | None = None) -> tuple[Array, Array]:
    lo = np.asarray(lower, dtype=np.float64).reshape(-1)
    hi = np.asarray(upper, dtype=np.float64).reshape(-1)
    if lo.shape != hi.shape or (dof is not None and lo.shape != (dof,)):
        raise ShapeError("lower/upper", lo.shape, f"two ({dof if dof else 'dof'},) arrays")
    if np.any(np.isnan(lo)) or np.any(np.isnan(hi)) or np.any(lo > hi):
        raise InputError(f"joint limits need lower <= upper; got {lo.tolist()} and {hi.tolist()}")
    return lo, hi


def default_neutral(lower: Array, upper: Array) -> Array:
    """The default pose: zero, projected into the limits (a simulator's default joint state)."""
    return np.clip(np.zeros_like(lower), lower, upper)


@dataclass
class CallableFK:
    """A user function ``fk(q) -> (4, 4)`` with its joint limits (a black-box FK model).

    Args:
        function: the forward kinematics.
        lower, upper: (dof,) position limits.
        neutral: (dof,) start configuration; zero projected into the limits when None.
        name: display name.
        joint_names: names (default ``joint1..``).
        is_gripper, scara, float32: see :class:`FKModel`.
        end_effector: the end effector's name, or None if the model has none (then skipped).
    """

    function: Callable[[Array], ArrayLike]
    lower: Array
    upper: Array
    neutral: Array | None = None
    name: str = "fk"
    joint_names: tuple[str, ...] = ()
    is_gripper: bool = False
    scara: bool = False
    float32: bool = False
    end_effector: str | None = "end_effector"

    def __post_init__(self) -> None:
        self.lower, self.upper = _limits(self.lower, self.upper)
        dof = self.lower.shape[0]
        if self.neutral is None:
            self.neutral = default_neutral(self.lower, self.upper)
        else:
            self.neutral = np.asarray(self.neutral, dtype=np.float64).reshape(-1)
            if self.neutral.shape != (dof,):
                raise ShapeError("neutral", self.neutral.shape, f"({dof},)")
        if not self.joint_names:
            self.joint_names = tuple(f"joint{i + 1}" for i in range(dof))

    def fk(self, q: Array) -> Array:
        return np.asarray(self.function(q), dtype=np.float64)


def jaws_only(prismatic: Sequence[bool], directions: Array) -> bool:
    """A gripper, recognised from the model: every moving joint is prismatic and they all move
    along one line (a gripper's jaws; mimic fingers move along the same line, opposed). Such a
    model has no arm to solve 6-DOF IK for."""
    if len(prismatic) == 0 or not all(prismatic):
        return False
    d = np.asarray(directions, dtype=np.float64).reshape(len(prismatic), 3)
    d0 = d[0] / np.linalg.norm(d[0])
    return all(np.linalg.norm(np.cross(d0, v / np.linalg.norm(v))) < _PARALLEL_TOL for v in d)


def _chain_is_jaws(chain: Chain) -> bool:
    prismatic = [t == JointType.PRISMATIC for t in chain.joint_types]
    if not all(prismatic):
        return False
    J = jacobian(chain, default_neutral(chain.lower, chain.upper))
    return jaws_only(prismatic, J[:3].T)


def _is_scara(chain: Chain, q: Array) -> bool:
    """Every revolute axis and every prismatic direction parallel to one line (in the base
    frame)."""
    J = jacobian(chain, q)
    dirs = [
        J[3:, i] if t != JointType.PRISMATIC else J[:3, i] for i, t in enumerate(chain.joint_types)
    ]
    d0 = dirs[0] / np.linalg.norm(dirs[0])
    has_rev = sum(t != JointType.PRISMATIC for t in chain.joint_types) >= 2
    return has_rev and all(
        np.linalg.norm(np.cross(d0, d / np.linalg.norm(d))) < _PARALLEL_TOL for d in dirs
    )


@dataclass
class ChainFK:
    """An ikstack :class:`~ikstack.model.Chain` (URDF, DH or bundled) as an FK model.

    Args:
        chain: the chain; its TCP (or tip) is the end effector.
        neutral: (dof,) start configuration; the model's neutral pose when None: the zero
            configuration clipped into the limits, as a simulator starts the model (MuJoCo's
            ``qpos0`` of a URDF is the same), so both engines start alike.
    """

    chain: Chain
    neutral: Array | None = None
    name: str = ""
    joint_names: tuple[str, ...] = field(init=False)
    lower: Array = field(init=False)
    upper: Array = field(init=False)
    is_gripper: bool = field(init=False)
    end_effector: str | None = field(init=False)
    scara: bool = field(init=False)
    float32: bool = False

    def __post_init__(self) -> None:
        c = self.chain
        self.name = self.name or c.name or "chain"
        self.joint_names = c.joint_names
        self.lower = np.array(c.lower)
        self.upper = np.array(c.upper)
        if self.neutral is None:
            self.neutral = default_neutral(self.lower, self.upper)
        else:
            self.neutral = c.check_q(self.neutral, "neutral").reshape(c.dof).copy()
        self.is_gripper = c.role == ChainRole.GRIPPER or _chain_is_jaws(c)
        self.end_effector = c.tcp_frame
        self.scara = _is_scara(c, self.neutral)

    def fk(self, q: Array) -> Array:
        return chain_fk(self.chain, np.asarray(q, dtype=np.float64))


def _urdf_for_mujoco(path: str | os.PathLike[str]) -> str:
    """A URDF's kinematics for MuJoCo: geometry dropped (mesh packages need not exist), links
    joined by fixed joints kept as bodies (so the end-effector frame survives), and tiny
    masses allowed for links without inertia."""
    import xml.etree.ElementTree as ET

    try:
        root = ET.parse(str(path)).getroot()
    except (ET.ParseError, OSError) as exc:
        raise ModelError(f"cannot read URDF {path}: {exc}") from None
    for link in root.iter("link"):
        for tag in ("visual", "collision"):
            for el in link.findall(tag):
                link.remove(el)
    for el in root.findall("mujoco"):
        root.remove(el)
    mj = ET.SubElement(root, "mujoco")
    ET.SubElement(
        mj,
        "compiler",
        fusestatic="false",
        discardvisual="true",
        boundmass="1e-6",
        boundinertia="1e-9",
        balanceinertia="true",
    )
    return ET.tostring(root, encoding="unicode")


@dataclass
class MujocoFK:
    """A MuJoCo model (MJCF or URDF, through the ``mujoco`` package) as an FK model.

    The end effector is a site or body named by ``end_effector``. When None it is discovered:
    the deepest moving body (the common ancestor when several branches tie, as a hand's
    fingers do), followed through a single fixed child, or that body's only site.
    The joints are the hinge and slide joints between the world and that body. ``fk`` writes
    ``qpos``, runs ``mj_kinematics`` and reads the frame: MuJoCo's own kinematics, independent
    of ikstack's.

    Args:
        path: an MJCF or URDF file.
        end_effector: a site or body name, or None to discover it.
        is_gripper: mark the model as a gripper (MuJoCo files do not say).
    """

    path: str | os.PathLike[str]
    end_effector: str | None = None
    is_gripper: bool = False
    name: str = ""
    float32: bool = False
    joint_names: tuple[str, ...] = field(init=False)
    lower: Array = field(init=False)
    upper: Array = field(init=False)
    neutral: Array = field(init=False)
    scara: bool = field(init=False)
    _m: Any = field(init=False, repr=False)
    _d: Any = field(init=False, repr=False)

    def __post_init__(self) -> None:
        try:
            import mujoco
        except ImportError:
            raise MissingExtraError("mujoco", "mujoco") from None
        self._mj = mujoco
        self.name = self.name or os.path.splitext(os.path.basename(str(self.path)))[0]
        try:
            if str(self.path).lower().endswith(".urdf"):
                m = mujoco.MjModel.from_xml_string(_urdf_for_mujoco(self.path))
            else:
                m = mujoco.MjModel.from_xml_path(str(self.path))
        except (ValueError, OSError) as exc:  # mujoco raises ValueError with its parser's text
            raise ModelError(f"MuJoCo could not load {self.path}: {exc}") from None
        self._m = m
        self._d = mujoco.MjData(m)
        self._site = -1
        self._body = -1
        self._find_end_effector()
        self._find_joints()

    # ---------------------------------------------------------------- discovery
    def _find_end_effector(self) -> None:
        mj, m = self._mj, self._m
        if self.end_effector is not None:
            self._site = mj.mj_name2id(m, mj.mjtObj.mjOBJ_SITE, self.end_effector)
            if self._site < 0:
                self._body = mj.mj_name2id(m, mj.mjtObj.mjOBJ_BODY, self.end_effector)
            if self._site < 0 and self._body < 0:
                names = [m.body(i).name for i in range(m.nbody)] + [
                    m.site(i).name for i in range(m.nsite)
                ]
                raise InputError(
                    f"no site or body {self.end_effector!r} in {self.path}; "
                    f"names: {', '.join(n for n in names if n)}"
                )
            if self._site >= 0:
                self._body = int(m.site_bodyid[self._site])
            return
        moving = [b for b in range(1, m.nbody) if self._path_dofs(b)]
        if not moving:
            self.end_effector = None
            return
        depth = {b: len(self._path_dofs(b)) for b in moving}
        deepest = max(depth.values())
        leaves = [b for b in moving if depth[b] == deepest]
        # several equally deep branches (a hand's fingers): their common ancestor ends the arm
        b = leaves[0]
        for other in leaves[1:]:
            b = self._common_ancestor(b, other)
        while True:
            kids = [c for c in range(1, m.nbody) if m.body_parentid[c] == b and c != b]
            if len(kids) != 1 or m.body_jntnum[kids[0]] > 0:
                break
            b = kids[0]
        self._body = b
        sites = [s for s in range(m.nsite) if m.site_bodyid[s] == b]
        if len(sites) == 1:
            self._site = sites[0]
            self.end_effector = m.site(sites[0]).name or f"site{sites[0]}"
        else:
            self.end_effector = m.body(b).name or f"body{b}"

    def _common_ancestor(self, a: int, b: int) -> int:
        parents = self._m.body_parentid
        chain_a = [a]
        while chain_a[-1] > 0:
            chain_a.append(int(parents[chain_a[-1]]))
        while b not in chain_a:
            b = int(parents[b])
        return b

    def _path_dofs(self, body: int) -> list[int]:
        m = self._m
        joints: list[int] = []
        b = body
        while b > 0:
            start, num = int(m.body_jntadr[b]), int(m.body_jntnum[b])
            joints = list(range(start, start + num)) + joints
            b = int(m.body_parentid[b])
        mj = self._mj
        moving = (int(mj.mjtJoint.mjJNT_HINGE), int(mj.mjtJoint.mjJNT_SLIDE))
        return [j for j in joints if int(m.jnt_type[j]) in moving]

    def _find_joints(self) -> None:
        m, mj = self._m, self._mj
        js = self._path_dofs(self._body) if self._body > 0 else []
        self._qadr = np.array([int(m.jnt_qposadr[j]) for j in js], dtype=np.int64)
        self.joint_names = tuple(m.joint(j).name or f"joint{j}" for j in js)
        lo, hi = [], []
        for j in js:
            if m.jnt_limited[j]:
                lo.append(float(m.jnt_range[j, 0]))
                hi.append(float(m.jnt_range[j, 1]))
            elif int(m.jnt_type[j]) == int(mj.mjtJoint.mjJNT_HINGE):
                lo.append(-math.pi)
                hi.append(math.pi)
            else:
                lo.append(-1.0)
                hi.append(1.0)
        self.lower = np.array(lo)
        self.upper = np.array(hi)
        self.neutral = (
            np.clip(np.array([float(m.qpos0[a]) for a in self._qadr]), self.lower, self.upper)
            if js
            else np.zeros(0)
        )
        self._is_slide = np.array(
            [int(m.jnt_type[j]) == int(mj.mjtJoint.mjJNT_SLIDE) for j in js], dtype=bool
        )
        if js and not self.is_gripper:
            d = self._d
            d.qpos[:] = m.qpos0
            mj.mj_kinematics(m, d)
            self.is_gripper = jaws_only(list(self._is_slide), np.array([d.xaxis[j] for j in js]))
        self.scara = bool(js) and self._scara_axes(js)

    def _scara_axes(self, js: list[int]) -> bool:
        mj, m, d = self._mj, self._m, self._d
        d.qpos[:] = m.qpos0
        mj.mj_kinematics(m, d)
        axes = np.array([d.xaxis[j] for j in js])
        n_rev = int((~self._is_slide).sum())
        a0 = axes[0] / np.linalg.norm(axes[0])
        return n_rev >= 2 and all(
            np.linalg.norm(np.cross(a0, a / np.linalg.norm(a))) < _PARALLEL_TOL for a in axes
        )

    # ---------------------------------------------------------------- FK
    def fk(self, q: Array) -> Array:
        mj, m, d = self._mj, self._m, self._d
        d.qpos[:] = m.qpos0
        d.qpos[self._qadr] = q
        mj.mj_kinematics(m, d)
        T = np.eye(4)
        if self._site >= 0:
            T[:3, :3] = d.site_xmat[self._site].reshape(3, 3)
            T[:3, 3] = d.site_xpos[self._site]
        else:
            T[:3, :3] = d.xmat[self._body].reshape(3, 3)
            T[:3, 3] = d.xpos[self._body]
        return T


def as_fk_model(
    model: Any,
    lower: ArrayLike | None = None,
    upper: ArrayLike | None = None,
    neutral: ArrayLike | None = None,
    **kwargs: Any,
) -> FKModel:
    """Wrap what the user gave: a Chain, an FK model, or a callable with ``lower``/``upper``
    (``as_backend``, its former name, warns).

    Raises:
        InputError: a callable without limits, or an object of another kind.
    """
    if isinstance(model, Chain):
        return cast(
            FKModel,
            ChainFK(
                model, neutral=None if neutral is None else np.asarray(neutral, float), **kwargs
            ),
        )
    if isinstance(model, FKModel):
        return model
    if callable(model):
        if lower is None or upper is None:
            raise InputError("a plain fk callable needs lower= and upper= joint limits")
        return cast(
            FKModel,
            CallableFK(
                model,
                np.asarray(lower, float),
                np.asarray(upper, float),
                None if neutral is None else np.asarray(neutral, float),
                **kwargs,
            ),
        )
    raise InputError(
        f"cannot check {type(model).__name__}: pass an ikstack Chain, an FKModel "
        "(ChainFK, MujocoFK, CallableFK) or an fk callable with lower= and upper="
    )


def load_fk_model(
    spec: str | os.PathLike[str],
    kinematics: str = "ikstack",
    base: str | None = None,
    tip: str | None = None,
    end_effector: str | None = None,
) -> FKModel:
    """An FK model from what a command line gives: a bundled robot name or a model file
    (``load_backend(spec, engine=...)``, its former name, warns).

    Args:
        spec: a bundled robot name (``ikstack.robots.names()``), a URDF file, or (MuJoCo) an
            MJCF file.
        kinematics: ``"ikstack"`` (the chain's own kinematics) or ``"mujoco"``.
        base, tip: URDF links of the chain (ikstack kinematics; defaults: root and single
            leaf).
        end_effector: the MuJoCo site or body (mujoco kinematics; discovered when None).

    Raises:
        InputError: unknown kinematics, or a spec that is neither a robot name nor a file.
    """
    engine = kinematics
    if engine not in FK_KINEMATICS:
        raise InputError(
            f"kinematics {engine!r} is unknown; valid kinematics: {', '.join(FK_KINEMATICS)}"
        )
    text = str(spec)
    is_file = os.path.isfile(text)
    if not is_file and text not in robots.names():
        raise InputError(
            f"{text!r} is neither a model file nor a bundled robot; bundled robots: "
            f"{', '.join(robots.names())}"
        )
    if engine == "mujoco":
        if is_file:
            return cast(FKModel, MujocoFK(text, end_effector=end_effector))
        chain = robots.load(text)
        src = chain.source.split(";")[0].split(" ")[0]
        if not src.endswith(".urdf"):
            raise InputError(f"bundled robot {text!r} has no URDF for MuJoCo (source: {src})")
        return cast(
            FKModel,
            MujocoFK(
                robots.data_path(src),
                end_effector=chain.tip,
                is_gripper=chain.role == ChainRole.GRIPPER,
                name=text,
            ),
        )
    if is_file and text.lower().endswith(".urdf"):
        moving = urdf_moving_joints(text)
        if jaws_only([t == "prismatic" for _, t, _ in moving], np.array([a for *_, a in moving])):
            # a gripper, whichever tip was asked for: nothing to solve (the check skips it)
            n = len(moving)
            return cast(
                FKModel,
                CallableFK(
                    lambda q: np.eye(4),
                    np.zeros(n),
                    np.zeros(n),
                    name=Path(text).stem,
                    joint_names=tuple(nm for nm, *_ in moving),
                    is_gripper=True,
                ),
            )
    chain = load_urdf(text, base, tip) if is_file else robots.load(text)
    return cast(FKModel, ChainFK(chain))


def as_backend(
    model: Any,
    lower: ArrayLike | None = None,
    upper: ArrayLike | None = None,
    neutral: ArrayLike | None = None,
    **kwargs: Any,
) -> FKModel:
    """Deprecated name of :func:`as_fk_model` (warns)."""
    warn_renamed("ikstack.validate.as_backend", "ikstack.validate.as_fk_model")
    return as_fk_model(model, lower, upper, neutral, **kwargs)


def load_backend(
    spec: str | os.PathLike[str],
    engine: str = "ikstack",
    base: str | None = None,
    tip: str | None = None,
    end_effector: str | None = None,
) -> FKModel:
    """Deprecated name of :func:`load_fk_model` (``engine`` is its ``kinematics``; warns)."""
    warn_renamed(
        "ikstack.validate.load_backend(engine=...)",
        "ikstack.validate.load_fk_model(kinematics=...)",
    )
    return load_fk_model(spec, engine, base, tip, end_effector)


#: names renamed in this release, kept one release (they warn)
__getattr__ = renamed_module_names(__name__, {"FKBackend": (__name__, "FKModel")})
