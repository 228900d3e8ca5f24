"""The solve job: find episodes, skip those already converted, run an engine, write a summary."""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ikstack._deprecated import renamed_attribute
from ikstack.errors import InputError, StorageError
from ikstack.jobs.convert import (
    EpisodeStats,
    EpisodeTask,
    SolveConfig,
    SolveStatus,
    output_path_for,
    skipped_stats,
)
from ikstack.jobs.engines import check_engine, default_workers, run_engine
from ikstack.jobs.episode import TIME_COLUMN
from ikstack.jobs.formats import SUFFIXES, atomic_write, npz_rows, remove_partials
from ikstack.jobs.progress import Progress

#: name of the JSON summary written into the output folder
SUMMARY_NAME = "summary.json"
#: most episodes one task carries (small tasks balance load, large ones cut overhead)
MAX_BATCH = 32


@dataclass(frozen=True)
class SolveSummary:
    """The outcome of a solve job (also written as ``summary.json`` in the output folder).

    Attributes:
        episodes: episodes found; converted / skipped: solved now / already present.
        frames: frames over all episodes; frames_solved: frames that passed certification.
        success_rate: frames_solved / frames (1.0 when there are none).
        worst_position_error: [m] and worst_rotation_error: [rad] over certified frames.
        seconds: wall time of this run [s]; frames_per_second: frames converted in this run
            per wall second; cpu_seconds: summed per-episode time [s] across workers.
        failed_episodes: names of episodes with at least one failed frame, or that could
            not be converted at all.
        episode_errors: one entry per episode that could not be converted: ``name``,
            ``type`` (the error class), ``message``, ``file``, ``row`` and ``field`` (None
            where not known); such an episode has no output.
        min_success: the share of solved frames the job must reach.
        success: no episode error and ``success_rate >= min_success`` (the command exits 0
            only then; ``ok``, its former name, warns; ``summary.json`` holds both keys);
            :attr:`status` says why not, :attr:`message` is the summary's line.
        per_episode: one entry per episode (name, output, frames, solved, errors, method).
    """

    input: str
    output: str
    robot: str
    dof: int
    method: str
    engine: str
    workers: int
    episodes: int
    converted: int
    skipped: int
    frames: int
    frames_solved: int
    success_rate: float
    worst_position_error: float
    worst_rotation_error: float
    seconds: float
    frames_per_second: float
    cpu_seconds: float
    failed_episodes: list[str] = field(default_factory=list)
    episode_errors: list[dict[str, Any]] = field(default_factory=list)
    min_success: float = 1.0
    success: bool = True
    per_episode: list[dict[str, Any]] = field(default_factory=list)

    ok = renamed_attribute("ok", "success")

    @property
    def status(self) -> SolveStatus:
        """``ok``, ``episode_failed`` (an episode could not be converted) or
        ``below_min_success``; ``ok`` exactly when :attr:`success`."""
        if self.episode_errors:
            return SolveStatus.EPISODE_FAILED
        if self.success_rate < self.min_success:
            return SolveStatus.BELOW_MIN_SUCCESS
        return SolveStatus.OK

    @property
    def message(self) -> str:
        """The summary's last line (:meth:`text` adds one line per failed episode)."""
        return self._line()

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (units in the key names' docs above); ``ok`` repeats ``success``
        under its former name, for readers of earlier summaries."""
        out: dict[str, Any] = {}
        for k, v in asdict(self).items():
            out[k] = v
            if k == "success":
                out["ok"] = v
        return out

    def to_json(self) -> str:
        """The summary as indented JSON."""
        return json.dumps(self.to_dict(), indent=2) + "\n"

    def text(self) -> str:
        """A short human summary (one more line per episode that could not be converted)."""
        lines = [f"episode {e['name']} failed: {e['message']}" for e in self.episode_errors]
        if self.success_rate < self.min_success:
            lines.append(
                f"success {100 * self.success_rate:.2f}% is below --min-success "
                f"{100 * self.min_success:.2f}%"
            )
        return "\n".join([*lines, self._line()])

    def _line(self) -> str:
        bad = f", {len(self.episode_errors)} failed" if self.episode_errors else ""
        return (
            f"{self.episodes} episodes ({self.converted} solved, {self.skipped} already "
            f"done{bad}), {self.frames:,} frames, success {100 * self.success_rate:.2f}%, "
            f"worst error {self.worst_position_error * 1e3:.3g} mm / "
            f"{math.degrees(self.worst_rotation_error):.3g} deg, {self.seconds:.2f} s, "
            f"{self.frames_per_second:,.0f} frames/s -> {self.output}"
        )


def find_episodes(input_path: str | os.PathLike[str]) -> tuple[Path, list[Path]]:
    """The input root and its episode files (one file, or every CSV/NPZ/Parquet file below a
    folder, sorted, hidden files skipped).

    Raises:
        InputError: the path does not exist, has an unknown suffix, or holds no episodes.
    """
    root = Path(input_path)
    if root.is_file():
        if root.suffix.lower() not in SUFFIXES:
            raise InputError(
                f"{root}: unknown episode format {root.suffix!r}; accepted: {', '.join(SUFFIXES)}"
            )
        return root, [root]
    if not root.is_dir():
        raise InputError(f"{root}: no such file or folder")
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file()
        and p.suffix.lower() in SUFFIXES
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    if not files:
        raise InputError(f"{root}: no episode files ({', '.join(SUFFIXES)}) in this folder")
    return root, files


def plan_tasks(
    input_path: str | os.PathLike[str], output_path: str | os.PathLike[str]
) -> list[EpisodeTask]:
    """One task per episode file, with its output path under ``output_path``."""
    root, files = find_episodes(input_path)
    out = Path(output_path)
    if out.exists() and not out.is_dir():
        raise InputError(f"{out}: the output must be a folder")
    in_dir = root if root.is_dir() else root.parent
    if out.resolve() == in_dir.resolve():
        raise InputError(f"{out}: the output folder must differ from the input folder")
    out_abs = out.resolve()
    files = [f for f in files if not f.resolve().is_relative_to(out_abs)]  # earlier outputs
    if not files:
        raise InputError(f"{root}: no episode files outside the output folder {out}")
    tasks = []
    for f in files:
        rel = f.name if root.is_file() else f.relative_to(root).as_posix()
        name = rel[: -len(f.suffix)]
        tasks.append(EpisodeTask(name, str(f), str(output_path_for(root, f, out))))
    return tasks


def batch_tasks(tasks: list[EpisodeTask], workers: int) -> list[list[EpisodeTask]]:
    """Consecutive groups of tasks: about four per worker, at most :data:`MAX_BATCH` each."""
    if not tasks:
        return []
    size = max(1, min(MAX_BATCH, math.ceil(len(tasks) / (4 * workers))))
    return [tasks[i : i + size] for i in range(0, len(tasks), size)]


def run_job(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    config: SolveConfig,
    engine: str = "local",
    workers: int | None = None,
    ray_address: str | None = None,
    overwrite: bool = False,
    progress: Progress | None = None,
    min_success: float = 1.0,
) -> SolveSummary:
    """Convert every episode under ``input_path`` into ``output_path``.

    Episodes whose output already exists are skipped (their stats are read back from it)
    unless ``overwrite``. Each output, and the summary, appear atomically. Leftover
    temporary files of a killed run are removed first, so do not point two jobs at one
    output folder at the same time.

    Args:
        input_path: an episode file or a folder of them.
        output_path: the output folder (created).
        config: chain, method and limits.
        engine: ``local`` (process pool) or ``ray``.
        workers: local worker processes, this one included, or CPUs of a local Ray runtime
            (default: all cores).
        ray_address: a Ray cluster to join; None starts a local runtime.
        overwrite: solve every episode again.
        progress: where to report progress (default: a :class:`Progress` on stderr).
        min_success: the share of frames that must be solved for ``summary.success``.

    An episode that cannot be converted is listed in ``summary.episode_errors`` (with its
    file, row and field) and the others are converted, unless ``config.fail_fast``.

    Raises:
        InputError: bad arguments; with ``config.fail_fast``, the first malformed episode's
            :class:`DatasetError`.
        StorageError: the output folder cannot be written (full disk, read-only).
        WorkerError: a worker process died.
    """
    t0 = time.perf_counter()
    workers = default_workers() if workers is None else int(workers)
    check_engine(engine, workers, ray_address)
    if not (0.0 <= min_success <= 1.0):
        raise InputError(f"min_success must be a share of frames in [0, 1]; got {min_success!r}")
    tasks = plan_tasks(input_path, output_path)
    out = Path(output_path)
    try:
        out.mkdir(parents=True, exist_ok=True)
        remove_partials(out)
    except OSError as exc:
        raise StorageError.from_os_error(out, "write to", exc) from exc
    done = [t for t in tasks if not overwrite and Path(t.output_path).exists()]
    done_names = {t.name for t in done}
    todo = [t for t in tasks if t.name not in done_names]
    stats: dict[str, EpisodeStats] = {t.name: skipped_stats(t) for t in done}
    if todo:
        frames = _count_frames(todo)
        prog = progress if progress is not None else Progress(frames, len(todo))
        new = run_engine(
            engine,
            config,
            batch_tasks(todo, workers),
            workers,
            lambda part: prog.update(sum(s.frames for s in part), len(part)),
            ray_address,
        )
        prog.close()
        stats.update({s.name: s for s in new})
    summary = _summarize(
        input_path,
        out,
        config,
        engine,
        workers,
        tasks,
        stats,
        time.perf_counter() - t0,
        min_success,
    )
    atomic_write(out / SUMMARY_NAME, lambda tmp: tmp.write_text(summary.to_json()))
    return summary


def _count_frames(tasks: list[EpisodeTask]) -> int:
    """Approximate frame count for the progress bar: data lines or array rows per file."""
    total = 0
    for t in tasks:
        p = Path(t.input_path)
        try:
            if p.suffix.lower() == ".csv":
                with p.open("rb") as f:
                    total += max(0, sum(1 for _ in f) - 1)
            elif p.suffix.lower() == ".npz":
                total += npz_rows(p, TIME_COLUMN)
            else:
                import pyarrow.parquet as pq

                total += int(pq.read_metadata(p).num_rows)
        except Exception:  # counting is best effort; reading the episode reports real errors
            continue
    return total


def _summarize(
    input_path: str | os.PathLike[str],
    out: Path,
    config: SolveConfig,
    engine: str,
    workers: int,
    tasks: list[EpisodeTask],
    stats: dict[str, EpisodeStats],
    seconds: float,
    min_success: float = 1.0,
) -> SolveSummary:
    ordered = [stats[t.name] for t in tasks]
    frames = sum(s.frames for s in ordered)
    solved = sum(s.solved for s in ordered)
    errors = [{"name": s.name, **s.error} for s in ordered if s.error is not None]
    rate = solved / frames if frames else 1.0
    new_frames = sum(s.frames for s in ordered if not s.skipped)
    return SolveSummary(
        input=str(input_path),
        output=str(out),
        robot=config.chain.name,
        dof=config.chain.dof,
        method=config.method,
        engine=engine,
        workers=workers,
        episodes=len(ordered),
        converted=sum(not s.skipped and s.error is None for s in ordered),
        skipped=sum(s.skipped for s in ordered),
        frames=frames,
        frames_solved=solved,
        success_rate=rate,
        worst_position_error=max((s.worst_position_error for s in ordered), default=0.0),
        worst_rotation_error=max((s.worst_rotation_error for s in ordered), default=0.0),
        seconds=seconds,
        frames_per_second=new_frames / seconds if seconds > 0 else 0.0,
        cpu_seconds=sum(s.seconds for s in ordered),
        failed_episodes=[s.name for s in ordered if s.solved < s.frames or s.error is not None],
        episode_errors=errors,
        min_success=min_success,
        success=not errors and rate >= min_success,
        per_episode=[
            {
                "name": s.name,
                "output": s.output_path,
                "frames": s.frames,
                "solved": s.solved,
                "worst_position_error": s.worst_position_error,
                "worst_rotation_error": s.worst_rotation_error,
                "method": s.method,
                "seconds": s.seconds,
                "skipped": s.skipped,
            }
            for s in ordered
        ],
    )
