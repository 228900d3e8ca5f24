"""Numerical IK: damped least squares and Levenberg-Marquardt with restarts, batched.

``LevenbergMarquardt(chain).solve(T)`` solves one target (4, 4) or a batch (N, 4, 4) on the same
compiled path; every success is certified by FK after solving.
"""

from ikstack._deprecated import renamed_module_names
from ikstack.ik.numerical.dls import DampedLeastSquaresIK
from ikstack.ik.numerical.lm import LevenbergMarquardt
from ikstack.ik.numerical.solver import LimitMode, NumericalConfig, NumericalIK

__all__ = [
    "DampedLeastSquaresIK",
    "LevenbergMarquardt",
    "LimitMode",
    "NumericalIK",
    "NumericalConfig",
]

#: names renamed in this release, kept one release (they warn)
__getattr__ = renamed_module_names(
    __name__,
    {
        "DampedLeastSquares": ("ikstack.ik.numerical", "DampedLeastSquaresIK"),
        "NumericalOptions": ("ikstack.ik.numerical", "NumericalConfig"),
    },
)
