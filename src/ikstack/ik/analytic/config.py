"""The analytic solver's modes and settings, as values: :class:`AnalyticMode` and
:class:`AnalyticConfig` (``AnalyticIK(chain, config=AnalyticConfig(...))``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ikstack.vocabulary import StrEnum


class AnalyticMode(StrEnum):
    """How :class:`~ikstack.ik.analytic.AnalyticIK` solves (a ``str``: ``"strict"`` works)."""

    STRICT = "strict"  #: exact families only (and chains within the axis alignment tolerance)
    NEAR = "near"  #: the nearest exact surrogate, polished on the true model
    GENERAL = "general"  #: algebraic: any revolute 6R (elimination) or 7R (a locked joint)


#: every mode's name
MODES: tuple[str, ...] = tuple(m.value for m in AnalyticMode)


@dataclass(frozen=True)
class AnalyticConfig:
    """Every setting of :class:`~ikstack.ik.analytic.AnalyticIK`, with the same names, units
    and defaults as its keywords (see there); ``weights`` is a tuple here. Checked when the
    solver is built."""

    mode: str = AnalyticMode.STRICT
    position_tolerance: float = 1e-6
    rotation_tolerance: float = 1e-6
    num_samples: int = 128
    weights: tuple[float, ...] | None = None
    max_joint_step: float | None = None
    tol: float = 1e-8
    num_locks: int = 16
    search: str | None = None
    axis_alignment_tolerance: float = 1e-5
    near_tolerance: float = 0.025

    def keywords(self) -> dict[str, Any]:
        """The settings as ``AnalyticIK`` keywords."""
        return asdict(self)
