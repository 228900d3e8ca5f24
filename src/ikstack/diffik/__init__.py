"""Differential IK: the per-cycle velocity-solver interface and its solvers."""

# seed 000's velocity QP (OSQP and the dense active-set alternative)
from ikstack.diffik.active_set_qp import ActiveSetQPSolver
from ikstack.diffik.joint_limit_cost import joint_limit_cost
from ikstack.diffik.osqp_qp import OsqpQPSolver
from ikstack.diffik.qp_config import (
    DiffQPConfig,
    InternalUnits,
    LagPolicy,
    QPData,
    QPSolverKind,
    StepReason,
    StepResult,
)
from ikstack.diffik.qp_select import make_velocity_qp
from ikstack.diffik.qp_step import VelocityQPStepper
from ikstack.diffik.solver import DifferentialIK, DiffIKRequest, DiffIKResult, as_result

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
