"""Differential IK: one velocity solve per control cycle, pluggable.

:class:`DifferentialIK` is the interface (``solve(request) -> dq``); :class:`DLSVelocitySolver`
(``DampedLeastSquares`` before; that name warns) is the default and :class:`BoxQPSolver`
ikstack's own active-set solver of the box-constrained QP. :mod:`ikstack.diffik.nullspace`
builds the preferred (secondary) velocity.
:class:`OsqpQPSolver` (and :class:`ActiveSetQPSolver`, the same QP on ikstack's own dense
active-set method) is the published Tianji port's velocity QP with joint-limit avoidance,
coupled-joint rows and the lag guard.
"""

from ikstack._deprecated import renamed_module_names
from ikstack.diffik.active_set_qp import ActiveSetQPSolver
from ikstack.diffik.box_qp import BoxQPSolver, solve_box_qp
from ikstack.diffik.dls import DLSVelocitySolver
from ikstack.diffik.joint_limit_cost import joint_limit_cost
from ikstack.diffik.nullspace import (
    joint_difference,
    nullspace_projector,
    preferred_velocity,
)
from ikstack.diffik.osqp_qp import OsqpQPSolver
from ikstack.diffik.qp_config import (
    DiffQPConfig,
    InternalUnits,
    LagPolicy,
    QPData,
    QPSolverKind,
    StepResult,
    StepStatus,
)
from ikstack.diffik.qp_select import make_velocity_qp
from ikstack.diffik.qp_step import VelocityQPStepper
from ikstack.diffik.solver import (
    DifferentialIK,
    DiffIKRequest,
    DiffIKResult,
    as_result,
    check_request,
)

__all__ = [
    "ActiveSetQPSolver",
    "BoxQPSolver",
    "DLSVelocitySolver",
    "DiffIKRequest",
    "DiffIKResult",
    "DiffQPConfig",
    "DifferentialIK",
    "InternalUnits",
    "LagPolicy",
    "OsqpQPSolver",
    "QPData",
    "QPSolverKind",
    "StepResult",
    "StepStatus",
    "VelocityQPStepper",
    "as_result",
    "check_request",
    "joint_difference",
    "joint_limit_cost",
    "make_velocity_qp",
    "nullspace_projector",
    "preferred_velocity",
    "solve_box_qp",
]

#: names renamed in this release, kept one release (they warn)
__getattr__ = renamed_module_names(
    __name__,
    {
        "DampedLeastSquares": ("ikstack.diffik", "DLSVelocitySolver"),
        "StepReason": ("ikstack.diffik", "StepStatus"),
    },
)
