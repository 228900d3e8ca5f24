"""Analytic (closed-form) IK: IK-Geo subproblems, families chosen from the chain's geometry,
every solution with a mask, seed selection and continuous paths.

>>> from ikstack.ik.analytic import AnalyticIK, classify
>>> classify(chain).family           # e.g. "three_parallel", or None
>>> AnalyticIK(chain).solve(T_base_tcp, seed).q
"""

from ikstack.ik.analytic import subproblems
from ikstack.ik.analytic.classify import Classification, Detection, classify, detections
from ikstack.ik.analytic.families import Family
from ikstack.ik.analytic.solver import AnalyticIK

__all__ = ["AnalyticIK", "Classification", "Detection", "Family", "classify", "detections",
           "subproblems"]
