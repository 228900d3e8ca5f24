"""Shared test helpers."""

from __future__ import annotations

from pathlib import Path

import pytest


def example_robot_data_dir() -> Path | None:
    """Folder of the URDFs the example-robot-data package ships, or None if not installed."""
    try:
        import pinocchio
    except ImportError:
        return None
    base = Path(pinocchio.__file__).resolve()
    for parent in base.parents:
        cand = parent / "share" / "example-robot-data" / "robots"
        if cand.is_dir():
            return cand
    return None


@pytest.fixture(scope="session")
def erd_dir() -> Path:
    d = example_robot_data_dir()
    if d is None:
        pytest.skip("example-robot-data is not installed (test extra)")
    return d
