"""The analytic solver's modes and settings, as values: :class:`AnalyticMode`,
:class:`LockSearch` and :class:`AnalyticConfig` (``AnalyticIK(chain,
config=AnalyticConfig(...))``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ikstack._deprecated import warn_renamed
from ikstack.errors import InputError
from ikstack.vocabulary import ANALYTIC_MODES, AnalyticMode, StrEnum

#: every mode's name (:class:`AnalyticMode` is listed in :mod:`ikstack.vocabulary`, so that a
#: chunk profile names the modes without loading the solver)
MODES: tuple[str, ...] = ANALYTIC_MODES


class LockSearch(StrEnum):
    """Where the general mode samples a 7R arm's locked joint (a ``str``: ``"fixed"`` works;
    ``"seed_local"``, the former name of ``"near_q0"``, warns)."""

    FIXED = "fixed"  #: the grid of ``num_locks`` cell centres over the lock joint's limits
    NEAR_Q0 = "near_q0"  #: the grid plus 9 samples around the joint guess ``q0``


#: every lock search's name
SEARCHES: tuple[str, ...] = tuple(s.value for s in LockSearch)
#: former names of the lock searches (accepted one release, with a deprecation warning)
OLD_SEARCHES = {"seed_local": LockSearch.NEAR_Q0}


def lock_search(search: str) -> LockSearch:
    """``search`` as a :class:`LockSearch`; a former name (``"seed_local"``) warns, anything
    else is an :class:`~ikstack.errors.InputError`."""
    if isinstance(search, str) and search in OLD_SEARCHES:
        new = OLD_SEARCHES[search]
        warn_renamed(f"search={search!r}", f"search={new.value!r} (LockSearch.{new.name})")
        return new
    if search not in SEARCHES:
        raise InputError(f"search must be one of {SEARCHES}; got {search!r}")
    return LockSearch(search)


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
    search: LockSearch | str | None = None
    axis_alignment_tolerance: float = 1e-5
    near_tolerance: float = 0.025

    def keywords(self) -> dict[str, Any]:
        """The settings as ``AnalyticIK`` keywords."""
        return asdict(self)
