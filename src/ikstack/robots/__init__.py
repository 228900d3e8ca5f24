"""Bundled robot models, each with a provenance note: ``ikstack.robots.load("panda")``."""

from __future__ import annotations

from ikstack.errors import UnknownRobotError
from ikstack.model import Chain
from ikstack.robots.catalog import CATALOG, RobotSpec, data_path, marvin_dh, marvin_j67_constraint

__all__ = ["RobotSpec", "data_path", "info", "load", "marvin_dh", "marvin_j67_constraint", "names"]


def names() -> list[str]:
    """Names of the bundled robots, in catalog order."""
    return list(CATALOG)


def info(name: str) -> RobotSpec:
    """The catalog entry of a bundled robot (summary, family hint, provenance)."""
    try:
        return CATALOG[name]
    except KeyError:
        raise UnknownRobotError(name, CATALOG) from None


def load(name: str) -> Chain:
    """Build a bundled robot's chain (a fresh immutable :class:`~ikstack.model.Chain`).

    Raises:
        UnknownRobotError: the name is not bundled; the message lists those that are.
    """
    spec = info(name)
    chain = spec.build()
    return chain.replace(name=name, source=f"{chain.source}; provenance: {spec.provenance}")
