"""Numerical IK batches: answers independent of threads, scheduling and neighbours; coupled
constraints enforced inside the compiled search."""

from __future__ import annotations

import numba
import numpy as np

import ikstack.robots as robots
from ikstack.ik import IKStatus
from ikstack.ik.numerical import LevenbergMarquardt, LimitMode
from ikstack.kinematics import fk


def _targets(chain, n, seed):
    rng = np.random.default_rng(seed)
    q = chain.random_q(rng, 4 * n)
    if chain.constraints:
        q = q[chain.constraints_satisfied(q)]
    return fk(chain, q[:n])


def test_batch_answers_do_not_depend_on_the_thread_count():
    chain = robots.load("panda")
    T = _targets(chain, 300, seed=21)  # parallel path, with restarts on some targets
    solver = LevenbergMarquardt(chain)
    many = solver.solve(T)
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        one = solver.solve(T)
    finally:
        numba.set_num_threads(threads)
    np.testing.assert_array_equal(many.q, one.q)
    np.testing.assert_array_equal(many.iterations, one.iterations)
    np.testing.assert_array_equal(many.restarts, one.restarts)
    assert many.restarts.max() > 0


def test_each_target_of_a_batch_gets_the_answer_it_gets_alone():
    # panda's narrow limits make the searches hold joints at bounds: scratch state shared by
    # the targets of a batch must not leak from one target into the next
    chain = robots.load("panda")
    T = _targets(chain, 40, seed=22)
    solver = LevenbergMarquardt(chain)
    batch = solver.solve(T)
    for i in range(T.shape[0]):
        alone = solver.solve(T[i])
        np.testing.assert_array_equal(alone.q[0], batch.q[i])
        assert alone.iterations[0] == batch.iterations[i]


def _violating_in_limit_configuration(chain):
    rng = np.random.default_rng(23)
    km = chain.kinematic_margin  # inside the margin, so that only the coupling is violated
    q = np.clip(chain.random_q(rng, 2000), chain.lower + km, chain.upper - km)
    return q[~chain.constraints_satisfied(q)][0]


def test_an_answer_violating_the_coupling_is_a_failed_search_never_a_success():
    chain = robots.load("marvin_left")
    q_bad = _violating_in_limit_configuration(chain)
    T = fk(chain, q_bad)
    # the seed itself meets the pose: without restarts its search is all there is
    res = LevenbergMarquardt(chain, max_restarts=0).solve(T, q0=q_bad)
    assert not res.success[0]
    assert res.status[0] == IKStatus.CONSTRAINT
    assert np.all(np.isfinite(res.q)) and chain.within_limits(res.q).all()
    # with restarts the compiled loop looks for another answer, one that satisfies it
    res = LevenbergMarquardt(chain, max_restarts=100).solve(T, q0=q_bad)
    assert res.success[0] and res.restarts[0] >= 1
    assert chain.constraints_satisfied(res.q).all()
    batch = LevenbergMarquardt(chain, max_restarts=100).solve(
        np.repeat(T[None], 70, axis=0), q0=q_bad
    )
    np.testing.assert_array_equal(batch.q[0], res.q[0])
    assert batch.success.all()


def test_a_search_that_never_records_an_iterate_answers_the_seed_projected_onto_the_limits():
    # the seed already reaches the target but lies outside the limits: with limits ignored and
    # no restarts the search ends on its first evaluation (JOINT_LIMITS), before any best
    # iterate exists; the answer must be the seed clipped to the limits, never stale memory
    chain = robots.load("panda")
    seed = chain.middle().copy()
    seed[3] = chain.upper[3] + 0.3  # joint 4 beyond its upper limit (no full turn brings it in)
    T = fk(chain, seed[None])
    solver = LevenbergMarquardt(chain, limits=LimitMode.IGNORE, max_restarts=0)
    for batch in (1, 3):
        res = solver.solve(np.repeat(T, batch, axis=0), q0=seed)
        assert not res.success.any()
        assert (res.status == IKStatus.JOINT_LIMITS).all()
        np.testing.assert_array_equal(
            res.q, np.repeat(np.clip(seed, chain.lower, chain.upper)[None], batch, axis=0)
        )
