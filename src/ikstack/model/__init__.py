"""The kinematic model: :class:`Chain`, its loaders (URDF, DH) and coupled-joint constraints."""

from ikstack.model.chain import Chain, ChainRole, JointType
from ikstack.model.constraints import (
    JointConstraint,
    LinearJointConstraint,
    QuadrantPolynomialConstraint,
    QuadrantRow,
)
from ikstack.model.dh import DHConvention, from_dh
from ikstack.model.urdf import load_urdf

__all__ = [
    "Chain",
    "ChainRole",
    "DHConvention",
    "JointConstraint",
    "JointType",
    "LinearJointConstraint",
    "QuadrantPolynomialConstraint",
    "QuadrantRow",
    "from_dh",
    "load_urdf",
]
