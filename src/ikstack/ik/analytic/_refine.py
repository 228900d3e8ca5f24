"""Adaptive lock refinement of the locked-joint 7R family, for targets no grid slot certifies.

A 7R arm solved by locking an end joint samples the locked angle on a fixed grid. Where the
feasible set of the locked angle is a narrow interval (a lock grid 0.4 rad apart misses an
interval 0.1 to 0.25 rad wide on Panda; with joint 1 locked and the elbow nearly straight an
iiwa-type arm reaches the wrist centre only for locked angles within about ``|q4|`` of one
value), or where the joint limits leave only a sliver of it, every grid sample can miss it.
For such a target (within the chain's reach: farther ones are left as they are) three
refinements run in turn, each only while nothing certifies:

1. Newton prediction: damped Gauss-Newton on the whole chain (:data:`NEWTON_ITERATIONS` steps
   at most, all failed targets at once) from the seed, the two exact candidates nearest the
   limits and :data:`SPREAD` fixed configurations predicts the locked angle; the family is
   solved at each predicted angle and at offsets of 1e-8 to 1e-2 rad around it.
2. Denser grids: uniform over the locked joint's range, :data:`DENSE_FACTOR` times denser each,
   up to :data:`DENSE_MAX` samples.
3. Zoom: the locked angles of the exact candidates least outside the limits are centres of a
   finer grid, each level about 8 times finer, at most :data:`LEVELS` levels, stopping when
   the violation stalls (a limit sliver: the violation shrinks toward it).

Only lock values come from these searches: every joint vector still comes from the family's
geometric subproblems and passes the first pass's gate. The cost is bounded (one Newton pass;
per failed target one family pass at the predicted angles, denser grids of at most
:data:`DENSE_MAX` samples, at most :data:`LEVELS` zoom levels of :data:`ZOOM_SAMPLES`) and
falls only on failed targets within reach: about 1 to 2 ms each on Panda, against 0.1 to 0.5 ms
for the first pass.
Failed targets are refined one at a time, so small batches never enter numba's thread pool.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ikstack.ik.analytic._general import GeneralFamily
from ikstack.ik.analytic.families import LockedJoint
from ikstack.ik.analytic.general6r.locked import LockedJoint7R
from ikstack.kinematics import fk_jacobian
from ikstack.kinematics.forward import compile_chain
from ikstack.model import Chain

Array = NDArray[np.float64]

#: most zoom levels after the first pass (each one family pass and one gate per failing
#: target); a level shrinks the spacing about 8 times, so 10 levels resolve an interval 1e-9
#: of the first spacing wide
LEVELS = 10
#: centres per level (the best distinct locked angles)
CENTRES = 2
#: locked-angle samples per zoom level (all centres together)
ZOOM_SAMPLES = 32
#: refinement stops when a level's best score is not below this share of the previous one
#: (no feasible interval to converge to: an unreachable target costs a few levels)
STALL = 0.5
#: damped Gauss-Newton steps predicting the locked angle, their damping and step bound [rad]
NEWTON_ITERATIONS = 12
NEWTON_DAMPING = 1e-4
NEWTON_MAX_STEP = 0.5
#: Newton starts spread over the limits (besides the seed and the best candidates)
SPREAD = 4
#: denser uniform grids for a failed target: each this many times the previous, up to
#: DENSE_MAX samples of the locked joint
DENSE_FACTOR = 4
DENSE_MAX = 128
#: [m] slack of the reach test (targets farther than the reach plus this are not refined)
REACH_SLACK = 1e-3
#: offsets [rad] around each predicted locked angle (and the angle itself)
NEWTON_OFFSETS = (0.0, 1e-8, -1e-8, 1e-6, -1e-6, 1e-4, -1e-4, 1e-2, -1e-2)


def _violation(chain: Chain, Q: Array, lo: Array, hi: Array) -> Array:
    """(K,) summed distance of each candidate outside ``[lo, hi]``, revolute joints taken at
    their whole-turn representative nearest the interval."""
    mid = np.where(np.isfinite(lo) & np.isfinite(hi), 0.5 * (lo + hi), 0.0)
    rev = chain.is_revolute
    q = np.where(rev, Q - 2.0 * math.pi * np.round((Q - mid) / (2.0 * math.pi)), Q)
    under = np.where(np.isfinite(lo), np.maximum(lo - q, 0.0), 0.0)
    over = np.where(np.isfinite(hi), np.maximum(q - hi, 0.0), 0.0)
    return np.asarray((under + over).sum(axis=-1))


def _score(chain: Chain, Q: Array, V: NDArray[np.bool_], lo: Array, hi: Array) -> Array:
    """(K,) how far each exact candidate (``V``) lies outside the limits; infinite elsewhere
    (the family's non-exact slots carry no distance to a feasible locked angle)."""
    return np.where(V, _violation(chain, Q, lo, hi), np.inf)


def _centres(lock: Array, score: Array, width: float) -> list[float]:
    """The locked angles of the best-scoring candidates, at least ``width`` apart."""
    out: list[float] = []
    for k in np.argsort(score, kind="stable"):
        if not np.isfinite(score[k]):
            break
        v = float(lock[k])
        if all(abs(v - c) >= width for c in out):
            out.append(v)
            if len(out) == CENTRES:
                break
    return out


def newton_locks(chain: Chain, T: Array, starts: Array, lo: Array, hi: Array) -> Array:
    """(M, S, dof) configurations after damped Gauss-Newton from ``starts`` (M, S, dof) toward
    targets ``T`` (M, 4, 4), each step clipped to :data:`NEWTON_MAX_STEP` and into the limits;
    stops early once every start has converged.

    The orientation error is the axial vector of ``R_t R^T`` (``sin(angle) * axis``): a
    predictor of the locked angle needs its direction, not the exact geodesic length."""
    m, k, dof = starts.shape
    q = starts.reshape(m * k, dof).copy()
    Tt = np.repeat(T, k, axis=0)
    Rt = Tt[:, :3, :3]
    lo_c = np.where(np.isfinite(lo), lo, -np.inf)
    hi_c = np.where(np.isfinite(hi), hi, np.inf)
    eye = NEWTON_DAMPING**2 * np.eye(6)
    e = np.empty((m * k, 6))
    for _ in range(NEWTON_ITERATIONS):
        Tq, J = fk_jacobian(chain, q)
        e[:, :3] = Tt[:, :3, 3] - Tq[:, :3, 3]
        A = Rt @ np.swapaxes(Tq[:, :3, :3], 1, 2)
        e[:, 3] = 0.5 * (A[:, 2, 1] - A[:, 1, 2])
        e[:, 4] = 0.5 * (A[:, 0, 2] - A[:, 2, 0])
        e[:, 5] = 0.5 * (A[:, 1, 0] - A[:, 0, 1])
        if np.abs(e).max() <= 1e-12:  # every start converged
            break
        JT = np.swapaxes(J, 1, 2)
        y = np.linalg.solve(J @ JT + eye, e[..., None])[..., 0]
        dq = np.einsum("nji,nj->ni", J, y)
        q = np.clip(q + np.clip(dq, -NEWTON_MAX_STEP, NEWTON_MAX_STEP), lo_c, hi_c)
    return q.reshape(m, k, dof)


def reach(chain: Chain) -> tuple[Array, float]:
    """``(o, r)``: every TCP position of the revolute ``chain`` lies within ``r`` [m] of ``o``,
    the first joint's origin (each joint origin lies on its axis, so the distance between
    consecutive joint origins, and from the last one to the TCP, never changes)."""
    c = compile_chain(chain)
    return c.ps[0].copy(), float(np.linalg.norm(c.ps[1:], axis=1).sum() + np.linalg.norm(c.p_end))


@dataclass(frozen=True)
class _Locks:
    """What refinement needs of a locked-joint family: the locked joint, its first-pass grid
    and range ``(lo, hi, bounded)``, and ``solve(T (1, 4, 4), S (1, dof), grid)``."""

    index: int
    grid: Array
    range: tuple[float, float, bool]
    solve: Callable[[Array, Array, Array | None], tuple[Array, NDArray[np.bool_]]]


def _locks(family: Any) -> _Locks | None:
    """The locked-joint view of ``family`` (the closed-form family, or the general mode's
    locked-joint 7R solver), or None for any other family."""
    if isinstance(family, LockedJoint):
        return _Locks(
            family.lock_index,
            family.grid,
            family.range,
            lambda T, S, grid: family.solve(T, S, grid),
        )
    solver = getattr(family, "solver", None)
    if isinstance(family, GeneralFamily) and isinstance(solver, LockedJoint7R):

        def solve(T: Array, S: Array, grid: Array | None) -> tuple[Array, NDArray[np.bool_]]:
            if grid is None:
                return family.solve(T, S)
            Q, V = solver.pool_at(T, grid)
            return Q, V & np.all(np.isfinite(Q), axis=-1)

        return _Locks(solver.lock_joint, solver.lock_values, solver.lock_range, solve)
    return None


def refine_locks(
    chain: Chain,
    family: Any,
    T: Array,
    S: Array,
    lo: Array,
    hi: Array,
    arrays: tuple[Any, ...],
    gate: Callable[..., None],
) -> None:
    """Re-solve, in place, the rows of ``arrays = (Q, V, OK, FK, LIM, CON, D, PL)`` where no
    slot is ``OK`` by adaptive lock refinement (a :class:`LockedJoint` family, or the general
    mode's :class:`LockedJoint7R`; other families are left as they are).

    ``gate(Q, V, S, T, OK, FK, LIM, D, PL)`` is the first pass's gate (every slot gated) on
    (1, K) arrays; the chain's coupled-joint constraints are applied after it. A row is
    overwritten only when refinement certifies a slot: its valid slots first (nearest the
    seed first), then the rest, up to the row's ``K`` slots.
    """
    fam = _locks(family)
    if fam is None:
        return
    Q, V, OK, FK, LIM, CON, D, PL = arrays
    rows = np.flatnonzero(~OK.any(axis=1))
    if rows.size and bool(np.all(chain.is_revolute)):
        # a target beyond the chain's reach has nothing to refine toward
        o, r = reach(chain)
        rows = rows[np.linalg.norm(T[rows, :3, 3] - o, axis=1) <= r + REACH_SLACK]
    if rows.size == 0:
        return
    j = fam.index
    glo, ghi, bounded = fam.range
    span = ghi - glo
    ns = int(fam.grid.size)
    m = ZOOM_SAMPLES
    K = Q.shape[1]
    Tr, Sr = np.ascontiguousarray(T[rows]), np.ascontiguousarray(S[rows])
    pool, pv = fam.solve(Tr, Sr, None)  # the first pass's raw candidates (the gate moved them)
    scores = [_score(chain, pool[r], pv[r], lo, hi) for r in range(rows.size)]
    spread = _spread(chain, lo, hi)
    starts = np.empty((rows.size, 1 + CENTRES + spread.shape[0], chain.dof))
    for r in range(rows.size):
        top = np.argsort(scores[r], kind="stable")[:CENTRES]
        top = top[np.isfinite(scores[r][top])]
        starts[r, : 1 + CENTRES] = Sr[r]
        starts[r, 1 : 1 + top.size] = pool[r, top]
        starts[r, 1 + CENTRES :] = spread
    predicted = newton_locks(chain, Tr, starts, lo, hi)[:, :, j]
    offsets = np.asarray(NEWTON_OFFSETS)

    def attempt(r: int, grid: NDArray[np.floating[Any]]) -> tuple[Array, Array] | None:
        """Solve and gate row ``r`` at ``grid``; on a certified slot write it back (and None)."""
        i = rows[r]
        vals = np.asarray(np.clip(grid, glo, ghi) if bounded else grid, dtype=np.float64)
        Qr, Vr = fam.solve(Tr[r : r + 1], Sr[r : r + 1], vals)
        score = _score(chain, Qr[0], Vr[0], lo, hi)
        Qg = np.ascontiguousarray(Qr.copy())
        k = Qg.shape[1]
        OKg = np.zeros((1, k), dtype=np.bool_)
        FKg = np.zeros((1, k), dtype=np.bool_)
        LIMg = np.zeros((1, k), dtype=np.bool_)
        Dg = np.empty((1, k))
        PLg = np.zeros((1, k), dtype=np.bool_)
        gate(Qg, Vr, Sr[r : r + 1], Tr[r : r + 1], OKg, FKg, LIMg, Dg, PLg)
        CONg = np.ones((1, k), dtype=np.bool_)
        if chain.constraints:
            CONg = chain.constraints_satisfied(Qg)
            OKg &= CONg
        if not OKg.any():
            return Qr[0], score
        order = np.lexsort((np.where(OKg[0], Dg[0], np.inf), ~OKg[0]))[:K]
        n = order.size
        for dst, src in (
            (Q, Qg),
            (V, Vr),
            (OK, OKg),
            (FK, FKg),
            (LIM, LIMg),
            (CON, CONg),
            (D, Dg),
            (PL, PLg),
        ):
            dst[i, :n] = src[0, order]
        if n < K:  # fewer refined slots than the row holds: the rest stay invalid
            OK[i, n:] = False
            V[i, n:] = False
        return None

    for r in range(rows.size):
        lam = np.unique(predicted[r])
        out = attempt(r, (lam[:, None] + offsets[None, :]).ravel())
        if out is None:
            continue
        cand, score = pool[r], scores[r]
        h = span / max(ns - 1, 1)  # the first pass's spacing
        dense = ns
        while out is not None and dense < DENSE_MAX:
            # a uniformly denser grid, offset from the previous ones by half their spacing
            dense = min(DENSE_FACTOR * dense, DENSE_MAX)
            h = span / dense
            out = attempt(r, glo + (np.arange(dense) + 0.5) * h)
            if out is not None and out[1].size and out[1].min() < score.min():
                cand, score = out
        if out is None:
            continue
        best = float(score.min()) if score.size else np.inf
        for _ in range(LEVELS):
            centres = _centres(cand[:, j], score, 0.5 * h)
            if not centres:
                break
            per = max(m // len(centres), 3) | 1  # odd: each centre is sampled itself
            out = attempt(r, np.concatenate([np.linspace(c - h, c + h, per) for c in centres]))
            if out is None:
                break
            cand, score = out
            h = 2.0 * h / (per - 1)
            now = float(score.min())
            if not now < STALL * best:
                break
            best = now


def _spread(chain: Chain, lo: Array, hi: Array) -> Array:
    """:data:`SPREAD` fixed configurations spread over the limits (Newton starts)."""
    rng = np.random.default_rng(7)
    a = np.where(np.isfinite(lo), lo, -math.pi)
    b = np.where(np.isfinite(hi), hi, math.pi)
    return a + (b - a) * rng.random((SPREAD, chain.dof))
