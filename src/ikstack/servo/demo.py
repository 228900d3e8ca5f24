"""A servo loop to a pose target, recorded as arrays (the body of ``ikstack servo-demo``).

:func:`run_demo` prints nothing; it returns a :class:`ServoTrace`. :func:`plot_trace` draws
joint positions, velocities and task error with matplotlib (the ``viz`` extra).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack._deprecated import renamed_attribute
from ikstack.diffik import BoxQPSolver, DifferentialIK, DLSVelocitySolver
from ikstack.errors import InputError, MissingExtraError
from ikstack.model import Chain
from ikstack.servo.commands import Action, JointState, PoseCommand, ServoStatus
from ikstack.servo.config import ServoConfig
from ikstack.servo.kernel import Servo
from ikstack.spatial import as_transforms
from ikstack.vocabulary import VELOCITY_SOLVERS

Array = NDArray[np.float64]

#: solver names the demo (and the CLI) accept
SOLVERS: dict[str, type[DifferentialIK]] = dict(
    zip(VELOCITY_SOLVERS, (DLSVelocitySolver, BoxQPSolver), strict=True)
)


@dataclass(frozen=True)
class ServoTrace:
    """A recorded servo run (``steps`` rows; time in seconds).

    Attributes:
        t: (steps,) time [s].
        q, dq: (steps, dof) reference positions [rad] and velocities [rad/s].
        position_error: (steps,) tool position error [m].
        rotation_error: (steps,) tool rotation error [rad] (``orientation_error``, its former
            name, warns).
        action: (steps,) :class:`Action` values.
        status: (steps,) :class:`ServoStatus` values (ints).
        condition_number: (steps,) of the task Jacobian.
        messages: the distinct messages, in order of first appearance.
        success: every cycle succeeded (no ``REJECT``, no ``SOLVER_ERROR``:
            :attr:`ServoResult.success` of each cycle).
        message: the distinct messages on one line.
    """

    t: Array
    q: Array
    dq: Array
    position_error: Array
    rotation_error: Array
    action: NDArray[np.int64]
    status: NDArray[np.int64]
    condition_number: Array
    messages: tuple[str, ...]

    orientation_error = renamed_attribute("orientation_error", "rotation_error")

    @property
    def success(self) -> bool:
        """Every cycle's input was accepted and its solver did not fail (no ``REJECT`` action,
        no ``SOLVER_ERROR`` flag); True for no cycles."""
        rejected = self.action == int(Action.REJECT)
        failed = (self.status & int(ServoStatus.SOLVER_ERROR)) != 0
        return not bool(np.any(rejected | failed))

    @property
    def message(self) -> str:
        """The distinct messages in order of first appearance, on one line."""
        return "; ".join(self.messages) if self.messages else "no cycles"

    @property
    def final_action(self) -> Action:
        """The last cycle's action."""
        return Action(int(self.action[-1]))

    def __repr__(self) -> str:
        """A one-line summary (the arrays are attributes)."""
        n = len(self.t)
        if not n:
            return "ServoTrace(0 cycles)"
        return (
            f"ServoTrace({n} cycles over {self.t[-1]:.2f} s; final {self.final_action.name}; "
            f"position error {self.position_error[-1]:.1e} m, rotation error "
            f"{self.rotation_error[-1]:.1e} rad)"
        )


#: a start whose Jacobian condition number is below this is regular enough for the demo
REGULAR_CONDITION = 12.0


def regular_start(chain: Chain, offset: float = 0.0, candidates: int = 256) -> Array:
    """A regular (non-singular) start near the middle of the limits, chosen deterministically.

    The middle of the limits is often singular (UR5's is q = 0: shoulder and wrist aligned).
    Of the middle and ``candidates`` seeded configurations within 1.2 rad of it, this takes the
    first whose Jacobian condition number stays below :data:`REGULAR_CONDITION` at the start,
    along the joint-space line to ``start + offset`` (the demo's default target) and at that
    target, else the one whose worst condition number there is smallest.
    """
    from ikstack.kinematics import jacobian

    mid = chain.middle()
    rng = np.random.default_rng(0)
    starts = np.vstack([mid, chain.clip(mid + rng.uniform(-1.2, 1.2, (candidates, chain.dof)))])
    along = np.linspace(0.0, 1.0, 5)[:, None, None]
    qs = chain.clip(starts[None] + along * offset)  # (5, K, dof)
    s = np.linalg.svd(jacobian(chain, qs.reshape(-1, chain.dof)), compute_uv=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(s[:, -1] > 0, s[:, 0] / s[:, -1], np.inf)
    worst = kappa.reshape(len(along), -1).max(axis=0)
    good = np.flatnonzero(worst < REGULAR_CONDITION)
    pick = int(good[0]) if good.size else int(np.argmin(worst))
    return np.asarray(starts[pick], dtype=np.float64)


def make_solver(name: str) -> DifferentialIK:
    """A built-in solver by name (``"dls"`` or ``"box_qp"``)."""
    key = name.lower().replace("-", "_")
    if key not in SOLVERS:
        raise InputError(f"unknown solver {name!r}; valid: {', '.join(sorted(SOLVERS))}")
    return SOLVERS[key]()


def run_demo(
    chain: Chain,
    target: ArrayLike,
    steps: int = 500,
    solver_name: str = "dls",
    q0: ArrayLike | None = None,
    dt: float = 0.01,
    config: ServoConfig | None = None,
    on_cycle: Callable[[int, Array], None] | None = None,
) -> ServoTrace:
    """Servo ``chain`` from ``q0`` (default: :func:`regular_start`) to a pose target.

    Args:
        chain: the arm. Infinite acceleration limits are replaced by 10x the velocity limits
            so the demo shows smooth starts and stops.
        target: (4, 4) ``T_base_target``, or a (dof,) joint vector whose FK is the target.
        steps: cycles to run.
        solver_name: ``"dls"`` or ``"box_qp"``.
        q0: (dof,) start configuration.
        dt: cycle time [s].
        config: servo settings (default :class:`ServoConfig`).
        on_cycle: called after each cycle with its index and the reference ``q`` (dof,)
            (a live view draws it; a slow callback slows the loop, not its results).

    Returns:
        :class:`ServoTrace`.
    """
    if int(steps) < 1:
        raise InputError(f"steps must be >= 1; got {steps}")
    acc = np.where(
        np.isfinite(chain.acceleration_limits),
        chain.acceleration_limits,
        10.0 * np.where(np.isfinite(chain.velocity_limits), chain.velocity_limits, 1.0),
    )
    arm = chain.with_limits(acceleration=acc)
    tgt = np.asarray(target, dtype=np.float64)
    if tgt.shape == (chain.dof,):
        tgt = arm.fk(tgt)
    T_target = as_transforms(tgt, "target")
    if T_target.shape != (4, 4):
        raise InputError(f"target must be (4, 4) or ({chain.dof},); got {np.shape(target)}")
    q = regular_start(arm) if q0 is None else arm.check_q(q0, "q0").copy()
    dq = np.zeros(chain.dof)
    servo = Servo(arm, config, differential_ik=make_solver(solver_name))
    n = int(steps)
    out: dict[str, Any] = {k: np.zeros(n) for k in ("t", "pe", "re", "kappa")}
    Q = np.zeros((n, chain.dof))
    DQ = np.zeros((n, chain.dof))
    actions = np.zeros(n, dtype=np.int64)
    status = np.zeros(n, dtype=np.int64)
    messages: list[str] = []
    step_ns = int(round(dt * 1e9))
    for k in range(n):
        now = k * step_ns
        r = servo.step(JointState(q, dq, now), PoseCommand(T_target, now), dt, now)
        if r.action != Action.REJECT:
            q, dq = r.reference.q, r.reference.dq
        out["t"][k] = k * dt
        Q[k], DQ[k] = q, dq
        out["pe"][k], out["re"][k] = r.position_error, r.rotation_error
        out["kappa"][k] = r.condition_number
        actions[k] = int(r.action)
        status[k] = int(r.status)
        if r.message not in messages:
            messages.append(r.message)
        if on_cycle is not None:
            on_cycle(k, q.copy())
    return ServoTrace(
        out["t"], Q, DQ, out["pe"], out["re"], actions, status, out["kappa"], tuple(messages)
    )


def plot_trace(
    trace: ServoTrace,
    path: str | None = None,
    joint_names: tuple[str, ...] | list[str] | None = None,
) -> Any:
    """Plot joint positions, velocities and task error (needs matplotlib, the ``viz`` extra),
    each with a legend (joints named by ``joint_names``, else q1, q2, ...).

    Returns the matplotlib figure; saves it to ``path`` when given.
    """
    try:
        import matplotlib

        if path is not None:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtraError("matplotlib", "viz") from None
    fig, axes = plt.subplots(3, 1, sharex=True, figsize=(8, 8))
    names = (
        list(joint_names)
        if joint_names is not None
        else [f"q{j + 1}" for j in range(trace.q.shape[1])]
    )
    for j, name in enumerate(names):
        axes[0].plot(trace.t, trace.q[:, j], label=name)
        axes[1].plot(trace.t, trace.dq[:, j], label=name)
    axes[0].set_ylabel("q [rad]")
    axes[0].legend(fontsize=7, ncol=2, loc="best")
    axes[1].set_ylabel("dq [rad/s]")
    axes[1].legend(fontsize=7, ncol=2, loc="best")
    axes[2].semilogy(trace.t, np.maximum(trace.position_error, 1e-12), label="position [m]")
    axes[2].semilogy(trace.t, np.maximum(trace.rotation_error, 1e-12), label="rotation [rad]")
    axes[2].set_ylabel("task error")
    axes[2].set_xlabel("t [s]")
    axes[2].legend()
    fig.tight_layout()
    if path is not None:
        fig.savefig(path)
    return fig
