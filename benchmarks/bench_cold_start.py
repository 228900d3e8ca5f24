"""Cold start: how long a new user waits for a first answer, from an empty numba cache.

Each path runs in a fresh Python process twice with the same, initially empty, numba cache
directory (``NUMBA_CACHE_DIR`` set to a new temporary directory per path): the first run
compiles whatever the path needs, the second loads it from the cache. The figure is the
process's wall time, interpreter start and imports included (what a user waits for).

Paths: ``ikstack --help`` and every subcommand's ``--help``; the README's main command
(``ikstack solve --robot ur5 sample:ur5 -o out/``); a first ``solve_ik`` on Panda and on UR5;
a first servo step (Panda, BoxQP; the servo runs on the C++ kernel) with its target from
ikstack's FK (compiled on first use) and from the C++ chain's FK (nothing compiled);
``ikstack servo-demo --robot ur5``; the examples; the README's
Python blocks (run as one script, in order).

The machine may be shared: the one-minute load average is recorded before each run and
printed beside its figure, with the CPU time of the run (the process and the processes it
started: on a loaded machine a steadier measure of the work than the wall time). Prints a
table and writes ``benchmarks/results/bench_cold_start.json`` (``--label`` names the file,
e.g. ``--label before``).

``--profile`` runs each path once from an empty cache and lists the functions whose
compilation took longest (self time: nested compilations of callees subtracted); the JSON
lists every function the path compiles (in this process; the count is the path's compile
budget to watch).

Usage: ``python benchmarks/bench_cold_start.py [--quick] [--only NAME ...] [--label L]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"

SUBCOMMANDS = (
    "solve",
    "ik",
    "fk",
    "robots",
    "validate",
    "servo-demo",
    "decode",
    "warmup",
    "view",
    "export",
)

PANDA_SOLVE_IK = """
import numpy as np
import ikstack
from ikstack import robots
panda = robots.load("panda")
T = ikstack.fk(panda, panda.random_q(np.random.default_rng(0), 100))
res = ikstack.solve_ik(panda, T)
print(int(np.count_nonzero(res.success)), "of", len(T))
"""

UR5_SOLVE_IK = PANDA_SOLVE_IK.replace('"panda"', '"ur5"').replace("panda", "ur5")

# one target, (4, 4): the single-target path (its own compiled entry)
UR5_SOLVE_ONE = """
import numpy as np
import ikstack
from ikstack import robots
ur5 = robots.load("ur5")
T = ikstack.fk(ur5, ur5.random_q(np.random.default_rng(0), 1))[0]
res = ikstack.solve_ik(ur5, T)
print(bool(res.success))
"""

SERVO_STEP = """
import numpy as np
from ikstack import robots
from ikstack.diffik import BoxQPSolver
from ikstack.servo import JointState, PoseCommand, Servo, ServoConfig
panda = robots.load("panda").with_limits(acceleration=[15, 7.5, 10, 12.5, 15, 20, 20])
servo = Servo(panda, ServoConfig(), differential_ik=BoxQPSolver())
q = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.785])
T = panda.fk(q)
T[:3, 3] += [0.01, 0.0, 0.0]
r = servo.step(JointState(q, np.zeros(7), 0), PoseCommand(T, 0), 0.001, 0)
print(r.action.name)
"""

# the same step with the target pose from the C++ chain's FK, so nothing in the path is
# compiled on first use
SERVO_STEP_NATIVE = """
import numpy as np
from ikstack import _native, robots
from ikstack.diffik import BoxQPSolver
from ikstack.servo import JointState, PoseCommand, Servo, ServoConfig
panda = robots.load("panda").with_limits(acceleration=[15, 7.5, 10, 12.5, 15, 20, 20])
servo = Servo(panda, ServoConfig(), differential_ik=BoxQPSolver())
q = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.785])
c = _native.Chain.from_arrays(list(panda.joint_names), [t.name.lower() for t in panda.joint_types],
                              panda.origins, panda.axes, T_last_tip=panda.T_last_tip,
                              T_tip_tcp=panda.T_tip_tcp)
T = c.fk(q)
T[:3, 3] += [0.01, 0.0, 0.0]
r = servo.step(JointState(q, np.zeros(7), 0), PoseCommand(T, 0), 0.001, 0)
print(r.action.name)
"""


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "ikstack.cli.main", *args]


def _py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def paths(workdir: Path, quick: bool) -> dict[str, list[str]]:
    """name -> argv of every measured path (``workdir`` receives the outputs)."""
    out: dict[str, list[str]] = {"ikstack --help": _cli("--help")}
    for sub in SUBCOMMANDS:
        out[f"ikstack {sub} --help"] = _cli(sub, "--help")
    if quick:
        return out
    out["ikstack solve --robot ur5 sample:ur5 -o out/ (README)"] = _cli(
        "solve", "--robot", "ur5", "sample:ur5", "-o", str(workdir / "out"), "--overwrite"
    )
    out["first solve_ik on Panda (100 poses)"] = _py(PANDA_SOLVE_IK)
    out["first solve_ik on UR5 (100 poses)"] = _py(UR5_SOLVE_IK)
    out["first solve_ik on UR5 (one pose)"] = _py(UR5_SOLVE_ONE)
    out["first servo step (Panda, BoxQP, target from ikstack.fk)"] = _py(SERVO_STEP)
    out["first servo step (Panda, BoxQP, target from C++ FK)"] = _py(SERVO_STEP_NATIVE)
    out["ikstack servo-demo --robot ur5"] = _cli("servo-demo", "--robot", "ur5")
    for ex in sorted((ROOT / "examples").glob("*.py")):
        out[f"examples/{ex.name}"] = [sys.executable, str(ex)]
    blocks = re.findall(
        r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(), flags=re.S | re.M
    )
    script = workdir / "readme_blocks.py"
    # the Warp block asks for CUDA (an error on a machine without a GPU): left out, as in the
    # README's test
    script.write_text("\n".join(b for b in blocks if "ikstack.backends.warp" not in b))
    out["README Python blocks, CPU (in order, one process)"] = [sys.executable, str(script)]
    return out


def load1() -> float:
    return os.getloadavg()[0]


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_once(argv: list[str], env: dict[str, str], timeout: float) -> dict:
    before = load1()
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    try:
        p = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
        rc, err = p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        rc, err = None, "timeout"
    wall = time.perf_counter() - t0
    cpu = _children_cpu() - cpu0  # the process and every process it started and waited for
    notice = [ln for ln in err.splitlines() if ln.startswith("ikstack: compiling")]
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "rc": rc,
        "load1_before": round(before, 2),
        "load1_after": round(load1(), 2),
        "compile_notices": len(notice),
        "stderr_tail": err[-400:] if rc else "",
    }


def measure(name: str, argv: list[str], timeout: float, runs: int) -> dict:
    cache = Path(tempfile.mkdtemp(prefix="ikstack-cold-"))
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    try:
        res = [run_once(argv, env, timeout) for _ in range(runs)]
        n_files = sum(1 for _ in cache.rglob("*.nbi"))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return {"path": name, "argv": argv[1:], "runs": res, "cache_index_files": n_files}


PROFILE_CHILD = r"""
import json, runpy, sys, time
from numba.core import event
stack, rows = [], []
class L(event.Listener):
    def on_start(self, ev):
        stack.append([time.perf_counter(), 0.0])
    def on_end(self, ev):
        t0, child = stack.pop()
        dur = time.perf_counter() - t0
        if stack:
            stack[-1][1] += dur
        d = ev.data["dispatcher"]
        name = getattr(d.py_func, "__module__", "?") + "." + d.py_func.__qualname__
        rows.append({"function": name, "args": str(ev.data["args"])[:200],
                     "total_s": dur, "self_s": dur - child, "top": not stack})
event.register("numba:compile", L())
out, kind, target, *rest = sys.argv[1:]
sys.argv = [target, *rest]
try:
    if kind == "module":
        runpy.run_module(target, run_name="__main__")
    elif kind == "code":
        exec(compile(target, "<path>", "exec"), {"__name__": "__main__"})
    else:
        runpy.run_path(target, run_name="__main__")
except SystemExit:
    pass
finally:
    json.dump(rows, open(out, "w"))
"""


def profile(name: str, argv: list[str], timeout: float, top: int) -> dict:
    cache = Path(tempfile.mkdtemp(prefix="ikstack-cold-"))
    rows_file = cache / "rows.json"
    if argv[1:3] == ["-m", "ikstack.cli.main"]:
        child = ["module", "ikstack.cli.main", *argv[3:]]
    elif argv[1] == "-c":
        child = ["code", argv[2]]
    else:
        child = ["path", *argv[1:]]
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache / "numba"))
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", PROFILE_CHILD, str(rows_file), *child],
        env=env,
        cwd=ROOT,
        timeout=timeout,
    )
    wall = time.perf_counter() - t0
    rows = json.loads(rows_file.read_text()) if rows_file.exists() else []
    shutil.rmtree(cache, ignore_errors=True)
    by_fn: dict[str, dict] = {}
    for r in rows:
        e = by_fn.setdefault(
            r["function"],
            {
                "function": r["function"],
                "self_s": 0.0,
                "total_top_s": 0.0,
                "compilations": 0,
                "signatures": [],
            },
        )
        e["self_s"] += r["self_s"]
        if len(e["signatures"]) < 4:
            e["signatures"].append(r["args"])
        e["compilations"] += 1
        if r["top"]:
            e["total_top_s"] += r["total_s"]
    ranked = sorted(by_fn.values(), key=lambda e: -e["self_s"])
    compile_total = sum(r["total_s"] for r in rows if r["top"])
    print(
        f"{name}: wall {wall:.1f} s, compiling {compile_total:.1f} s in {len(rows)} "
        f"compilations of {len(by_fn)} functions (load {load1():.2f})"
    )
    print(f"{'self s':>8} {'top-level s':>11} {'n':>3}  function")
    for e in ranked[:top]:
        print(
            f"{e['self_s']:8.2f} {e['total_top_s']:11.2f} {e['compilations']:3d}  {e['function']}"
        )
    own = sorted(e["function"] for e in ranked if e["function"].startswith("ikstack."))
    return {
        "path": name,
        "wall_s": wall,
        "compile_s": compile_total,
        "load1": load1(),
        "compilations": len(rows),
        "functions_compiled": len(by_fn),
        "ikstack_functions": own,
        "functions": ranked,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the --help paths only")
    ap.add_argument(
        "--only", nargs="*", default=None, help="paths whose name contains any of these words"
    )
    ap.add_argument("--runs", type=int, default=2, help="runs per path (1: first run only)")
    ap.add_argument("--timeout", type=float, default=900.0, help="per run [s]")
    ap.add_argument("--label", default="", help="results file suffix (e.g. before / after)")
    ap.add_argument(
        "--profile",
        action="store_true",
        help="list compile time per function instead of timing runs",
    )
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="ikstack-cold-out-"))
    todo = paths(work, args.quick)
    if args.only:
        todo = {k: v for k, v in todo.items() if any(w.lower() in k.lower() for w in args.only)}
    if args.profile:
        prof = [profile(k, v, args.timeout, args.top) for k, v in todo.items()]
        name = f"cold_start_profile{'_' + args.label if args.label else ''}.json"
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / name).write_text(
            json.dumps([dict(p, functions=p["functions"][:60]) for p in prof], indent=1) + "\n"
        )
        return

    rows = []
    print(f"{'path':58} {'first s':>8} {'cpu s':>6} {'load':>5} {'second s':>9} {'load':>5}  rc")
    for name, argv in todo.items():
        r = measure(name, argv, args.timeout, args.runs)
        rows.append(r)
        first = r["runs"][0]
        second = r["runs"][1] if len(r["runs"]) > 1 else None
        sec = f"{second['wall_s']:9.2f} {second['load1_before']:5.2f}" if second else " " * 15
        rcs = ",".join(str(x["rc"]) for x in r["runs"])
        print(
            f"{name[:58]:58} {first['wall_s']:8.2f} {first['cpu_s']:6.1f} "
            f"{first['load1_before']:5.2f} {sec}  {rcs}",
            flush=True,
        )
        for x in r["runs"]:
            if x["rc"]:
                print(
                    "    " + x["stderr_tail"].strip().splitlines()[-1][:200]
                    if x["stderr_tail"].strip()
                    else "    (no stderr)"
                )
    shutil.rmtree(work, ignore_errors=True)
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    info = {
        "benchmark": "cold_start",
        "label": args.label,
        "commit": head,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "note": "wall time of a fresh process; the machine is "
        "shared, load1 is the 1-minute load average before the run",
        "quick": args.quick,
        "rows": rows,
    }
    RESULTS.mkdir(exist_ok=True)
    suffix = re.sub(r"[^A-Za-z0-9_-]", "_", args.label)
    name = f"bench_cold_start{'_' + suffix if suffix else ''}{'-quick' if args.quick else ''}.json"
    (RESULTS / name).write_text(json.dumps(info, indent=1) + "\n")
    print(f"wrote {RESULTS / name}")


if __name__ == "__main__":
    main()
