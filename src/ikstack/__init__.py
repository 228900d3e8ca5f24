"""ikstack: robot-arm kinematics that is right, fast and honest about failure.

The layers (each imports only those above it): :mod:`ikstack.spatial`, :mod:`ikstack.model`,
:mod:`ikstack.robots`, :mod:`ikstack.kinematics`, then the solvers.
"""

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

__version__ = "0.1.0"

__all__ = [
    "Chain",
    "ChainRole",
    "ConfigError",
    "IKResult",
    "IKStackError",
    "IKStatus",
    "InputError",
    "JointLimitError",
    "JointType",
    "MissingExtraError",
    "ModelError",
    "NonFiniteError",
    "NotRigidTransformError",
    "ShapeError",
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
