"""Stand-in path solvers and process helpers for the reliability tests.

The stand-ins need no compiled code: they return the middle of the limits for every frame
(reported as not solved, with made-up but deterministic errors), so a job's machinery (reading,
writing, workers, summaries) is exercised in seconds. Real solving is tested elsewhere.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np

from ikstack.ik import IKResult, IKStatus


def middle_factory(config):
    """A picklable PathSolverFactory: every frame is the middle of the limits, not solved."""
    chain = config.chain

    def path(T_path, seed):
        n = len(T_path)
        q = np.tile(chain.clip(chain.middle()), (n, 1))
        err = np.linalg.norm(T_path[:, :3, 3], axis=1)  # deterministic, not a real FK error
        status = np.full(n, int(IKStatus.UNREACHABLE), dtype=np.int64)
        return IKResult(q, np.zeros(n, dtype=bool), err, err.copy(), status, "middle")

    return path


def solved_factory(config):
    """Like :func:`middle_factory` but reports every frame solved with zero error (the job's
    gate only checks limits and the reported errors)."""
    inner = middle_factory(config)

    def path(T_path, seed):
        r = inner(T_path, seed)
        n = len(T_path)
        z = np.zeros(n)
        return IKResult(
            r.q, np.ones(n, dtype=bool), z, z.copy(), np.zeros(n, dtype=np.int64), "solved"
        )

    return path


def slow_factory(config):
    """:func:`middle_factory` that takes 0.4 s per episode (for kill tests)."""
    inner = middle_factory(config)

    def path(T_path, seed):
        time.sleep(0.4)
        return inner(T_path, seed)

    return path


def raising_factory(config):
    """A path solver that fails in the worker with an unexpected error."""

    def path(T_path, seed):
        raise RuntimeError(f"boom from worker {os.getpid()}")

    return path


def group_processes(pgid: int) -> list[tuple[int, str]]:
    """Live (non-zombie) processes of a process group: (pid, command line)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state not in ("Z", "X"):
            out.append((int(d.name), cmd))
    return out


def children_of(pid: int) -> list[int]:
    """Live child processes of ``pid``."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid and fields[0] not in ("Z", "X"):
            out.append(int(d.name))
    return out


def outputs(folder: Path) -> dict[str, bytes]:
    """Every episode output below ``folder`` (not the summary), by relative path."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "summary.json"
    }
