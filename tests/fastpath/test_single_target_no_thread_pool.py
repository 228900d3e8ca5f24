"""A single-target call never enters numba's thread pool (on a busy machine, waking the pool's
threads costs a scheduler tick or more: 16 to 32 ms measured for the locked-joint path against
0.25 ms on one thread). Each family, mode and solver is called once per target in a fresh
interpreter, which must end with the pool never launched."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import numpy as np
    import numba.np.ufunc.parallel as pool
    import ikstack.robots as robots
    from ikstack.ik import solve_ik
    from ikstack.ik.analytic import AnalyticIK
    from ikstack.ik.numerical import DampedLeastSquaresIK, LevenbergMarquardt

    def target(chain):
        q = chain.middle() + 0.1
        return chain.fk(np.where(np.isfinite(q), q, 0.1))

    calls = []
    for name, mode in CASES:
        chain = robots.load(name)
        T = target(chain)
        if mode == "auto":
            r = solve_ik(chain, T)
        elif mode == "lm":
            r = LevenbergMarquardt(chain).solve(T)
        elif mode == "dls":
            r = DampedLeastSquaresIK(chain).solve(T)
        elif mode.endswith("+all"):
            r = AnalyticIK(chain, mode=mode[:-4]).solve(T, return_all=True)
        else:
            r = AnalyticIK(chain, mode=mode).solve(T)
            r = AnalyticIK(chain, mode=mode).solve(np.stack([T, T]))
        calls.append((name, mode, r.method, bool(r.success.all())))
        if pool._is_initialized:
            raise SystemExit(f"thread pool launched by {name} {mode}: {calls[-1]}")
    print(calls)
""")

CASES = {
    "6r": [("ur5", "strict"), ("ur5", "strict+all"), ("ur5", "auto"), ("arx_x5", "near")],
    "srs": [("iiwa14", "strict"), ("iiwa14", "strict+all"), ("marvin_left", "near")],
    "locked": [("panda", "strict"), ("panda", "auto"), ("rizon4", "general")],
    "numerical": [("panda", "lm"), ("iiwa14", "dls"), ("rizon4", "auto")],
}


@pytest.mark.parametrize("group", sorted(CASES))
def test_single_target_calls_never_launch_the_thread_pool(group):
    code = f"CASES = {CASES[group]!r}\n" + SCRIPT
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=1200
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "True" in proc.stdout
