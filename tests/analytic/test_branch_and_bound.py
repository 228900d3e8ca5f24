"""The selection loop's two strategies select the same slot, bit for bit.

A 6R family's nearest-solution kernel runs the selection loop with branch-and-bound (branches
expanded in order of a lower bound on their candidates' distances to the seed, stopping as soon
as the nearest open candidate that passes the FK gate beats every bound); every other path runs
it on the full enumeration (every candidate of the family kernel in a slot, then the lazy gate).
The answer must not depend on the strategy: the same joint values, the same FK errors and the
same code, to the last bit, for every target and seed, including tight limits, a step bound,
unreachable targets and exact ties (zero weights make many slots equally near; the lower slot
wins whichever strategy found it).
"""

from __future__ import annotations

import numpy as np
import pytest
from analytic_arms import puma560, random_arm

from ikstack.ik.analytic import AnalyticIK, _families6, _selection, _single_target
from ikstack.robots import load

ARMS = (
    "ur5",
    "puma560",
    "spherical_wrist",
    "spherical_two_parallel",
    "three_parallel",
    "spherical_shoulder",
    "three_parallel_reversed",
)
#: weights that leave exact ties between slots (zero on the joints that tell them apart)
TIE_WEIGHTS = (
    (1.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    (0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
    (1.0, 1.0, 0.0, 0.0, 0.0, 0.0),
    (0.0, 0.0, 0.0, 1.0, 1.0, 1.0),
)
N = 120  # targets per setting


def arm(name: str, rng: np.random.Generator):
    if name == "ur5":
        return load("ur5")
    if name == "puma560":
        return puma560()
    return random_arm(name, rng)


def problems(ik: AnalyticIK, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Targets: FK of configurations within and outside the limits, and unreachable ones (the
    position pushed out); seeds: random within the limits, a few on a candidate (distance 0)
    and at the midpoint of two candidates (near ties)."""
    chain = ik.chain
    lo, hi = chain.lower, chain.upper
    q = rng.uniform(lo - 0.5, hi + 0.5, (N, 6))
    T = chain.fk(q)
    T[: N // 10, :3, 3] *= 20.0  # out of reach
    S = rng.uniform(lo, hi, (N, 6))
    Q, V = enumerate_all(ik, T, S)
    for i in range(N // 10, N):
        good = np.flatnonzero(V[i])
        if len(good) >= 2 and i % 3 == 0:
            a, b = rng.choice(good, 2, replace=False)
            S[i] = 0.5 * (Q[i, a] + Q[i, b])  # near a tie
        elif len(good) and i % 3 == 1:
            S[i] = Q[i, good[0]]  # on a candidate
    return np.ascontiguousarray(T), np.clip(S, lo, hi)


def enumerate_all(ik: AnalyticIK, T: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, ...]:
    """Every candidate of the family kernel and its exact mask."""
    fam = ik.family
    n = len(T)
    Q = np.empty((n, _families6.K6, 6))
    V = np.empty((n, _families6.K6), dtype=np.bool_)
    _families6.batch6(fam.kernel, T, S, Q, V, False)
    return Q, V


def branch_and_bound(ik: AnalyticIK, T: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, ...]:
    n = len(T)
    q = np.full((n, 6), np.nan)
    perr, rerr = np.full(n, np.nan), np.full(n, np.nan)
    code = np.empty(n, dtype=np.int64)
    fl, il = ik._pack6
    _single_target.six_batch(S, T, fl, il, ik._kfam, (q, perr, rerr, code), False)
    return q, perr, rerr, code


def full_enumeration(ik: AnalyticIK, T: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, ...]:
    n = len(T)
    Q, V = enumerate_all(ik, T, S)
    q = np.full((n, 6), np.nan)
    ok = np.zeros(n, dtype=np.bool_)
    perr, rerr = np.full(n, np.nan), np.full(n, np.nan)
    code = np.empty(n, dtype=np.int64)
    fl, il = ik._pack
    _single_target.select_batch(Q, V, S, T, fl, il, None, (q, ok, perr, rerr, code), False)
    # select_batch leaves the errors of a row it does not decide: six_batch zeroes them
    perr[code != _single_target.DONE] = 0.0
    rerr[code != _single_target.DONE] = 0.0
    return q, perr, rerr, code


def exact_ties(ik: AnalyticIK, T: np.ndarray, S: np.ndarray) -> int:
    """Rows whose nearest valid slots (every gate passed) are two or more at the same
    distance."""
    Q, V = enumerate_all(ik, T, S)
    n, k = V.shape
    flags = tuple(np.zeros((n, k), dtype=np.bool_) for _ in range(3)) + (
        np.zeros((n, k)),
        np.zeros((n, k), dtype=np.bool_),
        np.zeros(n, dtype=np.int64),
    )
    _selection.finalize(Q, V, S, T, ik._chain_data, ik._select_data, False, 0, flags, False)
    OK, D = flags[0], flags[3]
    count = 0
    for i in range(n):
        d = D[i][OK[i]]
        count += int(len(d) >= 2 and np.sum(d == d.min()) >= 2)
    return count


def mismatches(a: tuple[np.ndarray, ...], b: tuple[np.ndarray, ...]) -> list[tuple[int, str]]:
    out = []
    for i in range(len(a[3])):
        for name, x, y in zip(("q", "perr", "rerr", "code"), a, b, strict=True):
            if not np.array_equal(x[i], y[i], equal_nan=True):
                out.append((i, name))
                break
    return out


@pytest.mark.parametrize("name", ARMS)
def test_branch_and_bound_selects_the_full_enumerations_slot_bit_for_bit(name):
    rng = np.random.default_rng(ARMS.index(name) + 101)
    chain = arm(name, rng)
    c = rng.uniform(-2.0, 2.0, 6)
    w = rng.uniform(0.8, 3.0, 6)
    tight = chain.with_limits(c - w, c + w)  # many candidates outside, some branches dead
    settings = [
        (chain, None, None),
        (tight, None, None),
        (chain, None, 0.8),  # the step bound
        *[(tight if i % 2 else chain, W, None) for i, W in enumerate(TIE_WEIGHTS)],
    ]
    bad = {}
    ties = 0
    decided = 0
    for j, (ch, W, step) in enumerate(settings):
        ik = AnalyticIK(ch, weights=W, max_joint_step=step)
        T, S = problems(ik, rng)
        bnb = branch_and_bound(ik, T, S)
        full = full_enumeration(ik, T, S)
        decided += int(np.sum(full[3] == _single_target.DONE))
        if W is not None:
            ties += exact_ties(ik, T, S)
        m = mismatches(bnb, full)
        if m:
            bad[j] = m[:5]
    assert not bad, bad
    assert ties >= 10, ties  # the tie-breaking was exercised
    assert decided >= len(settings) * N // 4, decided
