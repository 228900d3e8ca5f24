"""ikstack: robot-arm kinematics that is right, fast and honest about failure.

The layers (each imports only those above it): :mod:`ikstack.spatial`, :mod:`ikstack.model`,
:mod:`ikstack.robots`, :mod:`ikstack.kinematics`, then the solvers.
"""

from typing import TYPE_CHECKING

from ikstack._lazy import lazy_names
from ikstack.errors import (
    ConfigError,
    IKStackError,
    InputError,
    JointLimitError,
    MissingExtraError,
    ModelError,
    NonFiniteError,
    NotRigidTransformError,
    ShapeError,
    UnknownLinkError,
    UnknownRobotError,
    UnsupportedGeometryError,
    UnsupportedJointError,
    URDFError,
)

if TYPE_CHECKING:  # the names below load on first use (importing ikstack compiles nothing)
    from ikstack.ik import IKResult, IKStatus, solve_ik
    from ikstack.kinematics import fk, fk_links, jacobian, jacobian_fd
    from ikstack.model import (
        Chain,
        ChainRole,
        JointType,
        from_dh,
        from_pinocchio,
        load_mjcf,
        load_urdf,
    )

_LAZY = {
    "IKResult": "ikstack.ik",
    "IKStatus": "ikstack.ik",
    "solve_ik": "ikstack.ik",
    "fk": "ikstack.kinematics",
    "fk_links": "ikstack.kinematics",
    "jacobian": "ikstack.kinematics",
    "jacobian_fd": "ikstack.kinematics",
    "Chain": "ikstack.model",
    "ChainRole": "ikstack.model",
    "JointType": "ikstack.model",
    "from_dh": "ikstack.model",
    "load_urdf": "ikstack.model",
    "from_pinocchio": "ikstack.model",
    "load_mjcf": "ikstack.model",
    # the servo and differential-IK names (the servo's hot path compiles when the first
    # servo is built)
    "Action": "ikstack.servo",
    "JointJogCommand": "ikstack.servo",
    "JointState": "ikstack.servo",
    "PoseCommand": "ikstack.servo",
    "Servo": "ikstack.servo",
    "ServoConfig": "ikstack.servo",
    "ServoResult": "ikstack.servo",
    "ServoStatus": "ikstack.servo",
    "TwistCommand": "ikstack.servo",
    "TwistFrame": "ikstack.servo",
    "MotionGenerator": "ikstack.servo",
    "BoxQPSolver": "ikstack.diffik",
    "DLSVelocitySolver": "ikstack.diffik",
    "DifferentialIK": "ikstack.diffik",
    "DiffIKRequest": "ikstack.diffik",
    "DiffIKResult": "ikstack.diffik",
}


_lazy_getattr, __dir__ = lazy_names("ikstack", _LAZY, globals())
#: names renamed in this release, kept one release (they warn)
_RENAMED = {"DampedLeastSquares": ("ikstack.diffik", "DLSVelocitySolver")}


def __getattr__(name: str) -> object:
    if name in _RENAMED:  # the warning helper loads only when an old name is asked for
        from ikstack._deprecated import renamed_module_names

        return renamed_module_names("ikstack", _RENAMED)(name)
    return _lazy_getattr(name)


__version__ = "0.1.0"

__all__ = [
    "Action",
    "BoxQPSolver",
    "Chain",
    "ChainRole",
    "ConfigError",
    "DLSVelocitySolver",
    "DiffIKRequest",
    "DiffIKResult",
    "DifferentialIK",
    "IKResult",
    "IKStackError",
    "IKStatus",
    "InputError",
    "JointJogCommand",
    "JointLimitError",
    "JointState",
    "JointType",
    "MissingExtraError",
    "ModelError",
    "MotionGenerator",
    "NonFiniteError",
    "NotRigidTransformError",
    "PoseCommand",
    "Servo",
    "ServoConfig",
    "ServoResult",
    "ServoStatus",
    "ShapeError",
    "TwistCommand",
    "TwistFrame",
    "URDFError",
    "UnknownLinkError",
    "UnknownRobotError",
    "UnsupportedGeometryError",
    "UnsupportedJointError",
    "__version__",
    "fk",
    "fk_links",
    "from_dh",
    "from_pinocchio",
    "jacobian",
    "jacobian_fd",
    "load_mjcf",
    "load_urdf",
    "solve_ik",
]
