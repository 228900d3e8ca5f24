"""Inverse kinematics: the shared result object and FK certification; analytic and numerical
solvers live in :mod:`ikstack.ik.analytic` and :mod:`ikstack.ik.numerical`, and
:func:`solve_ik` picks between them."""

from ikstack.ik.front import Route, route, solve_ik
from ikstack.ik.result import STATUS_TEXT, IKResult, IKStatus, certify, fk_errors

__all__ = [
    "STATUS_TEXT",
    "IKResult",
    "IKStatus",
    "Route",
    "certify",
    "fk_errors",
    "route",
    "solve_ik",
]
