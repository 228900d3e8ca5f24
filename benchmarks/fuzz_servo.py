"""Fuzz the servo: every reference, on every cycle, inside every limit and coupled constraint.

Closed-loop episodes on marvin_left, marvin_right, panda and ur5, with the built-in DLS and
BoxQP solvers and a faulty Python solver, drive the servo with random joint jogs, twists and
pose jumps, stale and future command stamps, missing commands, resets while moving, unusable
(NaN) states and fresh at-rest states placed inside the kinematic-margin band or against a
coupled constraint. The measured state is the previous reference (a perfectly tracking arm)
unless an event replaces it.

The checker shares no code with the servo's limit logic: it reads the chain's limits and
evaluates each constraint with plain numpy (the Marvin J6/J7 diamond is written out by hand),
and counts references that are non-finite, outside a position limit, outside a coupled
constraint, above a velocity limit, that change velocity faster than the acceleration limit
from the measured state (from the previous reference when the state is unusable), or whose
position jumps (differs from the measured position plus the reference velocity times dt by more
than 1e-6). Every count must be 0.

    python benchmarks/fuzz_servo.py --cycles 1000000     # the full run
    python benchmarks/fuzz_servo.py --cycles 20000       # a quick one
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import time
from pathlib import Path

import numpy as np

import ikstack.robots as robots
from ikstack.diffik import BoxQPSolver, DifferentialIK, DiffIKResult, DLSVelocitySolver
from ikstack.servo import (
    Action,
    JointJogCommand,
    JointState,
    PoseCommand,
    Servo,
    ServoConfig,
    TwistCommand,
)

RESULTS = Path(__file__).resolve().parent / "results"
PANDA_ACC = [15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0]
PANDA_JERK = [7500.0, 3750.0, 5000.0, 6250.0, 7500.0, 10000.0, 10000.0]
UR5_ACC = 15.0
ROBOTS = ("marvin_left", "marvin_right", "panda", "ur5")
SOLVERS = ("dls", "boxqp", "faulty")
TOL = 1e-9
COUNTS = ("nonfinite", "position", "constraint", "velocity", "acceleration", "jump")


def load(name: str):
    chain = robots.load(name)
    if name == "panda":
        chain = chain.with_limits(acceleration=PANDA_ACC, jerk=PANDA_JERK)
    elif name == "ur5":
        chain = chain.with_limits(acceleration=UR5_ACC)
    return chain


class FaultySolver(DifferentialIK):
    """A Python solver that misbehaves on purpose: huge, NaN, wrong-shaped or raising output,
    and otherwise a plain pseudo-inverse step that ignores the velocity box."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def solve(self, request):
        J = np.asarray(request.jacobian)
        n = J.shape[1]
        u = self.rng.random()
        if u < 0.002:
            raise RuntimeError("faulty solver raised")
        if u < 0.004:
            return np.full(n, np.nan)
        if u < 0.006:
            return np.zeros(n + 1)
        if u < 0.05:
            return self.rng.normal(0.0, 1e3, n)
        dq = np.linalg.pinv(J) @ np.asarray(request.task)
        return DiffIKResult(dq, True, "ok", 1)


def diamond(q):
    """Marvin's J6/J7 interference, written out: |q7| + 1.025 |q6| - 110.5 deg [rad]."""
    return abs(q[6]) + 1.025 * abs(q[5]) - math.radians(110.5)


class Checker:
    """Independent limit checks of a batch of (state, reference) pairs."""

    def __init__(self, chain, name: str):
        self.lo, self.hi = chain.lower, chain.upper
        self.vmax = chain.velocity_limits
        self.amax = chain.acceleration_limits
        self.constraints = chain.constraints
        self.marvin = name.startswith("marvin")
        self.counts = dict.fromkeys(COUNTS, 0)
        self.examples: list[dict] = []
        self.worst = {"constraint_rad": -np.inf, "accel_ratio": 0.0}

    def check(self, q_basis, dq_basis, q_ref, dq_ref, dt, notes):
        c = self.counts
        bad = np.zeros(q_ref.shape[0], dtype=bool)
        finite = np.isfinite(q_ref).all(axis=1) & np.isfinite(dq_ref).all(axis=1)
        c["nonfinite"] += int((~finite).sum())
        bad |= ~finite
        q_ref = np.where(np.isfinite(q_ref), q_ref, 0.0)
        dq_ref = np.where(np.isfinite(dq_ref), dq_ref, 0.0)
        pos = ((q_ref < self.lo - TOL) | (q_ref > self.hi + TOL)).any(axis=1)
        vel = (np.abs(dq_ref) > self.vmax * (1 + TOL) + TOL).any(axis=1)
        c["position"] += int(pos.sum())
        c["velocity"] += int(vel.sum())
        bad |= pos | vel
        dv = np.abs(dq_ref - dq_basis)
        allowed = self.amax * dt[:, None] * (1 + 1e-9) + TOL
        acc = (dv > allowed).any(axis=1)
        c["acceleration"] += int(acc.sum())
        bad |= acc
        # the reference position follows its velocity from the measured position (no jump)
        drift = np.abs(q_ref - q_basis - dq_ref * dt[:, None])
        jump = (drift > 1e-6).any(axis=1)
        c["jump"] += int(jump.sum())
        bad |= jump
        ratio = dv / (self.amax * dt[:, None])
        self.worst["accel_ratio"] = max(self.worst["accel_ratio"], float(np.nanmax(ratio)))
        g = np.full(q_ref.shape[0], -np.inf)
        for con in self.constraints:
            g = np.maximum(g, con.residual(q_ref).max(axis=-1))
        if self.marvin:
            g = np.maximum(
                g, np.abs(q_ref[:, 6]) + 1.025 * np.abs(q_ref[:, 5]) - math.radians(110.5)
            )
        c["constraint"] += int((g > TOL).sum())
        bad |= g > TOL
        for k in np.flatnonzero(bad)[: max(0, 5 - len(self.examples))]:
            self.examples.append(
                {
                    "cycle": int(k),
                    "note": notes[k],
                    "q_basis": q_basis[k].tolist(),
                    "dq_basis": dq_basis[k].tolist(),
                    "q_ref": q_ref[k].tolist(),
                    "dq_ref": dq_ref[k].tolist(),
                    "g": float(g[k]),
                }
            )
        if g.size:
            self.worst["constraint_rad"] = max(self.worst["constraint_rad"], float(g.max()))


def random_legal_state(chain, name, rng, band: bool):
    """A random at-rest state inside the hard limits and every constraint; with ``band`` one
    joint sits inside the kinematic-margin band (or against the J6/J7 diamond)."""
    lo, hi = chain.lower, chain.upper
    km = chain.kinematic_margin
    for _ in range(1000):
        q = rng.uniform(lo + km, hi - km)
        if band:
            j = int(rng.integers(chain.dof))
            if km > 0:
                d = rng.uniform(0.0, km)
            else:
                d = rng.uniform(0.0, 0.02)
            q[j] = hi[j] - d if rng.random() < 0.5 else lo[j] + d
            if name.startswith("marvin") and rng.random() < 0.5:
                # on or near the diamond's edge
                b = math.radians(110.5) - rng.uniform(0.0, 2 * km)
                q6 = rng.uniform(-min(hi[5], b / 1.025), min(hi[5], b / 1.025))
                q7 = np.sign(rng.normal()) * (b - 1.025 * abs(q6))
                q[5], q[6] = q6, np.clip(q7, lo[6], hi[6])
        if all(np.all(c.residual(q) <= 0.0) for c in chain.constraints):
            return q
    return chain.middle()


def episode(name, chain, solver_kind, cycles, rng, checker, tally):
    dt = float(rng.choice([0.001, 0.004, 0.01]))
    dt_ns = int(round(dt * 1e9))
    solver = {"dls": DLSVelocitySolver(), "boxqp": BoxQPSolver(), "faulty": FaultySolver(rng)}[
        solver_kind
    ]
    cfg = ServoConfig(command_timeout=0.1)
    servo = Servo(chain, cfg, differential_ik=solver)
    n = chain.dof
    q = random_legal_state(chain, name, rng, band=rng.random() < 0.3)
    dq = np.zeros(n)
    last_v = dq.copy()
    now = int(rng.integers(0, 10**12))
    cmd = None
    cmd_stamp = now
    basis = np.empty((cycles, n))
    qbasis = np.empty((cycles, n))
    qr = np.empty((cycles, n))
    vr = np.empty((cycles, n))
    dts = np.full(cycles, dt)
    notes: list[str] = []
    vmax = chain.velocity_limits
    for k in range(cycles):
        now += dt_ns
        u = rng.random()
        if u < 0.03 or cmd is None and u < 0.2:
            kind = rng.integers(5)
            cmd_stamp = now
            if kind == 0:
                cmd = ("jog", rng.uniform(-2, 2, n) * vmax * (rng.random() < 0.5))
                if rng.random() < 0.5:
                    v = np.zeros(n)
                    j = int(rng.integers(n))
                    if name.startswith("marvin") and rng.random() < 0.7:
                        j = int(rng.choice([5, 6]))  # toward the J6/J7 diamond
                        v[11 - j] = rng.choice([-1.0, 1.0]) * vmax[11 - j] * rng.uniform(0, 1)
                    v[j] = rng.choice([-1.0, 1.0]) * vmax[j] * rng.uniform(0.2, 2.0)
                    cmd = ("jog", v)
            elif kind == 1:
                cmd = (
                    "twist",
                    np.concatenate([rng.normal(0, 0.3, 3), rng.normal(0, 1.0, 3)]),
                    int(rng.integers(2)),
                )
            elif kind in (2, 3):
                target = random_legal_state(chain, name, rng, band=False)
                if kind == 3:  # a small jump from here
                    target = np.clip(q + rng.normal(0, 0.1, n), chain.lower, chain.upper)
                cmd = ("pose", chain.fk(target))
            else:
                cmd = None
        # events
        e = rng.random()
        state_q, state_dq = q, dq
        stamp = now
        if e < 0.002:
            servo.reset()
            tally["resets"] += 1
        elif e < 0.004 and k > 0:
            # (not on a servo's very first cycle: with no reference sent yet, the servo cannot
            # know where a joint it cannot read is)
            state_q = q.copy()
            state_q[int(rng.integers(n))] = np.nan
            tally["nan_states"] += 1
        elif e < 0.009:
            state_q = random_legal_state(chain, name, rng, band=rng.random() < 0.7)
            state_dq = np.zeros(n)
            tally["new_states"] += 1
        c_stamp = cmd_stamp
        if rng.random() < 0.01:
            c_stamp = now + int(rng.integers(1, 10**8))  # from the future
            tally["future_stamps"] += 1
        elif rng.random() < 0.01:
            c_stamp = now - int(rng.integers(10**8, 10**9))  # stale
            tally["stale_stamps"] += 1
        if cmd is None:
            command = None
        elif cmd[0] == "jog":
            command = JointJogCommand(cmd[1], c_stamp)
        elif cmd[0] == "twist":
            command = TwistCommand(cmd[1], cmd[2], c_stamp)
        else:
            command = PoseCommand(cmd[1], c_stamp)
        res = servo.step(JointState(state_q, state_dq, stamp), command, dt=dt, now_ns=now)
        usable = bool(np.isfinite(state_q).all())
        basis[k] = state_dq if usable else last_v
        qbasis[k] = state_q if usable else q
        notes.append(
            f"{res.action.name} {int(res.status)} {res.message} | "
            f"{'reset' if e < 0.002 else ''} {cmd[0] if cmd else None} dt {dt}"
        )
        qr[k] = res.reference.q
        vr[k] = res.reference.dq
        tally["reject"] += res.action == Action.REJECT
        tally["coupled_bound"] += bool(res.status & getattr(type(res.status), "COUPLED_BOUND", 0))
        tally["solver_error"] += bool(res.status & res.status.SOLVER_ERROR)
        if servo.faulted and rng.random() < 0.05:
            servo.reset()
            tally["resets"] += 1
        q = np.array(res.reference.q, dtype=np.float64)
        dq = np.array(res.reference.dq, dtype=np.float64)
        if not (np.isfinite(q).all() and np.isfinite(dq).all()):
            q = np.nan_to_num(q)
            dq = np.zeros(n)
        last_v = dq
    checker.check(qbasis, basis, qr, vr, dts, notes)
    tally["cycles"] += cycles


def run(
    total: int,
    seed: int,
    episode_len: int,
    robots_: tuple[str, ...] = ROBOTS,
    solvers: tuple[str, ...] = SOLVERS,
) -> dict:
    rng = np.random.default_rng(seed)
    combos = [(r, s) for r in robots_ for s in solvers]
    per = max(episode_len, 1)
    rows = []
    t0 = time.perf_counter()
    for i, (name, solver) in enumerate(combos):
        share = total // len(combos) + (i < total % len(combos))
        chain = load(name)
        checker = Checker(chain, name)
        tally = dict.fromkeys(
            (
                "cycles",
                "reject",
                "coupled_bound",
                "solver_error",
                "resets",
                "nan_states",
                "new_states",
                "future_stamps",
                "stale_stamps",
            ),
            0,
        )
        done = 0
        t1 = time.perf_counter()
        while done < share:
            m = min(per, share - done)
            episode(name, chain, solver, m, rng, checker, tally)
            done += m
        rows.append(
            {
                "robot": name,
                "solver": solver,
                **tally,
                **checker.counts,
                "worst_constraint_rad": checker.worst["constraint_rad"],
                "worst_accel_ratio": checker.worst["accel_ratio"],
                "examples": checker.examples,
                "seconds": time.perf_counter() - t1,
            }
        )
        r = rows[-1]
        print(
            f"| {name:12s} | {solver:6s} | {r['cycles']:8d} | "
            + " | ".join(f"{r[c]:5d}" for c in COUNTS)
            + f" | {r['coupled_bound']:7d} | {r['reject']:6d} |",
            flush=True,
        )
    totals = {c: sum(r[c] for r in rows) for c in COUNTS}
    return {
        "cycles": sum(r["cycles"] for r in rows),
        "seed": seed,
        "counts": totals,
        "rows": rows,
        "seconds": time.perf_counter() - t0,
        "machine": platform.platform(),
        "python": platform.python_version(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=20000, help="total cycles over all combos")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--episode", type=int, default=400, help="cycles per servo instance")
    ap.add_argument("--robots", default=",".join(ROBOTS))
    ap.add_argument("--solvers", default=",".join(SOLVERS))
    ap.add_argument("--out", default=str(RESULTS / "fuzz_servo.json"))
    a = ap.parse_args()
    print("| robot        | solver | cycles   | " + " | ".join(COUNTS) + " | coupled | reject |")
    print("|---|---|---|" + "---|" * len(COUNTS) + "---|---|")
    out = run(a.cycles, a.seed, a.episode, tuple(a.robots.split(",")), tuple(a.solvers.split(",")))
    print(f"total {out['cycles']} cycles in {out['seconds']:.0f} s; counts {out['counts']}")
    out["backend"] = "native"  # the C++ kernel, through its binding (the only kernel)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=1))
    if any(out["counts"].values()):
        raise SystemExit("FAIL: some reference left a limit or constraint")


if __name__ == "__main__":
    main()
