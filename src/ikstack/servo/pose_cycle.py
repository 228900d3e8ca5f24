"""Input checks and the whole PoseCommand cycle in one compiled call (the 1 kHz hot path).

:meth:`ikstack.servo.Servo.step` hands a ``JointState`` + ``PoseCommand`` whose arrays are
already float64 and contiguous straight to :func:`pose_step`. It runs the same checks as the
general path (``dt`` range, timestamps, shapes, finiteness, joint limits within the state
tolerance, a rigid target, staleness) and, when all pass, the same compiled cycle
(:func:`ikstack.servo.cycle.packed_cycle`) on the packed buffers. When any check fails it
returns ``FALLBACK`` *before* touching any state, and the kernel reruns the step on its
general path, which builds the REJECT message. A cycle therefore pays one call into compiled
code, and the message-building code runs only when something is wrong.

The signature is fixed (:func:`prepare` compiles it, or loads it from the cache, when the
first servo is built, not at import), so an argument of another type (a list, a readonly or
strided array, an integer that does not fit in int64) is refused by the dispatcher with a
``TypeError`` / ``OverflowError`` instead of compiling a new specialization; the kernel takes
that as ``FALLBACK`` too.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba import types as nt

from ikstack.diffik._linalg import view2
from ikstack.servo.coupled import num_rows, project_state
from ikstack.servo.cycle import (
    BOX_QP,
    DLS,
    FAULT,
    I_ITERS,
    I_KAPPA,
    I_NS,
    I_PERR,
    I_RERR,
    I_RESID,
    L_HHI,
    L_HLO,
    STALE,
    packed_cycle,
    unpack,
)
from ikstack.servo.task import POSE

# outcome codes of pose_step
OK = 0
FALLBACK = 1
SOLVER_FAILED = 2

#: "no timestamp seen yet" (every int64 is >= it)
NO_TIME = -(2**63)
#: a time only the general path can compare (a Python int beyond SAFE_TIME is held there)
FAR_TIME = 2**63 - 1
SAFE_TIME = 2**61  # |stamps| beyond this go the general path (no int64 overflow in differences)
_EXACT = 2**53  # stale-age differences beyond this go the general path (exact float compare)

# trailing scalars of the float constants (after cycle.unpack's layout)
(PF_STATE_TOL, PF_MAX_DT, PF_TIMEOUT_NS, PF_QP_TOL) = range(4)
N_PF = 4
# the tail of the int buffer: sizes and solver settings, then the clock (last now, last stamp)
(PI_N, PI_M, PI_SOLVER, PI_MAX_ITER, PI_HAS_JERK, PI_NF, PI_NI, PI_LAST_NOW,
 PI_LAST_STAMP, PI_LEN) = range(10)
N_PI = 10

# the per-servo memory at the tail of the work buffer: scalars, then three (n,) rows
(M_PREV_DT, M_PREV_FLAGS, M_HAS_PREV_DQ) = range(3)
N_MEM_SCALARS = 3


def mem_size(n: int) -> int:
    """Length of the memory block at the tail of the work buffer."""
    return N_MEM_SCALARS + 5 * n


@njit(cache=True)
def rigid_ok(T):  # pragma: no cover - compiled
    """A finite 4x4 rigid transform (orthonormal rotation, det +1, last row 0 0 0 1)."""
    for i in range(4):
        for j in range(4):
            if not np.isfinite(T[i, j]):
                return False
    if T[3, 0] != 0.0 or T[3, 1] != 0.0 or T[3, 2] != 0.0 or abs(T[3, 3] - 1.0) > 1e-9:
        return False
    for i in range(3):
        for j in range(3):
            d = T[0, i] * T[0, j] + T[1, i] * T[1, j] + T[2, i] * T[2, j]
            if abs(d - (1.0 if i == j else 0.0)) > 1e-6:
                return False
    det = (T[0, 0] * (T[1, 1] * T[2, 2] - T[1, 2] * T[2, 1])
           - T[0, 1] * (T[1, 0] * T[2, 2] - T[1, 2] * T[2, 0])
           + T[0, 2] * (T[1, 0] * T[2, 1] - T[1, 1] * T[2, 0]))
    return det > 0.0


@njit(cache=True)
def check_state(q, dq, lo, hi, tol, out):  # pragma: no cover - compiled
    """-2 if q or dq is not finite; the first joint outside its limits (+-tol); else -1.

    Writes ``q`` clipped into the limits to ``out`` (called with the hard limits: a state in
    the kinematic-margin band is legal).
    """
    bad = -1
    for i in range(q.shape[0]):
        if not (np.isfinite(q[i]) and np.isfinite(dq[i])):
            return -2
        if bad < 0 and (q[i] < lo[i] - tol or q[i] > hi[i] + tol):
            bad = i
        out[i] = min(max(q[i], lo[i]), hi[i])
    return bad


_F1 = nt.Array(nt.float64, 1, "C")
_F2 = nt.Array(nt.float64, 2, "C")
_RESULT = nt.Tuple((nt.int64, nt.int64, nt.boolean, nt.float64, nt.float64, nt.float64,
                    nt.float64, nt.float64, nt.int64))
_SIGNATURE = _RESULT(_F1, _F1, _F2, nt.float64, nt.int64, nt.int64, nt.int64, _F1, _F1, _F1)


def split_buffer(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The float part and the int64 part (a view of the trailing ``PI_LEN`` values)."""
    total = buf.shape[0]
    length = int(buf[total - 1:].view(np.int64)[0])
    return buf[:total - length], buf[total - length:].view(np.int64)


@njit(cache=True)
def pose_step(q_in, dq, T_target, dt, now_ns, stamp, cstamp, buf, q_ref,
              v_ref):  # pragma: no cover - compiled
    """Validate one PoseCommand cycle and run it; see the module docstring.

    ``buf`` is one float64 buffer (one argument costs less than two): the float constants,
    the work buffer (memory block at its tail), then int64 values stored bitwise (see
    :func:`split_buffer`): the int constants, the int work buffer and the ``PI_*`` tail (with
    the clock: the previous accepted times, ``NO_TIME`` for none). Writes the reference to
    ``q_ref``, ``v_ref`` (n,) and updates the memory block and the clock.

    Returns ``(code, flags, moving, kappa, position_error, orientation_error,
    nullspace_speed, task_residual, iterations)``; only ``code`` is meaningful for
    ``FALLBACK``. With ``SOLVER_FAILED`` the solver failed and a fault cycle (smooth halt)
    produced the reference; the caller latches the fault.
    """
    fail = (FALLBACK, 0, False, 0.0, 0.0, 0.0, 0.0, 0.0, 0)
    no_tool = np.bool_(False)  # a bool, not the literal False (see packed_cycle below)
    total = buf.shape[0]
    length = buf[total - 1:].view(np.int64)[0]
    fbuf = buf[:total - length]
    ibuf = buf[total - length:].view(np.int64)
    ki = ibuf.shape[0] - N_PI
    n = ibuf[ki + PI_N]
    m = ibuf[ki + PI_M]
    nf = ibuf[ki + PI_NF]
    ni = ibuf[ki + PI_NI]
    const_f = fbuf[:nf]
    ws = fbuf[nf:]
    const_i = ibuf[:ni]
    iws = ibuf[ni:ni + 2 * n]
    kf = nf - N_PF
    # ---- validate (no state is touched before every check passed)
    if not (dt > 0.0 and dt <= const_f[kf + PF_MAX_DT]):
        return fail
    if now_ns < ibuf[ki + PI_LAST_NOW] or stamp < ibuf[ki + PI_LAST_STAMP] or cstamp > now_ns:
        return fail
    if (now_ns > SAFE_TIME or now_ns < -SAFE_TIME or cstamp > SAFE_TIME
            or cstamp < -SAFE_TIME or stamp > SAFE_TIME or stamp < -SAFE_TIME
            or now_ns - cstamp > _EXACT):
        return fail
    if q_in.shape[0] != n or dq.shape[0] != n or q_ref.shape[0] != n or v_ref.shape[0] != n:
        return fail
    if T_target.shape[0] != 4 or T_target.shape[1] != 4 or not rigid_ok(T_target):
        return fail
    (Rs, ps, kinds, R_end, p_end, lim, axes, weights, posture, cfg, Jfull, T, Jsel, task, pref,
     U, s, Vh, N, box, pos_bind, info, desired, qp_state,
     tmp, cons) = unpack(const_f, const_i, ws, iws, n, m)
    mem = ws[ws.shape[0] - (N_MEM_SCALARS + 5 * n):]
    out = view2(mem[N_MEM_SCALARS + 3 * n:N_MEM_SCALARS + 5 * n], 2, n)
    prev_dq = mem[N_MEM_SCALARS:N_MEM_SCALARS + n]
    a_buf = mem[N_MEM_SCALARS + n:N_MEM_SCALARS + 2 * n]
    q = mem[N_MEM_SCALARS + 2 * n:N_MEM_SCALARS + 3 * n]
    tol = const_f[kf + PF_STATE_TOL]
    if check_state(q_in, dq, lim[L_HLO], lim[L_HHI], tol, q) != -1:
        return fail
    if num_rows(cons) > 0 and project_state(q, cons, tol) != -1:
        return fail
    # ---- accepted: the general path's bookkeeping
    ibuf[ki + PI_LAST_NOW] = now_ns
    ibuf[ki + PI_LAST_STAMP] = stamp
    mode = STALE if float(now_ns - cstamp) > const_f[kf + PF_TIMEOUT_NS] else POSE
    has_jerk = ibuf[ki + PI_HAS_JERK] != 0
    prev_dt = mem[M_PREV_DT]
    use_jerk = has_jerk and mem[M_HAS_PREV_DQ] != 0.0 and prev_dt > 0
    a_prev = dq
    if use_jerk:
        for i in range(n):
            a_buf[i] = (dq[i] - prev_dq[i]) / prev_dt
        a_prev = a_buf
    if has_jerk:
        for i in range(n):
            prev_dq[i] = dq[i]
        mem[M_HAS_PREV_DQ] = 1.0
    mem[M_PREV_DT] = dt
    prev_flags = int(mem[M_PREV_FLAGS])
    solver = ibuf[ki + PI_SOLVER]
    # arguments typed as the general path's call from Python types them (int64, bool, not
    # literals), so both paths and the fault cycle share one compiled packed_cycle
    flags, moving, ok = packed_cycle(
        q, dq, a_prev, use_jerk, dt, mode, T_target, q, no_tool, q, solver,
        ibuf[ki + PI_MAX_ITER], const_f[kf + PF_QP_TOL], prev_flags, const_f, const_i, ws, iws,
        n, m, out)
    code = OK
    if not ok:
        code = SOLVER_FAILED
        flags, moving, _ = packed_cycle(
            q, dq, a_prev, use_jerk, dt, np.int64(FAULT), T_target, q, no_tool, q, np.int64(DLS),
            np.int64(1), 1.0, np.int64(0), const_f, const_i, ws, iws, n, m, out)
    mem[M_PREV_FLAGS] = flags if mode == POSE else 0
    for i in range(n):
        q_ref[i] = out[0, i]
        v_ref[i] = out[1, i]
    return (code, flags, moving, info[I_KAPPA], info[I_PERR], info[I_RERR], info[I_NS],
            info[I_RESID], int(info[I_ITERS]))


def prepare() -> None:
    """Compile :func:`pose_step` for its one signature (or load it from the cache), then refuse
    every other: called when a servo is built, so importing the servo compiles nothing."""
    if not pose_step.signatures:
        pose_step.compile(_SIGNATURE)
        pose_step.disable_compile()


__all__ = ["BOX_QP", "DLS", "FALLBACK", "NO_TIME", "OK", "SOLVER_FAILED", "check_state",
           "mem_size", "pose_step", "prepare", "rigid_ok", "split_buffer"]
