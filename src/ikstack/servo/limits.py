r"""Per-cycle joint velocity bounds, and the re-validation of a final reference.

For joint ``i`` at position ``q`` moving at ``v``, cycle ``dt``, the bounds on the next
velocity ``v'`` combine (in order of priority):

1. **position (hard)**: after this cycle the joint must still be able to stop inside its hard
   limits braking at its acceleration limit ``a``. With sampled (discrete) braking the path is
   ``dt * sum_{k>=0} max(v' - k a dt, 0)``; the largest ``v'`` whose path fits in the distance
   ``D`` to the limit is, with ``c = a dt`` and ``m = floor((sqrt(1 + 8 D/(c dt)) - 1)/2)``,
   ``v' = D/((m+1) dt) + c m / 2`` (exact, not the continuous ``sqrt(2 a D)``).
2. **velocity**: ``|v'| <= v_max``.
3. **acceleration**: ``|v' - v| <= a dt``.
3b. **working limits** (the hard ones less the chain's kinematic margin): the same braking
   bound toward them. A joint already inside the margin band may stop or move out of it,
   never deeper; the bound yields to 1-3 only for a state the servo did not produce itself.
4. **soft margin**: the same braking bound toward ``limit - margin``; inside the margin a joint
   may stop or move away, never further in. Yields to 1-3.
5. **jerk** (where the chain has one): ``|(v' - v)/dt - a_prev| <= j dt``. Yields to 1-4.

If the measured state makes 1-3 incompatible (it cannot happen for a state the kernel produced
itself), position and velocity win and the point nearest the acceleration interval is used.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# bits of the summary code returned by cycle_bounds
CONFLICT = 1
JERK_RELAXED = 2

#: relative slack kept from hard position limits against rounding
_EPS = 1e-12


@njit(cache=True)
def braking_speed(dist, c, dt):  # pragma: no cover - compiled
    """Largest ``v >= 0`` whose sampled braking path ``dt sum_k max(v - k c, 0)`` fits ``dist``."""
    if dist <= 0.0:
        return 0.0
    D = dist / dt
    if not np.isfinite(c):
        return D
    m = np.floor((np.sqrt(1.0 + 8.0 * D / c) - 1.0) * 0.5)
    if m < 0.0:
        m = 0.0
    v = D / (m + 1.0) + c * m * 0.5
    # guard against rounding in m: the path of v must fit
    if (m + 1.0) * v - c * m * (m + 1.0) * 0.5 > D * (1.0 + 1e-12):
        v = D / (m + 1.0) + c * (m - 1.0) * 0.5 if m >= 1.0 else D
    return v


@njit(cache=True, inline="always")
def _braking_cap(dist, c, dt, cap):  # pragma: no cover - compiled
    """:func:`braking_speed`, or ``inf`` when it is certainly at least ``cap``.

    The sampled braking path of ``v`` is at most ``dt (v^2/(2c) + v/2 + c/8)``, so a distance
    covering that for ``X = (cap + c) (1 + 1e-9)`` admits a speed of at least ``X`` (the
    ``c/2`` and the factor cover :func:`braking_speed`'s rounding guard). Every use of the
    result in :func:`cycle_bounds` is a ``min``/comparison with values at most ``cap``, so
    ``inf`` decides exactly as the value would, without the square root and divisions.
    """
    if c > 0.0 and c < np.inf and cap < np.inf:
        x = (cap + c) * (1.0 + 1e-9)
        if dist * (2.0 * c) >= dt * (x * x + x * c + 0.25 * c * c) * (1.0 + 1e-9):
            return np.inf
    return braking_speed(dist, c, dt)


@njit(cache=True, inline="always")
def _pos_bound(dist, limit, other, c, dt, cap):  # pragma: no cover - compiled
    """Braking speed toward ``limit`` from ``dist`` away (``inf`` for an infinite limit)."""
    if not np.isfinite(limit):
        return np.inf
    span = abs(limit - other) if np.isfinite(other) else abs(limit) + 1.0
    return _braking_cap(dist - _EPS * (1.0 + abs(limit) + span), c, dt, cap)


@njit(cache=True)
def braking_path(v, c, dt):  # pragma: no cover - compiled
    """Distance covered from velocity ``|v|`` (this cycle included) braking at ``c`` per cycle."""
    s = abs(v)
    if s == 0.0:
        return 0.0
    if not np.isfinite(c):
        return s * dt
    m = np.ceil(s / c) - 1.0
    if m < 0.0:
        m = 0.0
    return dt * ((m + 1.0) * s - c * m * (m + 1.0) * 0.5)


@njit(cache=True)
def cycle_bounds(q, v, a_prev, use_jerk, dt, lo, hi, hlo, hhi, margin, vmax, amax, jmax, lower,
                 upper, pos_bind):  # pragma: no cover - compiled
    """Velocity box ``[lower, upper]`` for this cycle (see the module docstring).

    ``hlo``/``hhi`` are the hard limits, ``lo``/``hi`` the working limits inside them (the
    hard ones less the chain's kinematic margin). A joint between the two (the margin band)
    may stop or move out of the band, never deeper; braking toward the hard limit is hard.
    ``pos_bind[i]`` is +1 (-1) when joint ``i``'s upper (lower) bound comes from its position
    limit, else 0. Returns a summary code (``CONFLICT``, ``JERK_RELAXED`` bits).
    """
    n = q.shape[0]
    code = 0
    for i in range(n):
        c = amax[i] * dt
        qi = q[i]
        # 1. hard position (braking to the hard limits)
        ub_p = _pos_bound(hhi[i] - qi, hhi[i], hlo[i], c, dt, vmax[i])
        lb_p = -_pos_bound(qi - hlo[i], hlo[i], hhi[i], c, dt, vmax[i])
        # 2. velocity
        p_lo = max(-vmax[i], lb_p)
        p_hi = min(vmax[i], ub_p)
        # 3. acceleration
        a_lo = v[i] - c
        a_hi = v[i] + c
        h_lo = max(p_lo, a_lo)
        h_hi = min(p_hi, a_hi)
        if h_lo > h_hi:
            if h_lo - h_hi > 1e-9 * (1.0 + abs(h_lo)):
                code |= CONFLICT
            if a_hi < p_lo:
                h_lo = p_lo
                h_hi = p_lo
            else:
                h_lo = p_hi
                h_hi = p_hi
        # 3b. working limits (the margin band): yields to 1-3 only for a state the servo did
        # not produce itself (it never drives a joint into the band)
        ub_w = ub_p
        lb_w = lb_p
        if hi[i] < hhi[i]:
            ub_w = _pos_bound(hi[i] - qi, hi[i], lo[i], c, dt, vmax[i])
        if lo[i] > hlo[i]:
            lb_w = -_pos_bound(qi - lo[i], lo[i], hi[i], c, dt, vmax[i])
        w_lo = max(h_lo, lb_w)
        w_hi = min(h_hi, ub_w)
        if w_lo > w_hi:
            if ub_w < h_lo:
                w_lo = h_lo
                w_hi = h_lo
            else:
                w_lo = h_hi
                w_hi = h_hi
        h_lo = w_lo
        h_hi = w_hi
        ub_p = min(ub_p, ub_w)
        lb_p = max(lb_p, lb_w)
        # 4. soft margin
        mg = margin
        if np.isfinite(lo[i]) and np.isfinite(hi[i]) and hi[i] - lo[i] <= 2.0 * margin:
            mg = 0.0
        ub_s = np.inf
        lb_s = -np.inf
        if mg > 0.0:
            if np.isfinite(hi[i]):
                ub_s = _braking_cap(hi[i] - mg - qi, c, dt, vmax[i])
            if np.isfinite(lo[i]):
                lb_s = -_braking_cap(qi - lo[i] - mg, c, dt, vmax[i])
        s_lo = max(h_lo, lb_s)
        s_hi = min(h_hi, ub_s)
        if s_lo > s_hi:
            if ub_s < h_lo:
                s_lo = h_lo
                s_hi = h_lo
            else:
                s_lo = h_hi
                s_hi = h_hi
        # 5. jerk
        if use_jerk and np.isfinite(jmax[i]):
            dj = jmax[i] * dt * dt
            j_lo = v[i] + a_prev[i] * dt - dj
            j_hi = v[i] + a_prev[i] * dt + dj
            f_lo = max(s_lo, j_lo)
            f_hi = min(s_hi, j_hi)
            if f_lo > f_hi:
                code |= JERK_RELAXED
                if j_hi < s_lo:
                    f_lo = s_lo
                    f_hi = s_lo
                else:
                    f_lo = s_hi
                    f_hi = s_hi
            s_lo = f_lo
            s_hi = f_hi
        lower[i] = s_lo
        upper[i] = s_hi
        pb = 0
        if min(ub_p, ub_s) < min(vmax[i], a_hi):
            pb = 1
        if max(lb_p, lb_s) > max(-vmax[i], a_lo):
            pb = -1 if pb == 0 else 2
        pos_bind[i] = pb
    return code


@njit(cache=True)
def integrate(q, dq, dt, lo, hi, out):  # pragma: no cover - compiled
    """``out = clip(q + dq dt, lo, hi)``."""
    for i in range(q.shape[0]):
        x = q[i] + dq[i] * dt
        if x < lo[i]:
            x = lo[i]
        elif x > hi[i]:
            x = hi[i]
        out[i] = x


@njit(cache=True)
def reference_violation(q_ref, dq_ref, lower, upper, lo, hi, tol):  # pragma: no cover
    """Index of the first joint whose reference leaves the box or the limits, else -1."""
    for i in range(q_ref.shape[0]):
        if not (np.isfinite(q_ref[i]) and np.isfinite(dq_ref[i])):
            return i
        if dq_ref[i] < lower[i] - tol * (1.0 + abs(lower[i])):
            return i
        if dq_ref[i] > upper[i] + tol * (1.0 + abs(upper[i])):
            return i
        if q_ref[i] < lo[i] or q_ref[i] > hi[i]:
            return i
    return -1


@njit(cache=True)
def brake_velocity(lower, upper, out):  # pragma: no cover - compiled
    """The velocity closest to zero inside the box (a smooth halt)."""
    for i in range(lower.shape[0]):
        x = 0.0
        if x < lower[i]:
            x = lower[i]
        elif x > upper[i]:
            x = upper[i]
        out[i] = x


@njit(cache=True)
def max_abs(x):  # pragma: no cover - compiled
    """``max |x_i|`` (0 for an empty array)."""
    m = 0.0
    for v in x:
        if abs(v) > m:
            m = abs(v)
    return m


@njit(cache=True)
def bound_touched(dq, lower, upper, pos_bind):  # pragma: no cover - compiled
    """Whether some joint sits on a bound that comes from its position limit."""
    for i in range(dq.shape[0]):
        pb = pos_bind[i]
        if (pb == 1 or pb == 2) and dq[i] >= upper[i] - 1e-12 and upper[i] < np.inf:
            return True
        if (pb == -1 or pb == 2) and dq[i] <= lower[i] + 1e-12 and lower[i] > -np.inf:
            return True
    return False
