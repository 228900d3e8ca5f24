"""The choices of ``ikstack solve`` (methods, engines, backends, devices, bundled samples).

A leaf module: it imports nothing from the solvers, so the command line can build its parser
(and print ``--help``) without loading a kernel.
"""

from __future__ import annotations

from typing import Any

#: the job's methods, backends, devices and engines (where the episodes run): the one list in
#: :mod:`ikstack.vocabulary`
from ikstack.vocabulary import BACKENDS as BACKENDS
from ikstack.vocabulary import DEVICES as DEVICES
from ikstack.vocabulary import ENGINES as ENGINES
from ikstack.vocabulary import PATH_METHODS

METHODS = PATH_METHODS
#: robots with a bundled sample, and the posture each sample moves around [rad]
SAMPLE_HOMES: dict[str, tuple[float, ...]] = {
    "ur5": (0.0, -1.2, 1.4, -1.8, -1.57, 0.3),
    "panda": (0.0, -0.6, 0.0, -2.2, 0.0, 1.8, 0.8),
    "marvin_left": (0.2, 0.5, 0.1, -1.2, 0.2, 0.3, 0.2),
}
#: the prefix of a bundled sample given as INPUT (``sample:ur5``)
SAMPLE_PREFIX = "sample:"
#: the joint column a LeRobot-format dataset gains, and the quaternion orders it may hold
DEFAULT_JOINT_COLUMN = "ik.joint_positions"
QUAT_ORDERS = ("wxyz", "xyzw")


def add_lerobot_arguments(parser: Any) -> None:
    """The ``solve`` options of LeRobot-format datasets."""
    g = parser.add_argument_group("LeRobot-format datasets (a folder with meta/info.json)")
    g.add_argument(
        "--pose-columns",
        default=None,
        metavar="SPEC",
        help="where the TCP pose is: 7 values, x y z [m] then a quaternion, e.g. "
        "'observation.state[0:3],observation.state[3:7]'",
    )
    g.add_argument(
        "--quat-order",
        choices=QUAT_ORDERS,
        default="wxyz",
        help="order of the quaternion values (ROS, SciPy and Pinocchio use xyzw)",
    )
    g.add_argument(
        "--joint-column",
        default=DEFAULT_JOINT_COLUMN,
        help=f"name of the joint column written (default {DEFAULT_JOINT_COLUMN})",
    )
