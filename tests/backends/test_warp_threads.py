"""One WarpAnalyticIK shared by several threads solving at once gives each thread the answers
it gets alone (and the CPU path's): no call sees another's scratch, and idle scratch stays
bounded."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from ikstack.ik.analytic import AnalyticIK
from ikstack.robots import load

pytest.importorskip("warp")
from ikstack.backends.warp._launch import IDLE_SETS  # noqa: E402
from ikstack.backends.warp.analytic import WarpAnalyticIK  # noqa: E402

THREADS = 4
ROUNDS = 3


def _batches(chain, n=48):
    rng = np.random.default_rng(11)
    out = []
    for _ in range(THREADS):
        T = chain.fk(chain.random_q(rng, n))
        T[:2, :3, 3] *= 50.0  # failures too
        out.append((T, chain.random_q(rng, n)))
    return out


def _run_threads(work):
    """Run ``work(t)`` for every thread index at once; re-raise the first failure."""
    start = threading.Barrier(THREADS)
    results: list = [None] * THREADS
    errors: list = []

    def body(t):
        try:
            start.wait()
            results[t] = [work(t) for _ in range(ROUNDS)]
        except BaseException as e:  # noqa: BLE001 - re-raised in the main thread
            errors.append(e)

    threads = [threading.Thread(target=body, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
    return results


def test_one_solver_shared_by_threads_solves_each_batch_as_alone():
    chain = load("ur5")
    # small chunks: every solve is several launches, so the threads' launches interleave
    w = WarpAnalyticIK(chain, chunk_size=8)
    cpu = AnalyticIK(chain)
    batches = _batches(chain)
    alone = [w.solve(T, S, return_all=True) for T, S in batches]
    for (T, S), r in zip(batches, alone, strict=True):
        c = cpu.solve(T, S, return_all=True)
        np.testing.assert_array_equal(r.status, c.status)
        np.testing.assert_allclose(r.q, c.q, rtol=0, atol=1e-9)
    one_set = w.buffer_bytes

    shared = _run_threads(lambda t: w.solve(*batches[t], return_all=True))
    for t in range(THREADS):
        for r in shared[t]:
            np.testing.assert_array_equal(r.status, alone[t].status)
            np.testing.assert_array_equal(r.q, alone[t].q)
            np.testing.assert_array_equal(r.position_error, alone[t].position_error)
            np.testing.assert_array_equal(r.q_all, alone[t].q_all)
            np.testing.assert_array_equal(r.valid_all, alone[t].valid_all)
    assert 0 < w.buffer_bytes <= IDLE_SETS * one_set


def test_paths_and_candidates_from_threads_equal_each_alone():
    chain = load("ur5")
    w = WarpAnalyticIK(chain, chunk_size=8)
    batches = _batches(chain, n=12)
    paths = [w.solve_path(T, S[0]) for T, S in batches]
    cands = [w.candidates(T, S) for T, S in batches]

    def work(t):
        T, S = batches[t]
        return w.solve_path(T, S[0]), w.candidates(T, S)

    for t, rounds in enumerate(_run_threads(work)):
        for p, (Q, V) in rounds:
            np.testing.assert_array_equal(p.q, paths[t].q)
            np.testing.assert_array_equal(p.status, paths[t].status)
            np.testing.assert_array_equal(Q, cands[t][0])
            np.testing.assert_array_equal(V, cands[t][1])
