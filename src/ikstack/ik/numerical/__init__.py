"""Numerical IK: damped least squares and Levenberg-Marquardt with restarts, batched.

``LevenbergMarquardt(chain).solve(T)`` solves one target (4, 4) or a batch (N, 4, 4) on the same
compiled path; every success is certified by FK after solving.
"""

from ikstack.ik.numerical.dls import DampedLeastSquares
from ikstack.ik.numerical.lm import LevenbergMarquardt
from ikstack.ik.numerical.solver import LimitMode, NumericalIK, NumericalOptions

__all__ = ["DampedLeastSquares", "LevenbergMarquardt", "LimitMode", "NumericalIK",
           "NumericalOptions"]
