"""Joint-limit avoidance: a cost that grows as joints approach their limits, and its gradient.

Two forms (tianji-control ``JointLimitAvoidance``, as the published port has it), both with
per-joint weights ``w``:

* band form (activation band ``B`` > 0): with ``m_i`` the distance of joint ``i`` to its nearest
  limit, :math:`c = \\frac{1}{2 n} \\sum_{m_i < B} w_i \\left(\\frac{B - m_i}{B}\\right)^2`;
  the gradient is zero while no joint is inside its band;
* global form (``B`` is None): :math:`c = \\frac{1}{2 n} \\sum_i w_i
  \\left(\\frac{q_i - \\mathrm{mid}_i}{\\mathrm{span}_i}\\right)^2`.

``n`` is the number of joints (``1/14`` for a 7-joint arm). Units are the caller's: the QP works
in degrees (seed units) or radians, and passes ``q``, limits and ``B`` in the same unit. Joints
without finite limits never contribute.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from ikstack.errors import InputError

Array = NDArray[np.float64]


@njit(cache=True)
def cost_gradient_into(q, lo, hi, weights, band, out):  # pragma: no cover - compiled
    """Write the gradient of the cost at ``q`` into ``out``; return the cost.

    ``band <= 0`` selects the global form. All arrays are (n,) in one unit.
    """
    n = q.shape[0]
    k = 1.0 / (2.0 * n)
    c = 0.0
    for i in range(n):
        out[i] = 0.0
        if not (np.isfinite(lo[i]) and np.isfinite(hi[i])):
            continue
        if band > 0.0:
            d_lo = q[i] - lo[i]
            d_hi = hi[i] - q[i]
            if d_lo <= d_hi:
                m = d_lo
                dm = 1.0
            else:
                m = d_hi
                dm = -1.0
            if m < band:
                r = (band - m) / band
                c += k * weights[i] * r * r
                out[i] = k * weights[i] * 2.0 * r * (-dm / band)
        else:
            span = hi[i] - lo[i]
            if span <= 0.0:
                continue
            mid = 0.5 * (lo[i] + hi[i])
            r = (q[i] - mid) / span
            c += k * weights[i] * r * r
            out[i] = k * weights[i] * 2.0 * r / span
    return c


def joint_limit_cost(
    q: ArrayLike,
    lower: ArrayLike,
    upper: ArrayLike,
    weights: ArrayLike | None = None,
    band: float | None = 25.0,
) -> tuple[float, Array]:
    """Cost and gradient of joint-limit avoidance at one configuration.

    Args:
        q: (n,) joint positions, in the same unit as the limits and ``band``.
        lower, upper: (n,) position limits (+-inf: the joint never contributes).
        weights: (n,) finite non-negative weights; ones when None.
        band: activation band (> 0) for the band form, or None for the global form.

    Returns:
        ``(c, grad)``: the cost (dimensionless) and its gradient (n,) [1 / unit of q].
    """
    qa = np.asarray(q, dtype=np.float64)
    lo = np.broadcast_to(np.asarray(lower, dtype=np.float64), qa.shape)
    hi = np.broadcast_to(np.asarray(upper, dtype=np.float64), qa.shape)
    w = np.ones_like(qa) if weights is None else np.asarray(weights, dtype=np.float64)
    if qa.ndim != 1 or w.shape != qa.shape:
        raise InputError(f"q has shape {qa.shape} and weights {w.shape}; expected matching (n,)")
    if not (np.isfinite(qa).all() and np.isfinite(w).all() and (w >= 0).all()):
        raise InputError("q must be finite and weights finite and non-negative")
    if band is not None and not (np.isfinite(band) and band > 0):
        raise InputError(
            f"band must be positive and finite, or None for the global form; got {band}"
        )
    out = np.empty_like(qa)
    c = cost_gradient_into(
        np.ascontiguousarray(qa),
        np.ascontiguousarray(lo),
        np.ascontiguousarray(hi),
        np.ascontiguousarray(w),
        -1.0 if band is None else float(band),
        out,
    )
    return float(c), out
