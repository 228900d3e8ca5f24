r"""The per-step template of the published Tianji port's velocity QP; concrete QP solvers write
only ``_solve``.

Each step, with the caller's ``dt`` (at least 1e-6 s; never capped), solves for joint
velocities ``x`` (internal units: deg/s by default, or rad/s):

.. math::
    \min_x \; \|J x - v\|^2_W + \lambda \|x\|^2 + \mu\, dt\, \nabla c(q) \cdot x

with ``v = [1000 dp; deg(rotvec(R_t R^T))] / dt`` (mm/s, deg/s), ``W = diag(w_pos I3, w_rot I3)``,
the joint-limit-avoidance cost ``c`` (:mod:`ikstack.diffik.joint_limit_cost`), subject to

* velocity boxes ``max(-vmax, (lo + margin - q)/dt) <= x <= min(vmax, (hi - margin - q)/dt)``;
* each coupled-joint constraint linearized at ``q``: ``G x <= (-M - g) / dt``, with the buffer
  ``M`` inherited from the joint margin unless configured.

An empty box is reported (``qp_infeasible``) before the QP solver is touched, as is a QP the
solver does not solve. After solving, ``x`` is clipped to the box and integrated; the new
configuration is re-checked (margins, coupled constraints, then the lag guard at the flange: the
position residual and the wrapped extrinsic-xyz Euler residual). Reasons in priority order:
``joint_limit``, ``coupled_joint``, ``tracking_lag`` (abort policy), ``ok``.
"""

from __future__ import annotations

import math
import warnings
from abc import abstractmethod

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial.transform import Rotation

from ikstack.diffik import _qp_workspace as WS
from ikstack.diffik._qp_workspace import Workspace
from ikstack.diffik.qp_config import (
    DT_MIN_S,
    DiffQPConfig,
    InternalUnits,
    LagPolicy,
    QPData,
    StepResult,
    StepStatus,
)
from ikstack.diffik.solver import DifferentialIK
from ikstack.errors import ConfigError, InputError, ShapeError
from ikstack.ik._data import chain_data
from ikstack.kinematics import compile_chain, fk_jacobian
from ikstack.model import Chain, QuadrantPolynomialConstraint
from ikstack.spatial import (
    RIGID_ATOL,
    as_transforms,
    check_finite,
    se3,
)

Array = NDArray[np.float64]

#: round-off allowed in the post-step checks [rad]
POST_CHECK_TOL = 1e-9


class VelocityQPStepper(DifferentialIK):
    """The published Tianji port's differential-IK step for one arm (flange targets, SI at the
    boundary).

    Args:
        chain: the arm. Its TCP (mounted tool), if any, is used only by :meth:`flange_target`;
            the QP tracks the flange (the chain's tip, including its static flange offset).
        config: QP tuning (:class:`DiffQPConfig`); velocity limits come from
            ``chain.velocity_limits`` only.

    Raises:
        ConfigError: a margin below the chain's kinematic margin, or a weight count that does
            not match the chain's joints.
    """

    supports_inequalities = True

    def __init__(self, chain: Chain, config: DiffQPConfig | None = None):
        cfg = DiffQPConfig() if config is None else config
        self.config = cfg
        self.chain = chain
        self.flange_chain = chain.without_tcp() if chain.tcp_name else chain
        n = chain.dof
        self.dof = n
        where = f" in {cfg.source}" if cfg.source else ""
        kin_margin_deg = math.degrees(chain.kinematic_margin)
        if cfg.limit_margin_deg is None:
            margin = chain.kinematic_margin
        else:
            if cfg.limit_margin_deg < kin_margin_deg - 1e-9:
                raise ConfigError(
                    f"diff_ik.limit_margin_deg{where}: {cfg.limit_margin_deg} deg is below the "
                    f"arm's kinematic margin {kin_margin_deg:.6g} deg (it may be raised, never "
                    "lowered)"
                )
            margin = math.radians(cfg.limit_margin_deg)
        self.limit_margin = margin  # [rad]
        if cfg.nullspace_weights is not None and len(cfg.nullspace_weights) != n:
            raise ConfigError(
                f"diff_ik.nullspace_weights{where}: {len(cfg.nullspace_weights)} weights for "
                f"{n} joints; give exactly one finite non-negative weight per joint"
            )
        revolute = chain.is_revolute
        seed_units = cfg.internal_units == InternalUnits.MM_DEG
        self.lin_scale = 1000.0 if seed_units else 1.0
        self.ang_scale = 180.0 / math.pi if seed_units else 1.0
        self.s = np.where(revolute, self.ang_scale, self.lin_scale).astype(np.float64)
        self.lo_int = np.ascontiguousarray(chain.lower * self.s)
        self.hi_int = np.ascontiguousarray(chain.upper * self.s)
        self.lo_box = np.ascontiguousarray(chain.lower + margin)
        self.hi_box = np.ascontiguousarray(chain.upper - margin)
        if np.any(self.lo_box > self.hi_box):
            raise ConfigError(
                f"diff_ik.limit_margin_deg{where}: a margin of "
                f"{math.degrees(margin):.6g} deg leaves no room between the limits"
            )
        self.vmax = np.ascontiguousarray(chain.velocity_limits, dtype=np.float64)
        band = cfg.nullspace_activation_deg
        self.band = -1.0 if band is None else math.radians(band) * self.ang_scale
        self.nsw = np.ones(n) if cfg.nullspace_weights is None else np.array(cfg.nullspace_weights)
        # a null buffer inherits the joint margin; a positive one overrides it
        self.coupled_margin = (
            margin if cfg.coupled_margin_deg is None else math.radians(cfg.coupled_margin_deg)
        )  # [rad]
        # coupled-joint rows: quadrant polynomials on the compiled path, any other constraint
        # through its own linearize(); rows in that order
        quads = [c for c in chain.constraints if isinstance(c, QuadrantPolynomialConstraint)]
        others = [c for c in chain.constraints if not isinstance(c, QuadrantPolynomialConstraint)]
        self.constraints = tuple(quads) + tuple(others)
        self._quad_i = np.array([c.joint_i for c in quads], dtype=np.int64)
        self._quad_j = np.array([c.joint_j for c in quads], dtype=np.int64)
        self._quad_table = np.zeros((len(quads), 2, 2, 4))
        for k, c in enumerate(quads):
            for row in c.rows:
                self._quad_table[k, int(row.i_nonneg), int(row.j_nonneg)] = (
                    row.a0,
                    row.a1,
                    row.a2,
                    1.0 if row.upper else -1.0,
                )
        self._others = tuple(others)
        self.num_rows = sum(c.num_rows for c in self.constraints)
        self._row_scale = np.array(
            [
                self.ang_scale if revolute[c.joints[0]] else self.lin_scale
                for c in self.constraints
                for _ in range(c.num_rows)
            ],
            dtype=np.float64,
        )
        self.T_flange_tcp = chain.T_tip_tcp.copy()  # the mounted tool, in the flange frame
        self.T_tcp_flange = se3.inverse(self.T_flange_tcp)
        # one packed workspace for the compiled step kernels; named views into it
        row_cols = [tuple(sorted(c.joints)) for c in self.constraints for _ in range(c.num_rows)]
        params = WS.QP_PARAMS.make(
            lin_scale=self.lin_scale,
            ang_scale=self.ang_scale,
            w_pos=cfg.w_pos,
            w_rot=cfg.w_rot,
            lam=cfg.lam,
            mu=cfg.mu_nullspace,
            band=self.band,
            coupled_margin=self.coupled_margin,
            s=self.s,
            lo_int=self.lo_int,
            hi_int=self.hi_int,
            nsw=self.nsw,
            lo_box=self.lo_box,
            hi_box=self.hi_box,
            vmax=self.vmax,
        )
        rows = WS.QP_ROWS.make(
            qi=self._quad_i, qj=self._quad_j, qtab=self._quad_table, row_scale=self._row_scale
        )
        ws = Workspace(params, chain_data(compile_chain(self.flange_chain)), rows, row_cols)
        for name in ("s", "lo_int", "hi_int", "nsw", "lo_box", "hi_box", "vmax"):
            setattr(self, name, getattr(ws.params, name))
        self._ws = ws
        w = ws.work
        self._data = QPData(w.P, w.c, w.lb, w.ub, w.G, w.h, 0.0)
        self._max_lag_m = cfg.max_lag_mm / 1000.0
        self._max_lag_deg = cfg.max_lag_deg
        self._abort = cfg.lag_policy == LagPolicy.ABORT
        self.steps = 0

    # ------------------------------------------------------------------ frames
    def flange_target(self, T_base_tcp: ArrayLike) -> Array:
        """Flange targets (..., 4, 4) of TCP targets, through the chain's mounted tool."""
        T = as_transforms(T_base_tcp, "T_base_tcp")
        return T @ self.T_tcp_flange

    def flange_fk_jacobian(self, q: ArrayLike) -> tuple[Array, Array]:
        """``(T_base_flange, J_flange)`` (4, 4), (6, dof) at ``q`` [rad] (flange offset
        included)."""
        return fk_jacobian(self.flange_chain, np.asarray(q, dtype=np.float64))

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        """Forget all solver state (primal and dual warm start, cached kinematics).

        Call at the start of each chunk: rejected plans or earlier chunks then cannot carry
        QP state into the new one.
        """
        self._ws.invalidate()
        self._reset_solver()

    @abstractmethod
    def _reset_solver(self) -> None:
        """Zero the QP solver's primal and dual warm start."""

    @abstractmethod
    def _solve(self, data: QPData) -> tuple[Array | None, str, int]:
        """Solve ``data``; ``(x or None if unsolved, status text, iterations)``."""

    # ------------------------------------------------------------------ building
    def _check_inputs(
        self, q: ArrayLike, T_target: ArrayLike, dt: float
    ) -> tuple[Array, Array, float]:
        qa = np.ascontiguousarray(q, dtype=np.float64)
        if qa.shape != (self.dof,):
            raise ShapeError("q", qa.shape, f"({self.dof},)")
        Tt = np.ascontiguousarray(T_target, dtype=np.float64)
        if Tt.shape != (4, 4):
            raise ShapeError("T_target_flange", Tt.shape, "(4, 4)")
        if isinstance(dt, bool) or not isinstance(dt, (int, float, np.floating, np.integer)):
            raise InputError(f"dt must be a number of seconds; got {dt!r}")
        if not math.isfinite(dt) or dt < 0:
            raise InputError(f"dt must be finite and >= 0 [s]; got {dt}")
        return qa, Tt, max(float(dt), DT_MIN_S)

    def _build(self, q: Array, Tt: Array, dt: float) -> tuple[QPData, int]:
        ws = self._ws
        code = WS.pre_step(q, Tt, dt, ws.fb, ws.ib, RIGID_ATOL)
        if code == 1:  # let the foundation's checks name what is wrong
            check_finite(q, "q")
            as_transforms(Tt, "T_target_flange")
        if self._others:
            r = self._quad_i.shape[0]
            G, h, s_ = ws.work.G, ws.work.h, self.s
            for con in self._others:
                g, Gc = con.linearize(q, self.dof)
                m = con.num_rows
                rs = self._row_scale[r : r + m, None]
                G[r : r + m] = Gc * rs / s_
                h[r : r + m] = rs[:, 0] * (-self.coupled_margin - g) / dt
                r += m
            WS.fill_osqp(ws.fb, ws.ib)
        self._data.dt = dt
        return self._data, 1 if code == 2 else 0

    def build(self, q: ArrayLike, T_target_flange: ArrayLike, dt: float) -> QPData:
        """The QP of one step, for inspection (copies, internal units; see the module doc)."""
        qa, Tt, dt_used = self._check_inputs(q, T_target_flange, dt)
        data, _ = self._build(qa, Tt, dt_used)
        return QPData(
            data.P.copy(),
            data.c.copy(),
            data.lower.copy(),
            data.upper.copy(),
            data.G.copy(),
            data.h.copy(),
            dt_used,
            data.lower > data.upper,
        )

    # ------------------------------------------------------------------ stepping
    def step(self, q: ArrayLike, T_target_flange: ArrayLike, dt: float) -> StepResult:
        """One QP step from ``q`` [rad] toward a flange target, over ``dt`` [s].

        Args:
            q: (dof,) current joint positions [rad].
            T_target_flange: (4, 4) target pose of the flange in the base frame.
            dt: the step's actual duration [s] (integrated as given; at least 1e-6 s).

        Returns:
            A :class:`StepResult`; failures are statuses (``q`` unchanged), never exceptions.

        Raises:
            ShapeError, NonFiniteError, NotRigidTransformError, InputError: bad inputs.
        """
        qa, Tt, dt = self._check_inputs(q, T_target_flange, dt)
        return self._step(qa, Tt, dt)

    def step_trusted(self, q: Array, T_target_flange: Array, dt: float) -> StepResult:
        """:meth:`step` without the input checks, for callers that validated a whole chunk.

        ``q`` must be a finite contiguous float64 (dof,) array and ``T_target_flange`` a
        contiguous rigid (4, 4) transform; ``dt`` [s] as in :meth:`step`.
        """
        return self._step(q, T_target_flange, max(float(dt), DT_MIN_S))

    def _fail(
        self,
        q: Array,
        reason: StepStatus,
        dt: float,
        msg: str,
        status: str = "",
        iters: int = 0,
        pres: float = math.nan,
        eres: float = math.nan,
        lag: bool = False,
    ) -> StepResult:
        return StepResult(
            q.copy(), np.zeros(self.dof), reason, dt, pres, eres, lag, status, iters, msg
        )

    def _step(self, q: Array, Tt: Array, dt: float) -> StepResult:
        self.steps += 1
        data, empty = self._build(q, Tt, dt)
        if empty:
            j = int(np.argmax(data.lower - data.upper))
            return self._fail(
                q,
                StepStatus.QP_INFEASIBLE,
                dt,
                f"empty velocity box for joint {self.chain.joint_names[j]!r}: the "
                "margin-adjusted position limits cannot be reached within the "
                "velocity limit",
                "empty_box",
            )
        x, status, iters = self._solve(data)
        if x is None:
            return self._fail(
                q, StepStatus.QP_INFEASIBLE, dt, f"QP not solved (status {status})", status, iters
            )
        ws = self._ws
        code = WS.post_step(q, x, dt, Tt, ws.fb, ws.ib, POST_CHECK_TOL)
        w = ws.work
        if code == 3:
            return self._fail(
                q,
                StepStatus.QP_FAILED,
                dt,
                f"the QP solver returned a non-finite solution (status {status})",
                status,
                iters,
            )
        pres, eres = w.out.tolist()
        if math.isnan(eres):  # near the Euler gimbal lock: SciPy's own choice of angles
            eres = euler_residual_deg(Tt[:3, :3], w.T_new[:3, :3])
        lag = pres > self._max_lag_m or (self._max_lag_deg is not None and eres > self._max_lag_deg)
        if code == 1:
            return self._fail(
                q,
                StepStatus.JOINT_LIMIT,
                dt,
                "the step leaves the margin-adjusted joint limits",
                status,
                iters,
                pres,
                eres,
                lag,
            )
        if code == 2:
            return self._fail(
                q,
                StepStatus.COUPLED_JOINT,
                dt,
                "the step violates a coupled-joint constraint",
                status,
                iters,
                pres,
                eres,
                lag,
            )
        q_new = w.q_new.copy()
        for con in self._others:
            if np.any(con.residual(q_new) > POST_CHECK_TOL):
                return self._fail(
                    q,
                    StepStatus.COUPLED_JOINT,
                    dt,
                    f"the step violates coupled-joint constraint {con.name!r}",
                    status,
                    iters,
                    pres,
                    eres,
                    lag,
                )
        if lag and self._abort:
            return self._fail(
                q,
                StepStatus.TRACKING_LAG,
                dt,
                f"flange residual {pres * 1000:.3f} mm, {eres:.3f} deg exceeds the lag guard",
                status,
                iters,
                pres,
                eres,
                lag,
            )
        return StepResult(
            q_new,
            w.qdot.copy(),
            StepStatus.OK,
            dt,
            pres,
            eres,
            lag,
            status,
            iters,
            "lag exceeded (reported)" if lag else "ok",
        )


def euler_residual_deg(R_target: ArrayLike, R: ArrayLike) -> float:
    """The lag guard's rotation residual [deg]: SciPy's ``Rotation.as_euler("xyz")`` (lower
    case: extrinsic x, then y, then z) of both rotations, the difference ``R`` minus
    ``R_target`` wrapped to [-180, 180), its largest magnitude.

    The step's compiled kernel computes the same in closed form away from the gimbal lock; near
    it (``1 - |R[2, 0]| < 1e-6``) this function defers to SciPy, whose split between the first and
    third angle there is a convention.
    """
    with warnings.catch_warnings():  # SciPy warns at the lock itself; the angles are defined
        warnings.simplefilter("ignore", UserWarning)
        both = Rotation.from_matrix(
            np.stack([np.asarray(R, dtype=np.float64), np.asarray(R_target, dtype=np.float64)])
        )
        actual, target = both.as_euler("xyz", degrees=True)
    e = actual - target
    return float(np.max(np.abs((e + 180.0) % 360.0 - 180.0)))
