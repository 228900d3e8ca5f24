"""Batched FK and Jacobians as Warp kernels in float64, on CPU or CUDA.

They evaluate the same canonical chain data as the compiled CPU path
(:func:`ikstack.kinematics.compile_chain`) with functions generated from the CPU kernels'
source, so results agree to rounding.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack.backends.warp._kernels import kinematics_kernels as _kernels
from ikstack.backends.warp.runtime import device as get_device
from ikstack.backends.warp.runtime import warp
from ikstack.errors import ShapeError
from ikstack.ik._data import chain_data
from ikstack.kinematics import compile_chain
from ikstack.model import Chain
from ikstack.model.chain_cache import ChainCache
from ikstack.spatial import check_finite

Array = NDArray[np.float64]

#: the compiled chain data of the chains in use (the chain record as a device struct), on
#: each device they ran on
_DEVICE_DATA: ChainCache[Any] = ChainCache("Warp chain data", 32)


def _prepare(chain: Chain, q: ArrayLike, device: str) -> tuple[Any, Any, NDArray, tuple, Any]:
    wp = warp()
    dev = get_device(device)
    c = compile_chain(chain)
    arr = np.asarray(q, dtype=np.float64)
    if arr.ndim == 0 or arr.shape[-1] != chain.dof:
        raise ShapeError("q", arr.shape, f"({chain.dof},) or (..., {chain.dof})")
    check_finite(arr, "q")
    batch = arr.shape[:-1]
    flat = np.ascontiguousarray(arr.reshape(-1, chain.dof))
    key = str(dev)
    data = _DEVICE_DATA.get((id(chain), key))
    if data is None:
        from ikstack.backends.warp._structs import CHAIN_T

        data = _DEVICE_DATA.add(chain, CHAIN_T.make(chain_data(c), dev), key)
    return wp, dev, flat, batch, data


def fk(chain: Chain, q: ArrayLike, device: str = "cpu") -> Array:
    """``T_base_tcp`` (..., 4, 4) computed by a Warp kernel on ``device``."""
    wp, dev, flat, batch, d = _prepare(chain, q, device)
    n = flat.shape[0]
    if n == 0:
        return np.zeros(batch + (4, 4))
    qd = wp.array(flat, dtype=wp.float64, device=dev)
    out = wp.empty((n, 4, 4), dtype=wp.float64, device=dev)
    wp.launch(_kernels()["fk"], dim=n, inputs=[qd, d, out], device=dev)
    return out.numpy().reshape(batch + (4, 4))


def fk_jacobian(chain: Chain, q: ArrayLike, device: str = "cpu") -> tuple[Array, Array]:
    """``(T_base_tcp, J)`` (..., 4, 4) and (..., 6, dof) computed by a Warp kernel."""
    wp, dev, flat, batch, d = _prepare(chain, q, device)
    n, dof = flat.shape
    if n == 0:
        return np.zeros(batch + (4, 4)), np.zeros(batch + (6, dof))
    qd = wp.array(flat, dtype=wp.float64, device=dev)
    out = wp.empty((n, 4, 4), dtype=wp.float64, device=dev)
    J = wp.empty((n, 6, dof), dtype=wp.float64, device=dev)
    wp.launch(_kernels()["jac"], dim=n, inputs=[qd, d, out, J], device=dev)
    return out.numpy().reshape(batch + (4, 4)), J.numpy().reshape(batch + (6, dof))


def jacobian(chain: Chain, q: ArrayLike, device: str = "cpu") -> Array:
    """Geometric Jacobian (..., 6, dof) computed by a Warp kernel."""
    return fk_jacobian(chain, q, device)[1]
