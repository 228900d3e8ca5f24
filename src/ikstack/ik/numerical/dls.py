"""Damped least squares with fixed damping (Wampler 1986; Buss 2004)."""

from __future__ import annotations

from ikstack.ik.numerical import _kernels as K
from ikstack.ik.numerical.solver import NumericalIK
from ikstack.model import Chain


class DampedLeastSquares(NumericalIK):
    """Fixed-damping step :math:`(J^T W J + d^2 I)\\,\\Delta q = J^T W e`.

    Args:
        chain: the chain to solve for.
        damping: ``d`` [unitless]; the Jacobian-IK model check uses 0.05.
        **options: :class:`~ikstack.ik.numerical.NumericalOptions` fields.
    """

    step_kind = K.STEP_DLS
    name = "dls"

    def __init__(self, chain: Chain, damping: float = 0.05, **options) -> None:
        super().__init__(chain, damping, **options)
