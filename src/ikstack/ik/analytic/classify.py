"""Choose an analytic family from a chain's geometry (axes and origins, never its name).

Conditions (SSIK's defaults: tolerance 1e-8): two axes are parallel when the angle between
them is below ``tol`` [rad]; three axes meet when every one passes within ``tol`` [m] of their
least-squares common point. Three bands beyond exactness, each an option:

- within ``axis_alignment_tolerance`` (default 1e-5 [rad] or [m]: URDF rounding, e.g. offsets
  written to the micrometre): the chain is solved as the exact family on its nearest exact
  surrogate, then the selection is polished and certified on the true chain (strict mode);
- within ``near_tolerance`` (default 0.025): near mode, which must be asked for (geometric
  solutions of the surrogate, each polished by a bounded Newton iteration on the true model);
- beyond: no closed-form family; the algebraic mode applies to revolute 6R and 7R chains.

New families plug in through :data:`DETECTORS`: per degrees of freedom, functions
``(lines, tol, lower, upper) -> [Detection]`` whose ``build(num_samples)`` returns a
:class:`~ikstack.ik.analytic.families.Family`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from ikstack.errors import InputError
from ikstack.ik.analytic.families import SRS, Family, LockedJoint, SixR
from ikstack.ik.analytic.geometry import (
    Lines,
    chain_lines,
    closest_point,
    fmt_length,
    parallel_error,
)
from ikstack.model import Chain, JointType

#: exactness tolerance [rad] / [m] (SSIK's default)
EXACT_TOLERANCE = 1e-8
#: deviations up to this are solved as the exact family, polished on the true chain [rad] / [m]
AXIS_ALIGNMENT_TOLERANCE = 1e-5
#: near-structure mode accepts surrogates this far from exact [m] / [rad]
NEAR_TOLERANCE = 0.025
NEAR_DISTANCE = NEAR_TOLERANCE
NEAR_ANGLE = NEAR_TOLERANCE


@dataclass(frozen=True)
class Detection:
    """One family's verdict on a chain.

    Attributes:
        name: the family's name.
        distance: worst violation of its conditions, [m] for meeting axes, converted to the
            same scale for angles (1 rad ~ 1 m); 0 when exact.
        exact: violation within ``tol``.
        near: violation within the near-structure tolerance.
        aligned: violation within the axis alignment tolerance (solved as the exact family,
            polished on the true chain).
        reason: the failed condition in words (empty when exact).
        build: ``(num_samples) -> Family`` building the (surrogate) family.
    """

    name: str
    distance: float
    exact: bool
    near: bool
    reason: str
    build: Callable[[int], Family] = field(repr=False)
    aligned: bool = False


@dataclass(frozen=True)
class Classification:
    """The classifier's answer.

    Attributes:
        family: the family's name, or None when no supported family fits.
        needs_near: True when the chain is only near the family (near mode required).
        reason: why: the family's conditions hold, or which condition failed and by how much.
        detections: every family's verdict, best first.
        general: True when no closed-form family accepts the chain but it is a revolute 6R or
            7R chain, which the algebraic mode solves (``AnalyticIK(chain, mode="general")``:
            general 6R elimination, or a locked joint for 7R). Explicit, as near mode is:
            ``solve_ik(method="auto")`` does not choose it.
        polish: True when the chain misses the family's exact conditions by no more than the
            axis alignment tolerance: strict mode solves it on the exact surrogate and polishes
            the selection on the true chain (a rounded URDF).
        deviation: the worst violation of the family's conditions [m or rad].
    """

    family: str | None
    needs_near: bool
    reason: str
    detections: tuple[Detection, ...] = ()
    general: bool = False
    polish: bool = False
    deviation: float = 0.0

    @property
    def supported(self) -> bool:
        """A closed-form family (exact or near) accepts the chain."""
        return self.family is not None

    @property
    def suggested_mode(self) -> str | None:
        """The :class:`AnalyticIK` mode to use: ``"strict"``, ``"near"``, ``"general"`` or
        None (no analytic mode applies)."""
        if self.family is not None:
            return "near" if self.needs_near else "strict"
        return "general" if self.general else None


def _meet(lines: Lines, idx: tuple[int, int, int], off: int, tol: float) -> tuple[float, str]:
    _, d = closest_point(lines.h[list(idx)], lines.r[list(idx)])
    names = ", ".join(str(i + 1 + off) for i in idx)
    if d <= tol:
        return d, ""
    return d, f"axes {names} miss a common point by {fmt_length(d)}; tolerance {tol:g} m"


def _par(lines: Lines, idx: tuple[int, int, int], off: int, tol: float) -> tuple[float, str]:
    a, b, c = idx
    errs = [
        (parallel_error(lines.h[a], lines.h[b]), a, b),
        (parallel_error(lines.h[a], lines.h[c]), a, c),
    ]
    e, i, j = max(errs)
    if e <= tol:
        return e, ""
    return e, (
        f"axes {i + 1 + off} and {j + 1 + off} are {e:.3g} rad from parallel; tolerance {tol:g} rad"
    )


def _detect6(
    lines: Lines,
    tol: float,
    lower: np.ndarray | None = None,
    upper: np.ndarray | None = None,
    *,
    off: int = 0,
) -> list[Detection]:
    """The 6R families' verdicts (a detector of :data:`DETECTORS`; they need no limits).

    ``off`` numbers the axes in messages from ``off + 1`` (a 6R sub-chain of a 7R arm)."""
    out = []
    for kind, rev, test, idx in (
        ("spherical_wrist", False, _meet, (3, 4, 5)),
        ("three_parallel", False, _par, (1, 2, 3)),
        ("spherical_wrist", True, _meet, (0, 1, 2)),
        ("three_parallel", True, _par, (2, 3, 4)),
    ):
        d, why = test(lines, idx, off, tol)
        near = d <= (NEAR_DISTANCE if test is _meet else NEAR_ANGLE)

        def build(_ns: int, kind: str = kind, rev: bool = rev) -> Family:
            return SixR(kind, lines, rev)

        name = {
            ("spherical_wrist", False): "spherical_wrist",
            ("three_parallel", False): "three_parallel",
            ("spherical_wrist", True): "spherical_shoulder",
            ("three_parallel", True): "three_parallel_reversed",
        }[(kind, rev)]
        out.append(Detection(name, d, d <= tol, near, why, build))
    return out


def _detect7(lines: Lines, tol: float, lower: np.ndarray, upper: np.ndarray) -> list[Detection]:
    out = []
    d1, w1 = _meet(lines, (0, 1, 2), 0, tol)
    d2, w2 = _meet(lines, (4, 5, 6), 0, tol)
    d = max(d1, d2)
    why = "; ".join(w for w in (w1, w2) if w)
    out.append(
        Detection(
            "srs", d, d <= tol, d <= NEAR_DISTANCE, why, lambda ns: SRS(lines, ns, lower, upper)
        )
    )
    for lock_first in (False, True):
        j = 0 if lock_first else 6
        sub = lines.sub(1, 7, lines.M) if lock_first else lines.sub(0, 6, lines.M)
        for det in _detect6(sub, tol, off=1 if lock_first else 0):

            def build(
                ns: int, det: Detection = det, lock_first: bool = lock_first, j: int = j
            ) -> Family:
                six = det.build(ns)
                if not isinstance(six, SixR):  # pragma: no cover - 6R detectors build SixR
                    raise TypeError(type(six))
                return LockedJoint(lines, lock_first, six, float(lower[j]), float(upper[j]), ns)

            reason = f"with joint {j + 1} locked: {det.reason}" if det.reason else ""
            out.append(
                Detection(
                    f"locked_joint{j + 1}+{det.name}",
                    det.distance,
                    det.exact,
                    det.near,
                    reason,
                    build,
                )
            )
    return out


#: family detectors by degrees of freedom, each ``(lines, tol, lower, upper) -> [Detection]``;
#: append to a list to plug in a new family (the best verdict over all detectors wins)
DETECTORS: dict[int, list[Callable[[Lines, float, np.ndarray, np.ndarray], list[Detection]]]] = {
    6: [_detect6],
    7: [_detect7],
}


def _check_tolerances(**tols: float) -> None:
    for name, v in tols.items():
        if not (isinstance(v, int | float) and math.isfinite(v) and v > 0):
            raise InputError(f"{name} must be a positive finite number; got {v!r}")


def _detect(
    chain: Chain,
    tol: float,
    aligned: float = AXIS_ALIGNMENT_TOLERANCE,
    near: float = NEAR_TOLERANCE,
) -> tuple[list[Detection], str]:
    if any(t == JointType.PRISMATIC for t in chain.joint_types):
        names = [
            chain.joint_names[i]
            for i, t in enumerate(chain.joint_types)
            if t == JointType.PRISMATIC
        ]
        return [], f"prismatic joints {names} are not supported by the analytic families"
    if chain.dof not in DETECTORS:
        return [], (
            f"the analytic families cover {sorted(DETECTORS)}-joint arms; this chain has "
            f"{chain.dof} joints"
        )
    lines = chain_lines(chain)
    lo = chain.lower + chain.kinematic_margin
    hi = chain.upper - chain.kinematic_margin
    dets: list[Detection] = []
    for detector in DETECTORS[chain.dof]:
        for d in detector(lines, tol, lo, hi):
            dets.append(
                replace(
                    d, near=d.exact or d.distance <= near, aligned=d.exact or d.distance <= aligned
                )
            )
    order = {id(d): i for i, d in enumerate(dets)}
    dets.sort(
        key=lambda d: (
            not d.exact,
            not d.aligned,
            not d.near,
            0.0 if d.aligned else d.distance,
            order[id(d)],
        )
    )
    return dets, ""


def detections(
    chain: Chain,
    tol: float = EXACT_TOLERANCE,
    axis_alignment_tolerance: float = AXIS_ALIGNMENT_TOLERANCE,
    near_tolerance: float = NEAR_TOLERANCE,
) -> list[Detection]:
    """Every family's verdict on ``chain``, best first (exact, aligned, near, by distance)."""
    _check_tolerances(
        tol=tol, axis_alignment_tolerance=axis_alignment_tolerance, near_tolerance=near_tolerance
    )
    return _detect(chain, tol, axis_alignment_tolerance, near_tolerance)[0]


def classify(
    chain: Chain,
    tol: float = EXACT_TOLERANCE,
    axis_alignment_tolerance: float = AXIS_ALIGNMENT_TOLERANCE,
    near_tolerance: float = NEAR_TOLERANCE,
) -> Classification:
    """Which analytic family solves ``chain``, and whether near mode is needed.

    Args:
        chain: the arm (revolute joints only).
        tol: exactness tolerance: [rad] between parallel axes, [m] for meeting axes.
        axis_alignment_tolerance: deviations up to this [rad] / [m] are solved as the exact
            family (on the nearest exact surrogate), the selection polished and certified on
            the true chain: ``polish`` True, no near mode needed.
        near_tolerance: deviations up to this [rad] / [m] can be solved in near mode.

    Returns:
        :class:`Classification`: ``family`` None when unsupported, with ``reason`` naming the
        condition that failed by the least (e.g. "axes 4, 5, 6 miss a common point by 2.1 mm;
        tolerance 1e-08 m") and ``general`` True when the algebraic mode applies (revolute 6R
        or 7R chains).
    """
    _check_tolerances(
        tol=tol, axis_alignment_tolerance=axis_alignment_tolerance, near_tolerance=near_tolerance
    )
    dets, why = _detect(chain, tol, axis_alignment_tolerance, near_tolerance)
    if not dets:
        return Classification(None, False, why)
    best = dets[0]
    if best.exact:
        return Classification(
            best.name, False, f"{best.name}: conditions hold within {tol:g}", tuple(dets)
        )
    if best.aligned:
        return Classification(
            best.name,
            False,
            f"{best.name} within the axis alignment tolerance "
            f"{axis_alignment_tolerance:g} (deviation {best.distance:.3g}): solved as the exact "
            "family, polished and certified on the true chain",
            tuple(dets),
            polish=True,
            deviation=best.distance,
        )
    if best.near:
        return Classification(
            best.name,
            True,
            f"near {best.name} (near mode needed): {best.reason}",
            tuple(dets),
            deviation=best.distance,
        )
    return Classification(
        None,
        False,
        f"no supported family; closest is {best.name}: "
        f"{best.reason}; the algebraic mode solves it "
        "(AnalyticIK(chain, mode='general'))",
        tuple(dets),
        general=True,
    )
