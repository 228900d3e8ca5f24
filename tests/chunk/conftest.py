"""Fixtures of the chunk/QP tests: the Marvin arms (start poses and reachable chunks are in
chunk_helpers, which the test modules import: a module named conftest is ambiguous when several
test folders are collected in one run)."""

from __future__ import annotations

import pytest

from ikstack.robots import load


@pytest.fixture(scope="session")
def marvin_left():
    return load("marvin_left")


@pytest.fixture(scope="session")
def marvin_right():
    return load("marvin_right")


@pytest.fixture(scope="session")
def taccap_arms():
    return {"left": load("marvin_left_taccap"), "right": load("marvin_right_taccap")}
