"""The bundled robot catalog: each entry builds a :class:`~ikstack.model.Chain` from files shipped
in ``ikstack/robots/data`` and says where its numbers come from."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import yaml

from ikstack.model import Chain, ChainRole, QuadrantPolynomialConstraint, from_dh, load_urdf
from ikstack.spatial import from_xyz_rpy


def data_path(filename: str) -> Path:
    """Path of a bundled data file."""
    return Path(str(resources.files("ikstack.robots") / "data" / filename))


@dataclass(frozen=True)
class RobotSpec:
    """A bundled robot: its name, a one-line summary, a family hint and its provenance."""

    name: str
    summary: str
    family_hint: str
    provenance: str
    build: Callable[[], Chain]


# ---------------------------------------------------------------- Tianji Marvin
MARVIN_LOWER_DEG = (-170.0, -120.0, -170.0, -145.0, -170.0, -60.0, -90.0)
MARVIN_UPPER_DEG = (170.0, 120.0, 170.0, 60.0, 170.0, 60.0, 90.0)
MARVIN_RIGHT_J6_DEG = 58.0
MARVIN_MARGIN_DEG = 5.0
MARVIN_VELOCITY = 0.904779  # [rad/s] controller profile: 180 deg/s x 0.32 x 0.9
MARVIN_ACCEL_DEG = (450.0, 450.0, 900.0, 900.0, 900.0, 900.0, 900.0)
#: the published J6/J7 interference rows [deg]: (q6 >= 0, q7 >= 0, a0, a1, a2, q7 <= b)
MARVIN_J67_ROWS_DEG = (
    (True, True, 0.0, -1.025, 110.5, True),
    (False, True, 0.0, 1.025, 110.5, True),
    (False, False, 0.0, -1.025, -110.5, False),
    (True, False, 0.0, 1.025, -110.5, False),
)
#: TacCap mount on the flange: xyz [m], rpy [rad]
MARVIN_TACCAP_XYZ = (-0.01575, 0.0, 0.0505)
MARVIN_TACCAP_RPY = (math.pi, -math.pi / 2, 0.0)


def marvin_j67_constraint() -> QuadrantPolynomialConstraint:
    """The Tianji J6/J7 interference diamond ``|q7| + 1.025 |q6| <= 110.5 deg``."""
    return QuadrantPolynomialConstraint.from_degree_rows(
        5,
        6,
        MARVIN_J67_ROWS_DEG,
        name="j6_j7_interference",
        description="|q7| + 1.025 |q6| <= 110.5 deg (Tianji J6/J7 interference, measured)",
    )


def marvin_dh(side: str = "left") -> Chain:
    """A Marvin arm built from its modified-DH table (the source of truth for its geometry)."""
    spec = yaml.safe_load(data_path("marvin_dh.yaml").read_text())
    lower = list(MARVIN_LOWER_DEG)
    upper = list(MARVIN_UPPER_DEG)
    if side == "right":
        lower[5], upper[5] = -MARVIN_RIGHT_J6_DEG, MARVIN_RIGHT_J6_DEG
    return from_dh(
        spec["rows"],
        spec["convention"],
        flange=spec["flange"],
        degrees=True,
        mm=True,
        lower=lower,
        upper=upper,
        velocity_limits=math.degrees(MARVIN_VELOCITY),
        acceleration_limits=MARVIN_ACCEL_DEG,
        joint_names=[f"joint{i + 1}" for i in range(7)],
        base="base",
        tip="flange",
        constraints=[marvin_j67_constraint()],
        kinematic_margin=math.radians(MARVIN_MARGIN_DEG),
        name=f"marvin_{side}",
        source=f"{data_path('marvin_dh.yaml').name} (modified DH)",
    )


def _urdf(file: str, base: str, tip: str, name: str, **kw) -> Callable[[], Chain]:
    def build() -> Chain:
        return load_urdf(data_path(file), base, tip, name=name, source=file, **kw)

    return build


def _with_tcp(build: Callable[[], Chain], xyz, rpy, tcp_name: str) -> Callable[[], Chain]:
    def b() -> Chain:
        return build().with_tcp(from_xyz_rpy(xyz, rpy), tcp_name)

    return b


_PANDA_HAND_TCP = ((0.0, 0.0, 0.1034), (0.0, 0.0, -math.pi / 4))

CATALOG: dict[str, RobotSpec] = {}


def _add(spec: RobotSpec) -> None:
    CATALOG[spec.name] = spec


_add(
    RobotSpec(
        "planar2",
        "two revolute joints in a plane, 0.5 m links (teaching/test arm)",
        "2R planar",
        "planar2.urdf; ikstack's own example arm",
        _urdf("planar2.urdf", "base", "tool", "planar2", acceleration_limits=[3.0, 3.0]),
    )
)
_add(
    RobotSpec(
        "ur5",
        "Universal Robots UR5 (6R)",
        "6R three-parallel (J2-J4) with wrist",
        "Universal Robots DH; ROS-Industrial ur_description origins and limits",
        _urdf("ur5.urdf", "base_link", "tool0", "ur5"),
    )
)
_add(
    RobotSpec(
        "panda",
        "Franka Emika Panda (7R), flange frame",
        "7R offset elbow: lock a joint",
        "Franka Control Interface parameters; franka_description",
        _urdf("panda.urdf", "panda_link0", "panda_link8", "panda"),
    )
)
_add(
    RobotSpec(
        "panda_hand",
        "Franka Emika Panda (7R), Franka Hand TCP",
        "7R offset elbow: lock a joint",
        "Franka Control Interface parameters; hand yaw -pi/4, TCP 0.1034 m",
        _with_tcp(
            _urdf("panda.urdf", "panda_link0", "panda_link8", "panda_hand"),
            *_PANDA_HAND_TCP,
            "panda_hand_tcp",
        ),
    )
)
_add(
    RobotSpec(
        "iiwa14",
        "KUKA LBR iiwa 14 R820 (7R)",
        "7R SRS (spherical shoulder and wrist)",
        "KUKA LBR iiwa specification; iiwa_stack/drake origins",
        _urdf("iiwa14.urdf", "iiwa_link_0", "iiwa_link_ee", "iiwa14"),
    )
)
_add(
    RobotSpec(
        "marvin_left",
        "Tianji Marvin M6 left arm (7R), flange frame",
        "7R near-SRS (18 mm elbow offsets)",
        "modified DH from SII-LiuLab/manimux docs/tianji-diff-ik.md (tianji-control)",
        lambda: marvin_dh("left"),
    )
)
_add(
    RobotSpec(
        "marvin_right",
        "Tianji Marvin M6 right arm (7R), J6 +-58 deg, flange frame",
        "7R near-SRS (18 mm elbow offsets)",
        "modified DH from SII-LiuLab/manimux docs/tianji-diff-ik.md (tianji-control)",
        lambda: marvin_dh("right"),
    )
)
_add(
    RobotSpec(
        "marvin_left_taccap",
        "Tianji Marvin M6 left arm with the TacCap tool",
        "7R near-SRS (18 mm elbow offsets)",
        "Marvin DH plus the TacCap mount (xyz -0.01575 0 0.0505, rpy pi -pi/2 0)",
        _with_tcp(lambda: marvin_dh("left"), MARVIN_TACCAP_XYZ, MARVIN_TACCAP_RPY, "taccap"),
    )
)
_add(
    RobotSpec(
        "marvin_right_taccap",
        "Tianji Marvin M6 right arm with the TacCap tool",
        "7R near-SRS (18 mm elbow offsets)",
        "Marvin DH plus the TacCap mount (xyz -0.01575 0 0.0505, rpy pi -pi/2 0)",
        _with_tcp(lambda: marvin_dh("right"), MARVIN_TACCAP_XYZ, MARVIN_TACCAP_RPY, "taccap"),
    )
)
_add(
    RobotSpec(
        "rizon4",
        "Flexiv Rizon 4 (7R)",
        "7R offsets everywhere: general (algebraic)",
        "flexivrobotics/flexiv_description",
        _urdf("rizon4.urdf", "base_link", "flange", "rizon4"),
    )
)
_add(
    RobotSpec(
        "rizon4s",
        "Flexiv Rizon 4s (7R), longer flange",
        "7R offsets everywhere: general (algebraic)",
        "flexivrobotics/flexiv_description",
        _urdf("rizon4s.urdf", "base_link", "flange", "rizon4s"),
    )
)
_add(
    RobotSpec(
        "arx_x5",
        "ARX X5 (6R)",
        "6R near three-parallel (J2-J4, small offsets)",
        "real-stanford/arx5-sdk models/X5.urdf",
        _urdf("arx_x5.urdf", "base_link", "eef_link", "arx_x5"),
    )
)
_add(
    RobotSpec(
        "scara",
        "four-axis SCARA (R-R-P-R), 600 mm reach",
        "SCARA (4 DOF)",
        "generic dimensions typical of 600 mm SCARA arms (not a vendor model)",
        _urdf("scara.urdf", "base_link", "flange", "scara"),
    )
)
_add(
    RobotSpec(
        "parallel_gripper",
        "parallel-jaw gripper (Franka Hand-like), one finger joint",
        "gripper",
        "modelled on the Franka Hand",
        _urdf(
            "parallel_gripper.urdf",
            "hand",
            "left_finger",
            "parallel_gripper",
            role=ChainRole.GRIPPER,
        ),
    )
)
