"""A small stand-in IK solver for the job tests: damped Gauss-Newton on the compiled FK and
Jacobian from a seed, then the middle of the limits, then seeded random restarts; every success
passes ikstack.ik.certify. It is deliberately simple and slow; the library's solvers replace it
in real jobs."""

from __future__ import annotations

import time

import numpy as np

from ikstack.ik import IKResult, IKStatus, certify
from ikstack.jobs.path import solve_episode
from ikstack.kinematics import fk_jacobian
from ikstack.spatial import pose_error

POS_TOL = 1e-7  # [m]
ROT_TOL = 1e-6  # [rad]


CALLS = {"n": 0}  # calls made in this process (to show batching)


def gn_frame(chain, T, seed):
    """Solve targets ``T (K, 4, 4)`` from seeds ``(K, dof)`` or None, one row at a time."""
    CALLS["n"] += 1
    if len(T) > 1:
        rows = [
            _gn_one(chain, T[k : k + 1], None if seed is None else seed[k : k + 1])
            for k in range(len(T))
        ]
        return IKResult(
            *(
                np.concatenate([getattr(r, f) for r in rows])
                for f in ("q", "success", "position_error", "rotation_error", "status")
            ),
            "standin_gn",
            np.zeros(len(T), dtype=np.int64),
            np.zeros(len(T), dtype=np.int64),
        )
    return _gn_one(chain, T, seed)


def _gn_one(chain, T, seed):
    starts = [] if seed is None else [np.asarray(seed, dtype=np.float64)[0]]
    starts.append(chain.middle())
    rng = np.random.default_rng(0)
    starts += list(chain.random_q(rng, 12))
    q = starts[0]
    for q0 in starts:
        q = q0.copy()
        for _ in range(40):
            Tq, J = fk_jacobian(chain, q)
            e = pose_error(T[0], Tq)
            if np.linalg.norm(e[:3]) < 1e-10 and np.linalg.norm(e[3:]) < 1e-10:
                break
            dq = J.T @ np.linalg.solve(J @ J.T + 1e-6 * np.eye(6), e)
            q = chain.clip(q + dq)
        ok, pe, re = certify(chain, q[None], T, POS_TOL, ROT_TOL)
        if ok[0]:
            break
    status = np.array([IKStatus.SUCCESS if ok[0] else IKStatus.ITERATION_LIMIT], dtype=np.int64)
    z = np.zeros(1, dtype=np.int64)
    return IKResult(q[None].copy(), ok.copy(), pe, re, status, "standin_gn", z, z.copy())


def standin_factory(config):
    """A picklable PathSolverFactory running the seeded path loop with :func:`gn_frame`."""
    chain, method, max_joint_step = config.chain, config.method, config.max_joint_step

    def path(T_path, seed):
        return solve_episode(chain, T_path, seed, method, max_joint_step, frame_solver=gn_frame)

    return path


def slow_factory(config):
    """Like :func:`standin_factory` but sleeps 0.5 s per episode (for kill tests)."""
    inner = standin_factory(config)

    def path(T_path, seed):
        time.sleep(0.5)
        return inner(T_path, seed)

    return path


def liar_factory(config):
    """A broken solver for the job's gate: claims success everywhere, but frame 0 is NaN, frame 1
    is outside the limits, and frame 2 is the wrong configuration with its true FK errors."""

    def path(T_path, seed):
        chain = config.chain
        good = standin_factory(config)(T_path, seed)
        q = good.q.copy()
        q[0] = np.nan
        q[1] = chain.upper + 0.5
        q[2] = chain.middle()
        from ikstack.ik import fk_errors

        pe, re = fk_errors(chain, np.nan_to_num(q), T_path)
        n = len(T_path)
        return IKResult(q, np.ones(n, dtype=bool), pe, re, np.zeros(n, dtype=np.int64), "liar")

    return path


SEEN: list = []


def recording_factory(config):
    """standin_factory that records the backend and device it was built for."""
    SEEN.append((config.backend, config.device))
    return standin_factory(config)
