"""The real-time servo kernel: one safe joint reference per control cycle.

One cycle (DESIGN.md): validate the input; joint state + command -> task (pose error or twist,
selected and weighted) -> Jacobian and SVD -> this cycle's velocity box (velocity, next-cycle
acceleration, sampled braking distance to position limits, jerk) -> the differential-IK
solver -> singularity scaling -> smoothing -> motion generator -> re-validation ->
:class:`ServoResult`. Nothing reaches the output that has not passed the last check, and a
solver or generator fault latches (SOLVER_ERROR) until :meth:`Servo.reset`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit

from ikstack.diffik import BoxQPSolver, DampedLeastSquares, DifferentialIK, DiffIKRequest
from ikstack.diffik.nullspace import RCOND
from ikstack.diffik.solver import as_result
from ikstack.errors import InputError
from ikstack.kinematics import compile_chain
from ikstack.kinematics._kernels import all_finite
from ikstack.model import Chain, JointType
from ikstack.servo.commands import (
    Action,
    JointJogCommand,
    JointState,
    PoseCommand,
    Reference,
    ServoResult,
    ServoStatus,
    TwistCommand,
    TwistFrame,
)
from ikstack.servo.config import ServoConfig
from ikstack.servo.limits import (
    CONFLICT,
    JERK_RELAXED,
    bound_touched,
    brake_velocity,
    cycle_bounds,
    integrate,
    max_abs,
    reference_violation,
)
from ikstack.servo.motion import MotionGenerator
from ikstack.servo.singularity import singularity_scale
from ikstack.servo.task import POSE, TWIST, cartesian_prepare

S = ServoStatus
_BUILTIN = (DampedLeastSquares, BoxQPSolver)


@njit(cache=True)
def _rigid_ok(T):  # pragma: no cover - compiled
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
def _touches(v, lower, upper, pos_bind):  # pragma: no cover - compiled
    """Whether some joint sits on a bound that is not a position bound."""
    for i in range(v.shape[0]):
        pb = pos_bind[i]
        if v[i] >= upper[i] - 1e-12 and v[i] != 0.0 and not (pb == 1 or pb == 2):
            return True
        if v[i] <= lower[i] + 1e-12 and v[i] != 0.0 and not (pb == -1 or pb == 2):
            return True
    return False


@njit(cache=True)
def _residual(J, dq, task):  # pragma: no cover - compiled
    s2 = 0.0
    for r in range(J.shape[0]):
        x = -task[r]
        for i in range(J.shape[1]):
            x += J[r, i] * dq[i]
        s2 += x * x
    return np.sqrt(s2)


def _vector(x: Any, n: int) -> np.ndarray | None:
    """``x`` as a finite float64 (n,) array, or None."""
    if type(x) is not np.ndarray or x.dtype != np.float64:
        try:
            x = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            return None
    if x.shape != (n,) or not all_finite(x):
        return None
    return x


class Servo:
    """Servo a chain toward pose, twist or joint-jog commands, one cycle per :meth:`step`.

    Args:
        chain: the arm. Acceleration limits bound the next cycle and the braking distance;
            where they are infinite only velocity and position bound the cycle (an instant
            stop), so give real ones (``chain.with_limits(acceleration=...)``).
        config: :class:`ServoConfig` (MoveIt Servo defaults).
        differential_ik: the per-cycle solver; default :class:`DampedLeastSquares`. Any
            :class:`DifferentialIK` works; an exception, a wrong shape or non-finite output
            from it latches SOLVER_ERROR.
        motion_generator: optional :class:`MotionGenerator`; the default scales into the box
            and integrates one cycle. Its output is re-validated every cycle.

    Example:
        >>> servo = Servo(chain, ServoConfig(task_axes=(0, 1)), differential_ik=BoxQPSolver())
        >>> result = servo.step(JointState(q, dq, now), PoseCommand(T, now), dt=0.01, now_ns=now)
    """

    def __init__(self, chain: Chain, config: ServoConfig | None = None,
                 differential_ik: DifferentialIK | None = None,
                 motion_generator: MotionGenerator | None = None):
        if not isinstance(chain, Chain):
            raise InputError(f"chain must be an ikstack Chain; got {type(chain).__name__}")
        cfg = config if config is not None else ServoConfig()
        if not isinstance(cfg, ServoConfig):
            raise InputError(f"config must be a ServoConfig; got {type(cfg).__name__}")
        solver = differential_ik if differential_ik is not None else DampedLeastSquares()
        if not isinstance(solver, DifferentialIK):
            raise InputError("differential_ik must be a DifferentialIK (implement solve(request)); "
                             f"got {type(solver).__name__}")
        if motion_generator is not None and not isinstance(motion_generator, MotionGenerator):
            raise InputError("motion_generator must be a MotionGenerator; "
                             f"got {type(motion_generator).__name__}")
        n = chain.dof
        if cfg.posture is not None and cfg.posture.shape != (n,):
            raise InputError(f"nullspace_reference has {cfg.posture.shape[0]} values; "
                             f"the chain has {n} joints")
        self.chain = chain
        self.config = cfg
        self.differential_ik = solver
        self.motion_generator = motion_generator
        self._fast = type(solver) in _BUILTIN
        c = compile_chain(chain)
        self._cc = (c.Rs, c.ps, c.kinds, c.R_end, c.p_end)
        km = chain.kinematic_margin
        self._lo = np.ascontiguousarray(chain.lower + km)
        self._hi = np.ascontiguousarray(chain.upper - km)
        self._vmax = np.ascontiguousarray(chain.velocity_limits)
        self._amax = np.ascontiguousarray(chain.acceleration_limits)
        self._jmax = np.ascontiguousarray(chain.jerk_limits)
        self._has_jerk = bool(np.any(np.isfinite(self._jmax)))
        self._continuous = np.array([t == JointType.CONTINUOUS for t in chain.joint_types])
        self._axes = np.array(cfg.task_axes, dtype=np.int64)
        self._weights = np.array(cfg.task_weights, dtype=np.float64)
        self._posture = (np.ascontiguousarray(cfg.posture, dtype=np.float64)
                         if cfg.posture is not None else np.zeros(n))
        self._posture_gain = cfg.nullspace_gain if cfg.posture is not None else 0.0
        m = len(cfg.task_axes)
        self._Jfull = np.empty((6, n))
        self._T = np.empty((4, 4))
        self._Jsel = np.empty((m, n))
        self._task = np.empty(m)
        self._pref = np.empty(n)
        self._lower = np.empty(n)
        self._upper = np.empty(n)
        self._pos_bind = np.empty(n, dtype=np.int8)
        self._zero6 = np.zeros(6)
        self._eye4 = np.eye(4)
        self.reset()

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        """Clear a latched SOLVER_ERROR and forget timing history (call before a new session)."""
        self._fault: str | None = None
        self._last_now: int | None = None
        self._last_stamp: int | None = None
        self._prev_dq: np.ndarray | None = None
        self._prev_dt = 0.0
        self._last_ref: tuple[np.ndarray, np.ndarray] | None = None
        self._smoothed: np.ndarray | None = None
        if self.motion_generator is not None:
            self.motion_generator.reset()

    @property
    def faulted(self) -> bool:
        """Whether a SOLVER_ERROR is latched."""
        return self._fault is not None

    # ------------------------------------------------------------------ the cycle
    def step(self, state: JointState, command: PoseCommand | TwistCommand | JointJogCommand | None,
             dt: float, now_ns: int) -> ServoResult:
        """Run one cycle.

        Args:
            state: measured joint state (positions, velocities, stamp [ns]).
            command: the latest command, or ``None`` when there is none (smooth halt, HOLD).
            dt: cycle duration [s].
            now_ns: the current time [ns]; must not go backwards.

        Returns:
            :class:`ServoResult`. Never raises for bad input: it answers ``Action.REJECT``.
        """
        n = self.chain.dof
        cfg = self.config
        # ---- validate
        try:
            dt = float(dt)
            now_ns = int(now_ns)
        except (TypeError, ValueError, OverflowError):
            return self._reject(state, "dt must be a number [s] and now_ns an integer [ns]")
        if not (math.isfinite(dt) and 0.0 < dt <= cfg.max_dt):
            return self._reject(state, f"dt must be in (0, {cfg.max_dt}] s; got {dt}")
        if self._last_now is not None and now_ns < self._last_now:
            return self._reject(state, f"now_ns went backwards ({now_ns} < {self._last_now})")
        if not isinstance(state, JointState):
            return self._reject(None, f"state must be a JointState; got {type(state).__name__}")
        q = _vector(state.q, n)
        dq = _vector(state.dq, n)
        if q is None or dq is None:
            return self._reject(state, f"state.q and state.dq must be finite ({n},) arrays")
        stamp = state.stamp_ns
        if not isinstance(stamp, (int, np.integer)):
            return self._reject(state, "state.stamp_ns must be an integer [ns]")
        if self._last_stamp is not None and stamp < self._last_stamp:
            return self._reject(state, f"state.stamp_ns went backwards ({stamp} < {self._last_stamp})")
        tol = cfg.state_tolerance
        lo, hi = self._lo, self._hi
        if np.any(q < lo - tol) or np.any(q > hi + tol):
            j = int(np.argmax((q < lo - tol) | (q > hi + tol)))
            return self._reject(state, f"joint {self.chain.joint_names[j]!r} = {q[j]:.6g} is "
                                f"outside its limits [{lo[j]:.6g}, {hi[j]:.6g}]")
        q = np.minimum(np.maximum(q, lo), hi)
        mode, target, twist, tool, jog, bad = self._parse_command(command, now_ns)
        if bad:
            return self._reject(state, bad)
        self._last_now = now_ns
        self._last_stamp = int(stamp)

        # ---- this cycle's velocity box
        use_jerk = self._has_jerk and self._prev_dq is not None and self._prev_dt > 0
        a_prev = (dq - self._prev_dq) / self._prev_dt if use_jerk else dq
        lower, upper, pos_bind = self._lower, self._upper, self._pos_bind
        code = cycle_bounds(q, dq, a_prev, use_jerk, dt, lo, hi, cfg.joint_limit_margin,
                            self._vmax, self._amax, self._jmax, lower, upper, pos_bind)
        flags = S.NONE
        if code & CONFLICT:
            flags |= S.LIMIT_CONFLICT
        if code & JERK_RELAXED:
            flags |= S.JERK_RELAXED
        self._prev_dq = dq
        self._prev_dt = dt

        residual = ns = perr = rerr = 0.0
        kappa = 1.0
        iters = 0
        message = "ok"
        desired = np.zeros(n)
        if self._fault is not None:
            flags |= S.SOLVER_ERROR
            message = self._fault
        elif mode < 0:
            flags |= S.STALE_COMMAND
            message = bad_or(mode, cfg)
        elif jog is not None:
            desired = jog.copy()
        else:
            kappa, perr, rerr, ns, U, s, Vh = cartesian_prepare(
                q, *self._cc, self._axes, self._weights, mode, target, twist, tool,
                cfg.pose_gain, cfg.max_linear_speed, cfg.max_angular_speed, self._posture,
                self._posture_gain, lo, hi, self._continuous, cfg.joint_centering_gain, RCOND,
                self._Jfull, self._T, self._Jsel, self._task, self._pref)
            if mode == POSE and perr <= cfg.position_tolerance and rerr <= cfg.orientation_tolerance:
                flags |= S.GOAL_REACHED
            ok, iters, fault = self._solve(q, lower, upper, dt, desired)
            if not ok:
                self._fault = f"solver error: {fault}"
                flags |= S.SOLVER_ERROR
                message = self._fault
                desired[:] = 0.0
            else:
                residual = float(_residual(self._Jsel, desired, self._task))
                scale, sflags = singularity_scale(
                    q, desired, self._task, self._Jsel, U, s, Vh, kappa, dt, self._T, *self._cc,
                    self._axes, self._weights, cfg.singularity_decelerate, cfg.singularity_halt,
                    cfg.leaving_halt, cfg.singularity_probe, cfg.leaving_min_scale,
                    cfg.escape_speed, True)
                if sflags:
                    flags |= S(sflags)
                    message = _singularity_message(sflags, kappa)
                if scale < 1.0:
                    desired *= scale
        if cfg.smoothing > 0.0 and not flags & (S.SOLVER_ERROR | S.STALE_COMMAND):
            desired = cfg.smoothing * dq + (1.0 - cfg.smoothing) * desired

        # ---- reference
        q_ref, v = self._generate(q, dq, desired, dt, flags)
        if isinstance(v, str):
            self._fault = v
            flags |= S.SOLVER_ERROR
            message = v
            v = np.empty(n)
            brake_velocity(lower, upper, v)
            q_ref = np.empty(n)
            integrate(q, v, dt, lo, hi, q_ref)
        vmax_abs = max_abs(v)
        if vmax_abs < cfg.stop_velocity:
            z = np.empty(n)
            brake_velocity(lower, upper, z)
            if max_abs(z) == 0.0:
                v = z
                q_ref = q.copy()
                vmax_abs = 0.0
        if bound_touched(v, lower, upper, pos_bind):
            flags |= S.JOINT_BOUND
        if _touches(v, lower, upper, pos_bind) and not flags & (S.STALE_COMMAND | S.SOLVER_ERROR):
            flags |= S.VELOCITY_SCALED
        action = Action.HOLD if vmax_abs == 0.0 else Action.TRACK
        if message == "ok" and flags & S.GOAL_REACHED:
            message = "goal reached" if action == Action.HOLD else "goal reached; settling"
        self._last_ref = (q_ref, v)
        return ServoResult(action, Reference(q_ref.copy(), v.copy()), flags, message, residual, ns,
                           float(kappa), float(perr), float(rerr), int(iters))

    # ------------------------------------------------------------------ pieces
    def _parse_command(self, command: Any, now_ns: int) -> tuple[int, Any, Any, bool, Any, str]:
        """``(mode, target, twist, tool_frame, jog, error)``; mode -1 missing, -2 stale."""
        n = self.chain.dof
        if command is None:
            return -1, self._eye4, self._zero6, False, None, ""
        stamp = getattr(command, "stamp_ns", None)
        if not isinstance(stamp, (int, np.integer)) or isinstance(stamp, bool):
            return 0, None, None, False, None, "command.stamp_ns must be an integer [ns]"
        if stamp > now_ns:
            return 0, None, None, False, None, f"command stamped in the future ({stamp} > {now_ns})"
        stale = (now_ns - stamp) > self.config.command_timeout * 1e9
        if isinstance(command, PoseCommand):
            T = command.T_base_target
            if type(T) is not np.ndarray or T.dtype != np.float64:
                try:
                    T = np.asarray(T, dtype=np.float64)
                except (TypeError, ValueError):
                    return 0, None, None, False, None, "T_base_target must be a (4, 4) array"
            if T.shape != (4, 4) or not _rigid_ok(T):
                return 0, None, None, False, None, \
                    "T_base_target must be a finite (4, 4) rigid transform"
            return (-2 if stale else POSE), T, self._zero6, False, None, ""
        if isinstance(command, TwistCommand):
            tw = _vector(command.twist, 6)
            if tw is None:
                return 0, None, None, False, None, "twist must be a finite (6,) array [v; w]"
            try:
                frame = TwistFrame[command.frame.upper()] if isinstance(command.frame, str) \
                    else TwistFrame(command.frame)
            except (KeyError, ValueError):
                return 0, None, None, False, None, \
                    f"twist frame {command.frame!r} is unknown; valid: 'base', 'tool'"
            return (-2 if stale else TWIST), self._eye4, tw, frame == TwistFrame.TOOL, None, ""
        if isinstance(command, JointJogCommand):
            v = _vector(command.velocities, n)
            if v is None:
                return 0, None, None, False, None, f"jog velocities must be a finite ({n},) array"
            return (-2 if stale else 2), self._eye4, self._zero6, False, (None if stale else v), ""
        return 0, None, None, False, None, \
            f"unknown command type {type(command).__name__}; use PoseCommand, TwistCommand, " \
            "JointJogCommand or None"

    def _solve(self, q: np.ndarray, lower: np.ndarray, upper: np.ndarray, dt: float,
               out: np.ndarray) -> tuple[bool, int, str]:
        cfg = self.config
        solver = self.differential_ik
        if self._fast:
            ok, it = solver.solve_arrays(self._Jsel, self._task, self._pref,  # type: ignore
                                         cfg.damping, lower, upper, out)
            return ok, it, ("" if ok else f"{type(solver).__name__} failed")
        req = DiffIKRequest(self._Jsel.copy(), self._task.copy(), q.copy(), lower.copy(),
                            upper.copy(), self._pref.copy(), cfg.damping, dt=dt)
        try:
            raw = solver.solve(req)
        except Exception as exc:  # a user solver may raise anything; it becomes a status
            return False, 0, f"{type(solver).__name__} raised {type(exc).__name__}: {exc}"
        res = as_result(raw, self.chain.dof)
        if not res.success:
            return False, res.iterations, res.message
        out[:] = res.dq
        return True, res.iterations, ""

    def _generate(self, q: np.ndarray, dq: np.ndarray, desired: np.ndarray, dt: float,
                  flags: ServoStatus) -> tuple[np.ndarray, np.ndarray | str]:
        n = self.chain.dof
        lower, upper = self._lower, self._upper
        gen = self.motion_generator
        if gen is None or flags & S.SOLVER_ERROR:
            from ikstack.diffik._linalg import scale_into_box

            v = np.empty(n)
            scale_into_box(desired, lower, upper, v)
            q_ref = np.empty(n)
            integrate(q, v, dt, self._lo, self._hi, q_ref)
            return q_ref, v
        try:
            out = gen.generate(q.copy(), dq.copy(), desired.copy(), lower.copy(), upper.copy(),
                               self._lo.copy(), self._hi.copy(), dt)
            q_ref = np.array(out[0], dtype=np.float64)
            v = np.array(out[1], dtype=np.float64)
        except Exception as exc:  # a user generator may raise anything; it becomes a status
            return q, f"motion generator raised {type(exc).__name__}: {exc}"
        if q_ref.shape != (n,) or v.shape != (n,):
            return q, f"motion generator returned shapes {q_ref.shape}, {v.shape}; expected ({n},)"
        bad = reference_violation(q_ref, v, lower, upper, self._lo, self._hi, 1e-9)
        if bad >= 0:
            return q, (f"motion generator reference violates the limits of joint "
                       f"{self.chain.joint_names[bad]!r}")
        return q_ref, np.minimum(np.maximum(v, lower), upper)

    def _reject(self, state: Any, message: str) -> ServoResult:
        """REJECT: a safe stop from the last accepted reference (or a hold of the input)."""
        n = self.chain.dof
        if self._last_ref is not None:
            q0, v0 = self._last_ref
            lower, upper, pb = np.empty(n), np.empty(n), np.empty(n, dtype=np.int8)
            dt = self._prev_dt if self._prev_dt > 0 else 0.01
            cycle_bounds(q0, v0, v0, False, dt, self._lo, self._hi, self.config.joint_limit_margin,
                         self._vmax, self._amax, self._jmax, lower, upper, pb)
            v = np.empty(n)
            brake_velocity(lower, upper, v)
            q_ref = np.empty(n)
            integrate(q0, v, dt, self._lo, self._hi, q_ref)
            self._last_ref = (q_ref, v)
        else:
            raw = getattr(state, "q", None)
            try:
                qa = np.asarray(raw, dtype=np.float64).reshape(-1)
            except (TypeError, ValueError):
                qa = np.zeros(0)
            mid = self.chain.middle()
            q_ref = mid.copy() if qa.shape != (n,) else np.where(np.isfinite(qa), qa, mid)
            q_ref = np.minimum(np.maximum(q_ref, self._lo), self._hi)
            v = np.zeros(n)
        return ServoResult(Action.REJECT, Reference(q_ref.copy(), v.copy()),
                           S.INVALID_INPUT | (S.SOLVER_ERROR if self._fault else S.NONE), message)


def bad_or(mode: int, cfg: ServoConfig) -> str:
    """Message of a missing (-1) or stale (-2) command."""
    if mode == -1:
        return "no command: smooth halt"
    return f"command older than {cfg.command_timeout} s: smooth halt"


def _singularity_message(sflags: int, kappa: float) -> str:
    if sflags & S.SINGULARITY_HALT:
        return f"halted: moving toward a singularity (condition number {kappa:.3g})"
    if sflags & S.SINGULARITY_ESCAPE:
        return "escaping an exact singularity"
    if sflags & S.SINGULARITY_LEAVING:
        return f"leaving a singularity (condition number {kappa:.3g})"
    return f"decelerating near a singularity (condition number {kappa:.3g})"
