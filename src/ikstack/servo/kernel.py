"""The real-time servo kernel: one safe joint reference per control cycle.

One cycle: validate the input; joint state + command -> task (pose error or twist,
selected and weighted) -> Jacobian and SVD -> this cycle's velocity box (velocity, next-cycle
acceleration, sampled braking distance to position limits, jerk) -> the differential-IK
solver -> singularity scaling -> smoothing -> the chain's coupled-joint constraints (the
velocity held back until the stop after it stays inside, :mod:`ikstack.servo.coupled`) ->
motion generator -> re-validation ->
:class:`ServoResult`. Nothing reaches the output that has not passed the last check, and a
solver or generator fault latches (SOLVER_ERROR) until :meth:`Servo.reset`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ikstack.diffik import BoxQPSolver, DampedLeastSquares, DifferentialIK, DiffIKRequest
from ikstack.diffik.nullspace import RCOND
from ikstack.diffik.solver import as_result
from ikstack.kinematics import compile_chain
from ikstack.model import Chain, JointType
from ikstack.servo import cycle as C
from ikstack.servo.backend import check_arguments, resolve_backend
from ikstack.servo.commands import (
    Action,
    JointJogCommand,
    JointState,
    PoseCommand,
    Reference,
    ServoResult,
    ServoStatus,
    TwistCommand,
)
from ikstack.servo.config import ServoConfig
from ikstack.servo.coupled import pack_constraints, project_state, row_names, worst_row
from ikstack.servo.inputs import as_array, as_vector, parse_command
from ikstack.servo.limits import integrate, reference_violation
from ikstack.servo.motion import MotionGenerator
from ikstack.servo.pose_cycle import (
    FALLBACK,
    FAR_TIME,
    M_HAS_PREV_DQ,
    M_PREV_DT,
    M_PREV_FLAGS,
    N_MEM_SCALARS,
    NO_TIME,
    SAFE_TIME,
    check_state,
    mem_size,
    pose_step,
    prepare,
    split_buffer,
)
from ikstack.servo.task import POSE, TWIST

S = ServoStatus
_FLAGS: dict[int, ServoStatus] = {0: S.NONE}  # IntFlag construction is slow; flags repeat
_BUILTIN = (DampedLeastSquares, BoxQPSolver)
_TRACK, _HOLD = Action.TRACK, Action.HOLD
_new = object.__new__
_empty = np.empty


class Servo:
    """Servo a chain toward pose, twist or joint-jog commands, one cycle per :meth:`step`.

    Args:
        chain: the arm. Its position limits less its ``kinematic_margin`` are the working
            range; a state between them and the hard limits (the margin band) is accepted and
            may only move out. Its coupled-joint ``constraints`` hold on every reference and
            on the stop after it (``COUPLED_BOUND`` says when one binds).
            Acceleration limits bound the next cycle and the braking distance;
            where they are infinite only velocity and position bound the cycle (an instant
            stop), so give real ones (``chain.with_limits(acceleration=...)``). Jerk limits
            apply where finite.
        config: :class:`ServoConfig` (MoveIt Servo defaults).
        differential_ik: the per-cycle solver; default :class:`DampedLeastSquares`. Any
            :class:`DifferentialIK` works; an exception, a wrong shape or non-finite output
            from it latches SOLVER_ERROR until :meth:`reset`.
        motion_generator: optional :class:`MotionGenerator`; the default scales into the box
            and integrates one cycle. Its output is re-validated every cycle.
        backend: ``"native"`` (default: the C++ kernel, nothing compiled on first use) or
            ``"numba"`` (the compiled-Python kernel, kept one release as a fallback); ``None``
            reads the ``IKSTACK_SERVO`` environment variable, else ``"native"``.

    Example:
        >>> servo = Servo(chain, ServoConfig(task_axes=(0, 1)), differential_ik=BoxQPSolver())
        >>> result = servo.step(JointState(q, dq, now), PoseCommand(T, now), dt=0.01, now_ns=now)
    """

    def __new__(cls, *args: Any, backend: str | None = None, **kwargs: Any) -> Servo:
        # (no arguments: copy/pickle rebuilding an existing servo of its own class)
        if cls is Servo and (args or kwargs) and resolve_backend(backend) == "native":
            from ikstack.servo.native import NativeServo
            return object.__new__(NativeServo)
        return object.__new__(cls)

    def __init__(self, chain: Chain, config: ServoConfig | None = None,
                 differential_ik: DifferentialIK | None = None,
                 motion_generator: MotionGenerator | None = None, *, backend: str | None = None):
        cfg, solver = check_arguments(chain, config, differential_ik, motion_generator)
        n = chain.dof
        self.chain = chain
        self.config = cfg
        self.differential_ik = solver
        self.motion_generator = motion_generator
        self._fast = type(solver) in _BUILTIN
        self._solver_kind = C.BOX_QP if type(solver) is BoxQPSolver else C.DLS
        self._max_iter = int(getattr(solver, "max_iterations", 100))
        self._qp_tol = float(getattr(solver, "tolerance", 1e-12))
        c = compile_chain(chain)
        km = chain.kinematic_margin
        lim = np.empty((C.N_LIM, n))
        lim[C.L_LO] = chain.lower + km
        lim[C.L_HI] = chain.upper - km
        # a joint whose range is narrower than twice the margin keeps its hard limits
        narrow = lim[C.L_LO] > lim[C.L_HI]
        lim[C.L_LO, narrow] = chain.lower[narrow]
        lim[C.L_HI, narrow] = chain.upper[narrow]
        lim[C.L_HLO] = chain.lower
        lim[C.L_HHI] = chain.upper
        lim[C.L_VMAX] = chain.velocity_limits
        lim[C.L_AMAX] = chain.acceleration_limits
        lim[C.L_JMAX] = chain.jerk_limits
        lim[C.L_CONT] = [t == JointType.CONTINUOUS for t in chain.joint_types]
        self._lim = lim
        self._lo = np.ascontiguousarray(lim[C.L_LO])
        self._hi = np.ascontiguousarray(lim[C.L_HI])
        self._hlo = np.ascontiguousarray(lim[C.L_HLO])
        self._hhi = np.ascontiguousarray(lim[C.L_HHI])
        self._cons = pack_constraints(chain.constraints, n)
        self._row_names = row_names(chain.constraints)
        self._has_jerk = bool(np.any(np.isfinite(chain.jerk_limits)))
        self._axes = np.array(cfg.task_axes, dtype=np.int64)
        self._weights = np.array(cfg.task_weights, dtype=np.float64)
        self._posture = (np.ascontiguousarray(cfg.posture, dtype=np.float64)
                         if cfg.posture is not None else np.zeros(n))
        cv = np.zeros(C.N_CONFIG)
        cv[C.C_GAIN] = cfg.pose_gain
        cv[C.C_VLIN] = cfg.max_linear_speed
        cv[C.C_VANG] = cfg.max_angular_speed
        cv[C.C_POSTURE] = cfg.nullspace_gain if cfg.posture is not None else 0.0
        cv[C.C_CENTER] = cfg.joint_centering_gain
        # the fused path calls the built-in kernels directly: DLS's damping floor applies here
        cv[C.C_DAMP] = max(cfg.damping, getattr(solver, "min_damping", 0.0)) \
            if type(solver) is DampedLeastSquares else cfg.damping
        cv[C.C_MARGIN] = cfg.joint_limit_margin
        cv[C.C_PTOL] = cfg.position_tolerance
        cv[C.C_RTOL] = cfg.orientation_tolerance
        cv[C.C_KDEC] = cfg.singularity_decelerate
        cv[C.C_KHALT] = cfg.singularity_halt
        cv[C.C_KLEAVE] = cfg.leaving_halt
        cv[C.C_PROBE] = cfg.singularity_probe
        cv[C.C_MINLEAVE] = cfg.leaving_min_scale
        cv[C.C_ESCAPE] = cfg.escape_speed
        cv[C.C_SMOOTH] = cfg.smoothing
        cv[C.C_STOP] = cfg.stop_velocity
        cv[C.C_RCOND] = RCOND
        cv[C.C_HALTSCALE] = cfg.halt_scale
        cv[C.C_CMARGIN] = km
        m = len(cfg.task_axes)
        # packed buffers for the compiled fast path, and named views of them for the rest
        const_f, const_i = C.pack_constants(
            c.Rs, c.ps, c.kinds, c.R_end, c.p_end, lim, self._axes, self._weights,
            self._posture, cv, self._cons)
        # one float and one int buffer (pose_cycle's layout): constants, work, memory, clock
        const_f = np.concatenate([const_f, [cfg.state_tolerance, cfg.max_dt,
                                            cfg.command_timeout * 1e9, self._qp_tol]])
        ws, iws = C.work_buffers(n, m)
        nf, ni = const_f.shape[0], const_i.shape[0]
        ints = np.concatenate([const_i, iws, np.array(
            [n, m, self._solver_kind, self._max_iter, self._has_jerk, nf, ni, NO_TIME, NO_TIME,
             0], dtype=np.int64)])
        ints[-1] = ints.shape[0]
        self._buf = np.concatenate([const_f, ws, np.zeros(mem_size(n)), ints.view(np.float64)])
        self._fbuf, self._ibuf = split_buffer(self._buf)
        self._const_f, self._ws = self._fbuf[:nf], self._fbuf[nf:]
        self._const_i, self._iws = self._ibuf[:ni], self._ibuf[ni:ni + 2 * n]
        self._clock = self._ibuf[self._ibuf.shape[0] - 3:self._ibuf.shape[0] - 1]
        self._clock_far: list[int] = [0, 0]
        self._mem = self._ws[self._ws.shape[0] - mem_size(n):]
        self._prev_dq = self._mem[N_MEM_SCALARS:N_MEM_SCALARS + n]
        self._n = n
        (Rs, ps, kinds, R_end, p_end, self._lim, self._axes, self._weights, self._posture,
         self._cfgv, self._Jfull, self._T, self._Jsel, self._task, self._pref, self._U, self._s,
         self._Vh, self._N, self._box, self._pos_bind, self._info, self._desired,
         self._qp_state, self._tmp, _) = C.unpack(self._const_f, self._const_i, self._ws, self._iws,
                                               n, m)
        self._cc = (Rs, ps, kinds, R_end, p_end)
        self._m = m
        self._zero6 = np.zeros(6)
        self._zero_n = np.zeros(n)
        self._eye4 = np.eye(4)
        self._last_ref: tuple[np.ndarray, np.ndarray] | None = None
        self.reset()

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        """Clear a latched SOLVER_ERROR and forget timing history (call before a new session)."""
        self._fault: str | None = None
        # PoseCommand cycles with a built-in solver and no generator run pose_cycle.pose_step
        self._pose_fast = self._fast and self.motion_generator is None
        if self._pose_fast:
            prepare()  # the one-call PoseCommand cycle, compiled on first use
        self._Vh[:] = np.eye(self.chain.dof)
        self._last_now = None
        self._last_stamp = None
        self._mem[:] = 0.0  # previous dt, flags and velocity (for the jerk bound)
        # the last reference sent survives a reset: a refused cycle with an unusable state
        # keeps braking from it (the arm does not stop just because the servo was reset)
        if self.motion_generator is not None:
            self.motion_generator.reset()

    # the last accepted times live in the int buffer (pose_step reads and writes them there);
    # Python ints beyond its range are held here and make pose_step defer to the general path
    def _clock_get(self, i: int) -> int | None:
        v = int(self._clock[i])
        if v == NO_TIME:
            return None
        return self._clock_far[i] if v == FAR_TIME else v

    def _clock_set(self, i: int, v: int | None) -> None:
        if v is None:
            self._clock[i] = NO_TIME
        elif -SAFE_TIME <= v <= SAFE_TIME:
            self._clock[i] = v
        else:
            self._clock[i] = FAR_TIME
            self._clock_far[i] = v

    @property
    def _last_now(self) -> int | None:
        return self._clock_get(0)

    @_last_now.setter
    def _last_now(self, v: int | None) -> None:
        self._clock_set(0, v)

    @property
    def _last_stamp(self) -> int | None:
        return self._clock_get(1)

    @_last_stamp.setter
    def _last_stamp(self, v: int | None) -> None:
        self._clock_set(1, v)

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
        # hot path: a pose command with plain float64 arrays and a built-in solver is checked
        # and run in one compiled call; anything it does not accept takes the general path,
        # which repeats every check and builds the messages
        if (self._pose_fast and type(command) is PoseCommand and type(state) is JointState
                and type(dt) is float and type(now_ns) is int):
            stamp = state.stamp_ns
            cstamp = command.stamp_ns
            if type(stamp) is int and type(cstamp) is int:
                n = self._n
                q_ref = _empty(n)
                v = _empty(n)
                try:
                    code, flags, moving, kappa, perr, rerr, ns, resid, iters = pose_step(
                        state.q, state.dq, command.T_base_target, dt, now_ns, stamp, cstamp,
                        self._buf, q_ref, v)
                except (TypeError, ValueError, OverflowError):  # not plain arrays / int64s
                    code = FALLBACK
                if code != FALLBACK:
                    self._last_ref = (q_ref, v)
                    if code:
                        message = self._latch(self._solver_failure())
                    elif flags:
                        message = self._message(flags, moving)
                    else:
                        message = "ok"
                    status = _FLAGS.get(flags)
                    if status is None:
                        status = _FLAGS.setdefault(flags, S(flags))
                    # the records' fields set directly: a third cheaper than their __init__
                    # (test_servo_fast_path checks every field is set)
                    ref = _new(Reference)
                    ref.q = q_ref
                    ref.dq = v
                    res = _new(ServoResult)
                    res.action = _TRACK if moving else _HOLD
                    res.reference = ref
                    res.status = status
                    res.message = message
                    res.task_residual = resid
                    res.nullspace_speed = ns
                    res.condition_number = kappa
                    res.position_error = perr
                    res.orientation_error = rerr
                    res.solver_iterations = iters
                    return res
        return self._step(state, command, dt, now_ns)

    def _step(self, state: Any, command: Any, dt: Any, now_ns: Any) -> ServoResult:
        """The general path of :meth:`step` (every command type, solver and generator)."""
        n = self.chain.dof
        cfg = self.config
        # ---- validate
        if type(dt) is not float or type(now_ns) is not int:
            try:
                dt = float(dt)
                now_ns = int(now_ns)
            except (TypeError, ValueError, OverflowError):
                return self._reject_at(dt, state, "dt must be a number [s] and now_ns an integer [ns]")
        if not (0.0 < dt <= cfg.max_dt):
            return self._reject_at(dt, state, f"dt must be in (0, {cfg.max_dt}] s; got {dt}")
        if self._last_now is not None and now_ns < self._last_now:
            return self._reject_at(dt, state, f"now_ns went backwards ({now_ns} < {self._last_now})")
        if type(state) is not JointState and not isinstance(state, JointState):
            return self._reject(None, f"state must be a JointState; got {type(state).__name__}")
        q_in = as_array(state.q, n)
        dq = as_array(state.dq, n)
        if q_in is None or dq is None:
            return self._reject_at(dt, state, f"state.q and state.dq must be finite ({n},) arrays")
        q = np.empty(n)
        lo, hi = self._hlo, self._hhi
        j = check_state(q_in, dq, lo, hi, cfg.state_tolerance, q)
        if j == -2:
            return self._reject_at(dt, state, f"state.q and state.dq must be finite ({n},) arrays")
        stamp = state.stamp_ns
        if type(stamp) is not int and not isinstance(stamp, np.integer):
            return self._reject_at(dt, state, "state.stamp_ns must be an integer [ns]")
        if self._last_stamp is not None and stamp < self._last_stamp:
            return self._reject_at(dt, state, f"state.stamp_ns went backwards ({stamp} < {self._last_stamp})")
        if j >= 0:
            return self._reject_at(dt, state, f"joint {self.chain.joint_names[j]!r} = {q_in[j]:.6g} is "
                                f"outside its hard limits [{lo[j]:.6g}, {hi[j]:.6g}] by more "
                                f"than the state tolerance {cfg.state_tolerance:g}")
        if self._row_names:
            r = project_state(q, self._cons, cfg.state_tolerance)
            if r >= 0:
                return self._reject_at(dt, state, f"the state violates the coupled constraint "
                                    f"{self._row_names[r]} by more than the state tolerance "
                                    f"{cfg.state_tolerance:g}")
        mode, target, twist, tool, jog, bad = parse_command(
            command, now_ns, n, cfg.command_timeout, self._eye4, self._zero6, self._zero_n)
        if bad:
            return self._reject_at(dt, state, bad)
        self._last_now = now_ns
        self._last_stamp = int(stamp)
        if self._fault is not None:
            mode = C.FAULT
        mem = self._mem
        use_jerk = self._has_jerk and mem[M_HAS_PREV_DQ] != 0.0 and mem[M_PREV_DT] > 0
        a_prev = (dq - self._prev_dq) / mem[M_PREV_DT] if use_jerk else dq
        if self._has_jerk:
            self._prev_dq[:] = dq
            mem[M_HAS_PREV_DQ] = 1.0
        mem[M_PREV_DT] = dt
        prev_flags = int(mem[M_PREV_FLAGS])

        # ---- the compiled cycle
        out = np.empty((2, n))
        desired = self._desired
        info = self._info
        message = ""
        if (self._fast or mode not in (POSE, TWIST)) and self.motion_generator is None:
            flags, moving, ok = C.packed_cycle(
                q, dq, a_prev, use_jerk, dt, mode, target, twist, tool, jog, self._solver_kind,
                self._max_iter, self._qp_tol, prev_flags, self._const_f, self._const_i,
                self._ws, self._iws, n, self._m, out)
            if not ok:
                message = self._latch(self._solver_failure())
                flags, moving, _ = self._fault_cycle(q, dq, a_prev, use_jerk, dt, out, desired)
        else:
            flags, moving, message = self._general_cycle(q, dq, a_prev, use_jerk, dt, mode,
                                                         target, twist, tool, jog, out, desired,
                                                         prev_flags)
        q_ref = out[0]
        v = out[1]
        self._last_ref = (q_ref, v)
        mem[M_PREV_FLAGS] = flags if mode in (POSE, TWIST) else 0
        if not message:
            message = self._message(flags, moving)
        status = _FLAGS.get(flags)
        if status is None:
            status = _FLAGS.setdefault(flags, S(flags))
        x = info.tolist()
        return ServoResult(_TRACK if moving else _HOLD, Reference(q_ref, v), status, message,
                           x[C.I_RESID], x[C.I_NS], x[C.I_KAPPA], x[C.I_PERR], x[C.I_RERR],
                           int(x[C.I_ITERS]))

    # ------------------------------------------------------------------ pieces
    def _latch(self, reason: str) -> str:
        self._fault = f"solver error: {reason}" if not reason.startswith("motion") else reason
        self._pose_fast = False
        return self._fault

    def _solver_failure(self) -> str:
        return (f"{type(self.differential_ik).__name__} failed (iteration cap, empty box or "
                "singular normal matrix)")

    def _fault_cycle(self, q: np.ndarray, dq: np.ndarray, a_prev: np.ndarray, use_jerk: bool,
                     dt: float, out: np.ndarray, desired: np.ndarray) -> tuple[int, bool, bool]:
        """A smooth halt under a latched fault (no solver, no generator)."""
        # packed_cycle's desired-velocity buffer is ``desired`` (self._desired)
        return C.packed_cycle(
            q, dq, a_prev, use_jerk, dt, C.FAULT, self._eye4, self._zero6, False, self._zero_n,
            C.DLS, 1, 1.0, 0, self._const_f, self._const_i, self._ws, self._iws, self._n,
            self._m, out)

    def _general_cycle(self, q: np.ndarray, dq: np.ndarray, a_prev: np.ndarray, use_jerk: bool,
                       dt: float, mode: int, target: Any, twist: Any, tool: bool, jog: Any,
                       out: np.ndarray, desired: np.ndarray,
                       prev_flags: int) -> tuple[int, bool, str]:
        """The cycle with a Python solver and/or a motion generator in the loop."""
        n = self.chain.dof
        info = self._info
        flags = C.cycle_prepare(
            q, dq, a_prev, (bool(use_jerk), float(dt), int(mode), bool(tool)), target, twist,
            *self._cc, self._lim,
            self._axes, self._weights, self._posture, self._cfgv, self._Jfull, self._T,
            self._Jsel, self._task, self._pref, self._U, self._s, self._Vh, self._N, self._box,
            self._pos_bind, info, self._tmp)
        if mode in (POSE, TWIST):
            ok, iters, reason = self._solve(q, dt, desired)
            info[C.I_ITERS] = iters
            if not ok:
                message = self._latch(reason)
                flags, moving, _ = self._fault_cycle(q, dq, a_prev, use_jerk, dt, out, desired)
                return flags, moving, message
        elif mode == C.JOG:
            desired[:] = jog
        else:
            desired[:] = 0.0
            flags |= C.SOLVER if mode == C.FAULT else C.STALE_FLAG
        gen = self.motion_generator
        flags, moving = C.cycle_finish(
            q, dq, desired, dt, mode, flags, *self._cc, self._lim, self._axes, self._weights,
            self._cfgv, self._T, self._Jsel, self._task, self._U, self._s, self._Vh, self._box,
            self._pos_bind, info, out, gen is None or mode == C.FAULT, prev_flags, self._cons)
        if gen is None or mode == C.FAULT:
            return flags, moving, ""
        lower, upper = self._box[0].copy(), self._box[1].copy()
        try:
            res = gen.generate(q.copy(), dq.copy(), desired.copy(), lower, upper, self._hlo.copy(),
                               self._hhi.copy(), dt)
            q_ref = np.array(res[0], dtype=np.float64)
            v = np.array(res[1], dtype=np.float64)
            problem = ""
            if q_ref.shape != (n,) or v.shape != (n,):
                problem = f"returned shapes {q_ref.shape}, {v.shape}; expected ({n},)"
            else:
                bad = reference_violation(q_ref, v, self._box[0], self._box[1], self._hlo,
                                          self._hhi, 1e-9)
                if bad >= 0:
                    problem = (f"reference violates the limits of joint "
                               f"{self.chain.joint_names[bad]!r}")
        except Exception as exc:  # a user generator may raise anything; it becomes a status
            problem = f"raised {type(exc).__name__}: {exc}"
        if problem:
            message = self._latch(f"motion generator {problem}")
            flags, moving, _ = self._fault_cycle(q, dq, a_prev, use_jerk, dt, out, desired)
            return flags, moving, message
        out[0] = q_ref
        out[1] = np.minimum(np.maximum(v, self._box[0]), self._box[1])
        cflags = C.coupled_step(q, dt, 0, self._lim, self._cfgv, self._box, self._cons, info,
                                out[1])
        if cflags or (self._row_names and worst_row(out[0], self._cons)[0] > 0.0):
            # the generator's velocity was held back: its position follows the velocity
            integrate(q, out[1], dt, self._hlo, self._hhi, out[0])
        flags, moving = C.finish_reference(q, dt, flags | cflags, self._lim, self._cfgv,
                                           self._box, self._pos_bind, out, False)
        return flags, moving, ""

    def _solve(self, q: np.ndarray, dt: float, out: np.ndarray) -> tuple[bool, int, str]:
        cfg = self.config
        solver = self.differential_ik
        lower, upper = self._box[0], self._box[1]
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
            return False, res.iterations, f"{type(solver).__name__}: {res.message}"
        out[:] = res.dq
        return True, res.iterations, ""

    def _message(self, flags: int, moving: bool) -> str:
        """The binding cause first: fault, stale command, limit conflict, coupled constraint,
        singularity, position limit, goal."""
        if flags & C.SOLVER:
            return self._fault or "solver error"
        if flags & C.STALE_FLAG:
            return (f"no fresh command (timeout {self.config.command_timeout} s): "
                    + ("halting" if moving else "stopped"))
        parts = []
        if flags & C.LCONFLICT:
            parts.append("limit conflict: the measured state cannot stop within the "
                         "acceleration limits; position and velocity limits take priority")
        if flags & C.COUPLED:
            r = int(self._info[C.I_CROW])
            name = self._row_names[r] if 0 <= r < len(self._row_names) else "a coupled constraint"
            parts.append(f"coupled constraint {name} binds: "
                         + ("moving along it" if moving else "held at it"))
        sf = int(self._info[C.I_SFLAGS])
        if sf and not parts:
            kappa = self._info[C.I_KAPPA]
            if sf & S.SINGULARITY_HALT:
                return f"halted: moving toward a singularity (condition number {kappa:.3g})"
            if sf & S.SINGULARITY_ESCAPE:
                return "escaping an exact singularity"
            if sf & S.SINGULARITY_LEAVING:
                return f"leaving a singularity (condition number {kappa:.3g})"
            return f"decelerating near a singularity (condition number {kappa:.3g})"
        if parts:
            return "; ".join(parts)
        if flags & C.GOAL:
            return "goal reached" if not moving else "goal reached; settling"
        if flags & C.JBOUND:
            return "held back by a joint's position limit (braking bound)"
        return "ok"

    def _reject_at(self, dt: Any, state: Any, message: str) -> ServoResult:
        return self._reject(state, message, dt)

    def _reject(self, state: Any, message: str, dt: Any = None) -> ServoResult:
        """REJECT: a stop within the acceleration limits from the measured state when it is
        usable, else from the last accepted reference (a hold once it has stopped)."""
        n = self.chain.dof
        tol = self.config.state_tolerance
        step = dt if isinstance(dt, float) and 0.0 < dt <= self.config.max_dt else None
        if step is None:
            prev_dt = float(self._mem[M_PREV_DT])
            step = prev_dt if prev_dt > 0 else 0.01
        q0 = v0 = None
        qs = as_vector(getattr(state, "q", None), n)
        vs = as_vector(getattr(state, "dq", None), n)
        if qs is not None and vs is not None:
            q0 = np.minimum(np.maximum(qs, self._hlo), self._hhi)
            v0 = vs.copy()
            if self._row_names and project_state(q0, self._cons, tol) >= 0:
                q0 = v0 = None  # outside a coupled constraint: not a state to brake from
        elif state is not None and self._last_ref is not None:
            message += "; the state is unusable: holding the last safe reference"
        if q0 is None and self._last_ref is not None:
            q0, v0 = self._last_ref
        if q0 is not None and v0 is not None:
            out = np.empty((2, n))
            v0 = np.ascontiguousarray(v0, dtype=np.float64)
            mem = self._mem
            use_jerk = self._has_jerk and mem[M_HAS_PREV_DQ] != 0.0 and mem[M_PREV_DT] > 0
            a_prev = (v0 - self._prev_dq) / mem[M_PREV_DT] if use_jerk else v0
            C.brake_reference(np.ascontiguousarray(q0, dtype=np.float64), v0, a_prev,
                              bool(use_jerk), step, self._lim, self._cfgv, self._cons, out)
            q_ref, v = out[0], out[1]
            self._last_ref = (q_ref, v)
        else:
            raw = getattr(state, "q", None)
            try:
                qa = np.asarray(raw, dtype=np.float64).reshape(-1)
            except (TypeError, ValueError):
                qa = np.zeros(0)
            mid = self.chain.middle()
            q_ref = mid.copy() if qa.shape != (n,) else np.where(np.isfinite(qa), qa, mid)
            q_ref = np.minimum(np.maximum(q_ref, self._hlo), self._hhi)
            if self._row_names:
                project_state(q_ref, self._cons, np.inf)
            v = np.zeros(n)
        return ServoResult(Action.REJECT, Reference(q_ref.copy(), v.copy()),
                           S.INVALID_INPUT | (S.SOLVER_ERROR if self._fault else S.NONE), message)
