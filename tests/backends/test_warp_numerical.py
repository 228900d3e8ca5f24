"""Warp numerical IK on the CPU is the CPU path's Levenberg-Marquardt: the same successes,
statuses, iteration and restart counts target by target (restarts drawn from the same
splitmix64 stream, the task-space step of redundant chains, coupled-joint constraints checked
inside the search), certified successes, determinism, failure statuses."""

from __future__ import annotations

import numpy as np
import pytest

from ikstack.errors import IKStackDeprecationWarning, InputError
from ikstack.ik import IKStatus, certify
from ikstack.ik.numerical import LevenbergMarquardt
from ikstack.model.constraints import LinearJointConstraint
from ikstack.robots import load

pytest.importorskip("warp")
from ikstack.backends.warp import numerical as wn  # noqa: E402


def sampled_targets(name, n, seed=3):
    chain = load(name)
    rng = np.random.default_rng(seed)
    Q = chain.random_q(rng, 4 * n)
    Q = Q[chain.constraints_satisfied(Q)][:n]
    return chain, chain.fk(Q)


@pytest.mark.parametrize("name", ["panda", "iiwa14", "ur5", "marvin_left"])
def test_solves_fk_sampled_targets_and_every_success_is_certified(name):
    chain, T = sampled_targets(name, 120)
    res = wn.solve(chain, T, position_tolerance=1e-6, rotation_tolerance=1e-6)
    assert res.success.mean() >= 0.95 and res.method == "warp:numerical:lm"
    ok, _, _ = certify(chain, res.q, T, 1e-6, 1e-6)
    assert np.array_equal(ok, res.success)
    assert np.all(np.isfinite(res.q)) and np.all(chain.within_limits(res.q))


def _same_as_cpu(chain, T, opts):
    rc = LevenbergMarquardt(chain, **opts).solve(T)
    rw = wn.WarpLevenbergMarquardt(chain, **opts).solve(T)
    assert rc.restarts.sum() > 0
    np.testing.assert_array_equal(rw.success, rc.success)
    np.testing.assert_array_equal(rw.status, rc.status)
    np.testing.assert_array_equal(rw.iterations, rc.iterations)
    np.testing.assert_array_equal(rw.restarts, rc.restarts)
    # the same operations in the same order: converged answers agree far inside the tolerance
    # (bit for bit with the usual compilers)
    assert np.abs(rw.q - rc.q)[rc.success].max() <= 1e-9
    return rc


@pytest.mark.parametrize(
    "name,opts",
    [
        ("panda", {"max_iterations": 8, "max_restarts": 20}),  # restarts on most targets
        ("ur5", {"max_iterations": 8, "max_restarts": 20, "limits": 1}),  # clamped steps
        ("iiwa14", {"damping": "sugihara", "limits": 2, "max_iterations": 10}),  # no limits
        ("ur5", {"mask": "position", "max_iterations": 10}),  # 3 rows, 6 joints: task-space step
    ],
)
def test_matches_the_cpu_path_target_by_target(name, opts):
    chain, T = sampled_targets(name, 120, seed=5)
    _same_as_cpu(chain, T, opts)


def test_marvin_coupled_joints_checked_in_the_search_as_on_the_cpu_path():
    chain = load("marvin_left")
    rng = np.random.default_rng(5)
    Q = chain.random_q(rng, 4000)
    Q = Q[chain.constraints_satisfied(Q)]
    # targets near the J6/J7 diamond's edge, where searches converge onto violating answers
    edge = np.abs(Q[:, 6]) + 1.025 * np.abs(Q[:, 5]) > np.radians(100)
    T = chain.fk(Q[edge][:120])
    rc = _same_as_cpu(chain, T, {"max_iterations": 8, "max_restarts": 3})
    assert np.any(rc.status == IKStatus.CONSTRAINT)


def test_linear_joint_constraint_checked_in_the_search_as_on_the_cpu_path():
    A = np.zeros((1, 7))
    A[0, 1], A[0, 3] = 1.0, -1.0  # q2 - q4 <= 1.5
    chain = load("panda").with_constraints([LinearJointConstraint(A, np.array([1.5]))])
    rng = np.random.default_rng(5)
    Q = chain.random_q(rng, 480)
    T = chain.fk(Q[chain.constraints_satisfied(Q)][:120])
    rc = _same_as_cpu(chain, T, {"max_iterations": 8, "max_restarts": 3})
    assert np.any(rc.status == IKStatus.CONSTRAINT)
    assert np.all(chain.constraints_satisfied(rc.q[rc.success]))


def test_same_seed_gives_identical_results():
    chain, T = sampled_targets("panda", 40)
    a = wn.solve(chain, T, rng=7, max_iterations=8)
    b = wn.solve(chain, T, rng=7, max_iterations=8)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.iterations, b.iterations)


def test_unreachable_target_fails_with_the_cpu_status_and_a_finite_in_limit_q():
    chain = load("ur5")
    T = chain.fk(chain.middle())
    T[0, 3] += 5.0  # far out of reach
    res = wn.solve(chain, T, max_restarts=2, max_iterations=30)
    cpu = LevenbergMarquardt(chain, max_restarts=2, max_iterations=30).solve(T)
    assert not res.success[0] and res.status[0] == cpu.status[0] != IKStatus.SUCCESS
    assert np.all(np.isfinite(res.q)) and chain.within_limits(res.q[0])


def test_time_budget_is_refused_not_ignored():
    with pytest.raises(InputError, match="time_budget"):
        wn.WarpLevenbergMarquardt(load("ur5"), time_budget=0.1)


def test_empty_batch_and_single_target():
    res = wn.solve(load("panda"), np.zeros((0, 4, 4)))
    assert len(res) == 0 and res.q.shape == (0, 7)
    chain = load("ur5")
    one = wn.solve(chain, chain.fk(chain.middle() + 0.1))
    assert one.q.shape == (1, 6) and one.success[0]


def test_the_helper_takes_q0_and_rng_and_their_old_names_warn():
    chain, T = sampled_targets("ur5", 6)
    guess = chain.middle() + 0.1
    new = wn.solve(chain, T, q0=guess, rng=3, max_iterations=8)
    with pytest.warns(IKStackDeprecationWarning) as got:
        old = wn.solve(chain, T, seed=guess, rng_seed=3, max_iterations=8)
    assert sorted(str(w.message).split(" is ")[0] for w in got) == [
        "ikstack.backends.warp.numerical.solve(rng_seed=...)",
        "ikstack.backends.warp.numerical.solve(seed=...)",
    ]
    assert np.array_equal(new.q, old.q) and np.array_equal(new.status, old.status)
    with pytest.raises(InputError, match="both 'seed' and 'q0'"):
        wn.solve(chain, T, q0=guess, seed=guess)


def test_rint_rounds_ties_to_even_as_numpy_round_does():
    """The generated search's turn wrapping reads ``np.round`` on the CPU and ``wp.rint`` on
    the device: both round a tie to the even integer (checked against Python's ``round``)."""
    import warp as wp
    from numba import njit

    xs = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.49, -3.51, 1e6 + 0.5])

    @wp.kernel
    def rint_all(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
        k = wp.tid()
        y[k] = wp.rint(x[k])

    x = wp.array(xs, dtype=wp.float64, device="cpu")
    y = wp.zeros(len(xs), dtype=wp.float64, device="cpu")
    wp.launch(rint_all, dim=len(xs), inputs=[x, y], device="cpu")
    cpu = njit(lambda v: np.round(v))
    want = [float(round(v)) for v in xs]  # Python's round: ties to even
    assert y.numpy().tolist() == want
    assert [cpu(v) for v in xs] == want


def _splitmix64_reference(state: int) -> tuple[int, float]:
    """splitmix64 from its definition, in Python integers masked to 64 bits."""
    mask = (1 << 64) - 1
    state = (state + 0x9E3779B97F4A7C15) & mask
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    z ^= z >> 31
    return state, (z >> 11) / float(1 << 53)


def test_restart_draws_are_splitmix64_on_both_devices():
    """The restarts' stream (written once, generated for Warp) against a plain
    re-implementation: seed 0's first output is splitmix64's published 0xE220A8397B1DCDAF."""
    import warp as wp
    from numba import njit

    from ikstack.backends.warp._gen_splitmix import uniform as wp_uniform
    from ikstack.ik.numerical._splitmix import uniform

    assert _splitmix64_reference(0)[1] == (0xE220A8397B1DCDAF >> 11) / float(1 << 53)
    seeds = [0, 1, 12345, 2**63 + 7, 2**64 - 1]
    want = []
    for s in seeds:
        for _ in range(3):
            s, u = _splitmix64_reference(s)
            want.append(u)

    @njit
    def draw_cpu(seed, out):  # compiled: numba's uint64 state, as in the search
        for k in range(seed.shape[0]):
            st = seed[k]
            for j in range(3):
                st, u = uniform(st)
                out[k, j] = u

    cpu = np.zeros((len(seeds), 3))
    draw_cpu(np.array(seeds, dtype=np.uint64), cpu)

    @wp.kernel
    def draw(seed: wp.array(dtype=wp.uint64), out: wp.array2d(dtype=wp.float64)):
        k = wp.tid()
        st = seed[k]
        for j in range(3):
            st, u = wp_uniform(st)
            out[k, j] = u

    seed = wp.array(np.array(seeds, dtype=np.uint64), dtype=wp.uint64, device="cpu")
    out = wp.zeros((len(seeds), 3), dtype=wp.float64, device="cpu")
    wp.launch(draw, dim=len(seeds), inputs=[seed, out], device="cpu")
    assert cpu.ravel().tolist() == want
    assert out.numpy().ravel().tolist() == want
