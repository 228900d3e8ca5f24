"""The real-time servo kernel: one safe joint reference per control cycle.

The cycle runs in the C++ library (module ``ikstack._native``) with the GIL released, so the
first step compiles nothing. One cycle: validate the input; joint state + command -> task
(pose error or twist, selected and weighted) -> Jacobian and SVD -> this cycle's velocity box
(velocity, next-cycle acceleration, sampled braking distance to position limits, jerk) -> the
differential-IK solver -> singularity scaling -> smoothing -> the chain's coupled-joint
constraints (the velocity held back until the stop after it stays inside) -> motion generator
-> re-validation -> :class:`ServoResult`. Nothing reaches the output that has not passed the
last check, and a solver or generator fault latches (SOLVER_ERROR) until :meth:`Servo.reset`.

A Python :class:`DifferentialIK` or :class:`MotionGenerator` is called back with the GIL held;
its exceptions, wrong shapes and non-finite output latch SOLVER_ERROR. This module only reads
Python inputs the kernel cannot take as they are (lists, other dtypes, unknown command types,
non-integer stamps) and answers those with the kernel's REJECT.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from ikstack._deprecated import renamed_attribute
from ikstack.diffik import BoxQPSolver, DifferentialIK, DiffIKRequest, DLSVelocitySolver
from ikstack.diffik.solver import as_result
from ikstack.errors import ConfigError, InputError, ModelError
from ikstack.kinematics import compile_chain
from ikstack.model import Chain, JointType
from ikstack.model.constraints import (
    JointConstraint,
    LinearJointConstraint,
    QuadrantPolynomialConstraint,
)
from ikstack.servo.arguments import check_arguments, resolve_kernel
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
from ikstack.servo.motion import MotionGenerator

_ACTIONS = (Action.TRACK, Action.HOLD, Action.REJECT)
_FLAGS: dict[int, ServoStatus] = {0: ServoStatus.NONE}
_NONE, _POSE, _TWIST, _JOG = 0, 1, 2, 3
_NAN44 = np.full((4, 4), np.nan)
_NAN6 = np.full(6, np.nan)
_I64 = 2**63
_RIGID = "T_base_target must be a finite (4, 4) rigid transform"
_servo_result = ServoResult._trusted
_empty = np.empty


def _module() -> Any:
    try:
        from ikstack import _native
    except ImportError as exc:  # a source checkout that was never built
        raise InputError(
            "the servo needs the compiled module ikstack._native; build it with "
            f"`pip install -e .` (a C++17 compiler and CMake) ({exc})"
        ) from exc
    if not getattr(_native, "HAVE_SERVO", False):
        raise InputError("the servo: this build of ikstack._native has no servo kernel")
    return _native


def _finite_vector(x: Any, n: int) -> np.ndarray | None:
    """``x`` as a finite float64 (n,) array, or None."""
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return a if a.shape == (n,) and bool(np.isfinite(a).all()) else None


def _array(x: Any, n: int) -> np.ndarray | None:
    """``x`` as a C-contiguous float64 (n,) array (finiteness not checked), or None."""
    try:
        a = np.ascontiguousarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return a if a.shape == (n,) else None


def _is_int(x: Any) -> bool:
    return type(x) is int or isinstance(x, np.integer)


def call_solver(
    solver: DifferentialIK,
    n: int,
    J: np.ndarray,
    task: np.ndarray,
    q: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    preferred: np.ndarray,
    damping: float,
    dt: float,
) -> tuple[int, Any, int, str]:
    """One Python solve for the kernel: ``(code, dq, iterations, message)``; code 0 solved,
    1 a failed (or malformed) result, 2 the solver raised (message ``"Type: text"``)."""
    req = DiffIKRequest(J, task, q, lower, upper, preferred, damping, dt=dt)
    try:
        raw = solver.solve(req)
    except Exception as exc:  # a user solver may raise anything; it becomes a status
        return 2, None, 0, f"{type(exc).__name__}: {exc}"
    res = as_result(raw, n)
    if not res.success:
        return 1, None, res.iterations, res.message
    return 0, res.dq, res.iterations, res.message


def call_generator(
    gen: MotionGenerator,
    q: np.ndarray,
    dq: np.ndarray,
    desired: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    q_lower: np.ndarray,
    q_upper: np.ndarray,
    dt: float,
) -> tuple[bool, Any, Any, str]:
    """One Python generator call for the kernel: ``(ok, q_ref, dq_ref, error)``."""
    try:
        res = gen.generate(q, dq, desired, lower, upper, q_lower, q_upper, dt)
        q_ref = np.array(res[0], dtype=np.float64)
        v = np.array(res[1], dtype=np.float64)
    except Exception as exc:  # a user generator may raise anything; it becomes a status
        return False, None, None, f"{type(exc).__name__}: {exc}"
    return True, q_ref, v, ""


def row_names(constraints: Sequence[JointConstraint]) -> list[str]:
    """The constraint's name (and description) for each kernel row: linear rows first."""
    lin: list[str] = []
    quad: list[str] = []
    for c in constraints:
        desc = getattr(c, "description", "")
        label = c.name + (f" ({desc})" if desc else "")
        if isinstance(c, LinearJointConstraint):
            lin.extend([label] * c.num_rows)
        else:
            quad.append(label)
    return lin + quad


def servo_chain(native: Any, chain: Chain) -> Any:
    """The kernel's view of ``chain``: its compiled joint data, limits and constraints."""
    c = compile_chain(chain)
    sc = native.ServoChain()
    sc.dof = chain.dof
    sc.joint_names = list(chain.joint_names)
    sc.Rs = [list(r.ravel()) for r in np.asarray(c.Rs)]
    sc.ps = [list(p) for p in np.asarray(c.ps)]
    sc.kinds = [int(k) for k in c.kinds]
    sc.R_end = list(np.asarray(c.R_end).ravel())
    sc.p_end = list(np.asarray(c.p_end))
    sc.lower = list(chain.lower)
    sc.upper = list(chain.upper)
    sc.velocity = list(chain.velocity_limits)
    sc.acceleration = list(chain.acceleration_limits)
    sc.jerk = list(chain.jerk_limits)
    sc.continuous = [int(t == JointType.CONTINUOUS) for t in chain.joint_types]
    sc.kinematic_margin = float(chain.kinematic_margin)
    names = iter(row_names(chain.constraints))
    linear, quadrant = [], []
    for con in chain.constraints:  # linear rows first, as the kernel numbers them
        if isinstance(con, LinearJointConstraint):
            con.check_indices(chain.dof)
            for r in range(con.num_rows):
                row = native.ServoLinearRow()
                row.a, row.b = [float(x) for x in con.A[r]], float(con.b[r])
                linear.append(row)
    for con in chain.constraints:
        if isinstance(con, LinearJointConstraint):
            continue
        if not isinstance(con, QuadrantPolynomialConstraint):
            raise ModelError(
                f"the servo cannot enforce constraint {getattr(con, 'name', con)!r} "
                f"of type {type(con).__name__}: only linear and quadrant-polynomial "
                "rows"
            )
        con.check_indices(chain.dof)
        row = native.ServoQuadrantRow()
        row.i, row.j = int(con.joint_i), int(con.joint_j)
        row.table = [list(x) for x in np.asarray(con._coeffs).reshape(4, 4)]
        quadrant.append(row)
    for row in linear + quadrant:
        row.name = next(names)
    sc.linear_rows, sc.quadrant_rows = linear, quadrant
    return sc


def servo_config(native: Any, cfg: ServoConfig, n: int) -> Any:
    """The kernel's copy of ``cfg``."""
    nc = native.ServoConfig()
    nc.set_task_axes(list(cfg.task_axes))
    nc.task_weights = list(cfg.task_weights)
    nc.rotation_tolerance = float(cfg.rotation_tolerance)
    for name in (
        "max_linear_speed",
        "max_angular_speed",
        "pose_gain",
        "position_tolerance",
        "nullspace_gain",
        "joint_centering_gain",
        "damping",
        "command_timeout",
        "stop_velocity",
        "singularity_decelerate",
        "singularity_halt",
        "leaving_multiplier",
        "singularity_probe",
        "halt_scale",
        "leaving_min_scale",
        "escape_speed",
        "joint_limit_margin",
        "state_tolerance",
        "smoothing",
        "max_dt",
    ):
        setattr(nc, name, float(getattr(cfg, name)))
    if cfg.posture is not None:
        ref = np.zeros(16)
        ref[:n] = cfg.posture
        nc.has_nullspace_reference = True
        nc.nullspace_reference = list(ref)
    problem = nc.check()
    if problem:
        raise ConfigError(problem)
    return nc


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
        differential_ik: the per-cycle solver; default :class:`DLSVelocitySolver`. Any
            :class:`DifferentialIK` works; an exception, a wrong shape or non-finite output
            from it latches SOLVER_ERROR until :meth:`reset`.
        motion_generator: optional :class:`MotionGenerator`; the default scales into the box
            and integrates one cycle. Its output is re-validated every cycle.
        kernel: ``"native"`` (the C++ kernel, the only one). ``"numba"`` (here or in the
            ``IKSTACK_SERVO`` environment variable) names the retired compiled-Python kernel:
            it warns (DeprecationWarning) and runs the C++ kernel; it goes in the next release.
        backend: the former name of ``kernel`` (warns).

    Example:
        >>> servo = Servo(chain, ServoConfig(task_axes=(0, 1)), differential_ik=BoxQPSolver())
        >>> result = servo.step(JointState(q, dq, now), PoseCommand(T, now), dt=0.01, now_ns=now)
    """

    kernel = "native"
    backend = renamed_attribute("backend", "kernel")  # the former name of kernel (warns)

    def __init__(
        self,
        chain: Chain,
        config: ServoConfig | None = None,
        differential_ik: DifferentialIK | None = None,
        motion_generator: MotionGenerator | None = None,
        *,
        kernel: str | None = None,
        backend: str | None = None,
    ):
        # "native"; "numba" warns; anything else is an InputError
        resolve_kernel(kernel, backend)
        config, differential_ik = check_arguments(chain, config, differential_ik, motion_generator)
        native = _module()
        n = chain.dof
        self.chain = chain
        self.config = config
        self.differential_ik = differential_ik
        self.motion_generator = motion_generator
        solver = native.ServoSolver()
        kind = type(differential_ik)
        solver.kind = 1 if kind is BoxQPSolver else 0
        if kind is DLSVelocitySolver:
            solver.min_damping = float(getattr(differential_ik, "min_damping", 0.0))
        if kind is BoxQPSolver:
            solver.max_iterations = int(getattr(differential_ik, "max_iterations", 100))
            solver.tolerance = float(getattr(differential_ik, "tolerance", 1e-12))
        solve = (
            None
            if kind in (DLSVelocitySolver, BoxQPSolver)
            else partial(call_solver, differential_ik, n)
        )
        gen = reset = None
        if motion_generator is not None:
            gen, reset = partial(call_generator, motion_generator), motion_generator.reset
        # the callbacks hold the solver and generator, never this object (no reference cycle)
        self._kernel = native.Servo(
            servo_chain(native, chain),
            servo_config(native, config, n),
            solver,
            solve,
            kind.__name__,
            gen,
            reset,
        )
        native.servo_fast_setup(
            JointState, PoseCommand, ServoResult, Reference, _ACTIONS, ServoStatus
        )
        # step in one call to the binding, which hands what it does not take to self._step;
        # as an instance attribute it spares the hot loop this class's step frame (a subclass
        # that overrides step keeps its own). It holds this servo, as a bound method does
        # (a cycle through this object's __dict__, which the garbage collector clears).
        self._step_call = native.Servo.bind_step(self, self._kernel)
        if type(self).step is Servo.step:
            self.step = self._step_call  # type: ignore[method-assign]
        self._n = n
        self._zero = np.zeros(1)
        self._jog_nan = np.full(n, np.nan)
        self._epoch = 0  # times are passed to the kernel as t - epoch (64-bit)

    @property
    def _accepted_now(self) -> int | None:
        """The last accepted now_ns (the kernel keeps its own 64-bit copy); the binding's fast
        path updates it."""
        return self._kernel.accepted_now  # type: ignore[no-any-return]

    @_accepted_now.setter
    def _accepted_now(self, value: int | None) -> None:
        self._kernel.accepted_now = value

    @property
    def faulted(self) -> bool:
        """Whether a SOLVER_ERROR is latched."""
        return bool(self._kernel.faulted)

    @property
    def fault_message(self) -> str:
        """The latched SOLVER_ERROR's message ("" when none)."""
        return str(self._kernel.fault_message)

    def reset(self) -> None:
        """Clear a latched SOLVER_ERROR and forget timing history (call before a new session)."""
        self._kernel.reset()
        self._accepted_now = None

    # ------------------------------------------------------------------ the cycle
    def step(
        self,
        state: JointState,
        command: PoseCommand | TwistCommand | JointJogCommand | None,
        dt: float,
        now_ns: int,
    ) -> ServoResult:
        """Run one cycle. Never raises for bad input: a bad input is a REJECT with a message.

        Args:
            state: the measured :class:`JointState` (positions, velocities, stamp [ns]).
            command: :class:`PoseCommand`, :class:`TwistCommand`, :class:`JointJogCommand` or
                None (no new command: the last one ages toward the stale-command halt).
            dt: the cycle duration [s], in ``(0, config.max_dt]``.
            now_ns: the controller's clock [ns]; it must not go backwards.
        """
        # the common case (a JointState and a PoseCommand or None with float64 arrays, a float
        # dt, int times within 64 bits) runs in the binding, which calls _step for the rest
        # (an instance's step is normally this call itself; see __init__)
        return self._step_call(state, command, dt, now_ns)  # type: ignore[no-any-return]

    def _result(
        self, out: tuple, q_ref: np.ndarray, v: np.ndarray, now_ns: int | None
    ) -> ServoResult:
        action, flags, message, resid, ns, kappa, perr, rerr, iters = out
        if action != 2 and now_ns is not None:
            self._accepted_now = now_ns
        status = _FLAGS.get(flags)
        if status is None:
            status = _FLAGS.setdefault(flags, ServoStatus(flags))
        return _servo_result(
            _ACTIONS[action], q_ref, v, status, message, resid, ns, kappa, perr, rerr, iters
        )

    def _reject(self, state: Any, message: str, dt: Any = None) -> ServoResult:
        """REJECT through the kernel: a stop from the state when usable, else from the last
        reference (``state`` None: no state given)."""
        n = self._n
        q = dq = None
        if state is not None:
            q = _finite_vector(getattr(state, "q", None), n)
            dq = _finite_vector(getattr(state, "dq", None), n)
            if q is None or dq is None:  # given but unusable: its finite positions still count
                try:
                    qa = np.asarray(getattr(state, "q", None), dtype=np.float64).reshape(-1)
                except (TypeError, ValueError):
                    qa = np.zeros(0)
                q = np.ascontiguousarray(qa) if qa.shape == (n,) else np.full(n, np.nan)
                dq = np.full(n, np.nan)
        step = dt if isinstance(dt, float) else math.nan
        q_ref, v = _empty(n), _empty(n)
        return self._result(self._kernel.reject(q, dq, message, step, q_ref, v), q_ref, v, None)

    def _times(self, now_ns: int, *stamps: int) -> tuple[int, ...]:
        """The times for the kernel (64-bit): relative to the session's first cycle when that
        was beyond 64 bits, and held at the 64-bit range beyond it (292 years away; the order
        of the times is kept)."""
        if self._accepted_now is None:  # no accepted cycle yet: the kernel holds no time
            self._epoch = now_ns if not -_I64 <= now_ns < _I64 else 0
            self._kernel.fast = self._epoch == 0  # the fast path passes times as they are
        return tuple(min(max(t - self._epoch, -_I64), _I64 - 1) for t in (now_ns, *stamps))

    def _step(self, state: Any, command: Any, dt: Any, now_ns: Any) -> ServoResult:
        """Every input the fast path does not take: Python's checks for what the kernel cannot
        read, in the order of the kernel's own checks; the kernel's for the rest."""
        n = self._n
        cfg = self.config
        if type(dt) is not float or type(now_ns) is not int:
            try:
                dt = float(dt)
                now_ns = int(now_ns)
            except (TypeError, ValueError, OverflowError):
                return self._reject(state, "dt must be a number [s] and now_ns an integer [ns]", dt)
        # the kernel checks these first; they come before reading the state
        if not (0.0 < dt <= cfg.max_dt):
            return self._reject(state, f"dt must be in (0, {cfg.max_dt}] s; got {dt}", dt)
        if self._accepted_now is not None and now_ns < self._accepted_now:
            return self._reject(
                state, f"now_ns went backwards ({now_ns} < {self._accepted_now})", dt
            )
        if not isinstance(state, JointState):
            return self._reject(
                None, f"state must be a JointState; got {type(state).__name__}", None
            )
        q, dq = _array(state.q, n), _array(state.dq, n)
        bad_state = f"state.q and state.dq must be finite ({n},) arrays"
        if q is None or dq is None:
            return self._reject(state, bad_state, dt)
        stamp = state.stamp_ns
        if not _is_int(stamp):
            if not (np.isfinite(q).all() and np.isfinite(dq).all()):
                return self._reject(state, bad_state, dt)
            return self._reject(state, "state.stamp_ns must be an integer [ns]", dt)
        kind, data, frame, cstamp, refused = self._command(command, now_ns)
        now, stamp64, cstamp64 = self._times(int(now_ns), int(stamp), int(cstamp))
        q_ref, v = _empty(n), _empty(n)
        out = self._kernel.step(q, dq, stamp64, kind, data, frame, cstamp64, dt, now, q_ref, v)
        if refused is not None:
            # the kernel saw a command it refuses with a known message once the state passed
            # its checks: the command's own problem takes that message's place
            expected, message = refused
            if out[2] == expected:
                out = (*out[:2], message, *out[3:])
        return self._result(out, q_ref, v, now_ns)

    def _command(
        self, command: Any, now_ns: int
    ) -> tuple[int, np.ndarray, int, int, tuple[str, str] | None]:
        """``(kind, data, frame, stamp, refused)`` for the kernel. A command it cannot read is
        sent as one it refuses with the message ``refused[0]``, which stands for
        ``refused[1]`` (so the kernel's state checks keep their place before it)."""
        n = self._n
        if command is None:
            return _NONE, self._zero, 0, now_ns, None
        unreadable = (_POSE, _NAN44, 0, now_ns)
        if not isinstance(command, (PoseCommand, TwistCommand, JointJogCommand)):
            return (
                *unreadable,
                (
                    _RIGID,
                    f"unknown command type {type(command).__name__}; use "
                    "PoseCommand, TwistCommand, JointJogCommand or None",
                ),
            )
        raw: Any = getattr(command, "stamp_ns", None)
        if not _is_int(raw):
            return (*unreadable, (_RIGID, "command.stamp_ns must be an integer [ns]"))
        stamp = int(raw)
        if isinstance(command, PoseCommand):
            try:
                T = np.asarray(command.T_base_target, dtype=np.float64)
            except (TypeError, ValueError):
                return _POSE, _NAN44, 0, stamp, (_RIGID, "T_base_target must be a (4, 4) array")
            if T.shape != (4, 4):
                return _POSE, _NAN44, 0, stamp, None  # the kernel's own message
            return _POSE, np.ascontiguousarray(T), 0, stamp, None
        if isinstance(command, TwistCommand):
            tw = _finite_vector(command.twist, 6)
            if tw is None:  # the kernel refuses it with the same message
                return _TWIST, _NAN6, 0, stamp, None
            try:
                frame = (
                    TwistFrame[command.frame.upper()]
                    if isinstance(command.frame, str)
                    else TwistFrame(command.frame)
                )
            except (KeyError, ValueError):
                return (
                    _TWIST,
                    tw,
                    2,
                    stamp,
                    (
                        "twist frame 2 is unknown; valid: 'base', 'tool'",
                        f"twist frame {command.frame!r} is unknown; valid: 'base', 'tool'",
                    ),
                )
            return _TWIST, tw, int(frame), stamp, None
        v = _finite_vector(command.velocities, n)
        return _JOG, (self._jog_nan if v is None else v), 0, stamp, None
