"""General 6R IK by elimination (Raghavan-Roth / Manocha-Canny) and locked-joint 7R IK.

- :class:`General6R`: every solution (at most 16) of any revolute 6R chain from one 24x24
  eigenproblem per pose; coefficients computed numerically from the chain at construction.
- :class:`LockedJoint7R`: 7R arms that fit no closed-form family (Flexiv Rizon 4 / 4s): one
  joint locked at sampled values, each remaining 6R chain solved by :class:`General6R`'s
  elimination.
"""

from ikstack.ik.analytic.config import LockSearch
from ikstack.ik.analytic.general6r.locked import N_LOCAL, SEARCHES, LockedJoint7R
from ikstack.ik.analytic.general6r.solver import General6R

__all__ = ["N_LOCAL", "SEARCHES", "General6R", "LockSearch", "LockedJoint7R"]
