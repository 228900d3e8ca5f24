"""The compiled body of one servo cycle, in two halves around the solver.

``cycle_prepare`` computes the velocity box and the task (Jacobian, SVD, task velocity,
projected secondary velocity); the solver runs; ``cycle_finish`` applies singularity scaling,
smoothing, the box and integration, and decides the action and status flags. ``packed_cycle``
runs all three for the built-in solvers in a single call, so a 1 kHz loop pays Python's call
overhead once. The kernel (:mod:`ikstack.servo.kernel`) validates input and output around it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ikstack.diffik._linalg import scale_into_box, view2, view3
from ikstack.diffik.box_qp import CONVERGED, box_qp_from_task_into
from ikstack.diffik.dls import dls_kernel
from ikstack.servo.commands import ServoStatus
from ikstack.servo.coupled import C_CONFLICT, C_FREE, coupled_project, num_rows, packed_size
from ikstack.servo.limits import (
    CONFLICT,
    JERK_RELAXED,
    bound_touched,
    brake_velocity,
    cycle_bounds,
    integrate,
    max_abs,
)
from ikstack.servo.singularity import singularity_scale
from ikstack.servo.task import POSE, cartesian_prepare

# command modes
JOG = 2
MISSING = -1
STALE = -2
FAULT = -3

# solver kinds of the fused path
DLS = 0
BOX_QP = 1

# indices into the packed configuration vector
(C_GAIN, C_VLIN, C_VANG, C_POSTURE, C_CENTER, C_DAMP, C_MARGIN, C_PTOL, C_RTOL, C_KDEC, C_KHALT,
 C_KLEAVE, C_PROBE, C_MINLEAVE, C_ESCAPE, C_SMOOTH, C_STOP, C_RCOND, C_HALTSCALE,
 C_CMARGIN) = range(20)
N_CONFIG = 20

# rows of the packed limits array: working limits (hard less the kinematic margin), velocity,
# acceleration, jerk, continuous-joint mask, hard limits
L_LO, L_HI, L_VMAX, L_AMAX, L_JMAX, L_CONT, L_HLO, L_HHI = range(8)
N_LIM = 8

GOAL = int(ServoStatus.GOAL_REACHED)
VSCALED = int(ServoStatus.VELOCITY_SCALED)
JBOUND = int(ServoStatus.JOINT_BOUND)
STALE_FLAG = int(ServoStatus.STALE_COMMAND)
SOLVER = int(ServoStatus.SOLVER_ERROR)
LCONFLICT = int(ServoStatus.LIMIT_CONFLICT)
JERK = int(ServoStatus.JERK_RELAXED)
HALT_FLAG = int(ServoStatus.SINGULARITY_HALT)
COUPLED = int(ServoStatus.COUPLED_BOUND)

# index of each scalar in the info vector a cycle fills
# (I_CROW: the coupled-constraint row that bound, -1 for none)
(I_KAPPA, I_PERR, I_RERR, I_NS, I_RESID, I_ITERS, I_SFLAGS, I_CROW) = range(8)
N_INFO = 8


@njit(cache=True, inline="always")
def cycle_prepare(q, dq, a_prev, ctl, T_target, twist, Rs, ps, kinds, R_end, p_end, lim, axes,
                  weights, posture, cfg, Jfull, T, Jsel, task, pref, U, s, Vh, N, box, pos_bind,
                  info, tmp):  # pragma: no cover - compiled
    """Velocity box into ``box`` (2, n) and, for Cartesian modes, the task. Returns flags.

    ``ctl`` is ``(use_jerk, dt, mode, tool_frame)``; ``tmp`` is scratch of at least
    :func:`tmp_size` values. (Calls here stay under 31 arguments: past that Python passes
    them as one ``*args`` tuple, and every array is reference-counted into it.)
    """
    use_jerk, dt, mode, tool = ctl
    flags = 0
    code = cycle_bounds(q, dq, a_prev, use_jerk, dt, lim[L_LO], lim[L_HI], lim[L_HLO],
                        lim[L_HHI], cfg[C_MARGIN], lim[L_VMAX], lim[L_AMAX], lim[L_JMAX], box[0],
                        box[1], pos_bind)
    if code & CONFLICT:
        flags |= LCONFLICT
    if code & JERK_RELAXED:
        flags |= JERK
    for i in range(info.shape[0]):
        info[i] = 0.0
    info[I_KAPPA] = 1.0
    info[I_CROW] = -1.0
    if mode == 0 or mode == 1:
        kappa, perr, rerr, ns = cartesian_prepare(
            q, Rs, ps, kinds, R_end, p_end, axes, weights, mode, T_target, twist, tool,
            (cfg[C_GAIN], cfg[C_VLIN], cfg[C_VANG], cfg[C_POSTURE], cfg[C_CENTER], cfg[C_RCOND]),
            posture, lim[L_LO], lim[L_HI], lim[L_CONT] != 0.0, Jfull, T, Jsel, task, pref, U, s,
            Vh, N, tmp)
        info[I_KAPPA] = kappa
        info[I_PERR] = perr
        info[I_RERR] = rerr
        info[I_NS] = ns
        if mode == POSE and perr <= cfg[C_PTOL] and rerr <= cfg[C_RTOL]:
            flags |= GOAL
    return flags


@njit(cache=True, inline="always")
def cycle_finish(q, dq, desired, dt, mode, flags, Rs, ps, kinds, R_end, p_end, lim, axes,
                 weights, cfg, T, Jsel, task, U, s, Vh, box, pos_bind, info, out, generate,
                 prev_flags, cons):  # pragma: no cover - compiled
    """From the solver's ``desired`` velocity to the reference ``out`` (2, n): q_ref, dq_ref.

    ``desired`` is modified in place (singularity scale, smoothing). With ``generate`` False
    it stops there (a motion generator takes over). ``prev_flags`` are the previous cycle's
    (a singularity halt is kept while the command pushes on). Returns ``(flags, moving)``.
    """
    n = q.shape[0]
    lower = box[0]
    upper = box[1]
    if mode == 0 or mode == 1:
        resid = 0.0
        for r in range(Jsel.shape[0]):
            x = -task[r]
            for i in range(n):
                x += Jsel[r, i] * desired[i]
            resid += x * x
        info[I_RESID] = np.sqrt(resid)
        scale, sflags = singularity_scale(
            q, desired, dq, lim[L_AMAX], task, Jsel, U, s, Vh, info[I_KAPPA], dt, T, Rs, ps,
            kinds, R_end, p_end, axes, weights, cfg[C_KDEC], cfg[C_KHALT], cfg[C_KLEAVE],
            cfg[C_PROBE], cfg[C_MINLEAVE], cfg[C_ESCAPE], (prev_flags & HALT_FLAG) != 0,
            cfg[C_HALTSCALE])
        flags |= sflags
        info[I_SFLAGS] = sflags
        if scale < 1.0:
            for i in range(n):
                desired[i] *= scale
    elif mode < 0:
        for i in range(n):
            desired[i] = 0.0
    a = cfg[C_SMOOTH]
    if a > 0.0 and mode >= 0:
        for i in range(n):
            desired[i] = a * dq[i] + (1.0 - a) * desired[i]
    if not generate:
        return flags, False
    scale_into_box(desired, lower, upper, out[1])
    flags = coupled_step(q, dt, flags, lim, cfg, box, cons, info, out[1])
    return finish_reference(q, dt, flags, lim, cfg, box, pos_bind, out, True)


@njit(cache=True, inline="always")
def coupled_step(q, dt, flags, lim, cfg, box, cons, info, v):  # pragma: no cover - compiled
    """The chain's coupled constraints on the velocity ``v`` (in the box); returns flags."""
    if num_rows(cons) == 0:
        return flags
    code, row = coupled_project(q, v, box[0], box[1], lim[L_AMAX], dt, cons, cfg[C_CMARGIN])
    if code != C_FREE:
        flags |= COUPLED
        info[I_CROW] = row
        if code == C_CONFLICT:
            flags |= LCONFLICT
    return flags


@njit(cache=True)
def brake_reference(q, dq, a_prev, use_jerk, dt, lim, cfg, cons,
                    out):  # pragma: no cover - compiled
    """A stop from the state ``(q, dq)`` at the limits' rates (jerk too with ``use_jerk``,
    ``a_prev`` the last acceleration) into ``out`` (2, n) (for refused cycles). Returns the
    status flags (LIMIT_CONFLICT, COUPLED_BOUND)."""
    n = q.shape[0]
    box = np.empty((2, n))
    pb = np.empty(n, dtype=np.int64)
    code = cycle_bounds(q, dq, a_prev, use_jerk, dt, lim[L_LO], lim[L_HI], lim[L_HLO], lim[L_HHI],
                        cfg[C_MARGIN], lim[L_VMAX], lim[L_AMAX], lim[L_JMAX], box[0], box[1], pb)
    flags = LCONFLICT if code & CONFLICT else 0
    brake_velocity(box[0], box[1], out[1])
    info = np.zeros(N_INFO)
    flags = coupled_step(q, dt, flags, lim, cfg, box, cons, info, out[1])
    integrate(q, out[1], dt, lim[L_HLO], lim[L_HHI], out[0])
    return flags


@njit(cache=True, inline="always")
def finish_reference(q, dt, flags, lim, cfg, box, pos_bind, out,
                     integrate_q):  # pragma: no cover - compiled
    """Stop detection and flags for the reference in ``out`` (velocity already in the box).

    With ``integrate_q`` the position row is ``q + dq dt`` (clipped to the limits); a stopped
    reference holds ``q`` exactly.
    """
    n = q.shape[0]
    lower = box[0]
    upper = box[1]
    v = out[1]
    stopped = False
    if max_abs(v) < cfg[C_STOP]:
        z = np.empty(n)
        brake_velocity(lower, upper, z)
        if max_abs(z) == 0.0:
            stopped = True
            for i in range(n):
                v[i] = 0.0
    if integrate_q or stopped:
        integrate(q, v, dt, lim[L_HLO], lim[L_HHI], out[0])
    if bound_touched(out[1], lower, upper, pos_bind):
        flags |= JBOUND
    if not flags & (STALE_FLAG | SOLVER):
        for i in range(n):
            vi = out[1, i]
            pb = pos_bind[i]
            if vi != 0.0 and ((vi >= upper[i] - 1e-12 and not (pb == 1 or pb == 2))
                              or (vi <= lower[i] + 1e-12 and not (pb == -1 or pb == 2))):
                flags |= VSCALED
                break
    return flags, max_abs(out[1]) > 0.0


# ---------------------------------------------------------------------- packed workspace
# A 1 kHz loop pays numba's argument unboxing per array argument (~80 ns each), so the fast
# path receives three flat buffers and cuts them into views here. ``unpack`` and
# ``Workspace`` share one layout.

@njit(cache=True)
def tmp_size(n, m):  # pragma: no cover - compiled
    """Scratch values a cycle needs (SVD work and task vectors, then the solver's matrices)."""
    return max(n * m + n * n + 2 * n + 24, m * m + m, 2 * n * n + 3 * n)


@njit(cache=True, inline="always")
def unpack(const_f, const_i, ws, iws, n, m):  # pragma: no cover - compiled
    """Views into the packed constant and work buffers (see :class:`Workspace`)."""
    k = min(m, n)
    o = 0
    Rs = view3(const_f[o:o + 9 * n], n, 3, 3)
    o += 9 * n
    ps = view2(const_f[o:o + 3 * n], n, 3)
    o += 3 * n
    R_end = view2(const_f[o:o + 9], 3, 3)
    o += 9
    p_end = const_f[o:o + 3]
    o += 3
    lim = view2(const_f[o:o + N_LIM * n], N_LIM, n)
    o += N_LIM * n
    weights = const_f[o:o + 6]
    o += 6
    posture = const_f[o:o + n]
    o += n
    cfg = const_f[o:o + N_CONFIG]
    o += N_CONFIG
    cons = const_f[o:o + packed_size(const_f[o:], n)]
    kinds = const_i[0:n]
    axes = const_i[n:n + m]
    o = 0
    Jfull = view2(ws[o:o + 6 * n], 6, n)
    o += 6 * n
    T = view2(ws[o:o + 16], 4, 4)
    o += 16
    Jsel = view2(ws[o:o + m * n], m, n)
    o += m * n
    task = ws[o:o + m]
    o += m
    pref = ws[o:o + n]
    o += n
    U = view2(ws[o:o + m * k], m, k)
    o += m * k
    s = ws[o:o + k]
    o += k
    Vh = view2(ws[o:o + n * n], n, n)
    o += n * n
    N = view2(ws[o:o + n * n], n, n)
    o += n * n
    box = view2(ws[o:o + 2 * n], 2, n)
    o += 2 * n
    info = ws[o:o + N_INFO]
    o += N_INFO
    desired = ws[o:o + n]
    o += n
    tmp = ws[o:o + tmp_size(n, m)]
    pos_bind = iws[0:n]
    qp_state = iws[n:2 * n]
    return (Rs, ps, kinds, R_end, p_end, lim, axes, weights, posture, cfg, Jfull, T, Jsel, task,
            pref, U, s, Vh, N, box, pos_bind, info, desired, qp_state, tmp, cons)


@njit(cache=True)
def packed_cycle(q, dq, a_prev, use_jerk, dt, mode, T_target, twist, tool, jog, solver_kind,
                 max_iter, qp_tol, prev_flags, const_f, const_i, ws, iws, n, m,
                 out):  # pragma: no cover - compiled
    """prepare -> built-in solver -> finish in one call, on the packed buffers (see
    :func:`unpack`). Returns ``(flags, moving, solver_ok)``."""
    (Rs, ps, kinds, R_end, p_end, lim, axes, weights, posture, cfg, Jfull, T, Jsel, task, pref,
     U, s, Vh, N, box, pos_bind, info, desired, qp_state,
     tmp, cons) = unpack(const_f, const_i, ws, iws, n, m)
    flags = cycle_prepare(q, dq, a_prev, (use_jerk, dt, mode, tool), T_target, twist, Rs, ps,
                          kinds, R_end, p_end, lim, axes, weights, posture, cfg, Jfull, T, Jsel,
                          task, pref, U, s, Vh, N, box, pos_bind, info, tmp)
    ok = True
    if mode == 0 or mode == 1:
        if solver_kind == DLS:
            m = Jsel.shape[0]
            ok, _ = dls_kernel(Jsel, task, pref, cfg[C_DAMP], box[0], box[1], desired,
                               view2(tmp[0:m * m], m, m), tmp[m * m:m * m + m])
            info[I_ITERS] = 1
        else:
            nn = n * n
            code, it = box_qp_from_task_into(
                Jsel, task, pref, cfg[C_DAMP], box[0], box[1], desired, qp_state, max_iter,
                qp_tol, view2(tmp[0:nn], n, n), tmp[nn:nn + n],
                view2(tmp[nn + n:2 * nn + n], n, n), tmp[2 * nn + n:2 * nn + 2 * n],
                np.empty(n, dtype=np.int64), tmp[2 * nn + 2 * n:2 * nn + 3 * n])
            ok = code == CONVERGED
            info[I_ITERS] = it
        if not ok:
            return flags | SOLVER, False, False
    elif mode == JOG:
        for i in range(n):
            desired[i] = jog[i]
    else:
        for i in range(n):
            desired[i] = 0.0
        if mode == FAULT:
            flags |= SOLVER
        else:
            flags |= STALE_FLAG
    fl, moving = cycle_finish(q, dq, desired, dt, mode, flags, Rs, ps, kinds, R_end, p_end, lim,
                              axes, weights, cfg, T, Jsel, task, U, s, Vh, box, pos_bind, info,
                              out, True, prev_flags, cons)
    return fl, moving, True


def pack_constants(Rs, ps, kinds, R_end, p_end, lim, axes, weights, posture, cfg, cons):
    """The constant buffers ``(const_f, const_i)`` in :func:`unpack`'s layout (``cons``: the
    packed coupled constraints, :func:`ikstack.servo.coupled.pack_constraints`)."""
    const_f = np.concatenate([np.ravel(Rs), np.ravel(ps), np.ravel(R_end), np.ravel(p_end),
                              np.ravel(lim), np.ravel(weights), np.ravel(posture),
                              np.ravel(cfg), np.ravel(cons)]).astype(np.float64)
    const_i = np.concatenate([np.asarray(kinds, dtype=np.int64),
                              np.asarray(axes, dtype=np.int64)])
    return const_f, const_i


def work_buffers(n, m):
    """Zeroed work buffers ``(ws, iws)`` in :func:`unpack`'s layout (``Vh`` starts at I)."""
    k = min(m, n)
    size = 6 * n + 16 + m * n + m + n + m * k + k + 2 * n * n + 2 * n + N_INFO + n
    size += tmp_size(n, m)
    ws = np.zeros(size)
    iws = np.zeros(2 * n, dtype=np.int64)
    return ws, iws
