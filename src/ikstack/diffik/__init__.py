"""Differential IK: the per-cycle velocity-solver interface and its solvers."""

from ikstack.diffik.solver import DifferentialIK, DiffIKRequest, DiffIKResult, as_result

# seed 000's velocity QP (OSQP and the dense active-set alternative)
from ikstack.diffik.active_set_qp import ActiveSetQPSolver  # noqa: E402
from ikstack.diffik.joint_limit_cost import joint_limit_cost  # noqa: E402
from ikstack.diffik.osqp_qp import OsqpQPSolver  # noqa: E402
from ikstack.diffik.qp_config import (  # noqa: E402
    DiffQPConfig,
    InternalUnits,
    LagPolicy,
    QPData,
    QPSolverKind,
    StepReason,
    StepResult,
)
from ikstack.diffik.qp_select import make_velocity_qp  # noqa: E402
from ikstack.diffik.qp_step import VelocityQPStepper  # noqa: E402

__all__ = [
    "ActiveSetQPSolver",
    "DiffIKRequest",
    "DiffIKResult",
    "DiffQPConfig",
    "DifferentialIK",
    "InternalUnits",
    "LagPolicy",
    "OsqpQPSolver",
    "QPData",
    "QPSolverKind",
    "StepReason",
    "StepResult",
    "VelocityQPStepper",
    "as_result",
    "joint_limit_cost",
    "make_velocity_qp",
]
