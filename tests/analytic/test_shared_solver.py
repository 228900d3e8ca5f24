"""One solver shared by threads: immutable once built, a call's options are its arguments, and
concurrent ``solve`` / ``solve_path`` calls give exactly the serial answers."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from ikstack import robots
from ikstack.errors import InputError
from ikstack.ik.analytic import AnalyticIK
from ikstack.ik.numerical import LevenbergMarquardt


def _same(a, b) -> None:
    for f in ("q", "success", "status", "position_error", "rotation_error"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)


def _race(jobs: list, rounds: int = 3) -> list:
    """Run every job ``rounds`` times on its own thread, all released together; the results."""
    out: list = [[] for _ in jobs]
    errors: list = []
    start = threading.Barrier(len(jobs))

    def work(k: int) -> None:
        try:
            start.wait()
            for _ in range(rounds):
                out[k].append(jobs[k]())
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return out


def _srs_case():
    """A 7R arm whose batch solves take the general selection (bound read per call), a path
    whose first 40 frames are out of reach (frames up to the first success are solved without
    the bound: a long window), and seeds far enough that the bound decides some rows."""
    chain = robots.load("iiwa14")
    rng = np.random.default_rng(7)
    q = chain.random_q(rng, 24) * 0.8
    T = chain.fk(q)
    S = np.clip(q + rng.uniform(-0.5, 0.5, q.shape), chain.lower, chain.upper)
    t = np.linspace(0.0, 1.0, 12)[:, None]
    qp = np.clip(q[0] + 0.1 * np.sin(2 * np.pi * t + np.arange(7)), chain.lower, chain.upper)
    far = np.repeat(chain.fk(q[1])[None], 40, axis=0)
    far[:, :3, 3] += 5.0  # out of reach
    path = np.concatenate([far, chain.fk(qp)])
    return chain, T, S, path


def test_one_analytic_solver_shared_by_threads_gives_the_serial_answers():
    chain, T, S, path = _srs_case()
    ik = AnalyticIK(chain, num_samples=4, max_joint_step=0.3)
    want_batch = ik.solve(T, S)
    want_path = ik.solve_path(path)
    assert 0 < want_batch.success.sum() < len(T)  # the bound decides some rows
    assert not want_path.success[:40].any() and want_path.success[40:].all()
    jobs = [
        lambda: ("b", ik.solve(T, S)),
        lambda: ("p", ik.solve_path(path)),
        lambda: ("b", ik.solve(T, S)),
        lambda: ("p", ik.solve_path(path)),
    ]
    for results in _race(jobs):
        for kind, r in results:
            _same(r, want_batch if kind == "b" else want_path)


def test_one_general_solver_shared_by_threads_gives_the_serial_answers():
    chain = robots.load("rizon4")
    rng = np.random.default_rng(8)
    q = np.clip(chain.middle() + rng.uniform(-0.6, 0.6, (3, 7)), chain.lower, chain.upper)
    T = chain.fk(q)
    t = np.linspace(0.0, 1.0, 4)[:, None]
    qp = np.clip(q[0] + 0.1 * np.sin(2 * np.pi * t + np.arange(7)), chain.lower, chain.upper)
    path = chain.fk(qp)
    ik = AnalyticIK(chain, mode="general", num_locks=4)  # solve: "fixed"; paths: "near_q0"
    want_batch = ik.solve(T, q)
    want_path = ik.solve_path(path, qp[0])
    jobs = [lambda: ("b", ik.solve(T, q)), lambda: ("p", ik.solve_path(path, qp[0]))]
    for results in _race(jobs, rounds=2):
        for kind, r in results:
            _same(r, want_batch if kind == "b" else want_path)
    # the call's search is an argument: the same as a solver built with it, solver unchanged
    K, search = ik.K, ik.family.search
    fixed = AnalyticIK(chain, mode="general", num_locks=4, search="fixed")
    _same(ik.solve_path(path, qp[0], search="fixed"), fixed.solve_path(path, qp[0]))
    assert (ik.K, ik.family.search) == (K, search)
    with pytest.raises(InputError):
        ik.solve_path(path, qp[0], search="everywhere")


def test_one_numerical_solver_shared_by_threads_gives_the_serial_answers():
    chain = robots.load("panda")
    rng = np.random.default_rng(9)
    q = chain.random_q(rng, 4 * 16).reshape(4, 16, 7)
    lm = LevenbergMarquardt(chain, rng=3)
    want = [lm.solve(chain.fk(q[k])) for k in range(4)]
    got = _race([lambda k=k: lm.solve(chain.fk(q[k])) for k in range(4)])
    for k in range(4):
        for r in got[k]:
            _same(r, want[k])


def test_path_step_bound_is_an_argument():
    chain, _, _, path = _srs_case()
    ik = AnalyticIK(chain, num_samples=4, max_joint_step=0.3)
    for step in (0.05, None):
        _same(
            ik.solve_path(path, max_joint_step=step),
            AnalyticIK(chain, num_samples=4, max_joint_step=step).solve_path(path),
        )
    assert ik.max_joint_step == 0.3
    _same(
        ik.solve_path(path), AnalyticIK(chain, num_samples=4, max_joint_step=0.3).solve_path(path)
    )
    with pytest.raises(InputError, match="max_joint_step"):
        ik.solve_path(path, max_joint_step=-1.0)
    with pytest.raises(InputError, match="mode='general'"):
        ik.solve_path(path, search="fixed")


@pytest.mark.parametrize(
    "build",
    [
        lambda c: AnalyticIK(c),
        lambda c: LevenbergMarquardt(c),
    ],
)
def test_solvers_are_immutable_once_built(build):
    solver = build(robots.load("ur5"))
    with pytest.raises(AttributeError, match="immutable"):
        solver.chain = robots.load("panda")
    with pytest.raises(AttributeError, match="immutable"):
        solver.max_joint_step = 0.1
    with pytest.raises(AttributeError, match="immutable"):
        del solver.chain
