"""The unit of work every engine runs: read an episode, solve it as a path, write the result.

Everything here is a pure function of its arguments, so the local process pool and Ray produce
the same bytes for the same episode.
"""

from __future__ import annotations

import importlib.util
import math
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ikstack.backends import choose
from ikstack.errors import (
    DatasetError,
    IKStackError,
    InputError,
    MissingExtraError,
    ShapeError,
    StorageError,
)
from ikstack.ik import IKStatus, certify, fk_errors
from ikstack.jobs.episode import SolvedEpisode
from ikstack.jobs.formats import read_episode, read_solved, write_solved
from ikstack.jobs.path import PathSolver, PathSolverFactory, check_method
from ikstack.model import Chain
from ikstack.vocabulary import StrEnum


@dataclass(frozen=True)
class SolveConfig:
    """What to solve with: the chain, the method and the job's final FK gate.

    Attributes:
        chain: the arm; targets are ``T_base_tcp`` of this chain.
        method: ``auto`` (analytic where the family allows, numerical otherwise),
            ``analytic`` or ``numerical``.
        max_joint_step: largest joint change between consecutive frames [rad or m]; None
            for no limit beyond the solver's own continuity.
        backend, device: ``numpy``/``cpu`` or ``warp``/``cpu|cuda``.
        position_tolerance: [m] and rotation_tolerance: [rad] of the job's FK gate, applied
            after the solver's own certification (a frame must pass both).
        recertify: run FK again on every frame instead of gating on the solver's reported
            FK errors (one extra FK per frame; for solvers you do not trust).
        path_solver_factory: ``factory(config) -> path solver``, called once in each worker;
            None for the library's (numpy backend only). Must be picklable (a module-level
            function) for the process pool and Ray. It receives ``backend`` and ``device``.
        token: identifies the job so workers build the solver once per process.
        fail_fast: stop the job at the first episode that cannot be converted (a malformed
            file raises its :class:`DatasetError`); by default such an episode is recorded
            with its error and the others are converted.
    """

    chain: Chain
    method: str = "auto"
    max_joint_step: float | None = None
    backend: str = "numpy"
    device: str = "cpu"
    position_tolerance: float = 1e-4
    rotation_tolerance: float = 1e-3
    recertify: bool = False
    path_solver_factory: PathSolverFactory | None = None
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    fail_fast: bool = False

    def __post_init__(self) -> None:
        check_method(self.method)
        check_backend(self.backend, self.device)
        if self.max_joint_step is not None and not (
            math.isfinite(self.max_joint_step) and self.max_joint_step > 0
        ):
            raise InputError(
                f"max_joint_step must be a positive number [rad]; got {self.max_joint_step!r}"
            )
        for name in ("position_tolerance", "rotation_tolerance"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v > 0):
                raise InputError(f"{name} must be positive and finite; got {v!r}")


def check_backend(backend: str, device: str) -> None:
    """Validate a backend/device pair through the backend registry; Warp must be installed,
    and a CUDA device must exist, before a job starts.

    Raises:
        InputError: an unknown name, or ``cuda`` with the numpy backend.
        MissingExtraError: ``warp`` chosen without warp-lang (extra ``warp``).
        DeviceUnavailableError: ``cuda`` asked for on a machine without a GPU.
    """
    choose(backend, device)
    if backend == "warp":
        if importlib.util.find_spec("warp") is None:
            raise MissingExtraError("warp-lang", "warp")
        from ikstack.backends.warp.runtime import device as warp_device

        warp_device(device)


@dataclass(frozen=True)
class EpisodeTask:
    """One episode to convert: input file, output file and a display name."""

    name: str
    input_path: str
    output_path: str


class SolveStatus(StrEnum):
    """Why an episode or a solve job is (not) a success (a ``str``: ``SolveStatus.OK == "ok"``)."""

    OK = "ok"  #: every frame certified (an episode), or the job reached its ``min_success``
    FRAMES_FAILED = "frames_failed"  #: an episode has frames without a certified solution
    EPISODE_FAILED = "episode_failed"  #: an episode could not be converted (its ``error``)
    BELOW_MIN_SUCCESS = "below_min_success"  #: the job's share of solved frames is too low


@dataclass(frozen=True)
class EpisodeStats:
    """What converting (or skipping) one episode gave: ``success`` (every frame certified),
    ``status`` (a :class:`SolveStatus`) and ``message`` (one line).

    Attributes:
        frames: frames in the episode; solved: frames that passed certification.
        worst_position_error: [m] and worst_rotation_error: [rad] over certified frames
            (0 when none).
        method: the solver that produced it (``"skipped"`` when already converted).
        seconds: wall time of this episode's read, solve and write [s].
        error: why the episode could not be converted (``type``, ``message``, ``file``,
            ``row``, ``field``), or None; such an episode has no output and 0 frames.
    """

    name: str
    output_path: str
    frames: int
    solved: int
    worst_position_error: float
    worst_rotation_error: float
    method: str
    seconds: float
    skipped: bool = False
    error: dict[str, Any] | None = None

    @property
    def status(self) -> SolveStatus:
        """``ok``, ``frames_failed`` or ``episode_failed``."""
        if self.error is not None:
            return SolveStatus.EPISODE_FAILED
        return SolveStatus.OK if self.solved == self.frames else SolveStatus.FRAMES_FAILED

    @property
    def success(self) -> bool:
        """Converted, with every frame certified."""
        return self.status is SolveStatus.OK

    @property
    def message(self) -> str:
        """One line: the error, or the frames certified."""
        if self.error is not None:
            return f"episode {self.name} failed: {self.error.get('message')}"
        done = "already converted" if self.skipped else f"{self.method}"
        return f"episode {self.name}: {self.solved}/{self.frames} frames certified ({done})"


_SOLVERS: dict[str, PathSolver] = {}


def _path_solver(config: SolveConfig) -> PathSolver:
    solver = _SOLVERS.get(config.token)
    if solver is None:
        from ikstack.jobs.path import default_path_solver_factory

        factory = config.path_solver_factory or default_path_solver_factory
        solver = factory(config)
        _SOLVERS.clear()  # one job at a time per process
        _SOLVERS[config.token] = solver
    return solver


def convert_episode(config: SolveConfig, task: EpisodeTask) -> EpisodeStats:
    """Read, solve and atomically write one episode."""
    t0 = time.perf_counter()
    episode = read_episode(task.input_path, task.name)
    result = _path_solver(config)(episode.T_base_tcp, None)
    chain = config.chain
    q = np.asarray(result.q, dtype=np.float64)
    if q.shape != (len(episode), chain.dof):
        raise ShapeError("the path solver's q", q.shape, f"({len(episode)}, {chain.dof})")
    finite = np.all(np.isfinite(q), axis=1)
    q = np.where(finite[:, None], q, chain.clip(chain.middle()))  # NaN never escapes
    if config.recertify:
        ok, perr, rerr = certify(
            chain,
            q,
            episode.T_base_tcp,
            config.position_tolerance,
            config.rotation_tolerance,
            limit_tolerance=1e-9,
        )
    else:  # the solver's errors are FK errors of q (the IKResult contract); gate on them
        perr = np.where(finite, np.asarray(result.position_error, dtype=np.float64), np.inf)
        rerr = np.where(finite, np.asarray(result.rotation_error, dtype=np.float64), np.inf)
        ok = (
            finite
            & (perr <= config.position_tolerance)
            & (rerr <= config.rotation_tolerance)
            & chain.within_limits(q, tol=1e-9)
        )
        if chain.constraints:
            ok &= chain.constraints_satisfied(q)
        if not finite.all():  # report the errors of the joint vector actually written
            perr, rerr = fk_errors(chain, q, episode.T_base_tcp)
    success = np.asarray(result.success, dtype=bool) & ok
    status = np.asarray(result.status, dtype=np.int64).copy()
    status[~success & (status == int(IKStatus.SUCCESS))] = int(IKStatus.UNREACHABLE)  # job gate
    solved = SolvedEpisode(episode.timestamps, chain.joint_names, q, success, perr, rerr, status)
    write_solved(task.output_path, solved)
    return _stats(task, solved, result.method, time.perf_counter() - t0)


def _stats(
    task: EpisodeTask, s: SolvedEpisode, method: str, seconds: float, skipped: bool = False
) -> EpisodeStats:
    good = s.success
    wp = float(s.position_error[good].max()) if good.any() else 0.0
    wr = float(s.rotation_error[good].max()) if good.any() else 0.0
    return EpisodeStats(
        task.name, task.output_path, len(s), int(good.sum()), wp, wr, method, seconds, skipped
    )


def skipped_stats(task: EpisodeTask) -> EpisodeStats:
    """Stats of an episode whose output already exists (read back from that output).

    Raises:
        DatasetError: the existing file is not a readable ikstack output.
    """
    try:
        solved = read_solved(task.output_path)
    except (IKStackError, OSError, ValueError, KeyError) as exc:
        raise DatasetError(
            task.output_path,
            f"exists but is not a readable solve output "
            f"({exc}); remove it or rerun with --overwrite",
        ) from None
    return _stats(task, solved, "skipped", 0.0, skipped=True)


#: frames of :func:`warm_here`'s path: the first solved alone, the next two as one chunk (the
#: numerical path's two call shapes)
WARM_FRAMES = 3


def warm_here(config: SolveConfig) -> None:
    """Solve a short path with this process's path solver before any worker starts.

    From an empty compile cache this process compiles the path solver's kernels and writes them
    to the cache; workers started afterwards load them instead of compiling the same kernels
    at the same time as this process (on a small machine that would double the first run).
    With a warm cache it costs a few milliseconds. Only the library's own (numpy) path
    solvers are warmed; an error is left to the episodes to report.
    """
    if config.path_solver_factory is not None or config.backend != "numpy":
        return
    chain = config.chain
    T = np.repeat(chain.fk(chain.clip(chain.middle()))[None], WARM_FRAMES, axis=0)
    try:
        _path_solver(config)(np.ascontiguousarray(T), None)
    except IKStackError:
        pass


def warm_worker(config: SolveConfig) -> None:
    """Build this process's path solver for ``config`` ahead of its first episode."""
    _path_solver(config)


def convert_batch(config: SolveConfig, tasks: list[EpisodeTask]) -> list[EpisodeStats]:
    """Convert several episodes in order (the engines' unit of work).

    An episode that cannot be converted (a malformed file, a solver's input error) gives
    stats carrying its error, unless ``config.fail_fast``; storage errors (a full disk, a
    read-only folder) and anything unexpected stop the batch.
    """
    out = []
    for t in tasks:
        try:
            out.append(convert_episode(config, t))
        except StorageError:
            raise
        except IKStackError as exc:
            if config.fail_fast:
                raise
            out.append(failed_stats(t, exc))
    return out


def failed_stats(task: EpisodeTask, exc: IKStackError) -> EpisodeStats:
    """Stats of an episode that could not be converted, carrying its error."""
    error = {
        "type": type(exc).__name__,
        "message": str(exc),
        "file": getattr(exc, "path", task.input_path),
        "row": getattr(exc, "row", None),
        "field": getattr(exc, "field", None),
    }
    return EpisodeStats(task.name, task.output_path, 0, 0, 0.0, 0.0, "failed", 0.0, error=error)


def output_path_for(input_root: Path, episode: Path, output_root: Path) -> Path:
    """Where an episode's output goes: its path relative to the input folder, under output."""
    rel = episode.name if input_root == episode else episode.relative_to(input_root)
    return output_root / rel
