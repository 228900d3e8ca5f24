"""The kinematic model: :class:`Chain`, its loaders (URDF, MJCF, DH, a Pinocchio model) and
coupled-joint constraints."""

from ikstack.model.chain import Chain, ChainRole, JointType
from ikstack.model.constraints import (
    JointConstraint,
    LinearJointConstraint,
    QuadrantPolynomialConstraint,
    QuadrantRow,
)
from ikstack.model.dh import DHConvention, from_dh
from ikstack.model.mjcf import MJCFError, load_mjcf
from ikstack.model.pinocchio_model import from_pinocchio
from ikstack.model.urdf import load_urdf

__all__ = [
    "Chain",
    "ChainRole",
    "DHConvention",
    "JointConstraint",
    "JointType",
    "LinearJointConstraint",
    "MJCFError",
    "QuadrantPolynomialConstraint",
    "QuadrantRow",
    "from_dh",
    "from_pinocchio",
    "load_mjcf",
    "load_urdf",
]
