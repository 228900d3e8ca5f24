"""Subproblems 1-6 on random problems with known answers, and least-squares cases."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ikstack.errors import InputError
from ikstack.ik.analytic import subproblems as sp

N = 300


def rot(k: np.ndarray, t: np.ndarray) -> np.ndarray:
    return Rotation.from_rotvec(k * np.asarray(t)[..., None]).as_matrix()


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def angdiff(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(np.angle(np.exp(1j * (a - b))))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(7)


def mv(R: np.ndarray, p: np.ndarray) -> np.ndarray:
    return np.einsum("nij,nj->ni", R, p)


def test_sp1_recovers_known_angle_exactly(rng):
    k, p = unit(rng.normal(size=(N, 3))), rng.normal(size=(N, 3))
    t = rng.uniform(-np.pi, np.pi, N)
    r = sp.sp1(p, mv(rot(k, t), p), k)
    assert not r.is_ls.any()
    assert angdiff(r.theta[0][:, 0], t).max() < 1e-10


def test_sp1_flags_least_squares_and_minimises(rng):
    k, p1, p2 = unit(rng.normal(size=(N, 3))), rng.normal(size=(N, 3)), rng.normal(size=(N, 3))
    r = sp.sp1(p1, p2, k)
    assert r.is_ls.all()
    t = r.theta[0][:, 0]
    best = np.linalg.norm(mv(rot(k, t), p1) - p2, axis=1)
    for dt in (-1e-3, 1e-3):
        assert np.all(best <= np.linalg.norm(mv(rot(k, t + dt), p1) - p2, axis=1) + 1e-12)


def test_sp2_recovers_known_pair(rng):
    k1, k2 = unit(rng.normal(size=(N, 3))), unit(rng.normal(size=(N, 3)))
    p1 = rng.normal(size=(N, 3))
    t1, t2 = rng.uniform(-np.pi, np.pi, (2, N))
    p2 = mv(np.swapaxes(rot(k2, t2), 1, 2), mv(rot(k1, t1), p1))
    r = sp.sp2(p1, p2, k1, k2)
    assert not r.is_ls.any()
    err = np.nanmin(angdiff(r.theta[0], t1[:, None]) + angdiff(r.theta[1], t2[:, None]), axis=1)
    assert err.max() < 1e-9


def test_sp2_least_squares_when_lengths_differ(rng):
    k1, k2 = unit(rng.normal(size=(N, 3))), unit(rng.normal(size=(N, 3)))
    r = sp.sp2(rng.normal(size=(N, 3)), 3.0 * rng.normal(size=(N, 3)), k1, k2)
    assert r.is_ls.all()
    assert np.all(np.isfinite(r.theta[0][:, 0]))


def test_sp3_recovers_both_branches(rng):
    k, p1, p2 = unit(rng.normal(size=(N, 3))), rng.normal(size=(N, 3)), rng.normal(size=(N, 3))
    t = rng.uniform(-np.pi, np.pi, N)
    d = np.linalg.norm(mv(rot(k, t), p1) - p2, axis=1)
    r = sp.sp3(p1, p2, k, d)
    assert not r.is_ls.any() and np.all(r.count == 2)
    assert np.nanmin(angdiff(r.theta[0], t[:, None]), axis=1).max() < 1e-9
    for j in range(2):
        dj = np.linalg.norm(mv(rot(k, r.theta[0][:, j]), p1) - p2, axis=1)
        assert np.abs(dj - d).max() < 1e-9


def test_sp3_unreachable_distance_is_least_squares_and_closest(rng):
    k, p1, p2 = unit(rng.normal(size=(N, 3))), rng.normal(size=(N, 3)), rng.normal(size=(N, 3))
    d = np.linalg.norm(p1, axis=1) + np.linalg.norm(p2, axis=1) + 1.0  # farther than possible
    r = sp.sp3(p1, p2, k, d)
    assert r.is_ls.all() and np.all(r.count == 1)
    t = r.theta[0][:, 0]
    best = np.linalg.norm(mv(rot(k, t), p1) - p2, axis=1)
    other = np.linalg.norm(mv(rot(k, t + 0.01), p1) - p2, axis=1)
    assert np.all(best >= other - 1e-12)


def test_sp4_recovers_known_angle_and_flags_ls(rng):
    h, k, p = rng.normal(size=(N, 3)), unit(rng.normal(size=(N, 3))), rng.normal(size=(N, 3))
    t = rng.uniform(-np.pi, np.pi, N)
    d = np.einsum("ni,ni->n", h, mv(rot(k, t), p))
    r = sp.sp4(h, p, k, d)
    assert not r.is_ls.any()
    assert np.nanmin(angdiff(r.theta[0], t[:, None]), axis=1).max() < 1e-9
    r2 = sp.sp4(h, p, k, np.linalg.norm(h, axis=1) * np.linalg.norm(p, axis=1) + 1.0)
    assert r2.is_ls.all() and np.all(np.isfinite(r2.theta[0][:, 0]))


def test_sp5_recovers_known_triple(rng):
    k1, k2, k3 = (unit(rng.normal(size=(N, 3))) for _ in range(3))
    p1, p2, p3 = (rng.normal(size=(N, 3)) for _ in range(3))
    t1, t2, t3 = rng.uniform(-np.pi, np.pi, (3, N))
    p0 = mv(rot(k2, t2), p2 + mv(rot(k3, t3), p3)) - mv(rot(k1, t1), p1)
    r = sp.sp5(p0, p1, p2, p3, k1, k2, k3)
    assert np.all(r.count >= 1) and np.all(r.count <= 4)
    err = np.nanmin(
        angdiff(r.theta[0], t1[:, None])
        + angdiff(r.theta[1], t2[:, None])
        + angdiff(r.theta[2], t3[:, None]),
        axis=1,
    )
    assert err.max() < 1e-7
    # every returned triple is an exact solution
    for j in range(4):
        m = j < r.count
        a, b, c = (th[m, j] for th in r.theta)
        lhs = p0[m] + mv(rot(k1[m], a), p1[m])
        rhs = mv(rot(k2[m], b), p2[m] + mv(rot(k3[m], c), p3[m]))
        assert np.abs(lhs - rhs).max(initial=0.0) < 1e-7


def test_sp6_recovers_known_pair_and_every_pair_is_exact(rng):
    H, P = rng.normal(size=(N, 4, 3)), rng.normal(size=(N, 4, 3))
    K = unit(rng.normal(size=(N, 4, 3)))
    t1, t2 = rng.uniform(-np.pi, np.pi, (2, N))

    def lhs(a, b):
        e1 = np.einsum("ni,ni->n", H[:, 0], mv(rot(K[:, 0], a), P[:, 0])) + np.einsum(
            "ni,ni->n", H[:, 1], mv(rot(K[:, 1], b), P[:, 1])
        )
        e2 = np.einsum("ni,ni->n", H[:, 2], mv(rot(K[:, 2], a), P[:, 2])) + np.einsum(
            "ni,ni->n", H[:, 3], mv(rot(K[:, 3], b), P[:, 3])
        )
        return e1, e2

    d1, d2 = lhs(t1, t2)
    r = sp.sp6(H, K, P, d1, d2)
    err = np.nanmin(angdiff(r.theta[0], t1[:, None]) + angdiff(r.theta[1], t2[:, None]), axis=1)
    assert err.max() < 1e-7
    for j in range(4):
        a = np.where(j < r.count, r.theta[0][:, j], 0.0)
        b = np.where(j < r.count, r.theta[1][:, j], 0.0)
        e1, e2 = lhs(a, b)
        m = j < r.count
        assert np.abs(e1 - d1)[m].max(initial=0.0) < 1e-7
        assert np.abs(e2 - d2)[m].max(initial=0.0) < 1e-7


@pytest.mark.parametrize("tilt", [0.0, 1e-12, 1e-9, 1e-7, 1e-5])
def test_sp6_decoupled_equations_with_both_blocks_singular_give_all_four_pairs(tilt):
    """Axis-aligned targets make both 2x2 blocks rank one (each equation involves one angle):
    every pair must still come back, exactly, also a hair away from the degenerate case."""
    z, x, y = np.eye(3)[2], np.eye(3)[0], np.eye(3)[1]
    # eq 1 depends on t1 only, eq 2 on t2 only (up to `tilt`)
    H = np.array([[x, y * tilt, y * tilt, x]])
    K = np.array([[z, z, z, z]])
    P = np.array([[x + 0.3 * y, y, x, y]])
    t1, t2 = 0.7, -2.1
    e1 = x @ rot(z, t1) @ (x + 0.3 * y) + tilt * (y @ rot(z, t2) @ y)
    e2 = tilt * (y @ rot(z, t1) @ x) + x @ rot(z, t2) @ y
    r = sp.sp6(H, K, P, np.array([e1]), np.array([e2]))
    assert r.count[0] == 4
    pairs = np.stack([r.theta[0][0], r.theta[1][0]], axis=1)
    assert np.min(angdiff(pairs[:, 0], t1) + angdiff(pairs[:, 1], t2)) < 1e-9
    for a, b in pairs:
        f1 = x @ rot(z, a) @ (x + 0.3 * y) + tilt * (y @ rot(z, b) @ y)
        f2 = tilt * (y @ rot(z, a) @ x) + x @ rot(z, b) @ y
        assert abs(f1 - e1) < 1e-9 and abs(f2 - e2) < 1e-9


def test_single_vectors_are_a_batch_of_one():
    r = sp.sp1([1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0])
    assert r.theta[0].shape == (1, 1)
    assert abs(r.theta[0][0, 0] - np.pi / 2) < 1e-12


def test_bad_shapes_and_nan_raise_named_errors():
    with pytest.raises(InputError, match="p1"):
        sp.sp1(np.zeros(4), np.zeros(3), [0, 0, 1.0])
    with pytest.raises(InputError, match="p2"):
        sp.sp1(np.zeros(3), [np.nan, 0, 0], [0, 0, 1.0])
    with pytest.raises(InputError, match="k"):
        sp.sp1(np.ones(3), np.ones(3), np.zeros(3))


def test_fast_arc_tangent_is_within_two_ulp_of_libm_everywhere():
    """The fused kernels' atan2: every octant, both signs of zero, tiny and huge components,
    the table's breakpoints (y/x = k/16) and non-finite inputs."""
    import math

    from numba import njit

    from ikstack.spatial._tuple_math import fatan2

    @njit(cache=False)
    def run(y, x, out):
        for i in range(y.shape[0]):
            out[i] = fatan2(y[i], x[i])

    rng = np.random.default_rng(11)
    y = np.concatenate(
        [
            rng.normal(size=200_000),
            rng.normal(size=1000) * 1e-300,
            np.ones(17),
            -np.arange(17) / 16.0,
            np.arange(17) / 16.0 + 1e-17,
        ]
    )
    x = np.concatenate(
        [
            rng.normal(size=200_000),
            rng.normal(size=1000) * 1e300,
            np.arange(17) / 16.0,
            -np.ones(17),
            np.ones(17),
        ]
    )
    out = np.empty_like(y)
    run(y, x, out)
    ref = np.arctan2(y, x)
    ulp = np.abs(out - ref) / np.spacing(np.maximum(np.abs(ref), np.finfo(float).tiny))
    assert ulp.max() <= 2.0
    assert np.all(np.sign(out) == np.sign(ref))  # the branch cut stays where atan2 has it
    special = [
        (0.0, 0.0),
        (-0.0, 0.0),
        (0.0, -0.0),
        (-0.0, -0.0),
        (1.0, 0.0),
        (1.0, -0.0),
        (-1.0, -0.0),
        (0.0, -1.0),
        (-0.0, -1.0),
        (math.inf, 1.0),
        (1.0, -math.inf),
        (-math.inf, -math.inf),
        (math.nan, 1.0),
        (1.0, math.nan),
        (5e-324, 1.0),
    ]
    ys = np.array([a for a, _ in special])
    xs = np.array([b for _, b in special])
    out = np.empty_like(ys)
    run(ys, xs, out)
    for (a, b), got in zip(special, out, strict=True):
        want = math.atan2(a, b)
        assert (math.isnan(got) and math.isnan(want)) or (
            got == want and math.copysign(1.0, got) == math.copysign(1.0, want)
        ), (a, b)


def test_sp2_first_is_sp2_where_its_callers_read_it():
    """``sp2_first`` (the wrist decomposition's subproblem 2) skips the second angles unless the
    answer is least squares or the first angles (nearly) coincide: its count, verdict and first
    angles must be ``sp2``'s bit for bit, and its second angles too wherever it computes them;
    over generic, exactly solvable (from a known pair), tangent and degenerate inputs."""
    from scipy.spatial.transform import Rotation as R_

    from ikstack.ik.analytic._sp_kernels import sp2, sp2_first

    rng = np.random.default_rng(11)
    cases = []
    for _ in range(3000):
        k1, k2 = (v / np.linalg.norm(v) for v in rng.normal(size=(2, 3)))
        p1 = rng.normal(size=3)
        kind = rng.integers(4)
        if kind == 0:  # generic (mostly least squares)
            p2 = rng.normal(size=3)
        elif kind == 1:  # exact from a known pair
            t1, t2 = rng.uniform(-np.pi, np.pi, 2)
            p2 = R_.from_rotvec(-t2 * k2).apply(R_.from_rotvec(t1 * k1).apply(p1))
        elif kind == 2:  # tangent: p1 and p2 on the axes' common circle
            p1 = k2 * rng.uniform(0.5, 2)
            p2 = k2 * np.linalg.norm(p1) if rng.random() < 0.5 else -p1
        else:  # degenerate: parallel axes or a zero vector
            k2 = k1 if rng.random() < 0.5 else k2
            p2 = np.zeros(3) if rng.random() < 0.3 else rng.normal(size=3)
        cases.append((p1, p2, k1, k2))
    for p1, p2, k1, k2 in cases:
        args = tuple(tuple(float(x) for x in v) for v in (p1, p2, k1, k2))
        n, ls, t1, t2 = sp2(*args)
        m, ls_f, u1, u2 = sp2_first(*args)
        assert (m, ls_f) == (n, ls)
        assert np.array_equal(np.array(u1), np.array(t1))
        if ls or u2 != (0.0, 0.0):
            assert np.array_equal(np.array(u2), np.array(t2))
