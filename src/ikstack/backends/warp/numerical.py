"""Batched numerical IK on Warp: Levenberg-Marquardt with restarts, one thread per target.

Each target iterates ``q <- clip(q + (J^T J + (E + damping) I)^{-1} J^T e)`` (Sugihara's
damping, ``E = 1/2 |e|^2``) from the seed, then from random in-limit restarts drawn by Warp's
counter-based generator (deterministic for a given ``rng_seed``). Success is certified on the
host by :func:`ikstack.ik.certify`, the same FK gate and limits as the CPU path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ikstack.backends.warp._kernels import numerical_kernels
from ikstack.backends.warp.kinematics import _prepare
from ikstack.errors import InputError, ShapeError
from ikstack.ik import IKResult, IKStatus, certify
from ikstack.model import Chain
from ikstack.spatial import as_transforms, as_vectors


def solve(
    chain: Chain,
    T_base_tcp: ArrayLike,
    seed: ArrayLike | None = None,
    *,
    device: str = "cpu",
    max_iterations: int = 100,
    max_restarts: int = 30,
    position_tolerance: float = 1e-5,
    rotation_tolerance: float = 1e-5,
    damping: float = 1e-4,
    rng_seed: int = 0,
    constraint_rounds: int = 3,
) -> IKResult:
    """Solve N targets on ``device``; see the module docstring.

    Targets that converge onto a configuration violating a coupled-joint constraint are solved
    again from fresh random restarts, up to ``constraint_rounds`` times (the kernel itself knows
    only the box limits).

    Args:
        T_base_tcp: (N, 4, 4) or (4, 4) targets in the base frame.
        seed: (N, dof), (1, dof) or (dof,); default the middle of the limits.
        max_iterations: iterations per attempt; max_restarts: random restarts after the seed.
        position_tolerance [m], rotation_tolerance [rad]: the FK gate.
    """
    if max_iterations < 1 or max_restarts < 0:
        raise InputError("max_iterations must be >= 1 and max_restarts >= 0")
    opts = _Options(device, int(max_iterations), int(max_restarts), float(position_tolerance),
                    float(rotation_tolerance), float(damping))
    res = _solve_once(chain, T_base_tcp, seed, rng_seed, opts)
    T = as_transforms(T_base_tcp, "T_base_tcp").reshape(-1, 4, 4)
    for r in range(constraint_rounds):
        redo = np.flatnonzero(res.status == IKStatus.CONSTRAINT)
        if redo.size == 0:
            break
        rng = np.random.default_rng(rng_seed + 1000 + r)
        again = _solve_once(chain, T[redo], chain.random_q(rng, redo.size), rng_seed + 1 + r,
                            opts)
        fields = {f: getattr(res, f).copy() for f in
                  ("q", "success", "position_error", "rotation_error", "status", "iterations",
                   "restarts")}
        fields["iterations"][redo] += again.iterations
        fields["restarts"][redo] += again.restarts + 1
        take = redo[again.success | (again.status != IKStatus.CONSTRAINT)]
        sel = np.isin(redo, take)
        for f in ("q", "success", "position_error", "rotation_error", "status"):
            fields[f][take] = getattr(again, f)[sel]
        res = IKResult(method=res.method, **fields)
    return res


@dataclass(frozen=True)
class _Options:
    """The kernel's settings (see :func:`solve`)."""

    device: str
    max_iterations: int
    max_restarts: int
    position_tolerance: float
    rotation_tolerance: float
    damping: float


def _solve_once(chain: Chain, T_base_tcp: ArrayLike, seed: ArrayLike | None, rng_seed: int,
                o: _Options) -> IKResult:
    """One kernel launch over every target, certified on the host."""
    T = as_transforms(T_base_tcp, "T_base_tcp").reshape(-1, 4, 4)
    n = T.shape[0]
    dof = chain.dof
    s0 = np.atleast_2d(chain.middle() if seed is None else as_vectors(seed, "seed", dof))
    if s0.ndim != 2 or s0.shape[0] not in (1, n):
        raise ShapeError("seed", s0.shape, f"({n}, {dof}), (1, {dof}) or ({dof},)")
    s = chain.clip(np.ascontiguousarray(np.broadcast_to(s0, (n, dof)), dtype=np.float64))
    wp, dev, _flat, _b, d = _prepare(chain, np.zeros((1, dof)), o.device)
    lo = np.where(np.isfinite(chain.lower), chain.lower, -np.pi)
    hi = np.where(np.isfinite(chain.upper), chain.upper, np.pi)
    if n == 0:
        z = np.zeros(0)
        return IKResult(np.zeros((0, dof)), np.zeros(0, bool), z, z, np.zeros(0, np.int64),
                        "warp:lm", np.zeros(0, np.int64), np.zeros(0, np.int64))
    f64 = wp.float64
    arrays = dict(
        q=wp.empty((n, dof), dtype=f64, device=dev), zs=wp.empty((n, dof), dtype=wp.vec3d, device=dev),
        os=wp.empty((n, dof), dtype=wp.vec3d, device=dev), J=wp.empty((n, 6, dof), dtype=f64, device=dev),
        A=wp.empty((n, dof, dof), dtype=f64, device=dev), e=wp.empty((n, 6), dtype=f64, device=dev),
        g=wp.empty((n, dof), dtype=f64, device=dev), q_out=wp.empty((n, dof), dtype=f64, device=dev),
        iters=wp.empty(n, dtype=wp.int32, device=dev), restarts=wp.empty(n, dtype=wp.int32, device=dev),
        ok=wp.empty(n, dtype=wp.int32, device=dev),
    )
    wp.launch(
        numerical_kernels()["lm"], dim=n, device=dev,
        inputs=[wp.array(T, dtype=wp.mat44d, device=dev), wp.array(s, dtype=f64, device=dev),
                wp.array(lo, dtype=f64, device=dev), wp.array(hi, dtype=f64, device=dev),
                d["Rs"], d["ps"], d["kinds"], d["R_end"], d["p_end"], o.max_iterations,
                o.max_restarts, o.position_tolerance, o.rotation_tolerance, o.damping,
                int(rng_seed), arrays["q"], arrays["zs"], arrays["os"],
                arrays["J"], arrays["A"], arrays["e"], arrays["g"], arrays["q_out"],
                arrays["iters"], arrays["restarts"], arrays["ok"]],
    )
    q = arrays["q_out"].numpy().astype(np.float64)
    finite = np.all(np.isfinite(q), axis=1)
    q = np.where(finite[:, None], q, s)
    ok, perr, rerr = certify(chain, q, T, o.position_tolerance, o.rotation_tolerance)
    reached = (perr <= o.position_tolerance) & (rerr <= o.rotation_tolerance)
    status = np.full(n, int(IKStatus.ITERATION_LIMIT), dtype=np.int64)
    status[reached & ~chain.within_limits(q)] = IKStatus.JOINT_LIMITS
    status[reached & chain.within_limits(q) & ~ok] = IKStatus.CONSTRAINT
    status[ok] = IKStatus.SUCCESS
    q = np.where(ok[:, None], q, chain.clip(q))
    return IKResult(q, ok, perr, rerr, status, "warp:lm",
                    arrays["iters"].numpy().astype(np.int64),
                    arrays["restarts"].numpy().astype(np.int64))
