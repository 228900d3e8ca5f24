r"""Singularity handling: condition-number scaling with MoveIt's direction probe, plus escape.

MoveIt Servo's rule (``moveit_servo``): with ``kappa = sigma_max / sigma_min`` of the task
Jacobian, take the last left singular vector ``u``, step ``dq = J^+ (u * probe)`` and flip
``u`` if the condition number drops (``u`` must point toward the singularity). Motion with
``u . task > 0`` goes toward it: speed scale ``1 - (kappa - k_dec)/(k_halt - k_dec)``, a halt
at ``k_halt``. Away from it the halt threshold rises to
``k_dec + (k_halt - k_dec) * multiplier`` (43).

ikstack keeps that and fixes the two complaints about it:

* motion that leaves a singularity is never halted. The candidate step itself is tested:
  if ``kappa(q + dq dt) < kappa(q)`` the motion leaves, and its scale is at least
  ``leaving_min_scale``. MoveIt halts once ``kappa`` exceeds 43 whatever the direction, so an
  arm that reached the threshold could not back out.
* at an exact singularity (an arm stretched straight, a zero pose) the task direction that
  leaves may be invisible to the Jacobian (``J^T task = 0``) and every first-order step is
  zero. Then the right singular vectors of the lost directions are probed in both signs; one
  whose second-order tool motion agrees with the task and lowers ``kappa`` is added as an
  escape motion at ``escape_speed``. A command pushing further into the singularity never
  passes that test, so it still halts.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ikstack.diffik._linalg import svd_jacobi, svd_small
from ikstack.kinematics._kernels import fk_one, jac_one
from ikstack.servo.commands import ServoStatus

DECELERATE = int(ServoStatus.SINGULARITY_DECELERATE)
HALT = int(ServoStatus.SINGULARITY_HALT)
LEAVING = int(ServoStatus.SINGULARITY_LEAVING)
ESCAPE = int(ServoStatus.SINGULARITY_ESCAPE)

#: singular values below this fraction of the largest count as zero
SINGULAR_RCOND = 1e-9


@njit(cache=True, inline="always")
def task_jacobian(q, Rs, ps, kinds, R_end, p_end, axes, weights, Jfull, T,
                  Jsel):  # pragma: no cover - compiled
    """Full Jacobian (6, n) and tool pose into ``Jfull``/``T``; selected, weighted rows to ``Jsel``."""
    jac_one(q, Rs, ps, kinds, R_end, p_end, Jfull, T)
    n = q.shape[0]
    for r in range(axes.shape[0]):
        a = axes[r]
        w = weights[a]
        for i in range(n):
            Jsel[r, i] = w * Jfull[a, i]


@njit(cache=True)
def condition(s):  # pragma: no cover - compiled
    """``sigma_max / sigma_min`` of singular values ``s`` (descending); inf when singular."""
    k = s.shape[0]
    if k == 0:
        return 1.0
    smin = s[k - 1]
    if smin <= SINGULAR_RCOND * s[0] or smin <= 0.0:
        return np.inf
    return s[0] / smin


@njit(cache=True)
def _task_jacobian_at(q, Rs, ps, kinds, R_end, p_end, axes, weights):  # pragma: no cover
    """The weighted task Jacobian (selected axes) at ``q``, in fresh arrays."""
    n = q.shape[0]
    Jsel = np.empty((axes.shape[0], n))
    task_jacobian(q, Rs, ps, kinds, R_end, p_end, axes, weights, np.empty((6, n)),
                  np.empty((4, 4)), Jsel)
    return Jsel


@njit(cache=True)
def kappa_at(q, Rs, ps, kinds, R_end, p_end, axes, weights):  # pragma: no cover - compiled
    """Condition number of the task Jacobian at ``q``."""
    Jsel = _task_jacobian_at(q, Rs, ps, kinds, R_end, p_end, axes, weights)
    m, n = Jsel.shape
    k = min(m, n)
    s = np.empty(k)
    svd_small(Jsel, np.empty((m, k)), s, np.empty((n, n)))
    return condition(s)


@njit(cache=True)
def kappa_near(q, Vh, Rs, ps, kinds, R_end, p_end, axes, weights):  # pragma: no cover - compiled
    """:func:`kappa_at` for a configuration near one whose right singular vectors are ``Vh``."""
    Jsel = _task_jacobian_at(q, Rs, ps, kinds, R_end, p_end, axes, weights)
    m, n = Jsel.shape
    k = min(m, n)
    s = np.empty(k)
    V = Vh.copy()
    svd_jacobi(Jsel, np.empty((m, k)), s, V, True)
    return condition(s)


@njit(cache=True)
def kappa_near_capped(q, Vh, J0, s0, cap, Rs, ps, kinds, R_end, p_end, axes,
                      weights):  # pragma: no cover - compiled
    """:func:`kappa_near`, or an upper bound of it below ``cap`` when one is cheap.

    ``J0`` is the task Jacobian at a nearby configuration and ``s0`` its singular values.
    Weyl's inequality bounds the singular values of ``J(q)`` within ``d = ||J(q) - J0||_F`` of
    ``s0``, so ``kappa(q) <= (s0_max + d) / (s0_min - d)``. When that bound (with a margin
    for rounding) is below ``cap`` it is returned and the SVD is skipped; a caller that only
    compares the result with ``cap`` and above decides exactly as with the true value.
    """
    n = q.shape[0]
    Jfull = np.empty((6, n))
    T = np.empty((4, 4))
    m = axes.shape[0]
    Jsel = np.empty((m, n))
    task_jacobian(q, Rs, ps, kinds, R_end, p_end, axes, weights, Jfull, T, Jsel)
    k = min(m, n)
    if k > 0 and s0[k - 1] > 0.0:
        d2 = 0.0
        for r in range(m):
            for i in range(n):
                x = Jsel[r, i] - J0[r, i]
                d2 += x * x
        d = np.sqrt(d2) * (1.0 + 1e-9) + 1e-12 * s0[0]
        lo = s0[k - 1] - d
        if lo > 0.0:
            bound = (s0[0] + d) / lo * (1.0 + 1e-9)
            if bound < cap:
                return bound
    s = np.empty(k)
    V = Vh.copy()
    svd_jacobi(Jsel, np.empty((m, k)), s, V, True)
    return condition(s)


@njit(cache=True)
def _rotvec_delta(Ra, Rb, out):  # pragma: no cover - compiled
    """Small-angle rotation vector of ``Ra Rb^T`` (first order; used for tiny probe motions)."""
    M = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            M[i, j] = Ra[i, 0] * Rb[j, 0] + Ra[i, 1] * Rb[j, 1] + Ra[i, 2] * Rb[j, 2]
    out[0] = 0.5 * (M[2, 1] - M[1, 2])
    out[1] = 0.5 * (M[0, 2] - M[2, 0])
    out[2] = 0.5 * (M[1, 0] - M[0, 1])


@njit(cache=True)
def _escape(q, task, T0, Vh, s, kappa0, Rs, ps, kinds, R_end, p_end, axes, weights, h,
            out):  # pragma: no cover - compiled
    """Try +-v for each lost right singular vector; write the best escape direction to ``out``.

    Returns True when one helps the task to second order and lowers the condition number.
    """
    n = q.shape[0]
    m = axes.shape[0]
    k = s.shape[0]
    qp = np.empty(n)
    Tp = np.empty((4, 4))
    d = np.empty(6)
    rv = np.empty(3)
    best = 0.0
    found = False
    tnorm = 0.0
    for r in range(m):
        tnorm += task[r] * task[r]
    tnorm = np.sqrt(tnorm)
    if tnorm == 0.0:
        return False
    smax = s[0] if k > 0 else 0.0
    # lost directions: right singular vectors with tiny singular value, and those beyond rank
    for j in range(n):
        lost = j < k and (j == k - 1 or s[j] <= 1e-6 * smax)
        if not lost:
            continue
        for sign in (1.0, -1.0):
            for i in range(n):
                qp[i] = q[i] + sign * h * Vh[j, i]
            fk_one(qp, Rs, ps, kinds, R_end, p_end, Tp)
            for c in range(3):
                d[c] = Tp[c, 3] - T0[c, 3]
            _rotvec_delta(Tp[:3, :3], T0[:3, :3], rv)
            d[3] = rv[0]
            d[4] = rv[1]
            d[5] = rv[2]
            dot = 0.0
            dn = 0.0
            for r in range(m):
                a = axes[r]
                x = weights[a] * d[a]
                dot += x * task[r]
                dn += x * x
            if dn <= 0.0:
                continue
            score = dot / (np.sqrt(dn) * tnorm)
            if score > 0.1 and score > best:
                if kappa_at(qp, Rs, ps, kinds, R_end, p_end, axes, weights) < kappa0:
                    best = score
                    found = True
                    for i in range(n):
                        out[i] = sign * Vh[j, i]
    return found


@njit(cache=True)
def _scale(kappa, k_dec, upper):  # pragma: no cover - compiled
    if not np.isfinite(kappa):
        return 0.0
    return 1.0 - (kappa - k_dec) / (upper - k_dec)


@njit(cache=True, inline="always")
def singularity_scale(q, dq, dq_meas, amax, task, Jsel, U, s, Vh, kappa0, dt, T0, Rs, ps, kinds,
                      R_end, p_end, axes, weights, k_dec, k_halt, k_leave, probe, min_leave,
                      escape_speed, halted, halt_scale):  # pragma: no cover - compiled
    """Speed scale for the candidate ``dq`` (may add an escape motion to ``dq`` in place).

    ``dq_meas`` and ``amax`` give the look-ahead: the condition number where the arm would
    stop if it braked now at its acceleration limits, so a fast approach starts slowing early
    enough to halt before ``k_halt``. ``halted`` (the previous cycle halted) keeps a halt while
    the command still pushes toward the singularity; a scale toward it below ``halt_scale``
    halts (the scale only reaches zero asymptotically, which would creep forever).

    Returns ``(scale, flags)`` with flags from :class:`~ikstack.servo.ServoStatus`.
    """
    n = q.shape[0]
    m = Jsel.shape[0]
    if not kappa0 > 0.5 * k_dec:
        return 1.0, 0
    flags = 0
    qn = np.empty(n)
    # look-ahead: where would the arm stop if it started braking now?
    ahead = 1.0
    moving = False
    for i in range(n):
        d = 0.0
        if np.isfinite(amax[i]):
            d = dq_meas[i] * abs(dq_meas[i]) / (2.0 * amax[i])
        qn[i] = q[i] + d + dq[i] * dt
        if dq_meas[i] != 0.0:
            moving = True
    if moving:
        # only a value above k_dec matters here, so a certified bound below it will do
        kappa_a = kappa_near_capped(qn, Vh, Jsel, s, k_dec, Rs, ps, kinds, R_end, p_end, axes,
                                    weights)
        if kappa_a > kappa0 and kappa_a > k_dec:
            ahead = max(_scale(kappa_a, k_dec, k_halt), 0.0)
    if not kappa0 > k_dec:
        if ahead < 1.0:
            if ahead <= halt_scale:
                return 0.0, HALT
            return ahead, DECELERATE
        return 1.0, 0
    # does the candidate step itself lower the condition number?
    for i in range(n):
        qn[i] = q[i] + dq[i] * dt
    kappa1 = kappa_near(qn, Vh, Rs, ps, kinds, R_end, p_end, axes, weights)
    leaving = kappa1 < kappa0 * (1.0 - 1e-12)
    esc = np.zeros(n)
    if (not leaving and not kappa0 < k_halt) or not kappa0 < k_leave:
        # at (or near) an exact singularity: a second-order escape motion, kept up until the
        # arm is back below MoveIt's leaving threshold (first-order steps are ~sigma_min there)
        if _escape(q, task, T0, Vh, s, kappa0, Rs, ps, kinds, R_end, p_end, axes, weights,
                   0.05, esc):
            for i in range(n):
                esc[i] *= escape_speed
                qn[i] = q[i] + (dq[i] + esc[i]) * dt
            kappa_e = kappa_at(qn, Rs, ps, kinds, R_end, p_end, axes, weights)
            if kappa_e < kappa0 * (1.0 - 1e-12):
                leaving = True
                flags |= ESCAPE
            else:
                esc[:] = 0.0
    if leaving:
        scale = min(max(_scale(kappa0, k_dec, k_leave), min_leave), 1.0)
        # the escape motion is not scaled: it is already a slow joint-space motion
        for i in range(n):
            dq[i] = scale * dq[i] + esc[i]
        return 1.0, flags | LEAVING
    # MoveIt's direction probe on the last left singular vector
    k = s.shape[0]
    toward = kappa1 > kappa0
    if k > 0 and m > 0:
        col = min(k, m) - 1
        sl = s[col]
        for i in range(n):
            if sl > SINGULAR_RCOND * s[0] and sl > 0.0:
                qn[i] = q[i] + Vh[col, i] * probe / sl
            else:
                qn[i] = q[i] + Vh[col, i] * probe
        kp = kappa_at(qn, Rs, ps, kinds, R_end, p_end, axes, weights)
        dot = 0.0
        for r in range(m):
            dot += U[r, col] * task[r]
        if kappa0 > kp:
            dot = -dot
        if dot > 0.0:
            toward = True
    if toward and halted:
        return 0.0, HALT
    scale = _scale(kappa0, k_dec, k_halt if toward else k_leave)
    if toward:
        scale = min(scale, ahead)
        if scale <= halt_scale:
            return 0.0, HALT
    if scale <= 0.0:
        return 0.0, HALT
    if not toward:
        flags |= LEAVING
    return min(scale, 1.0), flags | DECELERATE
