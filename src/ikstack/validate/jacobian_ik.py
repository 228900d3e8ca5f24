"""The Jacobian-IK model check: can damped least squares on the model's own FK reach
FK-sampled targets from the neutral pose?

Targets come from FK of random in-limit joints (reachable by construction; SCARA-like arms on an
FK-reach ring). Each solve restarts at the neutral configuration and runs damped least squares

.. math:: \\Delta q = J^T (J J^T + \\lambda^2 I)^{-1} e, \\qquad q \\leftarrow \\mathrm{clip}(q +
   \\Delta q)

with ``J`` a finite-difference Jacobian of the black-box FK (so it checks the model, not an
analytic Jacobian) and ``e = [p_t - p; rotvec(R_t R^T)]``. A target is reached when both the
position and rotation errors are within tolerance; the check fails when fewer than
``min_pass_rate`` of the targets are reached, or when several targets were asked for and fewer
than two are spatially distinct (a pose source that does not follow the joints cannot pass).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack._deprecated import warn_renamed
from ikstack.errors import InputError
from ikstack.kinematics import jacobian_fd
from ikstack.spatial import as_transforms, pose_error
from ikstack.validate.fk_models import FKModel, as_fk_model
from ikstack.validate.report import (
    LIKELY_CAUSES,
    CheckStatus,
    JacobianIKReport,
    TargetResult,
)

Array = NDArray[np.float64]
#: ``progress(done, total, message)``: iterations done out of the most the check can take
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class CheckConfig:
    """Every setting of :func:`check_jacobian_ik` (the model's own limits, neutral pose and
    name apart), with the same names, units and defaults as its keywords (see there); checked
    when the check runs. ``check_jacobian_ik(model, config=CheckConfig(damping=0.1))``."""

    num_targets: int = 5
    max_iterations: int = 150
    damping: float = 0.05
    position_tolerance: float = 0.05
    rotation_tolerance_deg: float = 10.0
    min_pass_rate: float = 0.40
    eps: float | None = None
    central: bool = True
    rng: int | np.random.Generator = 0
    min_target_separation: float = 0.01
    max_step: float | None = None
    scara: bool | None = None

    def keywords(self) -> dict[str, Any]:
        """The settings as :func:`check_jacobian_ik` keywords."""
        return {k: getattr(self, k) for k in asdict(self)}


_AT_LIMIT = 1e-9  # [rad or m]
_DEAD_COLUMN = 1e-9  # Jacobian column norm below this: the joint does not move the end effector
_SINGULAR_START = 1e-3  # sigma_min / sigma_max at the neutral pose below this: near-singular
_STILL_CONVERGING = 0.9  # failed targets whose error kept falling below this ratio late on
_FK_RIGID_ATOL = 1e-4  # float32 FK models' rotations are orthonormal only to ~1e-7


def _check_options(
    num_targets: int,
    max_iterations: int,
    damping: float,
    position_tolerance: float,
    rotation_tolerance_deg: float,
    min_pass_rate: float,
    eps: float | None,
    min_target_separation: float,
) -> None:
    if int(num_targets) < 1:
        raise InputError(f"num_targets must be >= 1; got {num_targets}")
    if int(max_iterations) < 1:
        raise InputError(f"max_iterations must be >= 1; got {max_iterations}")
    for name, v in (("damping", damping), ("min_target_separation", min_target_separation)):
        if not (math.isfinite(v) and v >= 0):
            raise InputError(f"{name} must be finite and >= 0; got {v}")
    for name, v in (
        ("position_tolerance", position_tolerance),
        ("rotation_tolerance_deg", rotation_tolerance_deg),
    ):
        if not (math.isfinite(v) and v > 0):
            raise InputError(f"{name} must be positive; got {v}")
    if not 0.0 <= min_pass_rate <= 1.0:
        raise InputError(f"min_pass_rate must be within [0, 1]; got {min_pass_rate}")
    if eps is not None and not (math.isfinite(eps) and eps > 0):
        raise InputError(f"eps must be positive; got {eps}")


def _sample_targets(be: FKModel, rng: np.random.Generator, n: int, scara: bool) -> Array:
    lo = np.where(np.isfinite(be.lower), be.lower, -math.pi)
    hi = np.where(np.isfinite(be.upper), be.upper, math.pi)
    if not scara:
        return rng.uniform(lo, hi, size=(n, lo.shape[0]))
    # SCARA: one FK-sampled reach, swept around the base axis by the first joint (a ring)
    q_star = rng.uniform(lo, hi)
    Q = np.tile(q_star, (n, 1))
    Q[:, 0] = lo[0] + (np.arange(n) + 0.5) / n * (hi[0] - lo[0])
    return Q


def _distinct(positions: Array, separation: float) -> int:
    """Number of greedy clusters of positions further apart than ``separation``."""
    reps: list[Array] = []
    for p in positions:
        if all(np.linalg.norm(p - r) > separation for r in reps):
            reps.append(p)
    return len(reps)


def _skip(name: str, reason: str, config: dict[str, Any]) -> JacobianIKReport:
    return JacobianIKReport(
        model=name,
        status=CheckStatus.SKIPPED,
        reason=reason,
        likely_cause=LIKELY_CAUSES["skipped"],
        pass_rate=math.nan,
        min_pass_rate=config["min_pass_rate"],
        distinct_targets=0,
        targets=[],
        diagnostics={},
        config=config,
    )


def check_jacobian_ik(
    model: Any,
    *,
    num_targets: int = 5,
    max_iterations: int = 150,
    damping: float = 0.05,
    position_tolerance: float = 0.05,
    rotation_tolerance_deg: float = 10.0,
    min_pass_rate: float = 0.40,
    eps: float | None = None,
    central: bool = True,
    rng: int | np.random.Generator = 0,
    min_target_separation: float = 0.01,
    max_step: float | None = None,
    scara: bool | None = None,
    lower: ArrayLike | None = None,
    upper: ArrayLike | None = None,
    neutral: ArrayLike | None = None,
    name: str | None = None,
    progress: Progress | None = None,
    config: CheckConfig | None = None,
    **old: Any,
) -> JacobianIKReport:
    """Run the Jacobian-IK model check on any forward kinematics.

    Args:
        model: an ikstack ``Chain``, an :class:`~ikstack.validate.FKModel` (``ChainFK``,
            ``MujocoFK``, ``CallableFK``), or a callable ``fk(q) -> (4, 4)`` with ``lower``
            and ``upper``.
        num_targets: FK-sampled targets.
        max_iterations: DLS iterations per target.
        damping: DLS damping ``lambda`` (the step adds ``lambda^2 I``).
        position_tolerance: [m].
        rotation_tolerance_deg: [deg] geodesic (``orientation_tolerance_deg``, its former
            name, warns).
        min_pass_rate: the check fails below this share of reached targets.
        eps: finite-difference step [rad or m]; 1e-5, or 1e-3 for a float32 FK model.
        central: central (default) or forward differences.
        rng: an int seed or a ``numpy.random.Generator`` for the target sampling (``seed``,
            its former name, warns).
        min_target_separation: [m] targets closer than this count as one position.
        max_step: None (the default): plain DLS steps, as the check specifies. A number
            [rad or m] scales every step so no joint moves more than it: a stabiliser that
            raises pass rates, so it is reported (``config["max_step"]``, the table, JSON).
        scara: sample targets on an FK-reach ring; detected from the axes when None.
        lower, upper: (dof,) limits, for a plain callable.
        neutral: (dof,) start configuration; the FK model's neutral pose when None (the zero
            configuration clipped into the limits; MuJoCo's ``qpos0`` clipped likewise).
        name: display name of the model.
        progress: called as ``progress(done, total, message)`` after every iteration.
        config: a :class:`CheckConfig` holding every setting above but the model's
            (``lower``, ``upper``, ``neutral``, ``name``); when given, it replaces them.

    Returns:
        JacobianIKReport: verdict (``exit_code`` 0 pass, 1 fail, 3 skipped), per-target table,
        likely cause and diagnostics.
    """
    if config is not None:
        if not isinstance(config, CheckConfig):
            raise InputError(f"config must be a CheckConfig; got {type(config).__name__}")
        return check_jacobian_ik(
            model,
            **config.keywords(),
            lower=lower,
            upper=upper,
            neutral=neutral,
            name=name,
            progress=progress,
        )
    for key, value in old.items():  # the former names of two keywords (they warn)
        if key == "orientation_tolerance_deg" and value is not None:
            warn_renamed(f"check_jacobian_ik({key}=...)", "rotation_tolerance_deg=...")
            rotation_tolerance_deg = value
        elif key == "seed" and value is not None:
            warn_renamed(f"check_jacobian_ik({key}=...)", "rng=...")
            rng = value
        elif key not in ("orientation_tolerance_deg", "seed"):
            raise TypeError(f"check_jacobian_ik() got an unexpected keyword argument {key!r}")
    _check_options(
        num_targets,
        max_iterations,
        damping,
        position_tolerance,
        rotation_tolerance_deg,
        min_pass_rate,
        eps,
        min_target_separation,
    )
    be = as_fk_model(model, lower, upper, neutral)
    label = name or be.name
    scara = be.scara if scara is None else bool(scara)
    eps = (1e-3 if be.float32 else 1e-5) if eps is None else float(eps)
    if max_step is not None and not (math.isfinite(max_step) and max_step > 0):
        raise InputError(f"max_step must be positive and finite, or None; got {max_step}")
    ran_with: dict[str, Any] = dict(
        num_targets=int(num_targets),
        max_iterations=int(max_iterations),
        damping=float(damping),
        position_tolerance=float(position_tolerance),
        # orientation_tolerance_deg and seed: the keys' former names, kept one release
        rotation_tolerance_deg=float(rotation_tolerance_deg),
        orientation_tolerance_deg=float(rotation_tolerance_deg),
        min_pass_rate=float(min_pass_rate),
        eps=eps,
        central=bool(central),
        rng=rng if isinstance(rng, int) else "generator",
        seed=rng if isinstance(rng, int) else "generator",
        min_target_separation=float(min_target_separation),
        scara=scara,
        max_step=None if max_step is None else float(max_step),
        end_effector=be.end_effector,
        joints=list(be.joint_names),
        neutral=[float(v) for v in be.neutral],
        float32=bool(be.float32),
    )
    if be.is_gripper:
        return _skip(
            label,
            "robot type is a gripper (its moving joints are jaws: prismatic, "
            "along one line): 6-DOF end-effector IK does not apply",
            ran_with,
        )
    if be.end_effector is None or len(be.joint_names) == 0:
        return _skip(label, "no end effector discovered on the model", ran_with)

    rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    Q = _sample_targets(be, rng, int(num_targets), scara)
    T_targets = np.stack([as_transforms(be.fk(q.copy()), "fk(q)", atol=_FK_RIGID_ATOL) for q in Q])
    distinct = _distinct(T_targets[:, :3, 3], min_target_separation)

    total = int(num_targets) * int(max_iterations)
    tol_r = math.radians(rotation_tolerance_deg)
    lo, hi = be.lower, be.upper
    neutral_q = np.asarray(be.neutral, dtype=np.float64)
    lam2 = float(damping) ** 2
    results: list[TargetResult] = []
    J_neutral: Array | None = None
    for k, Tt in enumerate(T_targets):
        q = neutral_q.copy()  # reset to neutral before every solve
        history: list[tuple[float, float]] = []
        reached = False
        it = 0
        while True:
            T = as_transforms(be.fk(q.copy()), "fk(q)", atol=_FK_RIGID_ATOL)
            e = pose_error(Tt, T)
            ep, er = float(np.linalg.norm(e[:3])), float(np.linalg.norm(e[3:]))
            history.append((ep, math.degrees(er)))
            if ep <= position_tolerance and er <= tol_r:
                reached = True
                break
            if it == max_iterations:
                break
            J = jacobian_fd(be.fk, q, eps=eps, central=central)
            if J_neutral is None:
                J_neutral = J
            dq = J.T @ np.linalg.solve(J @ J.T + lam2 * np.eye(6), e)
            big = float(np.max(np.abs(dq)))
            if max_step is not None and big > max_step:
                dq *= max_step / big
            q = np.clip(q + dq, lo, hi)
            it += 1
            if progress is not None:
                progress(k * int(max_iterations) + it, total, f"target {k + 1}/{num_targets}")
        if progress is not None:
            progress((k + 1) * int(max_iterations), total, f"target {k + 1}/{num_targets} done")
        pinned = [
            be.joint_names[i]
            for i in range(q.shape[0])
            if q[i] - lo[i] < _AT_LIMIT or hi[i] - q[i] < _AT_LIMIT
        ]
        results.append(
            TargetResult(
                index=k,
                q_sample=Q[k].tolist(),
                position=T_targets[k, :3, 3].tolist(),
                success=reached,
                position_error=history[-1][0],
                rotation_error_deg=history[-1][1],
                iterations=it,
                q_final=q.tolist(),
                pinned_joints=pinned,
                history=history,
            )
        )

    if J_neutral is None:
        J_neutral = jacobian_fd(be.fk, neutral_q, eps=eps, central=central)
    return _verdict(label, be, results, distinct, J_neutral, ran_with)


def _verdict(
    label: str,
    be: FKModel,
    results: list[TargetResult],
    distinct: int,
    J_neutral: Array,
    config: dict[str, Any],
) -> JacobianIKReport:
    n = len(results)
    n_ok = sum(r.success for r in results)
    rate = n_ok / n
    min_rate = config["min_pass_rate"]
    diagnostics: dict[str, Any] = {}
    dead = [
        be.joint_names[i]
        for i in range(J_neutral.shape[1])
        if np.linalg.norm(J_neutral[:, i]) < _DEAD_COLUMN
    ]
    if dead:
        diagnostics["joints that do not move the end effector"] = ", ".join(dead)
    sv = np.linalg.svd(J_neutral, compute_uv=False)
    rank = min(J_neutral.shape)
    cond_ratio = float(sv[rank - 1] / sv[0]) if sv[0] > 0 else 0.0
    if cond_ratio < _SINGULAR_START:
        diagnostics["start configuration"] = (
            f"near-singular (sigma_min/sigma_max = {cond_ratio:.2e} at the neutral pose)"
        )
    failed = [r for r in results if not r.success]
    pinned = sorted({j for r in failed for j in r.pinned_joints})
    if pinned:
        diagnostics["joints pinned at a limit in failed solves"] = ", ".join(pinned)
    still = [
        r
        for r in failed
        if len(r.history) > 10
        and r.history[-1][0] < _STILL_CONVERGING * r.history[-len(r.history) // 10 - 1][0]
    ]

    stale = n >= 2 and distinct < 2
    moving = len(dead) < J_neutral.shape[1]
    if stale:
        status = CheckStatus.FAIL
        reason = (
            f"{n} targets were sampled but their positions are not spatially distinct "
            f"(< {config['min_target_separation']} m apart)"
        )
        if moving:
            cause = (
                f"{LIKELY_CAUSES['low_pass_rate']}. Here: the joints move the end effector, "
                "but their whole range moves it less than the target separation: joint "
                "limits too tight around the neutral pose"
            )
        else:
            cause = LIKELY_CAUSES["stale_pose"]
    elif dead:
        status = CheckStatus.FAIL
        reason = (
            f"joints {', '.join(dead)} do not move the end effector ({n_ok} of {n} targets reached)"
        )
        cause = (
            "The forward kinematics ignores these joints: the pose is read from a link "
            "before them, or the model drops them"
        )
    elif rate >= min_rate:
        status, cause = CheckStatus.PASS, ""
        reason = f"{n_ok} of {n} targets reached (pass rate {rate:.2f} >= {min_rate:.2f})"
    else:
        status = CheckStatus.FAIL
        reason = f"{n_ok} of {n} targets reached (pass rate {rate:.2f} < {min_rate:.2f})"
        findings = []
        if pinned:
            findings.append(
                f"joints {', '.join(pinned)} ended at their limits: limits too "
                "tight around the neutral pose"
            )
        if cond_ratio < _SINGULAR_START:
            findings.append("the neutral pose is near-singular")
        if still and len(still) * 2 >= len(failed):
            cause = LIKELY_CAUSES["iteration_budget"]
            findings.append("errors were still falling when the iteration budget ran out")
        else:
            cause = LIKELY_CAUSES["low_pass_rate"]
        if findings:
            cause = f"{cause}. Here: " + "; ".join(findings)
    return JacobianIKReport(
        model=label,
        status=status,
        reason=reason,
        likely_cause=cause,
        pass_rate=rate,
        min_pass_rate=min_rate,
        distinct_targets=distinct,
        targets=results,
        diagnostics=diagnostics,
        config=config,
    )
