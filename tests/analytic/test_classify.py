"""The classifier reads families from axes and origins only, and says which condition failed."""

from __future__ import annotations

import numpy as np
import pytest
from analytic_arms import STRUCTURES_6R, chain_from_lines, random_arm

import ikstack.robots as robots
from ikstack.errors import UnsupportedGeometryError
from ikstack.ik.analytic import AnalyticIK, classify
from ikstack.ik.analytic.geometry import chain_lines


@pytest.mark.parametrize(
    "name, family",
    [
        ("ur5", "three_parallel"),
        ("iiwa14", "srs"),
        ("marvin_left", "srs"),
        ("panda", "locked_joint7+spherical_shoulder"),
        ("arx_x5", "three_parallel"),
    ],
)
def test_bundled_arms_classify_exactly(name, family):
    c = classify(robots.load(name))
    assert c.family == family
    assert not c.needs_near


@pytest.mark.parametrize(
    "structure, family",
    [
        ("spherical_wrist", "spherical_wrist"),
        ("spherical_two_parallel", "spherical_wrist"),
        ("spherical_two_intersecting", "spherical_wrist"),
        ("three_parallel", "three_parallel"),
        ("spherical_shoulder", "spherical_shoulder"),
        ("three_parallel_reversed", "three_parallel_reversed"),
        ("srs", "srs"),
        ("locked_last", "locked_joint7+spherical_shoulder"),
    ],
)
def test_random_arms_with_imposed_structure_classify(structure, family):
    rng = np.random.default_rng(11)
    for _ in range(5):
        assert classify(random_arm(structure, rng)).family == family


def test_classification_ignores_names():
    ur5 = robots.load("ur5")
    renamed = ur5.replace(
        name="not_a_ur",
        joint_names=tuple(f"x{i}" for i in range(6)),
        link_names=tuple(f"l{i}" for i in range(6)),
    )
    assert classify(renamed).family == classify(ur5).family == "three_parallel"


def test_general_6r_is_unsupported_and_the_error_names_the_condition():
    rng = np.random.default_rng(5)
    chain = random_arm("general", rng)
    c = classify(chain)
    assert c.family is None
    assert "axes" in c.reason and "tolerance 1e-08" in c.reason
    with pytest.raises(UnsupportedGeometryError, match="tolerance 1e-08"):
        AnalyticIK(chain)


def wrist_offset_arm(offset: float) -> object:
    """A spherical-wrist arm whose fifth axis misses the wrist point by ``offset`` [m]."""
    rng = np.random.default_rng(2)
    base = random_arm("spherical_wrist", rng)
    lines = chain_lines(base)
    r = lines.r.copy()
    n = np.cross(lines.h[4], lines.h[3])
    r[4] = r[4] + offset * n / np.linalg.norm(n)
    return chain_from_lines(lines.h, r, lines.M[:3, :3], lines.M[:3, 3])


def test_near_structure_is_reported_with_distance_and_needs_near_mode():
    chain = wrist_offset_arm(0.0021)
    c = classify(chain)
    assert c.family == "spherical_wrist" and c.needs_near
    assert "mm" in c.reason and "4, 5, 6" in c.reason
    with pytest.raises(UnsupportedGeometryError, match="near"):
        AnalyticIK(chain, mode="strict")
    AnalyticIK(chain, mode="near")  # explicit near mode is accepted


def test_chains_outside_6r_7r_are_unsupported_with_reason():
    for name in ("planar2", "scara"):
        c = classify(robots.load(name))
        assert c.family is None and c.reason
        with pytest.raises(UnsupportedGeometryError):
            AnalyticIK(robots.load(name))


def test_every_structure_listed_has_a_detector():
    rng = np.random.default_rng(0)
    for s in STRUCTURES_6R:
        assert classify(random_arm(s, rng)).family is not None


def test_offset_shoulder_beyond_near_tolerance_is_unsupported_with_its_distance():
    c = classify(robots.load("rizon4"))  # shoulder axes 32.5 mm apart
    assert c.family is None
    assert "32.5 mm" in c.reason and "axes 1, 2, 3" in c.reason
