"""Adaptive lock refinement of the locked-joint 7R family, for targets no grid slot certifies.

A 7R arm solved by locking an end joint samples the locked angle on a fixed grid. Where the
feasible set of the locked angle is a narrow interval (the elbow nearly straight: with joint 1
locked, an iiwa-type arm reaches the wrist centre only for locked angles within about
``|q4|`` of one value), or where the joint limits leave only a sliver of it, every grid sample
can miss it. For such a target two refinements run, both bounded and only on failed targets:

1. Newton prediction: damped Gauss-Newton on the whole chain from the seed and from the two
   best candidates (:data:`NEWTON_ITERATIONS` steps, all failed targets at once) predicts the
   locked angle; the family is solved at that angle and at offsets of 1e-8 to 1e-2 rad around
   it. Only the lock value comes from the iteration: every joint vector still comes from the
   family's geometric subproblems, and passes the same gate as the first pass.
2. Zoom: the locked angles of the best candidates (smallest FK error plus limit violation) are
   centres of a denser grid, solved and gated, each level about 8 times finer, at most
   :data:`LEVELS` levels, stopping early when the best score stalls (nothing to converge to).

Failed targets are refined one at a time (the Newton step is one vectorised pass), so small
batches never enter numba's thread pool.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ikstack.ik.analytic.families import LockedJoint
from ikstack.ik.result import fk_errors
from ikstack.kinematics import fk_jacobian
from ikstack.kinematics.forward import PARALLEL_THRESHOLD as FK_PARALLEL_THRESHOLD
from ikstack.model import Chain
from ikstack.spatial import se3

Array = NDArray[np.float64]

#: most zoom levels after the first pass (each one family pass and one gate per failing
#: target); a level shrinks the spacing about 8 times, so 10 levels resolve an interval 1e-9
#: of the first spacing wide
LEVELS = 10
#: centres per level (the best distinct locked angles)
CENTRES = 2
#: locked-angle samples per level (at least; the family's own grid size when larger)
MIN_SAMPLES = 32
#: refinement stops when a level's best score is not below this share of the previous one
#: (no feasible interval to converge to: an unreachable target costs a few levels)
STALL = 0.5
#: relative weight of the rotation error [rad] and the limit violation [rad] against the
#: position error [m] in the score of a candidate
ROT_WEIGHT = 0.1
LIMIT_WEIGHT = 0.1
#: damped Gauss-Newton steps predicting the locked angle, their damping and step bound [rad]
NEWTON_ITERATIONS = 24
NEWTON_DAMPING = 1e-4
NEWTON_MAX_STEP = 0.5
#: Newton starts spread over the limits (besides the seed and the best candidates)
SPREAD = 6
#: denser uniform grids for a failed target: each this many times the previous, up to
#: DENSE_MAX samples of the locked joint
DENSE_FACTOR = 4
DENSE_MAX = 512
#: candidates scored per FK call (below the FK kernels' parallel threshold)
SCORE_CHUNK = FK_PARALLEL_THRESHOLD - 1
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


def _score(chain: Chain, Q: Array, T: Array, lo: Array, hi: Array) -> Array:
    # in chunks below the FK kernels' parallel threshold: one target stays on this thread
    parts = [fk_errors(chain, Q[k:k + SCORE_CHUNK], T[None])
             for k in range(0, Q.shape[0], SCORE_CHUNK)]
    pe = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0)
    re = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0)
    s = pe + ROT_WEIGHT * re + LIMIT_WEIGHT * _violation(chain, Q, lo, hi)
    return np.where(np.isfinite(s), s, np.inf)


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
    targets ``T`` (M, 4, 4), each step clipped to :data:`NEWTON_MAX_STEP` and into the limits."""
    m, k, dof = starts.shape
    q = starts.reshape(m * k, dof).copy()
    Tt = np.repeat(T, k, axis=0)
    lo_c = np.where(np.isfinite(lo), lo, -np.inf)
    hi_c = np.where(np.isfinite(hi), hi, np.inf)
    eye = NEWTON_DAMPING ** 2 * np.eye(6)
    for _ in range(NEWTON_ITERATIONS):
        Tq, J = fk_jacobian(chain, q)
        e = se3.pose_error(Tt, Tq)
        if np.abs(e).max() < 1e-12:
            break
        JT = np.swapaxes(J, 1, 2)
        y = np.linalg.solve(J @ JT + eye, e[..., None])[..., 0]
        dq = np.einsum("nji,nj->ni", J, y)
        q = np.clip(q + np.clip(dq, -NEWTON_MAX_STEP, NEWTON_MAX_STEP), lo_c, hi_c)
    return q.reshape(m, k, dof)


def refine_locks(chain: Chain, family: Any, T: Array, S: Array, lo: Array, hi: Array,
                 arrays: tuple[Any, ...], gate: Callable[..., None]) -> None:
    """Re-solve, in place, the rows of ``arrays = (Q, V, OK, FK, LIM, CON, D, PL)`` where no
    slot is ``OK`` by adaptive lock refinement (a :class:`LockedJoint` family only).

    ``gate(Q, V, S, T, OK, FK, LIM, D, PL)`` is the first pass's gate (every slot gated) on
    (1, K) arrays; the chain's coupled-joint constraints are applied after it. A row is
    overwritten only when refinement certifies a slot: its valid slots first (nearest the
    seed first), then the rest, up to the row's ``K`` slots.
    """
    if not isinstance(family, LockedJoint):
        return
    Q, V, OK, FK, LIM, CON, D, PL = arrays
    rows = np.flatnonzero(~OK.any(axis=1))
    if rows.size == 0:
        return
    j = family.lock_index
    glo, ghi, bounded = family.range
    span = ghi - glo
    ns = int(family.grid.size)
    m = max(ns, MIN_SAMPLES)
    K = Q.shape[1]
    Tr, Sr = np.ascontiguousarray(T[rows]), np.ascontiguousarray(S[rows])
    pool, _ = family.solve(Tr, Sr)  # the first pass's raw candidates (the gate moved them)
    scores = [_score(chain, pool[r], Tr[r], lo, hi) for r in range(rows.size)]
    spread = _spread(chain, lo, hi)
    starts = np.empty((rows.size, 1 + CENTRES + spread.shape[0], chain.dof))
    for r in range(rows.size):
        top = np.argsort(scores[r], kind="stable")[:CENTRES]
        starts[r, 0] = Sr[r]
        starts[r, 1:1 + CENTRES] = pool[r, top] if top.size == CENTRES else Sr[r]
        starts[r, 1 + CENTRES:] = spread
    predicted = newton_locks(chain, Tr, starts, lo, hi)[:, :, j]
    offsets = np.asarray(NEWTON_OFFSETS)

    def attempt(r: int, grid: NDArray[np.floating[Any]]) -> tuple[Array, Array] | None:
        """Solve and gate row ``r`` at ``grid``; on a certified slot write it back (and None)."""
        i = rows[r]
        vals = np.asarray(np.clip(grid, glo, ghi) if bounded else grid, dtype=np.float64)
        Qr, Vr = family.solve(Tr[r:r + 1], Sr[r:r + 1], vals)
        score = _score(chain, Qr[0], Tr[r], lo, hi)
        Qg = np.ascontiguousarray(Qr.copy())
        k = Qg.shape[1]
        OKg = np.zeros((1, k), dtype=np.bool_)
        FKg = np.zeros((1, k), dtype=np.bool_)
        LIMg = np.zeros((1, k), dtype=np.bool_)
        Dg = np.empty((1, k))
        PLg = np.zeros((1, k), dtype=np.bool_)
        gate(Qg, Vr, Sr[r:r + 1], Tr[r:r + 1], OKg, FKg, LIMg, Dg, PLg)
        CONg = np.ones((1, k), dtype=np.bool_)
        if chain.constraints:
            CONg = chain.constraints_satisfied(Qg)
            OKg &= CONg
        if not OKg.any():
            return Qr[0], score
        order = np.lexsort((np.where(OKg[0], Dg[0], np.inf), ~OKg[0]))[:K]
        n = order.size
        for dst, src in ((Q, Qg), (V, Vr), (OK, OKg), (FK, FKg), (LIM, LIMg), (CON, CONg),
                         (D, Dg), (PL, PLg)):
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
