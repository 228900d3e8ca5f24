"""Analytic (closed-form) IK: IK-Geo subproblems, families chosen from the chain's geometry,
every solution with a mask, seed selection and continuous paths.

Example::

    import ikstack.robots
    from ikstack.ik.analytic import AnalyticIK, classify

    chain = ikstack.robots.load("ur5")
    classify(chain).family                    # "three_parallel" (None when unsupported)
    ik = AnalyticIK(chain)                    # mode="near" for arms only near a family
    # 6R/7R arms without a closed form (classify(c).general, e.g. rizon4): explicit
    # AnalyticIK(c, mode="general") -> "analytic:general6r" / "analytic:locked7r"
    result = ik.solve(chain.fk(chain.middle()), return_all=True)
    result.q, result.success, result.q_all, result.valid_all
"""

from ikstack.ik.analytic import subproblems
from ikstack.ik.analytic.classify import Classification, Detection, classify, detections
from ikstack.ik.analytic.config import AnalyticConfig, AnalyticMode, LockSearch
from ikstack.ik.analytic.families import Family
from ikstack.ik.analytic.geometry import chain_from_hp
from ikstack.ik.analytic.solver import AnalyticIK

__all__ = [
    "AnalyticConfig",
    "AnalyticIK",
    "AnalyticMode",
    "Classification",
    "Detection",
    "Family",
    "LockSearch",
    "chain_from_hp",
    "classify",
    "detections",
    "subproblems",
]
