"""SO(3) on batched arrays: exp/log, rotation vectors, quaternions (w, x, y, z), Euler XYZ.

Every function takes arrays with leading batch dimensions and broadcasts. Rotation vectors are
``(..., 3)``, matrices ``(..., 3, 3)``, quaternions ``(..., 4)`` in ``wxyz`` order.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack._deprecated import warn_deprecated
from ikstack.errors import InputError
from ikstack.spatial.checks import as_float_array, as_vectors, check_finite

Array = NDArray[np.float64]

_SMALL = 1e-8


def skew(v: ArrayLike) -> Array:
    """The cross-product matrix ``[v]_x`` of ``v`` (..., 3) -> (..., 3, 3)."""
    v = np.asarray(v, dtype=np.float64)
    out = np.zeros(v.shape[:-1] + (3, 3))
    out[..., 0, 1] = -v[..., 2]
    out[..., 0, 2] = v[..., 1]
    out[..., 1, 0] = v[..., 2]
    out[..., 1, 2] = -v[..., 0]
    out[..., 2, 0] = -v[..., 1]
    out[..., 2, 1] = v[..., 0]
    return out


def exp(rotvec: ArrayLike) -> Array:
    r"""Rotation matrix of a rotation vector (Rodrigues).

    .. math:: R = I + \frac{\sin\theta}{\theta} K + \frac{1-\cos\theta}{\theta^2} K^2,
        \quad K = [\omega]_\times, \ \theta = \|\omega\|

    Args:
        rotvec: (..., 3) rotation vectors [rad].

    Returns:
        (..., 3, 3) rotation matrices.
    """
    w = as_vectors(rotvec, "rotvec", 3)
    theta2 = np.einsum("...i,...i->...", w, w)
    theta = np.sqrt(theta2)
    small = theta < 1e-2  # Taylor series below: no cancellation in 1 - cos
    safe = np.where(small, 1.0, theta)
    t2 = theta2
    a = np.where(small, 1.0 - t2 / 6.0 * (1.0 - t2 / 20.0 * (1.0 - t2 / 42.0)), np.sin(safe) / safe)
    b = np.where(
        small,
        0.5 - t2 / 24.0 * (1.0 - t2 / 30.0 * (1.0 - t2 / 56.0)),
        (1.0 - np.cos(safe)) / (safe * safe),
    )
    K = skew(w)
    K2 = K @ K
    return np.eye(3) + a[..., None, None] * K + b[..., None, None] * K2


rotvec_to_matrix = exp


def matrix_to_quat(R: ArrayLike) -> Array:
    """Unit quaternion ``wxyz`` (with ``w >= 0``) of rotation matrices (..., 3, 3).

    Uses Shepperd's method: the largest of the four candidate divisors is chosen per element, so
    the result is accurate to rounding for every rotation, including angles near pi.
    """
    R = as_float_array(R, "R")
    if R.ndim < 2 or R.shape[-2:] != (3, 3):
        from ikstack.errors import ShapeError

        raise ShapeError("R", R.shape, "(..., 3, 3)")
    check_finite(R, "R")
    m00, m11, m22 = R[..., 0, 0], R[..., 1, 1], R[..., 2, 2]
    tr = m00 + m11 + m22
    cands = np.stack([tr, m00, m11, m22], axis=-1)
    k = np.argmax(cands, axis=-1)
    q = np.empty(R.shape[:-2] + (4,))
    # case w largest
    s = np.sqrt(np.maximum(1.0 + tr, 1e-300)) * 2.0
    qw = np.stack(
        [
            0.25 * s,
            (R[..., 2, 1] - R[..., 1, 2]) / s,
            (R[..., 0, 2] - R[..., 2, 0]) / s,
            (R[..., 1, 0] - R[..., 0, 1]) / s,
        ],
        axis=-1,
    )
    s = np.sqrt(np.maximum(1.0 + m00 - m11 - m22, 1e-300)) * 2.0
    qx = np.stack(
        [
            (R[..., 2, 1] - R[..., 1, 2]) / s,
            0.25 * s,
            (R[..., 0, 1] + R[..., 1, 0]) / s,
            (R[..., 0, 2] + R[..., 2, 0]) / s,
        ],
        axis=-1,
    )
    s = np.sqrt(np.maximum(1.0 - m00 + m11 - m22, 1e-300)) * 2.0
    qy = np.stack(
        [
            (R[..., 0, 2] - R[..., 2, 0]) / s,
            (R[..., 0, 1] + R[..., 1, 0]) / s,
            0.25 * s,
            (R[..., 1, 2] + R[..., 2, 1]) / s,
        ],
        axis=-1,
    )
    s = np.sqrt(np.maximum(1.0 - m00 - m11 + m22, 1e-300)) * 2.0
    qz = np.stack(
        [
            (R[..., 1, 0] - R[..., 0, 1]) / s,
            (R[..., 0, 2] + R[..., 2, 0]) / s,
            (R[..., 1, 2] + R[..., 2, 1]) / s,
            0.25 * s,
        ],
        axis=-1,
    )
    q = np.where((k == 0)[..., None], qw, q)
    q = np.where((k == 1)[..., None], qx, q)
    q = np.where((k == 2)[..., None], qy, q)
    q = np.where((k == 3)[..., None], qz, q)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where((q[..., :1] < 0), -q, q)


def quat_to_matrix(quat_wxyz: ArrayLike) -> Array:
    """Rotation matrices of quaternions ``wxyz`` (..., 4); normalized first.

    Raises:
        InputError: a quaternion of (near) zero norm.
    """
    q = as_vectors(quat_wxyz, "quat_wxyz", 4)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    if q.size and (n < 1e-12).any():
        raise InputError(
            "quat_wxyz has a quaternion of zero norm; a rotation needs a unit quaternion"
        )
    q = q / np.where(n == 0, 1.0, n)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    R = np.empty(q.shape[:-1] + (3, 3))
    R[..., 0, 0] = 1 - 2 * (y * y + z * z)
    R[..., 0, 1] = 2 * (x * y - z * w)
    R[..., 0, 2] = 2 * (x * z + y * w)
    R[..., 1, 0] = 2 * (x * y + z * w)
    R[..., 1, 1] = 1 - 2 * (x * x + z * z)
    R[..., 1, 2] = 2 * (y * z - x * w)
    R[..., 2, 0] = 2 * (x * z - y * w)
    R[..., 2, 1] = 2 * (y * z + x * w)
    R[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def quat_to_rotvec(quat_wxyz: ArrayLike) -> Array:
    """Rotation vectors (angle in [0, pi]) of quaternions ``wxyz``."""
    q = as_vectors(quat_wxyz, "quat_wxyz", 4)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    q = np.where(q[..., :1] < 0, -q, q)
    w = q[..., 0]
    v = q[..., 1:]
    nv = np.linalg.norm(v, axis=-1)
    angle = 2.0 * np.arctan2(nv, w)
    small = nv < _SMALL
    factor = np.where(small, 2.0 / np.where(w == 0, 1.0, w), angle / np.where(small, 1.0, nv))
    return v * factor[..., None]


def log(R: ArrayLike) -> Array:
    """Rotation vector (angle in [0, pi]) of rotation matrices (..., 3, 3).

    Computed through Shepperd's quaternion, so it is accurate for angles near 0 and near pi.
    """
    return quat_to_rotvec(matrix_to_quat(R))


matrix_to_rotvec = log


def rotvec_to_quat(rotvec: ArrayLike) -> Array:
    """Quaternions ``wxyz`` (w >= 0) of rotation vectors.

    Deprecated: nothing in ikstack uses it; ``matrix_to_quat(exp(rotvec))`` gives the same
    quaternions. It goes in the next release.
    """
    warn_deprecated(
        "ikstack.spatial.so3.rotvec_to_quat is deprecated and goes in the next "
        "release; use matrix_to_quat(exp(rotvec))"
    )
    w = as_vectors(rotvec, "rotvec", 3)
    theta = np.linalg.norm(w, axis=-1)
    small = theta < _SMALL
    half = 0.5 * theta
    s = np.where(small, 0.5 - theta**2 / 48.0, np.sin(half) / np.where(small, 1.0, theta))
    q = np.concatenate([np.cos(half)[..., None], w * s[..., None]], axis=-1)
    return np.where(q[..., :1] < 0, -q, q)


def angle_between(R1: ArrayLike, R2: ArrayLike) -> Array:
    """Geodesic angle [rad] between rotations: ``|log(R1 R2^T)|``."""
    R1 = np.asarray(R1, dtype=np.float64)
    R2 = np.asarray(R2, dtype=np.float64)
    return np.linalg.norm(log(R1 @ np.swapaxes(R2, -1, -2)), axis=-1)


def slerp(R0: ArrayLike, R1: ArrayLike, s: ArrayLike) -> Array:
    """Geodesic interpolation ``R0 exp(s log(R0^T R1))``, ``s`` in [0, 1] (broadcast)."""
    R0 = np.asarray(R0, dtype=np.float64)
    R1 = np.asarray(R1, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64)
    w = log(np.swapaxes(R0, -1, -2) @ R1)
    return R0 @ exp(w * s[..., None])


def rpy_to_matrix(rpy: ArrayLike) -> Array:
    """URDF roll-pitch-yaw (fixed axes X, then Y, then Z): ``Rz(yaw) Ry(pitch) Rx(roll)``."""
    rpy = as_vectors(rpy, "rpy", 3)
    r, p, y = rpy[..., 0], rpy[..., 1], rpy[..., 2]
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    R = np.empty(rpy.shape[:-1] + (3, 3))
    R[..., 0, 0] = cy * cp
    R[..., 0, 1] = cy * sp * sr - sy * cr
    R[..., 0, 2] = cy * sp * cr + sy * sr
    R[..., 1, 0] = sy * cp
    R[..., 1, 1] = sy * sp * sr + cy * cr
    R[..., 1, 2] = sy * sp * cr - cy * sr
    R[..., 2, 0] = -sp
    R[..., 2, 1] = cp * sr
    R[..., 2, 2] = cp * cr
    return R


def euler_xyz_to_matrix(angles: ArrayLike) -> Array:
    """Intrinsic XYZ Euler angles ``(a, b, c)`` [rad]: ``Rx(a) Ry(b) Rz(c)``."""
    e = as_vectors(angles, "angles", 3)
    a, b, c = e[..., 0], e[..., 1], e[..., 2]
    ca, sa, cb, sb, cc, sc = np.cos(a), np.sin(a), np.cos(b), np.sin(b), np.cos(c), np.sin(c)
    R = np.empty(e.shape[:-1] + (3, 3))
    R[..., 0, 0] = cb * cc
    R[..., 0, 1] = -cb * sc
    R[..., 0, 2] = sb
    R[..., 1, 0] = sa * sb * cc + ca * sc
    R[..., 1, 1] = -sa * sb * sc + ca * cc
    R[..., 1, 2] = -sa * cb
    R[..., 2, 0] = -ca * sb * cc + sa * sc
    R[..., 2, 1] = ca * sb * sc + sa * cc
    R[..., 2, 2] = ca * cb
    return R


def matrix_to_euler_xyz(R: ArrayLike) -> Array:
    """Intrinsic XYZ Euler angles of ``R = Rx(a) Ry(b) Rz(c)``; ``b`` in [-pi/2, pi/2].

    At the gimbal lock (``|b| = pi/2``) ``c`` is set to 0 and ``a`` carries the rotation.
    """
    R = np.asarray(R, dtype=np.float64)
    sb = np.clip(R[..., 0, 2], -1.0, 1.0)
    b = np.arcsin(sb)
    lock = np.abs(sb) > 1.0 - 1e-12
    a = np.where(
        lock, np.arctan2(R[..., 2, 1], R[..., 1, 1]), np.arctan2(-R[..., 1, 2], R[..., 2, 2])
    )
    c = np.where(lock, 0.0, np.arctan2(-R[..., 0, 1], R[..., 0, 0]))
    return np.stack([a, b, c], axis=-1)


def wrap_angle(a: ArrayLike) -> Array:
    """Angles wrapped into [-pi, pi)."""
    a = np.asarray(a, dtype=np.float64)
    return (a + np.pi) % (2.0 * np.pi) - np.pi
