r"""Secondary (nullspace) objectives handed to a solver as its preferred velocity.

.. math::
    p = N \left( k_p\, \mathrm{diff}(q_\text{posture}, q) + k_c\, (q_\text{mid} - q) \right),
    \qquad N = I - J^+ J

* the posture term pulls toward a reference posture; ``diff`` wraps continuous joints into
  ``[-pi, pi)`` so a continuous joint takes the short way round;
* the centering term pulls each joint with finite limits toward the middle of its limits
  (unbounded joints are skipped);
* ``N`` is the undamped orthogonal projector onto the Jacobian's nullspace, built from its SVD
  with singular values below ``rcond * sigma_max`` treated as zero (so at a singularity the
  lost directions count as nullspace).
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from ikstack.diffik.solver import Array
from ikstack.errors import InputError, ShapeError
from ikstack.model import Chain, JointType

#: relative singular-value cutoff of the nullspace projector
RCOND = 1e-10


@njit(cache=True)
def projector_from_svd(s, Vh, rcond, N):  # pragma: no cover - compiled
    """``N = I - V_r V_r^T`` over the right singular vectors with ``s_i > rcond * s_max``."""
    n = Vh.shape[0]
    smax = 0.0
    for k in range(s.shape[0]):
        if s[k] > smax:
            smax = s[k]
    for i in range(n):
        for j in range(n):
            N[i, j] = 1.0 if i == j else 0.0
    for k in range(s.shape[0]):
        if s[k] > rcond * smax and s[k] > 0.0:
            for i in range(n):
                vi = Vh[k, i]
                for j in range(n):
                    N[i, j] -= vi * Vh[k, j]


@njit(cache=True)
def secondary_velocity(
    q, posture, posture_gain, lower, upper, continuous, centering_gain, out
):  # pragma: no cover - compiled
    """Unprojected secondary velocity: posture term plus joint centering (into ``out``)."""
    n = q.shape[0]
    for i in range(n):
        v = 0.0
        if posture_gain != 0.0:
            d = posture[i] - q[i]
            if continuous[i]:
                d = (d + np.pi) % (2.0 * np.pi) - np.pi
            v += posture_gain * d
        if centering_gain != 0.0 and np.isfinite(lower[i]) and np.isfinite(upper[i]):
            v += centering_gain * (0.5 * (lower[i] + upper[i]) - q[i])
        out[i] = v


@njit(cache=True)
def project(N, v, out):  # pragma: no cover - compiled
    """``out = N v``; returns ``||out||``."""
    n = v.shape[0]
    s2 = 0.0
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += N[i, j] * v[j]
        out[i] = s
        s2 += s * s
    return np.sqrt(s2)


def nullspace_projector(jacobian: ArrayLike, rcond: float = RCOND) -> Array:
    """Undamped orthogonal nullspace projector ``I - J^+ J`` (dof, dof) of an (m, dof) Jacobian."""
    J = np.asarray(jacobian, dtype=np.float64)
    if J.ndim != 2:
        raise ShapeError("jacobian", J.shape, "(m, dof)")
    if not np.all(np.isfinite(J)):
        raise InputError("jacobian contains NaN or infinity")
    n = J.shape[1]
    _, s, Vh = np.linalg.svd(J, full_matrices=True)
    N = np.empty((n, n))
    projector_from_svd(np.ascontiguousarray(s), np.ascontiguousarray(Vh), float(rcond), N)
    return N


def joint_difference(chain: Chain, q_to: ArrayLike, q_from: ArrayLike) -> Array:
    """``q_to - q_from`` (..., dof) with continuous joints wrapped into ``[-pi, pi)``."""
    a = chain.check_q(q_to, "q_to")
    b = chain.check_q(q_from, "q_from")
    d = a - b
    cont = np.array([t == JointType.CONTINUOUS for t in chain.joint_types])
    return np.where(cont, (d + np.pi) % (2.0 * np.pi) - np.pi, d)


def preferred_velocity(
    chain: Chain,
    jacobian: ArrayLike,
    q: ArrayLike,
    posture: ArrayLike | None = None,
    nullspace_gain: float = 0.0,
    joint_centering_gain: float = 0.0,
    rcond: float = RCOND,
) -> Array:
    """The projected secondary velocity [rad/s or m/s] for one configuration.

    Args:
        chain: the chain (limits and joint types).
        jacobian: (m, dof) task Jacobian (rows selected and weighted as the solver sees them).
        q: (dof,) joint positions.
        posture: (dof,) reference posture; ``None`` disables the posture term.
        nullspace_gain: posture gain [1/s].
        joint_centering_gain: centering gain [1/s].

    Returns:
        (dof,) ``N (k_p diff(posture, q) + k_c (mid - q))``.
    """
    qv = chain.check_q(q)
    if qv.shape != (chain.dof,):
        raise ShapeError("q", qv.shape, f"({chain.dof},)")
    post = qv if posture is None else chain.check_q(posture, "posture")
    gain = 0.0 if posture is None else float(nullspace_gain)
    cont = np.array([t == JointType.CONTINUOUS for t in chain.joint_types])
    v = np.empty(chain.dof)
    secondary_velocity(
        qv,
        np.ascontiguousarray(post, dtype=np.float64),
        gain,
        np.ascontiguousarray(chain.lower),
        np.ascontiguousarray(chain.upper),
        cont,
        float(joint_centering_gain),
        v,
    )
    N = nullspace_projector(jacobian, rcond)
    if N.shape[0] != chain.dof:
        raise ShapeError("jacobian", np.shape(jacobian), f"(m, {chain.dof})")
    out = np.empty(chain.dof)
    project(N, v, out)
    return out
