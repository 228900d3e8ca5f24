"""Batched forward kinematics, geometric Jacobians, and finite-difference Jacobians."""

from ikstack.kinematics.finite_difference import jacobian_fd
from ikstack.kinematics.forward import (
    CompiledChain,
    compile_chain,
    fk,
    fk_jacobian,
    fk_links,
    jacobian,
)

__all__ = [
    "CompiledChain",
    "compile_chain",
    "fk",
    "fk_jacobian",
    "fk_links",
    "jacobian",
    "jacobian_fd",
]
