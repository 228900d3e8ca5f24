"""Analytic families: objects that turn targets into a fixed number of candidate solutions.

A family is anything with a ``name``, a candidate count ``K`` and
``solve(T_base_tcp (N, 4, 4), seed (N, dof)) -> (q (N, K, dof), exact (N, K))``; the solver
(:class:`~ikstack.ik.analytic.AnalyticIK`) does representatives, limits, selection and
certification. Families are built from a chain's joint lines (:mod:`.geometry`), never from
its name; :mod:`.classify` decides which one applies.
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from ikstack.ik.analytic import _families6 as F6
from ikstack.ik.analytic import _locked6 as L6
from ikstack.ik.analytic import _srs
from ikstack.ik.analytic.geometry import Lines, closest_point, parallel_error

Array = NDArray[np.float64]

#: batches at least this large run the 6R family kernels on all cores; smaller batches (a
#: single target above all) never touch numba's thread pool
PARALLEL_THRESHOLD = 256
#: the same for 7R families, whose every target expands hundreds of candidates
PARALLEL_THRESHOLD_7R = 8


class Family(Protocol):
    """What the solver needs from a family (a new family plugs in by providing this)."""

    name: str
    K: int

    def solve(self, T: Array, seed: Array) -> tuple[Array, NDArray[np.bool_]]:
        """Candidates ``(N, K, dof)`` and exact-branch mask ``(N, K)`` for targets ``(N, 4, 4)``."""
        ...


def _pform(lines: Lines) -> tuple[Array, Array, Array]:
    """IK-Geo ``H`` (n, 3), ``P`` (n + 1, 3) and ``R_nT`` (3, 3) of joint lines."""
    n = lines.n
    P = np.empty((n + 1, 3))
    P[0] = lines.r[0]
    P[1:n] = lines.r[1:] - lines.r[:-1]
    P[n] = lines.M[:3, 3] - lines.r[-1]
    return (np.ascontiguousarray(lines.h), P, np.ascontiguousarray(lines.M[:3, :3]))


def spherical_wrist_lines(lines: Lines, tol: float = 1e-9) -> tuple[Lines, int]:
    """Lines with axes 4-6 through their least-squares common point (exact for the family),
    and the position variant: axes 2 and 3 parallel, axes 1 and 2 meeting (described through
    their common point), axes 2 and 3 meeting, or general (subproblem 5)."""
    W, _ = closest_point(lines.h[3:6], lines.r[3:6])
    out = lines.with_points([3, 4, 5], W)
    h = out.h
    if parallel_error(h[1], h[2]) <= tol:
        return out, F6.TWO_PARALLEL
    for var, (i, j) in ((F6.FIRST_MEET, (0, 1)), (F6.SECOND_MEET, (1, 2))):
        if parallel_error(h[i], h[j]) > 1e-6:
            B, d = closest_point(h[[i, j]], out.r[[i, j]])
            if d <= tol:
                return out.with_points([i, j], B), var
    return out, F6.GENERAL


def three_parallel_lines(lines: Lines) -> tuple[Lines, Array]:
    """Lines with axes 3 and 4 set exactly (anti)parallel to axis 2, and their signs."""
    h = lines.h.copy()
    sgn = np.ones(6)
    for i in (2, 3):
        sgn[i] = 1.0 if h[i] @ h[1] >= 0 else -1.0
        h[i] = sgn[i] * h[1]
    return Lines(h, lines.r, lines.M), sgn


def last_axes_meet(H: Array, P: Array, tol: float = 1e-12) -> bool:
    """Whether axes 5 and 6 (1-based) of an IK-Geo ``H, P`` meet: not parallel, and the offset
    ``P[5]`` between them lies in their plane (within ``tol`` [m])."""
    n = np.cross(H[4], H[5])
    s = float(np.linalg.norm(n))
    return s > 1e-6 and abs(float(P[5] @ n)) <= tol * s


class SixR:
    """A 6R family: ``"spherical_wrist"`` or ``"three_parallel"``, optionally read backwards.

    Reversed, the chain is solved from the TCP to the base (a spherical shoulder becomes a
    spherical wrist; parallel axes 3-5 become axes 2-4).
    """

    K = F6.K6

    def __init__(self, kind: str, lines: Lines, reverse: bool):
        self.kind = kind
        self.reverse = reverse
        self.dof = 6
        work = lines.reversed() if reverse else lines
        self.var = F6.GENERAL
        if kind == "spherical_wrist":
            self.fid = F6.SPHERICAL
            self.sgn = np.ones(6)
            work, self.var = spherical_wrist_lines(work)
        elif kind == "three_parallel":
            self.fid = F6.THREE_PARALLEL
            work, self.sgn = three_parallel_lines(work)
        else:  # pragma: no cover - guarded by the classifier
            raise ValueError(kind)
        self.surrogate = work
        self.H, self.P, self.R6T = _pform(work)
        if self.fid == F6.THREE_PARALLEL and last_axes_meet(self.H, self.P):
            self.var = F6.LAST_MEET
        base = {"spherical_wrist": "spherical_wrist", "three_parallel": "three_parallel"}[kind]
        if reverse:
            base = {
                "spherical_wrist": "spherical_shoulder",
                "three_parallel": "three_parallel_reversed",
            }[kind]
        self.name = base
        #: ``fid`` and ``sgn`` as the compiled kernels take them: each None where the arm is of
        #: the other family (``kfid`` None for three-parallel, ``ksgn`` None for a spherical
        #: wrist). The kernels pick the family from these arguments' types, so numba prunes the
        #: other family's branch and an arm compiles its own family's code only
        self.kfid = None if self.fid == F6.THREE_PARALLEL else self.fid
        self.ksgn = None if self.fid == F6.SPHERICAL else self.sgn
        #: ``var`` as the kernels take it: None for a three-parallel arm whose last axes meet
        #: (UR-type arms), which then compiles that variant alone (not subproblem 6)
        self.kvar = None if self.fid == F6.THREE_PARALLEL and self.var == F6.LAST_MEET else self.var
        #: the family as its batch kernel takes it (:func:`._families6.batch6`)
        self.kernel = (self.kfid, self.kvar, self.reverse, self.H, self.P, self.R6T, self.ksgn)

    def solve(self, T: Array, seed: Array) -> tuple[Array, NDArray[np.bool_]]:
        n = T.shape[0]
        Q = np.empty((n, self.K, 6))
        V = np.empty((n, self.K), dtype=np.bool_)
        F6.batch6(self.kernel, T, seed, Q, V, n >= PARALLEL_THRESHOLD)
        return Q, V


class LockedJoint:
    """A 7R arm that becomes a 6R family when its first or last joint is locked.

    The locked joint is sampled at the seed's own value first, then at ``num_samples`` values
    spread uniformly over its (margin-reduced) limits; each sample gives 8 candidates. The
    solver refines the samples of a target none of them certifies (:mod:`._refine`).
    """

    def __init__(
        self,
        lines: Lines,
        lock_first: bool,
        sub: SixR,
        lower: float,
        upper: float,
        num_samples: int,
    ):
        self.lock_first = lock_first
        self.sub = sub
        self.dof = 7
        j = 0 if lock_first else 6
        self.lock_index = j
        self.lh = lines.h[j].copy()
        self.lr = lines.r[j].copy()
        self.M = lines.M.copy()
        #: the kernel's records: the 6R family and the locked joint
        self.kernel = (
            L6.family6(sub),
            L6.LOCK.make(first=lock_first, h=self.lh, r=self.lr, M=self.M),
        )
        lo = lower if math.isfinite(lower) else -math.pi
        hi = upper if math.isfinite(upper) else math.pi
        #: the locked joint's sampled range, and whether it is its limits (else a turn)
        self.range = (lo, hi, math.isfinite(lower) and math.isfinite(upper))
        if math.isfinite(lower) and math.isfinite(upper):
            self.grid = (
                np.linspace(lo, hi, num_samples) if num_samples > 1 else np.array([0.5 * (lo + hi)])
            )
        else:
            self.grid = lo + (hi - lo) * np.arange(num_samples) / max(num_samples, 1)
        self.K = 8 * (num_samples + 1)
        self.name = f"locked_joint{j + 1}+{sub.name}"

    def solve(
        self, T: Array, seed: Array, grid: Array | None = None
    ) -> tuple[Array, NDArray[np.bool_]]:
        """Candidates at the seed's locked angle and at ``grid`` (the family's own by default:
        ``K`` slots; ``8 (len(grid) + 1)`` otherwise)."""
        n = T.shape[0]
        vals = self.grid if grid is None else np.ascontiguousarray(grid, dtype=np.float64)
        k = 8 * (vals.shape[0] + 1)
        Q = np.empty((n, k, 7))
        V = np.empty((n, k), dtype=np.bool_)
        fam, lock = self.kernel
        L6.batch_locked(fam, lock, vals, T, seed, (Q, V), n >= PARALLEL_THRESHOLD_7R)
        return Q, V


class SRS:
    """7R with a spherical shoulder (axes 1-3 meet) and a spherical wrist (axes 5-7 meet).

    Candidates at the seed's own swivel angle first, then at ``num_samples`` swivel angles
    spread uniformly over a turn, then (``arcs``) at one swivel inside every arc between the
    swivels where a joint reaches a limit (Shimizu's closed-form joint-limit crossings), so a
    target with an in-limit solution is not missed by sampling:
    ``K = 8 (num_samples + 1 + 48)``.
    """

    name = "srs"

    def __init__(
        self,
        lines: Lines,
        num_samples: int,
        lower: Array | None = None,
        upper: Array | None = None,
        arcs: bool = True,
    ):
        self.dof = 7
        S, _ = closest_point(lines.h[0:3], lines.r[0:3])
        W, _ = closest_point(lines.h[4:7], lines.r[4:7])
        h3, r3 = lines.h[3], lines.r[3]
        E = r3 + ((S - r3) @ h3) * h3  # foot of the shoulder point on the elbow axis
        self.H = np.ascontiguousarray(lines.h)
        self.S = S
        self.pS3 = E - S
        self.p3W = W - E
        self.p7T = lines.M[:3, 3] - W
        self.R7T = np.ascontiguousarray(lines.M[:3, :3])
        self.grid = -math.pi + 2.0 * math.pi * np.arange(num_samples) / max(num_samples, 1)
        self.lo = np.full(7, -np.inf) if lower is None else np.asarray(lower, dtype=np.float64)
        self.hi = np.full(7, np.inf) if upper is None else np.asarray(upper, dtype=np.float64)
        self.arcs = bool(arcs) and bool(np.isfinite(self.lo).any() or np.isfinite(self.hi).any())
        self.surrogate = lines.with_points([0, 1, 2], S).with_points([4, 5, 6], W)
        #: the arm as its kernels take it (:data:`._srs.SRS_DATA`)
        self.data = _srs.SRS_DATA.make(**{f: getattr(self, f) for f in _srs.SRSData._fields})
        self.K = _srs.slots.py_func(self.data)  # the kernels' own count, run in Python

    def solve(self, T: Array, seed: Array) -> tuple[Array, NDArray[np.bool_]]:
        n = T.shape[0]
        Q = np.empty((n, self.K, 7))
        V = np.empty((n, self.K), dtype=np.bool_)
        _srs.batch_srs(T, seed, self.data, Q, V, n >= PARALLEL_THRESHOLD_7R)
        return Q, V
