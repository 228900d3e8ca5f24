"""Boundary checks for arrays: shapes, finiteness, rigid transforms.

These raise :mod:`ikstack.errors` exceptions whose messages name the argument, what was wrong
and what would be accepted. They return float64 arrays that never alias the caller's input
when a conversion was needed.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack.errors import InputError, NonFiniteError, NotRigidTransformError, ShapeError

Array = NDArray[np.float64]

#: Default tolerance on ``R^T R - I`` and on the last row of a rigid transform.
RIGID_ATOL = 1e-6


def as_float_array(x: ArrayLike, name: str) -> Array:
    """``x`` as a float64 array, raising a named error for non-numeric input (strings, bytes,
    complex numbers, ragged nesting); booleans and integers are accepted."""
    if type(x) is np.ndarray and x.dtype == np.float64:
        return x
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} is not a numeric array: {exc}") from None
    if raw.dtype.kind not in "biufO":
        what = {"c": "complex numbers", "U": "strings", "S": "bytes"}.get(
            raw.dtype.kind, f"dtype {raw.dtype}"
        )
        raise InputError(f"{name} holds {what}; real numbers are required")
    if raw.dtype.kind == "O" and any(isinstance(v, (str, bytes, complex)) for v in raw.reshape(-1)):
        raise InputError(f"{name} holds strings or complex numbers; real numbers are required")
    try:
        arr = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name} is not a numeric array: {exc}") from None
    return arr


def check_finite(arr: NDArray[np.floating], name: str) -> None:
    """Raise :class:`NonFiniteError` naming the first non-finite entry of ``arr``."""
    ok = np.isfinite(arr)
    if not ok.all():
        idx = tuple(int(i) for i in np.argwhere(~ok)[0])
        raise NonFiniteError(name, idx)


def as_vectors(x: ArrayLike, name: str, n: int, allow_empty: bool = True) -> Array:
    """``x`` of shape ``(..., n)``, finite, float64."""
    arr = as_float_array(x, name)
    if arr.ndim == 0 or arr.shape[-1] != n:
        raise ShapeError(name, arr.shape, f"(..., {n})")
    if not allow_empty and arr.size == 0:
        raise ShapeError(name, arr.shape, f"(..., {n}) with at least one row")
    check_finite(arr, name)
    return arr


def as_rotations(R: ArrayLike, name: str = "R", atol: float = RIGID_ATOL) -> Array:
    """``R`` of shape ``(..., 3, 3)``: finite, orthonormal, determinant +1."""
    arr = as_float_array(R, name)
    if arr.ndim < 2 or arr.shape[-2:] != (3, 3):
        raise ShapeError(name, arr.shape, "(..., 3, 3)")
    check_finite(arr, name)
    _check_orthonormal(arr, name, atol)
    return arr


def as_transforms(T: ArrayLike, name: str = "T", atol: float = RIGID_ATOL) -> Array:
    """``T`` of shape ``(..., 4, 4)``: a finite rigid transform, checked entry by entry.

    Raises:
        ShapeError: not ``(..., 4, 4)``.
        NonFiniteError: NaN or infinity anywhere.
        NotRigidTransformError: last row not ``[0, 0, 0, 1]``, rotation not orthonormal, or
            determinant not +1 (a reflection), each within ``atol``.
    """
    arr = as_float_array(T, name)
    if arr.ndim < 2 or arr.shape[-2:] != (4, 4):
        raise ShapeError(name, arr.shape, "(..., 4, 4) homogeneous transforms")
    check_finite(arr, name)
    if arr.size:
        last = arr[..., 3, :]
        bad = np.abs(last - np.array([0.0, 0.0, 0.0, 1.0])).max(axis=-1) > atol
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(np.atleast_1d(bad))[0])
            row = last.reshape(-1, 4)[_flat(idx, bad)]
            raise NotRigidTransformError(
                f"{name}{_at(idx, arr.ndim)} has last row {row.tolist()}; "
                "a rigid transform's last row is [0, 0, 0, 1]"
            )
        _check_orthonormal(arr[..., :3, :3], name, atol)
    return arr


def _flat(idx: tuple[int, ...], bad: NDArray[np.bool_]) -> int:
    if bad.ndim == 0:
        return 0
    return int(np.ravel_multi_index(idx, bad.shape))


def _at(idx: tuple[int, ...], ndim: int) -> str:
    return "" if ndim == 2 else f"[{', '.join(str(i) for i in idx)}]"


def _check_orthonormal(R: Array, name: str, atol: float) -> None:
    if R.size == 0:
        return
    RtR = np.einsum("...ji,...jk->...ik", R, R)
    dev = np.abs(RtR - np.eye(3)).max(axis=(-2, -1))
    det = np.linalg.det(R)
    bad_orth = np.atleast_1d(dev > atol)
    if bad_orth.any():
        idx = tuple(int(i) for i in np.argwhere(bad_orth)[0])
        worst = float(np.atleast_1d(dev).reshape(-1)[_flat(idx, bad_orth)])
        raise NotRigidTransformError(
            f"{name}{_at(idx, R.ndim)}: rotation part is not orthonormal "
            f"(max |R^T R - I| = {worst:.3g}, tolerance {atol:.1g})"
        )
    bad_det = np.atleast_1d(det < 0)
    if bad_det.any():
        idx = tuple(int(i) for i in np.argwhere(bad_det)[0])
        raise NotRigidTransformError(
            f"{name}{_at(idx, R.ndim)}: rotation part has determinant -1 (a reflection); "
            "a rotation has determinant +1"
        )
