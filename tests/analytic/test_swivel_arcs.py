"""The SRS family's joint-limit arcs against a dense swivel sweep checked by FK.

A 7R SRS arm's solutions of one target form circles in the swivel angle. The family samples
the swivel at a few angles and at one angle inside every arc between consecutive swivels where
some joint of some branch reaches a limit (``_srs.arc_midpoints``, closed form). Here the
crossings are found independently: the swivel swept densely, every branch's joints at every
sample (their FK checked against the target by a plain product of the chain's joint
transforms), a crossing wherever the number of branches holding a joint within its limits
changes between neighbouring samples. Every arc of the sweep (between consecutive crossings)
must hold one of the family's midpoints; a sweep arc without one is an in-limit set of
solutions the family can miss.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import ikstack.robots as robots
from ikstack.ik.analytic import AnalyticIK, _srs

SWEEP = 20000  # swivel samples over a turn (spacing 3e-4 rad)
FK_EVERY = 40  # FK-check every this many samples' candidates
TARGETS = 20


def plain_fk(chain, q: np.ndarray) -> np.ndarray:
    """(M, 4, 4) tool poses of ``q`` (M, dof): each joint's fixed origin, then its rotation
    about the joint axis (Rodrigues), then the tool transform; no ikstack kinematics."""
    T = np.broadcast_to(np.eye(4), (q.shape[0], 4, 4)).copy()
    for i in range(chain.dof):
        k = chain.axes[i] / np.linalg.norm(chain.axes[i])
        K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
        s, c = np.sin(q[:, i])[:, None, None], np.cos(q[:, i])[:, None, None]
        J = np.broadcast_to(np.eye(4), (q.shape[0], 4, 4)).copy()
        J[:, :3, :3] = np.eye(3) + s * K + (1.0 - c) * (K @ K)
        T = T @ chain.origins[i] @ J
    return T @ chain.T_last_tip


def within(q: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Whether each revolute joint value, at any whole-turn shift, lies within ``[lo, hi]``."""
    shift = np.ceil((lo - q) / (2.0 * math.pi))  # the turns that bring q to lo or above
    return q + 2.0 * math.pi * shift <= hi


def sweep_arcs(T: np.ndarray, fam, chain) -> list[tuple[float, float]]:
    """Arcs ``(start, end)`` (end past start, wrapping over +-pi) between consecutive limit
    crossings of the dense sweep, each at least 3 samples wide."""
    psis = -math.pi + 2.0 * math.pi * np.arange(SWEEP) / SWEEP
    Rt = tuple(float(x) for x in T[:3, :3].ravel())
    pt = tuple(float(x) for x in T[:3, 3])
    seed = np.zeros(7)
    Q = np.empty((8 * SWEEP, 7))
    V = np.empty(8 * SWEEP, dtype=np.bool_)
    _srs.srs_slots(Rt, pt, fam.data, psis, 0, SWEEP, seed, Q, V)
    Q, V = Q.reshape(SWEEP, 8, 7), V.reshape(SWEEP, 8)
    assert V.any(axis=1).all()  # a target inside the reach: branches at every swivel
    # the sweep's candidates are solutions of the target (the family's code produced them)
    check = Q[::FK_EVERY][V[::FK_EVERY]]
    err = plain_fk(chain, check) - T
    assert np.abs(err).max() < 1e-9, np.abs(err).max()
    inside = within(Q, fam.lo, fam.hi) & V[..., None]  # (SWEEP, 8, 7)
    count = inside.sum(axis=1)  # per sample and joint: branches holding it within its limits
    change = np.flatnonzero((count != np.roll(count, -1, axis=0)).any(axis=1))
    edges = psis[change] + math.pi / SWEEP  # between sample i and i + 1
    arcs = []
    for a, b in zip(edges, np.roll(edges, -1), strict=True):
        end = b if b > a else b + 2.0 * math.pi
        if end - a > 3 * 2.0 * math.pi / SWEEP:
            arcs.append((float(a), float(end)))
    return arcs


@pytest.mark.parametrize("name", ["iiwa14", "marvin_left"])
def test_swivel_limit_arcs_put_a_midpoint_in_every_arc_of_a_dense_sweep(name):
    chain = robots.load(name)
    fam = AnalyticIK(chain, num_samples=1).family
    rng = np.random.default_rng(21)
    lo, hi = fam.lo, fam.hi
    q = rng.uniform(lo, hi, (TARGETS, 7))
    q = q[chain.constraints_satisfied(q)]
    T = chain.fk(q)
    out = np.empty(_srs.MAX_ARCS)
    bounds = np.empty(_srs.MAX_ARCS)  # the crossings' scratch
    arcs_seen = 0
    missed = []
    for i in range(len(T)):
        Rt = tuple(float(x) for x in T[i, :3, :3].ravel())
        pt = tuple(float(x) for x in T[i, :3, 3])
        n = _srs.arc_midpoints(Rt, pt, fam.data, bounds, out, 0)
        mids = out[:n].copy()
        for a, b in sweep_arcs(T[i], fam, chain):
            arcs_seen += 1
            # a midpoint in (a, b), whole turns apart allowed
            rel = (mids - a) % (2.0 * math.pi)
            if not np.any(rel < b - a):
                missed.append((i, round(a, 4), round(b, 4)))
    assert arcs_seen >= 4 * len(T)  # the sweep found limit crossings to check
    assert not missed, missed[:10]
