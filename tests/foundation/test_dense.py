"""The compiled dense kernels of ``spatial/_dense.py`` (and the dense QP's use of the
factorisation) against NumPy and SciPy: the Cholesky factor and solve, the failure rule for a
singular, indefinite or NaN matrix, and the joint-step cap."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import cho_solve

from ikstack.diffik.active_set_qp import NOT_CONVEX, SOLVED, solve_dense_qp
from ikstack.spatial._dense import cap_step_inplace, cholesky_inplace, cholesky_solve_inplace

SIZES = range(1, 9)


def _spd(rng: np.random.Generator, n: int) -> np.ndarray:
    A = rng.normal(size=(n, n))
    return A @ A.T + 0.1 * np.eye(n)


def _buffer(M: np.ndarray, extra: int = 2) -> np.ndarray:
    """``M``'s lower triangle in the leading block of a larger buffer; NaN everywhere else
    (the strict upper triangle and past the block: nothing there may be read)."""
    n = M.shape[0]
    buf = np.full((n + extra, n + extra), np.nan)
    buf[:n, :n][np.tril_indices(n)] = M[np.tril_indices(n)]
    return buf


@pytest.mark.parametrize("n", SIZES)
def test_factor_and_solve_match_numpy_and_scipy_on_random_spd_matrices(n):
    rng = np.random.default_rng(n)
    for _ in range(5):
        M = _spd(rng, n)
        buf = _buffer(M)
        assert cholesky_inplace(buf, n)
        L = np.tril(buf[:n, :n])
        np.testing.assert_allclose(L, np.linalg.cholesky(M), rtol=1e-12, atol=1e-12)
        assert np.isnan(buf[:n, :n][np.triu_indices(n, 1)]).all()  # upper triangle untouched
        b = rng.normal(size=n)
        x = np.concatenate([b, [7.0, 8.0]])
        cholesky_solve_inplace(buf, n, x)
        ref = cho_solve((np.linalg.cholesky(M), True), b)
        np.testing.assert_allclose(x[:n], ref, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(x[n:], [7.0, 8.0])


@pytest.mark.parametrize(
    "M",
    [
        np.zeros((3, 3)),  # zero pivot at once
        np.array([[1.0, 2.0], [2.0, 1.0]]),  # indefinite: negative second pivot
        np.diag([2.0, -1.0, 3.0]),
        np.outer([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]),  # rank one: the second pivot is 0
        np.diag([1.0, 1e-320, 1.0]),  # a subnormal pivot: its root's inverse squared overflows
    ],
    ids=["zero", "indefinite", "negative-diagonal", "rank-one", "subnormal"],
)
def test_a_singular_or_indefinite_matrix_is_reported(M):
    assert not cholesky_inplace(_buffer(M), M.shape[0])
    assert np.linalg.eigvalsh(M).min() <= 1e-300  # the reference agrees it is not PD


@pytest.mark.parametrize("n", [1, 3, 8])
def test_a_nan_anywhere_in_the_lower_triangle_is_reported(n):
    rng = np.random.default_rng(10 + n)
    M = _spd(rng, n)
    for i, j in zip(*np.tril_indices(n), strict=True):
        bad = M.copy()
        bad[i, j] = bad[j, i] = np.nan
        assert not cholesky_inplace(_buffer(bad), n), (i, j)


def test_the_dense_qp_reports_a_nan_or_indefinite_hessian_as_not_convex():
    n = 3
    lo, hi = -np.ones(n), np.ones(n)
    G, h = np.zeros((0, n)), np.zeros(0)
    for P in (np.diag([1.0, np.nan, 1.0]), np.diag([1.0, -1.0, 1.0]), np.diag([1.0, 0.0, 1.0])):
        x = np.zeros(n)
        status, _ = solve_dense_qp(P, np.ones(n), lo, hi, G, h, x, 50)
        assert status == NOT_CONVEX
    # and a positive definite one is solved: the box-clipped unconstrained minimum here
    x = np.zeros(n)
    status, _ = solve_dense_qp(
        np.diag([1.0, 2.0, 4.0]), np.array([4.0, -1.0, 2.0]), lo, hi, G, h, x, 50
    )
    assert status == SOLVED
    np.testing.assert_allclose(x, [-1.0, 0.5, -0.5], atol=1e-12)


def _capped(dq: np.ndarray, max_step: float) -> np.ndarray:
    """The rule in plain NumPy: one common factor, applied only above the cap."""
    big = np.abs(dq).max(initial=0.0)
    return dq * (max_step / big) if big > max_step else dq.copy()


@pytest.mark.parametrize("max_step", [1.0, 0.25, 1e-3])
def test_the_step_cap_scales_the_whole_step_to_the_largest_allowed_joint_move(max_step):
    rng = np.random.default_rng(3)
    for n in SIZES:
        for scale in (1e-4, 0.1, 1.0, 30.0):
            dq = rng.normal(scale=scale, size=n)
            buf = np.concatenate([dq, [5.0, -5.0]])  # past the leading n: left alone
            cap_step_inplace(buf, n, max_step)
            np.testing.assert_array_equal(buf[:n], _capped(dq, max_step))
            np.testing.assert_array_equal(buf[n:], [5.0, -5.0])
            assert np.abs(buf[:n]).max() <= max_step * (1 + 1e-15)


def test_a_step_at_the_cap_or_zero_is_left_as_it_is():
    dq = np.array([0.5, -1.0, 0.25])
    cap_step_inplace(dq, 3, 1.0)
    np.testing.assert_array_equal(dq, [0.5, -1.0, 0.25])
    z = np.zeros(4)
    cap_step_inplace(z, 4, 1.0)
    np.testing.assert_array_equal(z, np.zeros(4))
