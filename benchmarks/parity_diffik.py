"""Parity of ikstack's velocity QP (OSQP and active-set) with a plainly written dense reference.

The reference re-implements the velocity QP's differential-IK step from the published equations
(docs/design.md) without any ikstack kinematics or QP code: its own modified-DH forward
kinematics and geometric Jacobian of the Tianji Marvin flange, the joint-limit-avoidance
gradient, the boxes and the J6/J7 row, solved exactly as a bounded least-squares problem by
scipy's BVLS (the row, when it binds, eliminated by substitution). Both Marvin arms, five start
poses covering all four J6/J7 quadrants and active nullspace bands plus one inside a joint's
margin, dt 0.5 / 4 / 8 / 30 ms, chained steps along a moving target with occasional unreachable
jumps (so verdicts other than ``ok`` occur).

Run: ``python benchmarks/parity_diffik.py [--quick]``; writes
``benchmarks/results/parity_diffik.json``.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
from scipy.optimize import lsq_linear

from ikstack.bench import write_report
from ikstack.diffik import ActiveSetQPSolver, DiffQPConfig, OsqpQPSolver
from ikstack.robots import load

D = math.pi / 180.0
# ---------------------------------------------------------------- the reference, from the tables
DH = [(0, 0, 174.5, 0), (90, 0, 0, 0), (-90, 0, 287, 0), (90, 18, 0, 180), (90, 18, 314, 180),
      (90, 0, 0, 90), (90, 0, 0, 90)]  # alpha [deg], a [mm], d [mm], theta offset [deg]
FLANGE = (90, 0, 95, 90)
LOWER = np.array([-170, -120, -170, -145, -170, -60, -90.0])
UPPER = np.array([170, 120, 170, 60, 170, 60, 90.0])
VMAX = math.degrees(0.904779)  # [deg/s]
MARGIN = 5.0  # [deg]
J67_MARGIN = 1.0  # [deg]
W_POS = W_ROT = 1.0
LAM = 1e-3
MU = 1000.0
BAND = 25.0
MAX_LAG_MM = 5.0


def link(alpha, a, d, theta):
    ca, sa, ct, st = math.cos(alpha), math.sin(alpha), math.cos(theta), math.sin(theta)
    return np.array([[ct, -st, 0, a], [st * ca, ct * ca, -sa, -sa * d],
                     [st * sa, ct * sa, ca, ca * d], [0, 0, 0, 1.0]])


def ref_fk_jac(q_deg):
    """Flange pose [mm] and the (6, 7) Jacobian in mm/deg (linear) and deg/deg (angular)."""
    T = np.eye(4)
    z, o = [], []
    for (al, a, d, th), qi in zip(DH, q_deg, strict=True):
        T = T @ link(al * D, a, d, (th + qi) * D)
        z.append(T[:3, 2].copy())
        o.append(T[:3, 3].copy())
    al, a, d, th = FLANGE
    T = T @ link(al * D, a, d, th * D)
    J = np.zeros((6, 7))
    for i in range(7):
        J[:3, i] = np.cross(z[i], T[:3, 3] - o[i]) * D  # mm per deg
        J[3:, i] = z[i]
    return T, J


def ref_rotvec(R):
    c = np.clip((np.trace(R) - 1) / 2, -1, 1)
    ang = math.acos(c)
    if ang < 1e-9:
        return 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    if ang > math.pi - 1e-6:
        w, V = np.linalg.eigh((R + R.T) / 2)
        axis = V[:, np.argmax(w)]
        return axis * ang
    return ang / (2 * math.sin(ang)) * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0],
                                                 R[1, 0] - R[0, 1]])


def ref_grad(q, lo, hi):
    g = np.zeros(7)
    for i in range(7):
        m = min(q[i] - lo[i], hi[i] - q[i])
        if m < BAND:
            sign = 1.0 if (q[i] - lo[i]) <= (hi[i] - q[i]) else -1.0
            g[i] = (1 / 14) * 2 * (BAND - m) / BAND * (-sign / BAND)
    return g


def ref_step(q_deg, T_t_mm, dt, lo, hi):
    """One reference step: (verdict, q_next [deg], position residual [mm])."""
    T, J = ref_fk_jac(q_deg)
    v = np.concatenate([T_t_mm[:3, 3] - T[:3, 3],
                        np.degrees(ref_rotvec(T_t_mm[:3, :3] @ T[:3, :3].T))]) / dt
    W = np.diag([W_POS] * 3 + [W_ROT] * 3)
    lb = np.maximum(-VMAX, (lo + MARGIN - q_deg) / dt)
    ub = np.minimum(VMAX, (hi - MARGIN - q_deg) / dt)
    if np.any(lb > ub):
        return "joint_limit", q_deg, math.nan
    q6, q7 = q_deg[5], q_deg[6]
    s = -1.025 if (q6 >= 0) == (q7 >= 0) else 1.025
    b = s * q6 + (110.5 if q7 >= 0 else -110.5)
    G = np.zeros(7)
    if q7 >= 0:
        G[5], G[6], gap = -s, 1.0, q7 - b
    else:
        G[5], G[6], gap = s, -1.0, b - q7
    h = (-J67_MARGIN - gap) / dt
    x = ref_solve(J, v, W, q_deg, lo, hi, dt, lb, ub, G, h)
    x = np.clip(x, lb, ub)
    qn = q_deg + x * dt
    Tn, _ = ref_fk_jac(qn)
    lag = float(np.linalg.norm(T_t_mm[:3, 3] - Tn[:3, 3]))
    if np.any(qn < lo + MARGIN - 1e-7) or np.any(qn > hi - MARGIN + 1e-7):
        return "joint_limit", q_deg, lag
    if abs(qn[6]) + 1.025 * abs(qn[5]) > 110.5 + 1e-7:
        return "coupled_joint", q_deg, lag
    if lag > MAX_LAG_MM:
        return "tracking_lag", q_deg, lag
    return "ok", qn, lag


def ref_solve(J, v, W, q_deg, lo, hi, dt, lb, ub, G, h):
    """The QP as bounded least squares, solved exactly by scipy's BVLS (an active-set method).

    ``||J x - v||_W^2 + lam ||x||^2 + g.x`` equals ``||A x - b||^2 + const`` with
    ``A = [W^1/2 J; lam^1/2 I]`` and ``b = [W^1/2 v; -g / (2 lam^1/2)]``. If the unconstrained-
    by-row optimum breaks the J6/J7 row, the row is active at the optimum (convexity): x7 is
    eliminated through it, and x7's bounds become bounds on x6.
    """
    g = MU * dt * ref_grad(q_deg, lo, hi)
    Wh = np.sqrt(W)
    A = np.vstack([Wh @ J, math.sqrt(LAM) * np.eye(7)])
    b = np.concatenate([Wh @ v, -g / (2 * math.sqrt(LAM))])
    x = lsq_linear(A, b, bounds=(lb, ub), method="bvls", tol=1e-14).x
    if G @ x <= h + 1e-9 * max(1.0, abs(h)):
        return x
    # x7 = a7 + b7 x6 on the row
    a7, b7 = h / G[6], -G[5] / G[6]
    lo6, hi6 = lb[5], ub[5]
    ends = sorted([(lb[6] - a7) / b7, (ub[6] - a7) / b7])
    lo6, hi6 = max(lo6, ends[0]), min(hi6, ends[1])
    M = np.zeros((7, 6))
    M[:6, :6] = np.eye(6)
    M[6, 5] = b7
    off = np.zeros(7)
    off[6] = a7
    lbr = np.concatenate([lb[:5], [lo6]])
    ubr = np.concatenate([ub[:5], [hi6]])
    y = lsq_linear(A @ M, b - A @ off, bounds=(lbr, ubr), method="bvls", tol=1e-14).x
    return M @ y + off


# ---------------------------------------------------------------- the scenarios
START_POSES = [  # [deg]: J6/J7 quadrant, and which joint sits inside its 25 deg band
    ([150.0, 20, 0, -60, 0, 20, 30], "Q1 (+,+), J1 in band"),
    ([0.0, 100, 10, -50, 0, -20, 40], "Q2 (-,+), J2 in band"),
    ([-20.0, 30, 0, 45, 0, -30, -50], "Q3 (-,-), J4 in band"),
    ([10.0, 30, 0, -60, 0, 40, -66], "Q4 (+,-), 3.5 deg from the J6/J7 edge"),
    ([0.0, 40, -150, -70, 20, 10, 5], "Q1 near zero, J3 in band"),
    ([10.0, 30, 0, 55.3, 0, 20, 10], "J4 inside its 5 deg margin (empty box at small dt)"),
]
DTS = [0.0005, 0.004, 0.008, 0.03]


def targets(T0_m, n, dt, rng):
    """A moving flange target (a slow circle and a twist) with two unreachable jumps."""
    out = []
    for k in range(n):
        t = (k + 1) * dt
        T = T0_m.copy()
        T[0, 3] += 0.02 * (math.cos(2 * t) - 1)
        T[1, 3] += 0.02 * math.sin(2 * t)
        ang = 0.2 * math.sin(3 * t)
        c, s = math.cos(ang), math.sin(ang)
        T[:3, :3] = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ T0_m[:3, :3]
        if k in (n // 3, 2 * n // 3):
            T[2, 3] += 0.05 + 0.05 * rng.random()  # an unreachable jump: tracking_lag
        out.append(T)
    return out


def run(quick: bool) -> dict:
    rng = np.random.default_rng(0)
    n_steps = 6 if quick else 30
    rows = []
    solvers = {"osqp": OsqpQPSolver, "active_set": ActiveSetQPSolver}
    timing = {k: 0.0 for k in solvers}
    timing["reference"] = 0.0
    for side in ("left", "right"):
        arm = load(f"marvin_{side}")
        lo, hi = LOWER.copy(), UPPER.copy()
        if side == "right":
            lo[5], hi[5] = -58.0, 58.0
        qps = {k: cls(arm, DiffQPConfig(lag_policy="abort")) for k, cls in solvers.items()}
        for q_start, label in START_POSES:
            q_start = np.array(q_start)
            for dt in DTS:
                T0_mm, _ = ref_fk_jac(q_start)
                T0_m = T0_mm.copy()
                T0_m[:3, 3] /= 1000.0
                tg = targets(T0_m, n_steps, dt, rng)
                state = {k: np.radians(q_start) for k in solvers}
                q_ref = q_start.copy()
                for qp in qps.values():
                    qp.reset()
                for k, T_m in enumerate(tg):
                    T_mm = T_m.copy()
                    T_mm[:3, 3] *= 1000.0
                    t0 = time.perf_counter()
                    verdict, q_ref_next, lag_ref = ref_step(q_ref, T_mm, dt, lo, hi)
                    timing["reference"] += time.perf_counter() - t0
                    row = {"arm": side, "pose": label, "dt": dt, "step": k, "reference": verdict}
                    for name, qp in qps.items():
                        t0 = time.perf_counter()
                        r = qp.step(state[name], T_m, dt)
                        timing[name] += time.perf_counter() - t0
                        row[name] = r.reason.value
                        row[f"{name}_dq_deg"] = float(np.max(np.abs(np.degrees(r.q) - q_ref_next)))
                        row[f"{name}_lag_diff_mm"] = (
                            abs(r.position_residual_m * 1000 - lag_ref)
                            if not (math.isnan(lag_ref) or math.isnan(r.position_residual_m))
                            else 0.0)
                        state[name] = r.q
                    q_ref = q_ref_next
                    rows.append(row)
    n = len(rows)
    summary = {"steps": n, "verdicts": {}}
    for v in ("ok", "joint_limit", "coupled_joint", "tracking_lag"):
        summary["verdicts"][v] = sum(r["reference"] == v for r in rows)
    for name in solvers:
        summary[name] = {
            "verdicts_agree": sum(r[name] == r["reference"] for r in rows),
            "max_joint_diff_deg": max(r[f"{name}_dq_deg"] for r in rows),
            "max_position_residual_diff_mm": max(r[f"{name}_lag_diff_mm"] for r in rows),
            "mean_step_us": timing[name] / n * 1e6,
        }
    summary["reference_mean_step_us"] = timing["reference"] / n * 1e6
    per: dict[str, dict] = {}
    for r in rows:
        key = f"{r['arm']} | {r['pose']} | dt {r['dt'] * 1000:g} ms"
        e = per.setdefault(key, {"steps": 0, "verdicts": {}, "max_joint_diff_deg": 0.0})
        e["steps"] += 1
        e["verdicts"][r["reference"]] = e["verdicts"].get(r["reference"], 0) + 1
        e["max_joint_diff_deg"] = max(e["max_joint_diff_deg"],
                                      *(r[f"{name}_dq_deg"] for name in solvers))
    disagree = [r for r in rows if any(r[name] != r["reference"] for name in solvers)]
    return {"summary": summary, "scenarios": per, "disagreements": disagree}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="6 steps per trajectory (smoke test)")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "parity_diffik.json"))
    args = ap.parse_args()
    res = run(args.quick)
    s = res["summary"]
    print(f"steps: {s['steps']}  reference verdicts: {s['verdicts']}")
    print(f"{'solver':<12} {'agree':>12} {'max |dq| [deg]':>16} {'max d lag [mm]':>16} "
          f"{'us/step':>9}")
    ok = True
    for name in ("osqp", "active_set"):
        r = s[name]
        print(f"{name:<12} {r['verdicts_agree']:>5}/{s['steps']:<6} "
              f"{r['max_joint_diff_deg']:>16.3e} {r['max_position_residual_diff_mm']:>16.3e} "
              f"{r['mean_step_us']:>9.1f}")
        ok &= r["verdicts_agree"] == s["steps"] and r["max_joint_diff_deg"] < 1e-4
    print(f"{'reference':<12} {'':>12} {'':>16} {'':>16} {s['reference_mean_step_us']:>9.1f}")
    print("PASS" if ok else "FAIL", "(all verdicts agree and joint differences < 1e-4 deg)")
    res["pass"] = bool(ok)
    res["quick"] = args.quick
    out = Path(args.out)
    written = write_report(out.stem, res, folder=out.parent,
                           packages=("ikstack", "numpy", "scipy", "osqp"))
    print(f"wrote {written}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
