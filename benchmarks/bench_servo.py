"""Servo step latency on Panda: ikstack's kernels (DLS and BoxQP) beside pink, mink and PlaCo.

One "step" is everything a 1 kHz loop pays per cycle for a 6-D pose task at the flange with
joint position and velocity limits:

* ikstack: ``Servo.step`` (FK, Jacobian, SVD, condition number, velocity / acceleration /
  braking bounds, the solver, singularity scaling, integration, re-validation), on the
  C++ kernel through its binding;
* pink: ``Configuration(...)`` (pinocchio FK + Jacobians) and ``solve_ik`` with daqp,
  ``ConfigurationLimit`` and ``VelocityLimit``;
* mink: ``Configuration.update`` (MuJoCo kinematics) and ``solve_ik`` with daqp,
  ``ConfigurationLimit`` and ``VelocityLimit``;
* PlaCo: ``update_kinematics`` and ``KinematicsSolver.solve`` with joint and velocity limits.

The target moves on a 5 cm circle at 0.2 Hz so every solver keeps working. Each peer is
optional: a missing one is reported, not fatal. Prints a table and writes
``benchmarks/results/bench_servo.json``.

Usage: ``python benchmarks/bench_servo.py [--quick] [--steps N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
import xml.etree.ElementTree as ET
from importlib import metadata
from pathlib import Path

import numpy as np

import ikstack.robots as robots
from ikstack.diffik import BoxQPSolver, DLSVelocitySolver
from ikstack.errors import IKStackError
from ikstack.servo import JointState, PoseCommand, Servo, ServoConfig

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "bench_servo.json"
PANDA_ACC = [15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0]  # Franka's published limits [rad/s^2]
Q0 = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.785])
DT = 0.001
FRAME = "panda_link8"


def targets(T0: np.ndarray, steps: int) -> list[np.ndarray]:
    out = []
    for k in range(steps):
        a = 2 * np.pi * 0.2 * k * DT
        T = T0.copy()
        T[:3, 3] += 0.05 * np.array([np.cos(a) - 1.0, np.sin(a), 0.3 * np.sin(2 * a)])
        out.append(T)
    return out


def stats(ns: list[int], warmup: int) -> dict[str, float]:
    us = np.asarray(ns[warmup:], dtype=np.float64) / 1e3
    return {
        "median_us": float(np.median(us)),
        "p99_us": float(np.percentile(us, 99)),
        "mean_us": float(us.mean()),
        "max_us": float(us.max()),
        "samples": int(us.size),
    }


def track_error(fk, q: np.ndarray, T: np.ndarray) -> float:
    return float(np.linalg.norm(fk(q)[:3, 3] - T[:3, 3]))


def bench_ikstack(solver, steps: int, warmup: int) -> dict:
    panda = robots.load("panda").with_limits(acceleration=PANDA_ACC)
    servo = Servo(panda, ServoConfig(), differential_ik=solver)
    q, dq = Q0.copy(), np.zeros(7)
    goal = targets(panda.fk(Q0), steps)
    ns, errs = [], []
    for k in range(steps):
        now = k * 1_000_000
        state, cmd = JointState(q, dq, now), PoseCommand(goal[k], now)
        t0 = time.perf_counter_ns()
        r = servo.step(state, cmd, DT, now)
        ns.append(time.perf_counter_ns() - t0)
        q, dq = r.reference.q, r.reference.dq
        errs.append(track_error(panda.fk, q, goal[k]))
    return {**stats(ns, warmup), "tracking_error_m": float(np.median(errs[warmup:]))}


def bench_marvin(solver, steps: int, warmup: int, push: bool) -> dict:
    """Marvin (left) with its J6/J7 diamond: a circle well inside it, or (``push``) a fixed
    pose beyond it, which the servo approaches and then holds against the constraint (the
    median is over the cycles in which the constraint bound)."""
    marvin = robots.load("marvin_left")
    servo = Servo(marvin, ServoConfig(), differential_ik=solver)
    q0 = np.radians([0.0, 30.0, 0.0, -60.0, 0.0, 40.0, 50.0])
    q, dq = q0.copy(), np.zeros(7)
    if push:
        beyond = q0.copy()
        beyond[6] = np.radians(85.0)  # 41 + 85 = 126 deg against 110.5
        goal = [marvin.fk(beyond)] * steps
    else:
        goal = targets(marvin.fk(q0), steps)
    ns, bound = [], []
    flag = type(servo.step(JointState(q, dq, 0), None, DT, 0).status).COUPLED_BOUND
    for k in range(steps):
        now = (k + 1) * 1_000_000
        state, cmd = JointState(q, dq, now), PoseCommand(goal[k], now)
        t0 = time.perf_counter_ns()
        r = servo.step(state, cmd, DT, now)
        ns.append(time.perf_counter_ns() - t0)
        bound.append(bool(r.status & flag))
        q, dq = r.reference.q, r.reference.dq
    sel = (
        [t for t, b in zip(ns[warmup:], bound[warmup:], strict=True) if b] if push else ns[warmup:]
    )
    out = stats(sel if sel else ns[warmup:], 0)
    out["bound_fraction"] = float(np.mean(bound[warmup:]))
    out["tracking_error_m"] = track_error(marvin.fk, q, goal[-1])
    return out


def chain_urdf() -> str:
    """The bundled Panda URDF cut at the flange, with unit inertials (MuJoCo needs mass)."""
    src = Path(robots.__file__).resolve().parent / "data" / "panda.urdf"
    root = ET.parse(src).getroot()
    keep = {f"panda_link{i}" for i in range(9)}
    for el in list(root):
        if el.tag == "link" and el.get("name") not in keep:
            root.remove(el)
        if el.tag == "joint" and el.find("child").get("link") not in keep:
            root.remove(el)
    for link in root.findall("link"):
        inertial = ET.SubElement(link, "inertial")
        ET.SubElement(inertial, "mass", value="1.0")
        ET.SubElement(
            inertial, "inertia", ixx="0.01", iyy="0.01", izz="0.01", ixy="0", ixz="0", iyz="0"
        )
    mj = ET.SubElement(root, "mujoco")
    ET.SubElement(mj, "compiler", discardvisual="true", fusestatic="false")
    path = Path(tempfile.mkdtemp()) / "panda_arm.urdf"
    ET.ElementTree(root).write(path)
    return str(path)


def bench_pink(urdf: str, steps: int, warmup: int) -> dict:
    import pinocchio as pin
    from pink import Configuration, solve_ik
    from pink.limits import ConfigurationLimit, VelocityLimit
    from pink.tasks import FrameTask

    model = pin.buildModelFromUrdf(urdf)
    data = model.createData()
    task = FrameTask(FRAME, position_cost=1.0, orientation_cost=1.0)
    limits = [ConfigurationLimit(model), VelocityLimit(model)]
    q = Q0.copy()
    conf = Configuration(model, data, q)
    T0 = conf.get_transform_frame_to_world(FRAME).homogeneous
    goal = targets(T0, steps)
    ns, errs = [], []
    for k in range(steps):
        t0 = time.perf_counter_ns()
        task.set_target(pin.SE3(goal[k][:3, :3], goal[k][:3, 3]))
        conf = Configuration(model, data, q)
        v = solve_ik(conf, [task], DT, solver="daqp", limits=limits, safety_break=False)
        ns.append(time.perf_counter_ns() - t0)
        q = pin.integrate(model, q, v * DT)
        pin.framesForwardKinematics(model, data, q)
        errs.append(
            float(np.linalg.norm(data.oMf[model.getFrameId(FRAME)].translation - goal[k][:3, 3]))
        )
    return {**stats(ns, warmup), "tracking_error_m": float(np.median(errs[warmup:]))}


def bench_mink(urdf: str, steps: int, warmup: int) -> dict:
    import mink
    import mujoco

    model = mujoco.MjModel.from_xml_path(urdf)
    conf = mink.Configuration(model)
    conf.update(Q0.copy())
    task = mink.FrameTask(FRAME, "body", position_cost=1.0, orientation_cost=1.0)
    vel = {f"panda_joint{i + 1}": v for i, v in enumerate([2.175] * 4 + [2.61] * 3)}
    limits = [mink.ConfigurationLimit(model), mink.VelocityLimit(model, vel)]
    T0 = conf.get_transform_frame_to_world(FRAME, "body").as_matrix()
    goal = targets(T0, steps)
    ns, errs = [], []
    for k in range(steps):
        t0 = time.perf_counter_ns()
        task.set_target(mink.SE3.from_matrix(goal[k]))
        v = mink.solve_ik(conf, [task], DT, "daqp", limits=limits)
        ns.append(time.perf_counter_ns() - t0)
        conf.integrate_inplace(v, DT)
        p = conf.get_transform_frame_to_world(FRAME, "body").translation()
        errs.append(float(np.linalg.norm(p - goal[k][:3, 3])))
    return {**stats(ns, warmup), "tracking_error_m": float(np.median(errs[warmup:]))}


def bench_placo(urdf: str, steps: int, warmup: int) -> dict:
    import placo

    robot = placo.RobotWrapper(urdf, placo.Flags.ignore_collisions)
    for i, v in enumerate(Q0):
        robot.set_joint(f"panda_joint{i + 1}", float(v))
    robot.update_kinematics()
    solver = placo.KinematicsSolver(robot)
    solver.mask_fbase(True)
    solver.enable_joint_limits(True)
    solver.enable_velocity_limits(True)
    solver.dt = DT
    T0 = robot.get_T_world_frame(FRAME)
    task = solver.add_frame_task(FRAME, T0)
    task.configure(FRAME, "soft", 1.0, 1.0)
    goal = targets(T0, steps)
    ns, errs = [], []
    for k in range(steps):
        t0 = time.perf_counter_ns()
        task.T_world_frame = goal[k]
        solver.solve(True)
        robot.update_kinematics()
        ns.append(time.perf_counter_ns() - t0)
        errs.append(float(np.linalg.norm(robot.get_T_world_frame(FRAME)[:3, 3] - goal[k][:3, 3])))
    return {**stats(ns, warmup), "tracking_error_m": float(np.median(errs[warmup:]))}


def version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a few hundred steps (smoke test)")
    ap.add_argument("--steps", type=int, default=None)
    args = ap.parse_args()
    steps = args.steps or (300 if args.quick else 20000)
    warmup = min(200, steps // 3)
    urdf = chain_urdf()
    rows: dict[str, dict] = {}
    marvin: dict[str, dict] = {}
    try:
        for sname, make in (
            ("DampedLeastSquares", DLSVelocitySolver),
            ("BoxQPSolver", BoxQPSolver),
        ):
            rows[f"ikstack {sname}"] = bench_ikstack(make(), steps, warmup)
            for where, push in (("circle inside J6/J7", False), ("held at J6/J7", True)):
                marvin[f"marvin_left {sname}, {where}"] = bench_marvin(make(), steps, warmup, push)
    except IKStackError as exc:  # the C++ module is not built
        rows["ikstack"] = {"error": str(exc)}
    for name, fn in (
        ("pink (daqp)", bench_pink),
        ("mink (daqp)", bench_mink),
        ("PlaCo", bench_placo),
    ):
        try:
            rows[name] = fn(urdf, steps, warmup)
        except ImportError as exc:
            rows[name] = {"error": f"not installed: {exc.name}"}
        except Exception as exc:  # a peer's own failure is reported, not fatal
            rows[name] = {"error": f"{type(exc).__name__}: {exc}"}
    peers = {k: v for k, v in rows.items() if "median_us" in v and not k.startswith("ikstack")}
    print(f"Servo step latency, Panda 6-D pose task, dt = {DT} s, {steps} steps ({warmup} warm-up)")
    print(f"{'solver':<35} {'median us':>10} {'p99 us':>9} {'track err m':>12}  ratios")
    for name, r in rows.items():
        if "error" in r:
            print(f"{name:<35} {r['error']}")
            continue
        ratio = ""
        if name.startswith("ikstack"):
            parts = [
                f"{p.split()[0]} x{v['median_us'] / r['median_us']:.1f}" for p, v in peers.items()
            ]
            ratio = "speed-up vs " + ", ".join(parts) if parts else ""
        print(
            f"{name:<35} {r['median_us']:10.1f} {r['p99_us']:9.1f} "
            f"{r['tracking_error_m']:12.2e}  {ratio}"
        )
    print(
        "Marvin with its J6/J7 constraint (medians over the cycles in which it bound, for 'held')"
    )
    for name, r in marvin.items():
        print(
            f"{name:<63} {r['median_us']:10.1f} {r['p99_us']:9.1f}  bound in "
            f"{100 * r['bound_fraction']:.0f}% of cycles"
        )
    note = (
        "tracking error: ikstack servos with pose_gain 10 1/s (a 0.1 s time constant) under "
        "acceleration limits; the peers step onto the target each cycle (gain 1/dt)"
    )
    print(note)
    out = {
        "benchmark": "bench_servo",
        "note": note,
        "task": "Panda flange 6-D pose on a moving target; position + velocity limits "
        "(ikstack adds acceleration and braking bounds)",
        "dt_s": DT,
        "steps": steps,
        "warmup": warmup,
        "results": rows,
        "marvin": marvin,
        "versions": {
            d: version(d)
            for d in ("numpy", "numba", "pin", "pin-pink", "mink", "mujoco", "placo", "daqp")
        },
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "processor": platform.processor(),
            "cpus": os.cpu_count(),
        },
    }
    path = RESULTS.with_name("bench_servo-quick.json") if args.quick else RESULTS
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2))
    print(f"wrote {path.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
