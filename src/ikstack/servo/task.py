r"""The Cartesian task of one cycle, computed in a single compiled call.

For a pose goal the task velocity is ``v = pose_gain * e`` with ``e`` ikstack's pose error
``[p_target - p, rotvec(R_target R^T)]`` (base frame); for a twist it is the twist, rotated
into the base frame when given in the tool frame. The linear and angular parts are capped at
``max_linear_speed`` / ``max_angular_speed`` (each scaled as a whole, direction kept). Only
``task_axes`` rows are kept, each multiplied by its weight; the Jacobian's rows get the same
treatment. The same call builds the SVD (condition number, nullspace projector) and the
projected secondary velocity.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ikstack.diffik._linalg import svd_jacobi_into, view2
from ikstack.diffik.nullspace import project, projector_from_svd, secondary_velocity
from ikstack.servo.singularity import condition, task_jacobian

POSE = 0
TWIST = 1


@njit(cache=True)
def rotvec_of(M, out):  # pragma: no cover - compiled
    """Rotation vector (axis * angle, angle in [0, pi]) of a rotation matrix ``M``."""
    vx = M[2, 1] - M[1, 2]
    vy = M[0, 2] - M[2, 0]
    vz = M[1, 0] - M[0, 1]
    sn = 0.5 * np.sqrt(vx * vx + vy * vy + vz * vz)
    cs = 0.5 * (M[0, 0] + M[1, 1] + M[2, 2] - 1.0)
    theta = np.arctan2(sn, cs)
    if theta < 1e-6:
        f = 0.5 * (1.0 + theta * theta / 6.0)
        out[0], out[1], out[2] = f * vx, f * vy, f * vz
        return
    if theta < np.pi - 1e-4:
        f = theta / (2.0 * np.sin(theta))
        out[0], out[1], out[2] = f * vx, f * vy, f * vz
        return
    # near pi: the axis from the symmetric part B = (M + I)/2 ~ a a^T
    k = 0
    if M[1, 1] > M[k, k]:
        k = 1
    if M[2, 2] > M[k, k]:
        k = 2
    akk = np.sqrt(max(0.5 * (M[k, k] + 1.0), 0.0))
    ax = np.empty(3)
    for j in range(3):
        ax[j] = (0.5 * (M[k, j] + M[j, k]) + (1.0 if j == k else 0.0)) * 0.5 / akk if j != k \
            else akk
    nrm = np.sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2])
    if ax[0] * vx + ax[1] * vy + ax[2] * vz < 0.0:
        nrm = -nrm
    for j in range(3):
        out[j] = theta * ax[j] / nrm


@njit(cache=True)
def _cap(vel, lo, max_norm):  # pragma: no cover - compiled
    s2 = vel[lo] ** 2 + vel[lo + 1] ** 2 + vel[lo + 2] ** 2
    if s2 > max_norm * max_norm:
        f = max_norm / np.sqrt(s2)
        vel[lo] *= f
        vel[lo + 1] *= f
        vel[lo + 2] *= f


@njit(cache=True, inline="always")
def cartesian_prepare(q, Rs, ps, kinds, R_end, p_end, axes, weights, mode, T_target, twist,
                      tool_frame, gains, posture, lower, upper, continuous, Jfull, T, Jsel, task,
                      pref, U, s, Vh, N, tmp):  # pragma: no cover - compiled
    """One cycle's task: Jacobians, task velocity, SVD, projected secondary velocity.

    ``gains`` is ``(pose_gain, max_linear_speed, max_angular_speed, posture_gain,
    centering_gain, rcond)`` (a tuple keeps the call under 31 arguments, past which Python
    passes them as one ``*args`` tuple and every array is reference-counted into it).

    ``tmp`` is scratch of at least ``n m + n^2 + 2 n + 24`` values.

    Writes the SVD of the task Jacobian into ``U, s, Vh`` and the nullspace projector into
    ``N`` (when a secondary term is on). Returns ``(kappa, position_error, orientation_error,
    nullspace_speed)``; errors are over the selected axes (0 for twists).
    """
    gain, v_lin, v_ang, posture_gain, centering_gain, rcond = gains
    n = q.shape[0]
    m = axes.shape[0]
    task_jacobian(q, Rs, ps, kinds, R_end, p_end, axes, weights, Jfull, T, Jsel)
    o = n * m + n * n + 2 * n  # the SVD's scratch comes first
    vel = tmp[o:o + 6]
    M = view2(tmp[o + 6:o + 15], 3, 3)
    rv = tmp[o + 15:o + 18]
    sel = tmp[o + 18:o + 24]
    perr = 0.0
    rerr = 0.0
    if mode == POSE:
        for c in range(3):
            vel[c] = T_target[c, 3] - T[c, 3]
        for i in range(3):
            for j in range(3):
                M[i, j] = (T_target[i, 0] * T[j, 0] + T_target[i, 1] * T[j, 1]
                           + T_target[i, 2] * T[j, 2])
        rotvec_of(M, rv)
        vel[3], vel[4], vel[5] = rv[0], rv[1], rv[2]
        for r in range(m):
            a = axes[r]
            if a < 3:
                perr += vel[a] * vel[a]
            else:
                rerr += vel[a] * vel[a]
        perr = np.sqrt(perr)
        rerr = np.sqrt(rerr)
        for c in range(6):
            vel[c] *= gain
    else:
        if tool_frame:
            for c in range(3):
                vel[c] = T[c, 0] * twist[0] + T[c, 1] * twist[1] + T[c, 2] * twist[2]
                vel[3 + c] = T[c, 0] * twist[3] + T[c, 1] * twist[4] + T[c, 2] * twist[5]
        else:
            for c in range(6):
                vel[c] = twist[c]
    # cap only what the task controls
    for c in range(6):
        sel[c] = 0.0
    for r in range(m):
        sel[axes[r]] = 1.0
    for c in range(6):
        vel[c] *= sel[c]
    _cap(vel, 0, v_lin)
    _cap(vel, 3, v_ang)
    for r in range(m):
        a = axes[r]
        task[r] = weights[a] * vel[a]
    # warm: Vh holds the previous cycle's
    svd_jacobi_into(Jsel, U, s, Vh, True, view2(tmp[0:n * m], n, m),
                    view2(tmp[n * m:n * m + n * n], n, n), tmp[n * m + n * n:n * m + n * n + n],
                    tmp[n * m + n * n + n:n * m + n * n + 2 * n])
    kappa = condition(s)
    ns = 0.0
    if posture_gain != 0.0 or centering_gain != 0.0:
        sec = np.empty(n)
        secondary_velocity(q, posture, posture_gain, lower, upper, continuous, centering_gain,
                           sec)
        projector_from_svd(s, Vh, rcond, N)
        ns = project(N, sec, pref)
    else:
        for i in range(n):
            pref[i] = 0.0
    return kappa, perr, rerr, ns
