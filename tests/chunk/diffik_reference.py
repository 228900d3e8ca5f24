"""An independent re-implementation of the published Tianji differential-IK port: its velocity-QP
step and its chunk adapter, written from the published description, sharing no ikstack code.

Everything here is numpy, SciPy and OSQP only (a test checks that this module imports nothing
from ikstack):

* its own modified-DH forward kinematics and geometric Jacobian of the Marvin M6 flange (the
  published table, the 95 mm static flange row included), and the TacCap mount;
* its own rotation vector and Rodrigues formula (a test holds them to SciPy's), and SciPy's
  ``Rotation.as_euler("xyz", degrees=True)`` (lower case: extrinsic x-y-z) for the Euler
  residual, the difference wrapped to [-180, 180);
* the QP in mm / deg exactly as published: ``P = 2 (J^T W J + lam I)``,
  ``q = -2 J^T W v + mu dt grad c``, velocity boxes shrunk by the joint margin, the linearized
  J6/J7 row with its buffer (a null buffer inherits the joint margin, 5 deg by default);
* OSQP as the port drives it: OSQP's default settings except ``polishing=False`` and
  ``warm_starting=True``; after each reset the problem is set up from the first step's own data,
  then updated in place; before every solve the primal warm start is the previous step's clipped
  velocity (zeros after a reset), the dual state is what OSQP kept;
* the adapter: every knot's segment starts at the TCP pose (FK) of the joints actually reached,
  is split into ``ceil(interval / validation_dt)`` equal substeps (straight-line position, rotation
  ``R0 exp(a rotvec(R0^T R1))``), each tracked by one step of the substep's duration; any failure
  rejects the arm's chunk; the lag of accepted steps is recorded (worst mm, worst deg, count).

Verdicts use the port's names: ``ok``, ``qp_infeasible`` (an empty velocity box, or OSQP did not
solve), ``nonfinite``, ``joint_limit``, ``j67_interference``, ``tracking_lag``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import osqp
import scipy.sparse as sp
from scipy.spatial.transform import Rotation

# ---------------------------------------------------------------- the published arm
#: modified DH rows: alpha [deg], a [mm], d [mm], theta offset [deg]; each link
#: Rx(alpha) Tx(a) Rz(theta_offset + q) Tz(d)
DH_ROWS = (
    (0, 0, 174.5, 0),
    (90, 0, 0, 0),
    (-90, 0, 287, 0),
    (90, 18, 0, 180),
    (90, 18, 314, 180),
    (90, 0, 0, 90),
    (90, 0, 0, 90),
)
#: the static flange row (not a joint)
FLANGE_ROW = (90, 0, 95, 90)
LOWER_DEG = np.array([-170.0, -120, -170, -145, -170, -60, -90])
UPPER_DEG = np.array([170.0, 120, 170, 60, 170, 60, 90])
RIGHT_J6_DEG = 58.0
VMAX_RAD_S = 0.904779
KINEMATIC_MARGIN_DEG = 5.0
#: J6/J7 interference rows b(q6) = a0 q6^2 + a1 q6 + a2 [deg], keyed by (q6 >= 0, q7 >= 0)
J67_ROWS = {
    (True, True): (0.0, -1.025, 110.5),
    (False, True): (0.0, 1.025, 110.5),
    (False, False): (0.0, -1.025, -110.5),
    (True, False): (0.0, 1.025, -110.5),
}
#: TacCap mount on the flange: xyz [m], URDF rpy [rad] (fixed axes x, y, z)
TOOL_XYZ = (-0.01575, 0.0, 0.0505)
TOOL_RPY = (math.pi, -math.pi / 2, 0.0)


def limits_deg(side: str) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = LOWER_DEG.copy(), UPPER_DEG.copy()
    if side == "right":
        lo[5], hi[5] = -RIGHT_J6_DEG, RIGHT_J6_DEG
    return lo, hi


def _link(alpha_deg: float, a_mm: float, d_mm: float, theta_deg: float) -> np.ndarray:
    al, th = math.radians(alpha_deg), math.radians(theta_deg)
    ca, sa, ct, st = math.cos(al), math.sin(al), math.cos(th), math.sin(th)
    a, d = a_mm / 1000.0, d_mm / 1000.0
    return np.array(
        [
            [ct, -st, 0.0, a],
            [st * ca, ct * ca, -sa, -sa * d],
            [st * sa, ct * sa, ca, ca * d],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


def flange_fk_jacobian(q_rad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Flange pose [m] and geometric Jacobian (6, 7) [m/rad; rad/rad] at the flange origin."""
    T = np.eye(4)
    axes, origins = [], []
    for (al, a, d, th), qi in zip(DH_ROWS, q_rad, strict=True):
        T = T @ _link(al, a, d, th + math.degrees(qi))
        axes.append(T[:3, 2].copy())
        origins.append(T[:3, 3].copy())
    T = T @ _link(*FLANGE_ROW)
    J = np.zeros((6, 7))
    p = T[:3, 3]
    for i in range(7):
        (zx, zy, zz), (rx, ry, rz) = axes[i], p - origins[i]
        J[:3, i] = (zy * rz - zz * ry, zz * rx - zx * rz, zx * ry - zy * rx)  # z_i x (p - o_i)
        J[3:, i] = axes[i]
    return T, J


def tool_transform() -> np.ndarray:
    T = np.eye(4)
    T[:3, :3] = Rotation.from_euler("xyz", TOOL_RPY).as_matrix()  # Rz(y) Ry(p) Rx(r)
    T[:3, 3] = TOOL_XYZ
    return T


def tcp_fk(q_rad: np.ndarray) -> np.ndarray:
    """TCP pose [m] of the arm with the TacCap mount."""
    return flange_fk_jacobian(q_rad)[0] @ tool_transform()


def j67_gap_deg(q_deg: np.ndarray) -> float:
    """Signed distance of q7 past its J6/J7 boundary [deg] (<= 0 holds)."""
    q6, q7 = float(q_deg[5]), float(q_deg[6])
    a0, a1, a2 = J67_ROWS[(q6 >= 0, q7 >= 0)]
    b = a0 * q6 * q6 + a1 * q6 + a2
    return q7 - b if q7 >= 0 else b - q7


def euler_residual_deg(R_target: np.ndarray, R_actual: np.ndarray) -> float:
    """Largest wrapped difference of SciPy's extrinsic-xyz Euler angles [deg]."""
    actual, target = Rotation.from_matrix(np.stack([R_actual, R_target])).as_euler(
        "xyz", degrees=True
    )
    e = actual - target
    return float(np.max(np.abs((e + 180.0) % 360.0 - 180.0)))


def rotvec(R: np.ndarray) -> np.ndarray:
    """Rotation vector [rad] of a rotation matrix (angle in [0, pi])."""
    c = min(1.0, max(-1.0, (R[0, 0] + R[1, 1] + R[2, 2] - 1.0) / 2.0))
    angle = math.acos(c)
    axis_sin = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]) / 2.0
    s = float(np.linalg.norm(axis_sin))  # sin(angle)
    if angle < 0.5:  # sin is well conditioned: angle / sin(angle) from atan2
        return axis_sin * (math.atan2(s, c) / s if s > 1e-300 else 1.0)
    # far from 0 (up to pi): the axis from the symmetric part, its sign from axis_sin
    B = (R + R.T) / 2.0 - c * np.eye(3)  # = (1 - c) a a^T
    i = int(np.argmax(np.diag(B)))
    a = B[:, i] / np.linalg.norm(B[:, i])
    if a @ axis_sin < 0:
        a = -a
    return a * math.atan2(s, c)


def rotation_matrix(w: np.ndarray) -> np.ndarray:
    """Rodrigues: the rotation of rotation vector ``w`` [rad]."""
    angle = float(np.linalg.norm(w))
    if angle < 1e-300:
        return np.eye(3)
    k = w / angle
    K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K)


# ---------------------------------------------------------------- the QP step
@dataclass
class RefConfig:
    w_pos: float = 1.0
    w_rot: float = 1.0
    lam: float = 1e-3
    limit_margin_deg: float | None = None
    j67_margin_deg: float | None = None
    mu_nullspace: float = 1000.0
    nullspace_activation_deg: float | None = 25.0
    nullspace_weights: tuple[float, ...] | None = None
    max_lag_mm: float = 5.0
    max_lag_deg: float | None = None
    lag_policy: str = "abort"
    #: extra OSQP settings on top of the port's (empty: OSQP's defaults)
    osqp_settings: dict = field(default_factory=dict)


#: round-off allowed in the post-step position and J6/J7 checks [deg]
POST_TOL_DEG = 1e-7


@dataclass
class RefStep:
    ok: bool
    reason: str
    q_rad: np.ndarray
    pos_err_mm: float = math.nan
    rot_err_deg: float = math.nan
    lag_exceeded: bool = False


class RefDiffIK:
    """One arm's QP step, as the port runs it (flange targets in metres, joints in radians)."""

    def __init__(self, side: str, config: RefConfig | None = None):
        self.cfg = RefConfig() if config is None else config
        self.lo, self.hi = limits_deg(side)
        c = self.cfg
        self.margin = (
            KINEMATIC_MARGIN_DEG
            if c.limit_margin_deg is None
            else max(KINEMATIC_MARGIN_DEG, c.limit_margin_deg)
        )
        self.j67_margin = self.margin if c.j67_margin_deg is None else c.j67_margin_deg
        self.vmax = math.degrees(VMAX_RAD_S)
        self.weights = np.ones(7) if c.nullspace_weights is None else np.array(c.nullspace_weights)
        self.W = np.diag([c.w_pos] * 3 + [c.w_rot] * 3)
        self.reset()

    def reset(self) -> None:
        self.problem: osqp.OSQP | None = None
        self.prev_velocity = np.zeros(7)

    def cost_gradient(self, q_deg: np.ndarray) -> np.ndarray:
        """Gradient of the joint-limit cost [1/deg], from its published definition."""
        band = self.cfg.nullspace_activation_deg
        g = np.zeros(7)
        for i in range(7):
            w = self.weights[i]
            if band is None:
                mid, span = (self.lo[i] + self.hi[i]) / 2, self.hi[i] - self.lo[i]
                g[i] = w * 2 * (q_deg[i] - mid) / span**2 / 14
                continue
            d_lo, d_hi = q_deg[i] - self.lo[i], self.hi[i] - q_deg[i]
            m = min(d_lo, d_hi)
            if m < band:
                dm = 1.0 if d_lo <= d_hi else -1.0
                g[i] = w * 2 * (band - m) / band * (-dm / band) / 14
        return g

    def step(self, q_rad: np.ndarray, T_target: np.ndarray, dt_s: float) -> RefStep:
        c = self.cfg
        dt = max(dt_s, 1e-6)
        q = np.degrees(np.asarray(q_rad, dtype=float))
        T, J = flange_fk_jacobian(np.asarray(q_rad, dtype=float))
        J = J.copy()
        J[:3] *= 1000 * math.pi / 180  # m/rad -> mm/deg
        rot = np.degrees(rotvec(T_target[:3, :3] @ T[:3, :3].T))
        v = np.concatenate([(T_target[:3, 3] - T[:3, 3]) * 1000, rot]) / dt
        P = 2 * (J.T @ self.W @ J + c.lam * np.eye(7))
        lin = -2 * J.T @ self.W @ v + c.mu_nullspace * dt * self.cost_gradient(q)
        lb = np.maximum(-self.vmax, (self.lo + self.margin - q) / dt)
        ub = np.minimum(self.vmax, (self.hi - self.margin - q) / dt)
        if np.any(lb > ub):
            return RefStep(False, "qp_infeasible", np.asarray(q_rad, dtype=float))
        q6, q7 = q[5], q[6]
        a0, a1, a2 = J67_ROWS[(q6 >= 0, q7 >= 0)]
        b = a0 * q6 * q6 + a1 * q6 + a2
        slope = 2 * a0 * q6 + a1
        if q7 >= 0:
            gap, c6, c7 = q7 - b, -slope, 1.0
        else:
            gap, c6, c7 = b - q7, slope, -1.0
        row_bound = (-self.j67_margin - gap) / dt
        l_all = np.concatenate([lb, [-np.inf]])
        u_all = np.concatenate([ub, [row_bound]])
        # fixed sparsity: the whole upper triangle of P; A = [I; the J6/J7 row on joints 6, 7],
        # stored column by column: A's values are [1, 1, 1, 1, 1, 1, c6, 1, c7]
        Ax = np.array([1.0, 1, 1, 1, 1, 1, c6, 1, c7])
        if self.problem is None:
            P_csc = sp.csc_matrix((_upper_values(P), (_P_ROWS, _P_COLS)), shape=(7, 7))
            A_csc = sp.csc_matrix((Ax, _A_ROWS, _A_PTR), shape=(8, 7))
            self.problem = osqp.OSQP()
            self.problem.setup(
                P=P_csc,
                q=lin,
                A=A_csc,
                l=l_all,
                u=u_all,
                verbose=False,
                polishing=False,
                warm_starting=True,
                **c.osqp_settings,
            )
        else:
            self.problem.update(Px=_upper_values(P), q=lin, l=l_all, u=u_all, Ax=Ax)
        self.problem.warm_start(x=self.prev_velocity)
        res = self.problem.solve(raise_error=False)
        if res.info.status_val not in (1, 2):  # solved, solved inaccurate
            return RefStep(False, "qp_infeasible", np.asarray(q_rad, dtype=float))
        if res.x is None or not np.all(np.isfinite(res.x)):
            return RefStep(False, "nonfinite", np.asarray(q_rad, dtype=float))
        vel = np.clip(res.x, lb, ub)
        self.prev_velocity = vel.copy()
        q_next = q + vel * dt
        q_next_rad = np.radians(q_next)
        Tn, _ = flange_fk_jacobian(q_next_rad)
        pos_err = float(np.linalg.norm(Tn[:3, 3] - T_target[:3, 3]) * 1000)
        rot_err = euler_residual_deg(T_target[:3, :3], Tn[:3, :3])
        lag = pos_err > c.max_lag_mm or (c.max_lag_deg is not None and rot_err > c.max_lag_deg)
        margin = float(np.min(np.minimum(self.hi - q_next, q_next - self.lo)))
        if margin < self.margin - POST_TOL_DEG:
            reason = "joint_limit"
        elif j67_gap_deg(q_next) > POST_TOL_DEG:
            reason = "j67_interference"
        elif lag and c.lag_policy == "abort":
            reason = "tracking_lag"
        else:
            reason = "ok"
        return RefStep(reason == "ok", reason, q_next_rad, pos_err, rot_err, lag)


# OSQP stores the upper triangle column by column: (0,0), (0,1), (1,1), (0,2), ...
_P_ROWS = np.concatenate([np.arange(j + 1) for j in range(7)])
_P_COLS = np.concatenate([np.full(j + 1, j) for j in range(7)])
# A in CSC: row indices and column pointers of [I7; row 7 on columns 5 and 6]
_A_ROWS = np.array([0, 1, 2, 3, 4, 5, 7, 6, 7])
_A_PTR = np.array([0, 1, 2, 3, 4, 5, 7, 9])


def _upper_values(P: np.ndarray) -> np.ndarray:
    return P[_P_ROWS, _P_COLS]


# ---------------------------------------------------------------- the adapter
@dataclass
class RefArmDecode:
    ok: bool
    reason: str
    knot: int
    substep: int
    knots: np.ndarray  # (H, 7) [rad]; rows after a failure are not meaningful
    substeps: list[np.ndarray]  # joints after every accepted substep [rad]
    worst_lag_mm: float = 0.0
    worst_lag_deg: float = 0.0
    exceedances: int = 0
    targets: list[np.ndarray] = field(default_factory=list)  # flange target of every substep
    max_j67_gap_deg: float = -math.inf  # closest approach to the J6/J7 edge after a substep


def decode_arm(
    solver: RefDiffIK,
    q0_rad: np.ndarray,
    T_tcp: np.ndarray,
    interval_s: float,
    validation_dt_s: float = 0.004,
) -> RefArmDecode:
    """Decode one arm's chunk of TCP targets from the measured joints ``q0_rad``."""
    solver.reset()
    tool_inv = np.linalg.inv(tool_transform())
    current = np.asarray(q0_rad, dtype=float).copy()
    n = max(1, math.ceil(interval_s / validation_dt_s))
    dt = interval_s / n
    H = T_tcp.shape[0]
    knots = np.repeat(current[None], H, axis=0)
    out = RefArmDecode(True, "ok", -1, -1, knots, [])
    for k in range(H):
        start = tcp_fk(current)
        target = T_tcp[k]
        rot = rotvec(start[:3, :3].T @ target[:3, :3])
        for j in range(1, n + 1):
            a = j / n
            wp = np.eye(4)
            wp[:3, 3] = (1 - a) * start[:3, 3] + a * target[:3, 3]
            wp[:3, :3] = start[:3, :3] @ rotation_matrix(a * rot)
            flange_target = wp @ tool_inv
            out.targets.append(flange_target)
            r = solver.step(current, flange_target, dt)
            if not r.ok:
                out.ok, out.reason, out.knot, out.substep = False, r.reason, k, j - 1
                knots[k:] = current
                return out
            out.worst_lag_mm = max(out.worst_lag_mm, r.pos_err_mm)
            out.worst_lag_deg = max(out.worst_lag_deg, r.rot_err_deg)
            out.exceedances += int(r.lag_exceeded)
            out.max_j67_gap_deg = max(out.max_j67_gap_deg, j67_gap_deg(np.degrees(r.q_rad)))
            current = r.q_rad
            out.substeps.append(current.copy())
        knots[k] = current
    return out


# ---------------------------------------------------------------- random two-arm chunks
#: the chunk kinds of the parity sweep
KINDS = ("nominal", "lag", "j67_push", "inside_edge", "jump")


def _rotz_about(axis: np.ndarray, angle_rad: float) -> np.ndarray:
    return Rotation.from_rotvec(axis / np.linalg.norm(axis) * angle_rad).as_matrix()


def random_start(
    rng: np.random.Generator, side: str, gap_range: tuple[float, float], clear_deg: float = 8.0
) -> np.ndarray:
    """Random joints [rad] at least ``clear_deg`` inside every margin-shrunk limit, with the J6/J7
    gap (``|q7| + 1.025 |q6| - 110.5``) drawn from ``gap_range`` [deg]."""
    lo, hi = limits_deg(side)
    lo_s, hi_s = lo + KINEMATIC_MARGIN_DEG + clear_deg, hi - KINEMATIC_MARGIN_DEG - clear_deg
    while True:
        q = rng.uniform(lo_s, hi_s)
        q[3] = rng.uniform(lo_s[3], -20.0)  # a bent elbow (J4 near 0 is the straight arm)
        gap = rng.uniform(*gap_range)
        a7 = 110.5 - 1.025 * abs(q[5]) + gap
        if not 0.5 <= a7 <= hi[6] - KINEMATIC_MARGIN_DEG - 1.0:
            continue
        q[6] = a7 if rng.random() < 0.5 else -a7
        if abs(j67_gap_deg(q) - gap) < 1e-9:
            return np.radians(q)


def _line(
    T0: np.ndarray, H: int, shift_m: np.ndarray, turn_axis: np.ndarray, turn_rad: float
) -> np.ndarray:
    s = np.arange(1, H + 1) / H
    out = np.repeat(T0[None], H, axis=0)
    for k in range(H):
        out[k, :3, 3] = T0[:3, 3] + s[k] * shift_m
        out[k, :3, :3] = _rotz_about(turn_axis, s[k] * turn_rad) @ T0[:3, :3]
    return out


def _unit(rng: np.random.Generator) -> np.ndarray:
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def random_arm_chunk(
    rng: np.random.Generator, side: str, kind: str, H: int = 16
) -> tuple[np.ndarray, np.ndarray]:
    """``(q0 [rad], T_tcp (H, 4, 4))`` for one arm and one chunk kind.

    nominal: a small straight move (<= 3 cm, <= 8 deg); lag: a fast one (10-25 cm, 10-40 deg),
    which may outrun the velocity limit; j67_push: a start 0.5-4 deg outside the J6/J7 buffer and
    targets that drive |q7| 4-10 deg further towards the edge; inside_edge: a legal start inside
    the J6/J7 buffer (0.02-4.5 deg into it) or inside a joint's margin (0.01-2 deg into it);
    jump: a nominal move with one knot displaced by 5-30 cm.
    """
    if kind == "j67_push":
        q0 = random_start(rng, side, (-9.0, -5.5))
        dq = np.zeros(7)
        dq[6] = np.sign(q0[6]) * math.radians(rng.uniform(4.0, 10.0))
        s = np.arange(1, H + 1) / H
        return q0, np.array([tcp_fk(q0 + sk * dq) for sk in s])
    if kind == "inside_edge":
        u = rng.random()
        if u < 0.35:  # deep inside the J6/J7 buffer: cannot leave it in one substep
            q0 = random_start(rng, side, (-4.5, -0.5))
        elif u < 0.7:  # just inside it: the first substep must move out
            q0 = random_start(rng, side, (-4.98, -4.6))
        else:  # inside a joint's margin, shallow (can leave in one substep) or deep
            q0 = random_start(rng, side, (-30.0, -10.0))
            lo, hi = limits_deg(side)
            j = int(rng.choice([1, 3, 4]))
            into = rng.uniform(0.01, 0.18) if rng.random() < 0.5 else rng.uniform(0.3, 2.0)
            qd = np.degrees(q0)
            qd[j] = (
                (hi[j] - KINEMATIC_MARGIN_DEG + into)
                if rng.random() < 0.5
                else (lo[j] + KINEMATIC_MARGIN_DEG - into)
            )
            q0 = np.radians(qd)
        T0 = tcp_fk(q0)
        return q0, _line(
            T0,
            H,
            0.01 * _unit(rng) * rng.uniform(0, 1),
            _unit(rng),
            math.radians(rng.uniform(0, 3)),
        )
    q0 = random_start(rng, side, (-40.0, -10.0))
    T0 = tcp_fk(q0)
    if kind == "lag":
        return q0, _line(
            T0,
            H,
            rng.uniform(0.10, 0.25) * _unit(rng),
            _unit(rng),
            math.radians(rng.uniform(10, 40)),
        )
    T = _line(
        T0, H, rng.uniform(0.0, 0.03) * _unit(rng), _unit(rng), math.radians(rng.uniform(0, 8))
    )
    if kind == "jump":
        k = int(rng.integers(0, H))
        T[k, :3, 3] += rng.uniform(0.05, 0.30) * _unit(rng)
    elif kind != "nominal":
        raise ValueError(f"unknown chunk kind {kind!r}")
    return q0, T


def random_chunks(seed: int, count: int, H: int = 16) -> list[tuple[str, dict]]:
    """``count`` two-arm chunks cycling through :data:`KINDS`: ``(kind, {side: (q0, T)})``."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        kind = KINDS[i % len(KINDS)]
        out.append(
            (kind, {side: random_arm_chunk(rng, side, kind, H) for side in ("left", "right")})
        )
    return out
