"""Shared arms and the limit checks every servo test applies to every reference."""

from __future__ import annotations

import numpy as np

import ikstack.robots as robots
from ikstack.servo import ServoConfig

#: Franka's published joint acceleration limits [rad/s^2]
PANDA_ACC = [15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0]
#: Universal Robots' default joint acceleration [rad/s^2]
UR5_ACC = 15.0


def arm(name: str):
    """An arm with finite acceleration limits, and a ServoConfig suited to it."""
    if name == "planar2":
        return robots.load("planar2"), ServoConfig(task_axes=(0, 1), max_linear_speed=0.5)
    if name == "ur5":
        return robots.load("ur5").with_limits(acceleration=UR5_ACC), ServoConfig()
    if name == "panda":
        panda = robots.load("panda").with_limits(acceleration=PANDA_ACC)
        return panda, ServoConfig(
            nullspace_gain=0.5, nullspace_reference=panda.middle(), joint_centering_gain=0.1
        )
    raise KeyError(name)


def braking_path(v: float, c: float, dt: float) -> float:
    """Distance covered from speed ``|v|`` (this cycle included) when each later cycle's speed
    drops by ``c`` until it stops: ``dt (|v| + (|v| - c) + ...)`` over the positive terms."""
    s = abs(v)
    if s == 0.0:
        return 0.0
    if not np.isfinite(c):
        return s * dt
    total, k = 0.0, 0
    while s - k * c > 0.0:
        total += s - k * c
        k += 1
    return dt * total


def check_reference(chain, q_prev, dq_prev, result, dt, tol=1e-9):
    """Every limit the kernel promises, for one reference following state (q_prev, dq_prev)."""
    q, dq = result.reference.q, result.reference.dq
    assert q.shape == (chain.dof,) and dq.shape == (chain.dof,)
    assert np.all(np.isfinite(q)) and np.all(np.isfinite(dq))
    lo, hi = chain.lower, chain.upper
    assert np.all(q >= lo - tol) and np.all(q <= hi + tol), (q, lo, hi)
    vmax = chain.velocity_limits
    assert np.all(np.abs(dq) <= vmax * (1 + tol) + tol), (dq, vmax)
    amax = chain.acceleration_limits
    assert np.all(np.abs(dq - dq_prev) <= amax * dt * (1 + 1e-7) + tol), (dq - dq_prev, amax * dt)
    # the reference can still stop inside the limits at the acceleration limit
    c = amax * dt
    for i in range(chain.dof):
        if dq[i] > 0 and np.isfinite(hi[i]):
            assert q[i] + braking_path(dq[i], c[i], dt) - dq[i] * dt <= hi[i] + 1e-7
        if dq[i] < 0 and np.isfinite(lo[i]):
            assert q[i] - braking_path(dq[i], c[i], dt) - dq[i] * dt >= lo[i] - 1e-7
