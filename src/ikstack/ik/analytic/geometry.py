"""A chain's joint axes as lines in space, and the geometric tests the classifier uses.

A revolute chain is read in product-of-exponentials form at zero configuration:
``T_base_tcp(q) = exp(xi_1 q_1) ... exp(xi_n q_n) M``, where joint ``i`` turns about the line
through point ``r_i`` with unit direction ``h_i`` (both in the base frame). This is IK-Geo's
``H``/``P`` description; the point on each line is free, and the families choose it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ikstack._deprecated import warn_deprecated
from ikstack.kinematics import fk, fk_links
from ikstack.model import Chain, JointType
from ikstack.model.chain_cache import ChainCache

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Lines:
    """Joint axes at zero configuration, base frame.

    Attributes:
        h: (n, 3) unit axis directions.
        r: (n, 3) a point on each axis [m].
        M: (4, 4) ``T_base_tcp`` at zero configuration.
    """

    h: Array
    r: Array
    M: Array

    @property
    def n(self) -> int:
        return int(self.h.shape[0])

    def reversed(self) -> Lines:
        """The chain read from the TCP back to the base: ``T^-1(q)`` with joints reversed.

        ``T^-1 = M^-1 exp(-xi_n q_n) ... exp(-xi_1 q_1)``, so the reversed chain's axes are the
        original lines seen from ``M`` with directions negated, and its end transform is
        ``M^-1``. The joint values are the same numbers in reverse order.
        """
        R = self.M[:3, :3]
        p = self.M[:3, 3]
        h = -(self.h @ R)[::-1]
        r = ((self.r - p) @ R)[::-1]
        Minv = np.eye(4)
        Minv[:3, :3] = R.T
        Minv[:3, 3] = -R.T @ p
        return Lines(np.ascontiguousarray(h), np.ascontiguousarray(r), Minv)

    def sub(self, start: int, stop: int, M: Array) -> Lines:
        """Joints ``start:stop`` with end transform ``M``."""
        return Lines(self.h[start:stop].copy(), self.r[start:stop].copy(), M)

    def with_points(self, idx: list[int], point: Array) -> Lines:
        """A copy whose axes ``idx`` are described through the points ``point`` (3,) each."""
        r = self.r.copy()
        for i in idx:
            r[i] = point
        return Lines(self.h, r, self.M)


#: joint lines of the chains in use
_LINES: ChainCache[Lines] = ChainCache("analytic joint lines", 64)


def chain_lines(chain: Chain) -> Lines:
    """The chain's joint lines at zero configuration (built once per chain)."""
    cached = _LINES.get(id(chain))
    if cached is not None:
        return cached
    q0 = np.zeros(chain.dof)
    links = fk_links(chain, q0)
    h = np.einsum("nij,nj->ni", links[:-1, :3, :3], chain.axes)
    h /= np.linalg.norm(h, axis=1, keepdims=True)
    r = links[:-1, :3, 3].copy()
    lines = Lines(h, r, fk(chain, q0))
    return _LINES.add(chain, lines)


def chain_from_hp(
    H: NDArray[np.float64],
    P: NDArray[np.float64],
    R_end: NDArray[np.float64] | None = None,
    lower: NDArray[np.float64] | None = None,
    upper: NDArray[np.float64] | None = None,
    name: str = "hp",
) -> Chain:
    """A revolute chain from IK-Geo's description (the inverse of :func:`chain_lines`).

    Args:
        H: (n, 3) unit joint axes at zero configuration, base frame.
        P: (n + 1, 3) offsets ``p_01, p_12, ..., p_nT`` [m] at zero configuration.
        R_end: (3, 3) TCP rotation at zero configuration (identity by default).
        lower, upper: (n,) joint limits [rad]; +-2 pi by default.
        name: the chain's display name.
    """
    H = np.asarray(H, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    n = H.shape[0]
    origins = np.tile(np.eye(4), (n, 1, 1))
    origins[:, :3, 3] = P[:n]
    T_last_tip = np.eye(4)
    T_last_tip[:3, :3] = np.eye(3) if R_end is None else R_end
    T_last_tip[:3, 3] = P[n]
    return Chain(
        joint_names=tuple(f"joint{i + 1}" for i in range(n)),
        joint_types=tuple(JointType.REVOLUTE for _ in range(n)),
        axes=H,
        origins=origins,
        T_last_tip=T_last_tip,
        lower=np.full(n, -2 * np.pi) if lower is None else lower,
        upper=np.full(n, 2 * np.pi) if upper is None else upper,
        velocity_limits=np.full(n, np.inf),
        acceleration_limits=np.full(n, np.inf),
        jerk_limits=np.full(n, np.inf),
        name=name,
        source="IK-Geo H/P description",
    )


# ----------------------------------------------------------------------------- line geometry
def parallel_error(a: Array, b: Array) -> float:
    """Angle [rad] between two axis lines' directions (sign ignored)."""
    return float(np.arcsin(min(1.0, float(np.linalg.norm(np.cross(a, b))))))


def closest_point(h: Array, r: Array) -> tuple[Array, float]:
    """Least-squares common point of lines ``(h_i, r_i)`` and the largest distance from it [m].

    Parallel lines have no finite common point; the largest distance is then the spread of the
    lines (so parallel distinct lines never "meet").
    """
    A = np.zeros((3, 3))
    b = np.zeros(3)
    for hi, ri in zip(h, r, strict=True):
        P = np.eye(3) - np.outer(hi, hi)
        A += P
        b += P @ ri
    if np.linalg.cond(A) > 1e12:
        return np.asarray(r[0], dtype=np.float64).copy(), np.inf
    x = np.asarray(np.linalg.solve(A, b), dtype=np.float64)
    dist = max(
        float(np.linalg.norm((np.eye(3) - np.outer(hi, hi)) @ (x - ri)))
        for hi, ri in zip(h, r, strict=True)
    )
    return x, dist


def line_distance(h1: Array, r1: Array, h2: Array, r2: Array) -> float:
    """Distance [m] between two (infinite) lines.

    Deprecated: nothing in ikstack uses it; it goes in the next release.
    """
    warn_deprecated(
        "ikstack.ik.analytic.geometry.line_distance is deprecated and goes in the next release"
    )
    c = np.cross(h1, h2)
    nc = np.linalg.norm(c)
    d = r2 - r1
    if nc < 1e-12:
        return float(np.linalg.norm(d - (d @ h1) * h1))
    return float(abs(d @ c) / nc)


def fmt_length(d: float) -> str:
    """A distance in readable units: ``2.1 mm``, ``3.0e-06 mm``."""
    if not np.isfinite(d):
        return "infinitely far (parallel)"
    mm = d * 1000.0
    return f"{mm:.3g} mm" if mm >= 1e-3 else f"{mm:.2e} mm"
