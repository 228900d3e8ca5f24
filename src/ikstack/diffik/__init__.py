"""Differential IK: one velocity solve per control cycle, pluggable.

:class:`DifferentialIK` is the interface (``solve(request) -> dq``); :class:`DampedLeastSquares`
is the default and :class:`BoxQPSolver` ikstack's own active-set solver of the box-constrained
QP. :mod:`ikstack.diffik.nullspace` builds the preferred (secondary) velocity.
"""

from ikstack.diffik.box_qp import BoxQPSolver, solve_box_qp
from ikstack.diffik.dls import DampedLeastSquares
from ikstack.diffik.nullspace import (
    joint_difference,
    nullspace_projector,
    preferred_velocity,
)
from ikstack.diffik.solver import (
    DifferentialIK,
    DiffIKRequest,
    DiffIKResult,
    as_result,
    check_request,
)

__all__ = [
    "BoxQPSolver",
    "DampedLeastSquares",
    "DiffIKRequest",
    "DiffIKResult",
    "DifferentialIK",
    "as_result",
    "check_request",
    "joint_difference",
    "nullspace_projector",
    "preferred_velocity",
    "solve_box_qp",
]
