"""SE(3) on batched arrays: homogeneous transforms, exp/log, inverse, pose error, interpolation.

Twists are ``(..., 6)`` with rows ``[linear; angular]``, matching ikstack's Jacobians.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack.errors import InputError
from ikstack.spatial import so3
from ikstack.spatial.checks import as_float_array, as_vectors

Array = NDArray[np.float64]


def make_transform(R: ArrayLike | None = None, p: ArrayLike | None = None) -> Array:
    """Homogeneous transforms from rotations (..., 3, 3) and translations (..., 3)."""
    Rm = np.eye(3) if R is None else np.asarray(R, dtype=np.float64)
    pv = np.zeros(3) if p is None else np.asarray(p, dtype=np.float64)
    batch = np.broadcast_shapes(Rm.shape[:-2], pv.shape[:-1])
    T = np.zeros(batch + (4, 4))
    T[..., :3, :3] = Rm
    T[..., :3, 3] = pv
    T[..., 3, 3] = 1.0
    return T


def from_pose(position: ArrayLike, quat_wxyz: ArrayLike) -> Array:
    """Transforms from positions (..., 3) [m] and quaternions ``wxyz`` (..., 4)."""
    return make_transform(so3.quat_to_matrix(quat_wxyz), as_vectors(position, "position", 3))


def to_pose(T: ArrayLike) -> tuple[Array, Array]:
    """Positions (..., 3) and quaternions ``wxyz`` (..., 4) of transforms."""
    T = np.asarray(T, dtype=np.float64)
    return T[..., :3, 3].copy(), so3.matrix_to_quat(T[..., :3, :3])


def from_xyz_rpy(xyz: ArrayLike, rpy: ArrayLike) -> Array:
    """Transform of a URDF origin: translation ``xyz`` and fixed-axis ``rpy``."""
    return make_transform(so3.rpy_to_matrix(rpy), as_vectors(xyz, "xyz", 3))


def inverse(T: ArrayLike) -> Array:
    """Inverse of rigid transforms: ``[R^T, -R^T p]``."""
    T = np.asarray(T, dtype=np.float64)
    Rt = np.swapaxes(T[..., :3, :3], -1, -2)
    out = np.zeros(T.shape)
    out[..., :3, :3] = Rt
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", Rt, T[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


#: below this angle [rad] the coefficients use their Taylor series (truncation error ~theta^8)
_SERIES_BELOW = 1e-2


def _coeffs(theta: Array) -> tuple[Array, Array, Array]:
    """``sin(t)/t``, ``(1 - cos t)/t^2`` and ``(t - sin t)/t^3``, free of cancellation near 0."""
    t2 = theta * theta
    small = theta < _SERIES_BELOW
    safe = np.where(small, 1.0, theta)
    a = np.where(small, 1.0 - t2 / 6.0 * (1.0 - t2 / 20.0 * (1.0 - t2 / 42.0)), np.sin(safe) / safe)
    b = np.where(
        small,
        0.5 - t2 / 24.0 * (1.0 - t2 / 30.0 * (1.0 - t2 / 56.0)),
        (1.0 - np.cos(safe)) / (safe * safe),
    )
    c = np.where(
        small,
        1.0 / 6.0 - t2 / 120.0 * (1.0 - t2 / 42.0 * (1.0 - t2 / 72.0)),
        (safe - np.sin(safe)) / (safe**3),
    )
    return a, b, c


def exp(twist: ArrayLike) -> Array:
    r"""Exponential of twists ``[v; w]`` (..., 6): ``[exp(w), V v]`` with
    :math:`V = I + \frac{1-\cos\theta}{\theta^2} K + \frac{\theta - \sin\theta}{\theta^3} K^2`."""
    xi = as_vectors(twist, "twist", 6)
    v, w = xi[..., :3], xi[..., 3:]
    theta = np.linalg.norm(w, axis=-1)
    _, b, c = _coeffs(theta)
    K = so3.skew(w)
    V = np.eye(3) + b[..., None, None] * K + c[..., None, None] * (K @ K)
    return make_transform(so3.exp(w), np.einsum("...ij,...j->...i", V, v))


def log(T: ArrayLike) -> Array:
    """Logarithm of rigid transforms: twists ``[v; w]`` (..., 6), rotation angle in [0, pi]."""
    T = as_float_array(T, "T")
    w = so3.log(T[..., :3, :3])
    theta = np.linalg.norm(w, axis=-1)
    a, b, _ = _coeffs(theta)
    small = theta < _SERIES_BELOW
    safe = np.where(small, 1.0, theta)
    t2 = theta * theta
    # V^{-1} = I - K/2 + (1/theta^2)(1 - a/(2b)) K^2, by its series near 0
    coef = np.where(
        small, 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0, (1.0 - a / (2.0 * b)) / (safe * safe)
    )
    K = so3.skew(w)
    Vinv = np.eye(3) - 0.5 * K + coef[..., None, None] * (K @ K)
    v = np.einsum("...ij,...j->...i", Vinv, T[..., :3, 3])
    return np.concatenate([v, w], axis=-1)


def pose_error(T_target: ArrayLike, T: ArrayLike) -> Array:
    """ikstack's pose error, base frame: ``[p_target - p, rotvec(R_target R^T)]`` (..., 6).

    The orientation part is a geodesic rotation vector, never an Euler difference.
    """
    Tt = np.asarray(T_target, dtype=np.float64)
    Tc = np.asarray(T, dtype=np.float64)
    dp = Tt[..., :3, 3] - Tc[..., :3, 3]
    dw = so3.log(Tt[..., :3, :3] @ np.swapaxes(Tc[..., :3, :3], -1, -2))
    return np.concatenate([dp, dw], axis=-1)


def position_rotation_error(T_target: ArrayLike, T: ArrayLike) -> tuple[Array, Array]:
    """Norms of the two halves of :func:`pose_error`: position [m] and rotation angle [rad].

    Plain vectorized NumPy (nothing compiled on first use). The compiled kernels measure the
    same errors from one scalar definition (:func:`ikstack.spatial._tuple_math.rel_rotation`
    and :func:`~ikstack.spatial._tuple_math.rotation_angle`, behind
    :func:`ikstack.ik.fk_errors`); the two agree to round-off, not to the bit.
    """
    e = pose_error(T_target, T)
    return np.linalg.norm(e[..., :3], axis=-1), np.linalg.norm(e[..., 3:], axis=-1)


def interpolate(T0: ArrayLike, T1: ArrayLike, s: ArrayLike, mode: str = "decoupled") -> Array:
    """Geodesic interpolation between poses at fractions ``s`` (broadcast, 0 -> T0, 1 -> T1).

    Args:
        mode: ``"decoupled"`` (straight-line position, geodesic rotation; the usual Cartesian
            path of a tool) or ``"screw"`` (the SE(3) geodesic ``T0 exp(s log(T0^-1 T1))``).
    """
    T0 = np.asarray(T0, dtype=np.float64)
    T1 = np.asarray(T1, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64)
    if mode == "decoupled":
        R = so3.slerp(T0[..., :3, :3], T1[..., :3, :3], s)
        p = T0[..., :3, 3] + s[..., None] * (T1[..., :3, 3] - T0[..., :3, 3])
        return make_transform(R, p)
    if mode == "screw":
        xi = log(inverse(T0) @ T1)
        return T0 @ exp(xi * s[..., None])
    raise InputError(f"interpolation mode {mode!r} is unknown; valid modes: 'decoupled', 'screw'")


def adjoint(T: ArrayLike) -> Array:
    """Adjoint (..., 6, 6) mapping twists ``[v; w]`` from the frame of ``T`` to its parent."""
    T = np.asarray(T, dtype=np.float64)
    R = T[..., :3, :3]
    P = so3.skew(T[..., :3, 3])
    out = np.zeros(T.shape[:-2] + (6, 6))
    out[..., :3, :3] = R
    out[..., 3:, 3:] = R
    out[..., :3, 3:] = P @ R
    return out


#: rotations farther than this from orthonormal (max |R^T R - I|) are projected by
#: :func:`project_rigid`; exact float64 rotations sit at ~1e-16
PROJECT_ABOVE = 1e-14


def project_rigid(T: ArrayLike) -> tuple[Array, Array]:
    """``(T_projected, deviation)`` for rigid transforms ``T (..., 4, 4)``.

    Each rotation part is replaced by the nearest rotation (polar decomposition: ``U V^T`` of
    its SVD, the closest rotation in the Frobenius norm), the translation is kept, and
    ``deviation (...)`` is the Frobenius norm of what moved. Rotations already orthonormal to
    round-off (max ``|R^T R - I|`` at most :data:`PROJECT_ABOVE`) are returned unchanged with
    deviation 0, so exact inputs cost one product each. The caller has checked rigidity
    (determinant +1).
    """
    Tf = np.asarray(T, dtype=np.float64)
    R = Tf[..., :3, :3]
    RtR = np.einsum("...ji,...jk->...ik", R, R)
    dev = np.abs(RtR - np.eye(3)).max(axis=(-2, -1))
    out = np.zeros(Tf.shape[:-2])
    far = dev > PROJECT_ABOVE
    if not far.any():
        return Tf, out
    Tp = Tf.copy()
    U, _, Vt = np.linalg.svd(R[far])
    Rp = U @ Vt
    Tp[far, :3, :3] = Rp
    out[far] = np.linalg.norm(R[far] - Rp, axis=(-2, -1))
    return Tp, out
