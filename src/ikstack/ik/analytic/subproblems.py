"""IK-Geo's geometric subproblems 1-6, batched (Elias and Wen, arXiv 2211.05737).

``R(k, t) p`` rotates ``p`` by ``t`` [rad] about the unit axis ``k``. Each function takes
vectors ``(3,)`` or ``(N, 3)`` (broadcast against each other) and returns batched arrays.
Subproblems 1-4 return their solutions and a least-squares flag (``True`` when no exact
solution exists and the returned angles minimise the residual); subproblems 5 and 6 return
the set of exact solutions (padded with NaN) and their count.

=====  ==================================================================  ============
 SP    solves                                                                solutions
=====  ==================================================================  ============
 1     ``min_t |R(k,t) p1 - p2|``                                            1
 2     ``min |R(k1,t1) p1 - R(k2,t2) p2|``                                   1-2
 3     ``min_t | |R(k,t) p1 - p2| - d |``                                    1-2
 4     ``min_t | h . R(k,t) p - d |``                                        1-2
 5     ``p0 + R(k1,t1) p1 = R(k2,t2) (p2 + R(k3,t3) p3)``                    0-4
 6     ``h1.R(k1,t1)p1 + h2.R(k2,t2)p2 = d1``, ``h3.R(k3,t1)p3 + h4.R(k4,t2)p4 = d2``  0-4
=====  ==================================================================  ============

The compiled scalar kernels these wrap (:mod:`._sp_kernels`) are what the arm families call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ikstack.errors import InputError
from ikstack.ik.analytic import _sp_kernels as S
from ikstack.spatial import as_float_array, check_finite

Array = NDArray[np.float64]

__all__ = ["SubproblemResult", "sp1", "sp2", "sp3", "sp4", "sp5", "sp6"]


@dataclass(frozen=True)
class SubproblemResult:
    """Angles of a batched subproblem.

    Attributes:
        theta: tuple of (N, M) angle arrays [rad], one per unknown angle; unused slots NaN.
        count: (N,) how many of the M slots hold solutions.
        is_ls: (N,) True where the answer is a least-squares one (subproblems 1-4; always
            False for 5 and 6, which return only exact solutions).
    """

    theta: tuple[Array, ...]
    count: NDArray[np.int64]
    is_ls: NDArray[np.bool_]


def _vecs(*arrays: ArrayLike, names: tuple[str, ...]) -> tuple[list[Array], int]:
    out = []
    for a, name in zip(arrays, names, strict=True):
        arr = as_float_array(a, name)
        if arr.shape[-1:] != (3,) or arr.ndim > 2:
            raise InputError(f"{name} has shape {arr.shape}; expected (3,) or (N, 3)")
        check_finite(arr, name)
        out.append(arr)
    shape = np.broadcast_shapes(*(a.shape for a in out))
    n = shape[0] if len(shape) == 2 else 1
    return [np.ascontiguousarray(np.broadcast_to(a, (n, 3))) for a in out], n


def _scalars(d: ArrayLike, n: int, name: str) -> Array:
    arr = as_float_array(d, name)
    if arr.ndim > 1 or (arr.ndim == 1 and arr.shape[0] not in (1, n)):
        raise InputError(f"{name} has shape {arr.shape}; expected a scalar or ({n},)")
    check_finite(arr, name)
    return np.ascontiguousarray(np.broadcast_to(arr, (n,)))


def _unit(k: Array, name: str) -> Array:
    nk = np.linalg.norm(k, axis=-1)
    if np.any(nk < 1e-12):
        raise InputError(f"{name} must be a non-zero axis")
    return k / nk[:, None]


@njit(cache=True)
def _sp1_batch(P1, P2, K, T, LS):  # pragma: no cover - compiled
    for i in range(P1.shape[0]):
        T[i], LS[i] = S.sp1(P1[i], P2[i], K[i])


@njit(cache=True)
def _sp2_batch(P1, P2, K1, K2, T1, T2, C, LS):  # pragma: no cover - compiled
    for i in range(P1.shape[0]):
        C[i], LS[i], a, b = S.sp2(P1[i], P2[i], K1[i], K2[i])
        T1[i, 0], T1[i, 1] = a
        T2[i, 0], T2[i, 1] = b


@njit(cache=True)
def _sp3_batch(P1, P2, K, D, T, C, LS):  # pragma: no cover - compiled
    for i in range(P1.shape[0]):
        C[i], LS[i], T[i, 0], T[i, 1] = S.sp3(P1[i], P2[i], K[i], D[i])


@njit(cache=True)
def _sp4_batch(H, P, K, D, T, C, LS):  # pragma: no cover - compiled
    for i in range(P.shape[0]):
        C[i], LS[i], T[i, 0], T[i, 1] = S.sp4(H[i], P[i], K[i], D[i])


@njit(cache=True)
def _sp5_batch(P, K, T, C):  # pragma: no cover - compiled
    """Rows of ``P`` (N, 4, 3): ``p0 .. p3``, ``K`` (N, 3, 3): ``k1 .. k3``; ``T`` (N, 3, 4)
    receives ``t1 .. t3``, ``C`` (N,) the counts."""
    for i in range(P.shape[0]):
        n, a, b, c = S.sp5(P[i, 0], P[i, 1], P[i, 2], P[i, 3], K[i, 0], K[i, 1], K[i, 2])
        C[i] = n
        for j in range(4):
            T[i, 0, j] = a[j]
            T[i, 1, j] = b[j]
            T[i, 2, j] = c[j]


@njit(cache=True)
def _sp6_batch(H, K, P, D, T, C):  # pragma: no cover - compiled
    """Rows of ``H``, ``K``, ``P`` (N, 4, 3): ``h1 .. h4``, ``k1 .. k4``, ``p1 .. p4``, ``D``
    (N, 2): ``d1, d2``; ``T`` (N, 2, 4) receives ``t1, t2``, ``C`` (N,) the counts."""
    for i in range(P.shape[0]):
        Hi = (H[i, 0], H[i, 1], H[i, 2], H[i, 3])
        Ki = (K[i, 0], K[i, 1], K[i, 2], K[i, 3])
        Pi = (P[i, 0], P[i, 1], P[i, 2], P[i, 3])
        n, a, b = S.sp6(Hi, Ki, Pi, D[i, 0], D[i, 1])
        C[i] = n
        for j in range(4):
            T[i, 0, j] = a[j]
            T[i, 1, j] = b[j]


def _mask(theta: Array, count: NDArray[np.int64]) -> Array:
    slots = np.arange(theta.shape[1])
    return np.where(slots[None, :] < count[:, None], theta, np.nan)


def sp1(p1: ArrayLike, p2: ArrayLike, k: ArrayLike) -> SubproblemResult:
    """Subproblem 1: ``t`` minimising ``|R(k, t) p1 - p2|`` (one angle, LS when inexact)."""
    (p1a, p2a, ka), n = _vecs(p1, p2, k, names=("p1", "p2", "k"))
    T = np.empty(n)
    LS = np.empty(n, dtype=np.bool_)
    _sp1_batch(p1a, p2a, _unit(ka, "k"), T, LS)
    return SubproblemResult((T[:, None],), np.ones(n, dtype=np.int64), LS)


def sp2(p1: ArrayLike, p2: ArrayLike, k1: ArrayLike, k2: ArrayLike) -> SubproblemResult:
    """Subproblem 2: ``(t1, t2)`` with ``R(k1, t1) p1 = R(k2, t2) p2`` (up to 2, or 1 LS)."""
    (p1a, p2a, k1a, k2a), n = _vecs(p1, p2, k1, k2, names=("p1", "p2", "k1", "k2"))
    T1 = np.zeros((n, 2))
    T2 = np.zeros((n, 2))
    C = np.zeros(n, dtype=np.int64)
    LS = np.zeros(n, dtype=np.bool_)
    _sp2_batch(p1a, p2a, _unit(k1a, "k1"), _unit(k2a, "k2"), T1, T2, C, LS)
    return SubproblemResult((_mask(T1, C), _mask(T2, C)), C, LS)


def sp3(p1: ArrayLike, p2: ArrayLike, k: ArrayLike, d: ArrayLike) -> SubproblemResult:
    """Subproblem 3: ``t`` with ``|R(k, t) p1 - p2| = d`` [same length unit] (2, or 1 LS)."""
    (p1a, p2a, ka), n = _vecs(p1, p2, k, names=("p1", "p2", "k"))
    T = np.zeros((n, 2))
    C = np.zeros(n, dtype=np.int64)
    LS = np.zeros(n, dtype=np.bool_)
    _sp3_batch(p1a, p2a, _unit(ka, "k"), _scalars(d, n, "d"), T, C, LS)
    return SubproblemResult((_mask(T, C),), C, LS)


def sp4(h: ArrayLike, p: ArrayLike, k: ArrayLike, d: ArrayLike) -> SubproblemResult:
    """Subproblem 4: ``t`` with ``h . R(k, t) p = d`` (2, or 1 LS)."""
    (ha, pa, ka), n = _vecs(h, p, k, names=("h", "p", "k"))
    T = np.zeros((n, 2))
    C = np.zeros(n, dtype=np.int64)
    LS = np.zeros(n, dtype=np.bool_)
    _sp4_batch(ha, pa, _unit(ka, "k"), _scalars(d, n, "d"), T, C, LS)
    return SubproblemResult((_mask(T, C),), C, LS)


def sp5(
    p0: ArrayLike,
    p1: ArrayLike,
    p2: ArrayLike,
    p3: ArrayLike,
    k1: ArrayLike,
    k2: ArrayLike,
    k3: ArrayLike,
) -> SubproblemResult:
    """Subproblem 5: ``(t1, t2, t3)`` with ``p0 + R(k1,t1) p1 = R(k2,t2) (p2 + R(k3,t3) p3)``.

    Returns up to 4 exact solutions (``is_ls`` is always False).
    """
    (a0, a1, a2, a3, b1, b2, b3), n = _vecs(
        p0, p1, p2, p3, k1, k2, k3, names=("p0", "p1", "p2", "p3", "k1", "k2", "k3")
    )
    T = np.zeros((n, 3, 4))
    C = np.zeros(n, dtype=np.int64)
    K = np.stack([_unit(b1, "k1"), _unit(b2, "k2"), _unit(b3, "k3")], axis=1)
    _sp5_batch(np.stack([a0, a1, a2, a3], axis=1), K, T, C)
    return SubproblemResult(
        (_mask(T[:, 0], C), _mask(T[:, 1], C), _mask(T[:, 2], C)), C, np.zeros(n, dtype=np.bool_)
    )


def sp6(H: ArrayLike, K: ArrayLike, P: ArrayLike, d1: ArrayLike, d2: ArrayLike) -> SubproblemResult:
    """Subproblem 6: ``(t1, t2)`` solving two equations jointly.

    ``h1.R(k1,t1)p1 + h2.R(k2,t2)p2 = d1`` and ``h3.R(k3,t1)p3 + h4.R(k4,t2)p4 = d2``.

    Args:
        H, K, P: (4, 3) or (N, 4, 3): rows ``h1..h4``, unit ``k1..k4``, ``p1..p4``.
        d1, d2: scalars or (N,).

    Returns:
        Up to 4 exact solutions (``is_ls`` is always False).
    """
    mats = []
    for a, name in ((H, "H"), (K, "K"), (P, "P")):
        arr = as_float_array(a, name)
        if arr.shape[-2:] != (4, 3) or arr.ndim > 3:
            raise InputError(f"{name} has shape {arr.shape}; expected (4, 3) or (N, 4, 3)")
        check_finite(arr, name)
        mats.append(arr)
    shape = np.broadcast_shapes(*(m.shape for m in mats))
    n = shape[0] if len(shape) == 3 else 1
    Ha, Ka, Pa = (np.broadcast_to(m, (n, 4, 3)) for m in mats)
    Ka = Ka / np.linalg.norm(Ka, axis=-1, keepdims=True)
    D = np.stack([_scalars(d1, n, "d1"), _scalars(d2, n, "d2")], axis=1)
    T = np.zeros((n, 2, 4))
    C = np.zeros(n, dtype=np.int64)
    _sp6_batch(
        np.ascontiguousarray(Ha), np.ascontiguousarray(Ka), np.ascontiguousarray(Pa), D, T, C
    )
    return SubproblemResult((_mask(T[:, 0], C), _mask(T[:, 1], C)), C, np.zeros(n, dtype=np.bool_))
