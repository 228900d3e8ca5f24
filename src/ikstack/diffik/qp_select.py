"""Pick the velocity-QP solver a :class:`~ikstack.diffik.qp_config.DiffQPConfig` names."""

from __future__ import annotations

from ikstack.diffik.active_set_qp import ActiveSetQPSolver
from ikstack.diffik.osqp_qp import OsqpQPSolver
from ikstack.diffik.qp_config import DiffQPConfig, QPSolverKind
from ikstack.diffik.qp_step import VelocityQPStepper
from ikstack.model import Chain


def make_velocity_qp(chain: Chain, config: DiffQPConfig | None = None) -> VelocityQPStepper:
    """The published port's velocity QP for ``chain``: OSQP (``qp_solver: osqp``, default) or
    ikstack's dense active-set solver (``qp_solver: active_set``)."""
    cfg = DiffQPConfig() if config is None else config
    if cfg.qp_solver == QPSolverKind.ACTIVE_SET:
        return ActiveSetQPSolver(chain, cfg)
    return OsqpQPSolver(chain, cfg)
