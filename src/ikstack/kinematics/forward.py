"""Batched forward kinematics and geometric Jacobians of a :class:`~ikstack.model.Chain`.

Conventions (docs/design.md): poses ``(..., 4, 4)`` in the chain's base frame; Jacobians
``(..., 6, dof)`` with rows ``[linear; angular]`` in the base frame and the linear part at the
TCP origin (Pinocchio's LOCAL_WORLD_ALIGNED). ``q`` may be ``(dof,)`` or ``(..., dof)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack.errors import ShapeError
from ikstack.kinematics import _kernels as K
from ikstack.model import Chain, JointType
from ikstack.model.chain_cache import ChainCache
from ikstack.spatial import as_float_array, check_finite

Array = NDArray[np.float64]

#: batches at least this large run on all cores
PARALLEL_THRESHOLD = 1024

#: compiled data of the chains in use (a few kilobytes each)
_COMPILED: ChainCache[CompiledChain] = ChainCache("compiled chains", 256)
_compiled_of = _COMPILED.get  # bound once: every FK call reads it


@dataclass(frozen=True)
class CompiledChain:
    """A chain's data laid out for the compiled kernels (see :mod:`._kernels`)."""

    Rs: Array  # (n, 3, 3) canonical origin rotations
    ps: Array  # (n, 3) canonical origin translations
    kinds: NDArray[np.int64]  # (n,) ROT or PRISM
    Cs: Array  # (n, 3, 3) rotation taking local z onto each joint's axis
    R_end: Array  # (3, 3) last joint frame (canonical) to TCP
    p_end: Array  # (3,)
    dof: int


def _rotation_onto_z(axis: Array) -> Array:
    """A rotation ``C`` with ``C @ e_z = axis`` (identity when already z)."""
    z = np.array([0.0, 0.0, 1.0])
    a = axis / np.linalg.norm(axis)
    v = np.cross(z, a)
    s = np.linalg.norm(v)
    c = float(z @ a)
    if s < 1e-12:
        return np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
    k = v / s
    Kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    ang = np.arctan2(s, c)
    return np.eye(3) + np.sin(ang) * Kx + (1 - np.cos(ang)) * (Kx @ Kx)


def compile_chain(chain: Chain) -> CompiledChain:
    """The chain's compiled data, built once per chain (kept while the chain lives, in a
    bounded cache: :class:`~ikstack.model.chain_cache.ChainCache`)."""
    cached = _compiled_of(id(chain))
    if cached is not None:
        return cached
    n = chain.dof
    Cs = np.array([_rotation_onto_z(a) for a in chain.axes])
    Rs = np.empty((n, 3, 3))
    ps = np.empty((n, 3))
    prev_C = np.eye(3)
    for i in range(n):
        O = chain.origins[i]
        Rs[i] = prev_C.T @ O[:3, :3] @ Cs[i]
        ps[i] = prev_C.T @ O[:3, 3]
        prev_C = Cs[i]
    T_end = chain.T_last_tip @ chain.T_tip_tcp
    R_end = prev_C.T @ T_end[:3, :3]
    p_end = prev_C.T @ T_end[:3, 3]
    kinds = np.array(
        [K.PRISM if t == JointType.PRISMATIC else K.ROT for t in chain.joint_types], dtype=np.int64
    )
    cc = CompiledChain(Rs, ps, kinds, Cs, R_end, p_end, n)
    return _COMPILED.add(chain, cc)


def _prep_q(chain: Chain, q: ArrayLike) -> tuple[Array, tuple[int, ...]]:
    arr = as_float_array(q, "q")
    if arr.ndim == 0 or arr.shape[-1] != chain.dof:
        raise ShapeError("q", arr.shape, f"({chain.dof},) or (..., {chain.dof}) for {chain!r}")
    batch = arr.shape[:-1]
    flat = np.ascontiguousarray(arr.reshape(-1, chain.dof))
    if not K.all_finite(flat):
        check_finite(arr, "q")
    return flat, batch


def fk(chain: Chain, q: ArrayLike) -> Array:
    """``T_base_tcp`` (..., 4, 4) for joint positions ``q`` (..., dof).

    Raises:
        ShapeError: ``q``'s last axis is not ``dof``.
        NonFiniteError: ``q`` holds NaN or infinity.
    """
    c = compile_chain(chain)
    if type(q) is np.ndarray and q.ndim == 1 and q.shape[0] == c.dof and q.dtype == np.float64:
        out = np.empty((4, 4))
        if not K.fk_one(q, c.Rs, c.ps, c.kinds, c.R_end, c.p_end, out):
            check_finite(q, "q")
        return out
    flat, batch = _prep_q(chain, q)
    out = np.empty((flat.shape[0], 4, 4))
    kern = K.fk_batch_parallel if flat.shape[0] >= PARALLEL_THRESHOLD else K.fk_batch
    kern(flat, c.Rs, c.ps, c.kinds, c.R_end, c.p_end, out)
    return out.reshape(batch + (4, 4))


def jacobian(chain: Chain, q: ArrayLike) -> Array:
    """Geometric Jacobian (..., 6, dof): ``[linear; angular]``, base frame, at the TCP origin.

    Column ``i`` is ``[z_i x (p_tcp - p_i); z_i]`` for a revolute joint and ``[z_i; 0]`` for a
    prismatic one, with ``z_i`` and ``p_i`` the joint's axis and origin in the base frame.
    """
    return fk_jacobian(chain, q)[1]


def fk_jacobian(chain: Chain, q: ArrayLike) -> tuple[Array, Array]:
    """``(T_base_tcp, J)`` from one pass: (..., 4, 4) and (..., 6, dof)."""
    c = compile_chain(chain)
    if type(q) is np.ndarray and q.ndim == 1 and q.shape[0] == c.dof and q.dtype == np.float64:
        J = np.empty((6, c.dof))
        T = np.empty((4, 4))
        if not K.jac_one(q, c.Rs, c.ps, c.kinds, c.R_end, c.p_end, J, T):
            check_finite(q, "q")
        return T, J
    flat, batch = _prep_q(chain, q)
    n = flat.shape[0]
    J = np.empty((n, 6, c.dof))
    T = np.empty((n, 4, 4))
    kern = K.jac_batch_parallel if n >= PARALLEL_THRESHOLD else K.jac_batch
    kern(flat, c.Rs, c.ps, c.kinds, c.R_end, c.p_end, J, T)
    return T.reshape(batch + (4, 4)), J.reshape(batch + (6, c.dof))


def fk_links(chain: Chain, q: ArrayLike) -> Array:
    """Frames (..., dof + 1, 4, 4): each joint's child link (``chain.link_names``), then the TCP."""
    c = compile_chain(chain)
    flat, batch = _prep_q(chain, q)
    out = np.empty((flat.shape[0], c.dof + 1, 4, 4))
    K.links_batch(flat, c.Rs, c.ps, c.kinds, c.Cs, c.R_end, c.p_end, out)
    return out.reshape(batch + (c.dof + 1, 4, 4))
