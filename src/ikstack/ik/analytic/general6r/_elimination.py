"""Raghavan-Roth elimination for a general 6R chain in product-of-exponentials form (numba).

The chain is ``W = T_base_tcp E^{-1} = P_1 Z(q_1) P_2 Z(q_2) ... P_6 Z(q_6)`` with constant rigid
transforms ``P_i`` (4x4) and ``Z(q) = Rot_z(q)``: every joint axis is local z after ``P_i``
(ikstack's compiled "canonical" chain data). Rearranged as

    G(q_3, q_4, q_5) = Z(q_3) P_4 Z(q_4) P_5 Z(q_5) P_6
                     = P_3^{-1} Z(q_2)^T P_2^{-1} Z(q_1)^T P_1^{-1} W =: H(q_1, q_2),

the third and fourth columns (``l``: joint 6's axis, ``p``: a point on it) do not depend on
``q_6``. The 14 Raghavan-Roth quantities ``p, l, p.p, p.l, p x l, (p.p) l - 2 (p.l) p`` of either
side are, by rotation invariance, of degree at most one in the sine and cosine of every joint
angle, so they lie exactly in the tensor span of ``[1, cos, sin]`` per angle. This module gets the
coefficients by exact interpolation on a 3-point angle grid (no symbolic algebra): the left block
``(14, 27)`` once per geometry, the right block ``(14, 9)`` per target.

Eliminating the 8 non-constant monomials of ``(q_1, q_2)`` with the left null space of the right
block leaves 6 equations in ``q_3`` (trigonometric, degree 1) and the 9 monomials of ``(q_4, q_5)``.
With half-angle tangents for ``q_4, q_5`` and one extra copy multiplied by ``x_4`` this is the
12x12 matrix ``Sigma(q_3) = S_0 + S_1 cos q_3 + S_2 sin q_3`` acting on ``x_4^u x_5^v``
(``u < 4, v < 3``). With ``x = tan((q_3 - phi) / 2)`` it becomes the quadratic pencil
``(A x^2 + B x + C) V = 0`` (Manocha-Canny), linearized to a 24x24 companion matrix, in the
direct or the reciprocal chart, whichever leading block is better conditioned.

The labels 1..6 above are roles, not joints: the loop closure is cyclic, so any cyclic shift of
the joints (with the target-dependent link moved accordingly) gives an equally valid
elimination. Special geometries (perpendicular or parallel neighbours with offsets, as in the
Flexiv Rizon) make some assignments' 12x12 matrix singular for every angle; the solvers pick, at
construction, a shift that recovers known FK samples (see :func:`._engine.choose_shift`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: interpolation angles for the [1, cos, sin] basis
_GRID = np.array([0.0, 2.0 * math.pi / 3.0, 4.0 * math.pi / 3.0])
_VANDER = np.stack([np.ones(3), np.cos(_GRID), np.sin(_GRID)], axis=1)  # [k, i]
VINV = np.ascontiguousarray(np.linalg.inv(_VANDER))  # coefficient i from samples k
#: [1, cos, sin] (times 1 + x^2) as coefficients of [1, x, x^2]
HALF = np.array([[1.0, 0.0, 1.0], [1.0, 0.0, -1.0], [0.0, 2.0, 0.0]])

NQ = 14  # Raghavan-Roth quantities
MAX_ROOTS = 16


@njit(cache=True, inline="always")
def _rz_left(c, s, M, out):  # pragma: no cover - compiled
    """out = Rot_z(angle) @ M for a 4x4 M."""
    for j in range(4):
        a = M[0, j]
        b = M[1, j]
        out[0, j] = c * a - s * b
        out[1, j] = s * a + c * b
        out[2, j] = M[2, j]
        out[3, j] = M[3, j]


@njit(cache=True, inline="always")
def _mm(A, B, out):  # pragma: no cover - compiled
    for i in range(4):
        for j in range(4):
            out[i, j] = (
                A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j] + A[i, 3] * B[3, j]
            )


@njit(cache=True)
def _quantities(G, out):  # pragma: no cover - compiled
    """The 14 Raghavan-Roth quantities of the 3rd (l) and 4th (p) columns of G."""
    px, py, pz = G[0, 3], G[1, 3], G[2, 3]
    lx, ly, lz = G[0, 2], G[1, 2], G[2, 2]
    pp = px * px + py * py + pz * pz
    pl = px * lx + py * ly + pz * lz
    out[0], out[1], out[2] = px, py, pz
    out[3], out[4], out[5] = lx, ly, lz
    out[6] = pp
    out[7] = pl
    out[8] = py * lz - pz * ly
    out[9] = pz * lx - px * lz
    out[10] = px * ly - py * lx
    out[11] = pp * lx - 2.0 * pl * px
    out[12] = pp * ly - 2.0 * pl * py
    out[13] = pp * lz - 2.0 * pl * pz


@njit(cache=True)
def fit_left(P4, P5, P6, vinv, grid, out):  # pragma: no cover - compiled
    """Left block (14, 27): quantities of ``G(q3, q4, q5)`` on the basis ``b3 (x) b4 (x) b5``."""
    F = np.empty((3, 3, 3, NQ))
    t1 = np.empty((4, 4))
    t2 = np.empty((4, 4))
    t3 = np.empty((4, 4))
    q = np.empty(NQ)
    for k5 in range(3):
        _rz_left(math.cos(grid[k5]), math.sin(grid[k5]), P6, t1)  # Z5 P6
        _mm(P5, t1, t2)  # P5 Z5 P6
        for k4 in range(3):
            _rz_left(math.cos(grid[k4]), math.sin(grid[k4]), t2, t1)
            _mm(P4, t1, t3)  # P4 Z4 P5 Z5 P6
            for k3 in range(3):
                _rz_left(math.cos(grid[k3]), math.sin(grid[k3]), t3, t1)
                _quantities(t1, q)
                for r in range(NQ):
                    F[k3, k4, k5, r] = q[r]
    for r in range(NQ):
        for i3 in range(3):
            for i4 in range(3):
                for i5 in range(3):
                    acc = 0.0
                    for k3 in range(3):
                        for k4 in range(3):
                            w34 = vinv[i3, k3] * vinv[i4, k4]
                            for k5 in range(3):
                                acc += w34 * vinv[i5, k5] * F[k3, k4, k5, r]
                    out[r, i3 * 9 + i4 * 3 + i5] = acc


@njit(cache=True)
def fit_right(W, P1i, P2i, P3i, vinv, grid, out):  # pragma: no cover - compiled
    """Right block (14, 9): quantities of ``H(q1, q2)`` on the basis ``b1 (x) b2``."""
    F = np.empty((3, 3, NQ))
    t1 = np.empty((4, 4))
    t2 = np.empty((4, 4))
    t3 = np.empty((4, 4))
    t4 = np.empty((4, 4))
    H = np.empty((4, 4))
    q = np.empty(NQ)
    _mm(P1i, W, t1)  # P1^-1 W
    for k1 in range(3):
        _rz_left(math.cos(grid[k1]), -math.sin(grid[k1]), t1, t2)  # Z1^T P1^-1 W
        _mm(P2i, t2, t3)
        for k2 in range(3):
            _rz_left(math.cos(grid[k2]), -math.sin(grid[k2]), t3, t4)
            _mm(P3i, t4, H)
            _quantities(H, q)
            for r in range(NQ):
                F[k1, k2, r] = q[r]
    for r in range(NQ):
        for i1 in range(3):
            for i2 in range(3):
                acc = 0.0
                for k1 in range(3):
                    for k2 in range(3):
                        acc += vinv[i1, k1] * vinv[i2, k2] * F[k1, k2, r]
                out[r, i1 * 3 + i2] = acc
