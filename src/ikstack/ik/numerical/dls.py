"""Damped least squares with fixed damping (Wampler 1986; Buss 2004)."""

from __future__ import annotations

from ikstack._deprecated import renamed_module_names
from ikstack.ik.numerical import _kernels as K
from ikstack.ik.numerical.solver import NumericalIK
from ikstack.model import Chain


class DampedLeastSquaresIK(NumericalIK):
    """Fixed-damping step :math:`(J^T W J + d^2 I)\\,\\Delta q = J^T W e` (``method="dls"``;
    ``DampedLeastSquares``, its former name, warns: the differential-IK velocity solver is
    :class:`~ikstack.diffik.DLSVelocitySolver`).

    Args:
        chain: the chain to solve for.
        damping: ``d`` [unitless]; the Jacobian-IK model check uses 0.05.
        **options: :class:`~ikstack.ik.numerical.NumericalConfig` fields.
    """

    step_kind = K.STEP_DLS
    name = "dls"

    def __init__(self, chain: Chain, damping: float = 0.05, **options) -> None:
        super().__init__(chain, damping, **options)


__getattr__ = renamed_module_names(
    __name__, {"DampedLeastSquares": (__name__, "DampedLeastSquaresIK")}
)
