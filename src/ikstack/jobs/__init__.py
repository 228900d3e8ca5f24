"""Batch jobs: ``ikstack solve`` converts datasets of TCP-pose episodes to joint trajectories.

Layout: :mod:`.episode` (schema, errors), :mod:`.formats` (CSV/NPZ/Parquet readers and atomic
writers), :mod:`.path` (continuous-path solving), :mod:`.convert` (one episode),
:mod:`.engines` (process pool, Ray), :mod:`.job` (the job and its summary),
:mod:`.progress`, :mod:`.samples` (the bundled sample dataset), :mod:`.cli_support`.

Layer: below :mod:`ikstack.backends` (jobs drive the ``numpy`` and ``warp`` backends) and above
:mod:`ikstack.bench` and the CLI.
"""

from typing import TYPE_CHECKING

from ikstack._lazy import lazy_names

if TYPE_CHECKING:  # loaded on first use: the command line's parser needs none of them
    from ikstack.errors import DatasetError, SolverUnavailableError
    from ikstack.jobs.convert import (
        EpisodeStats,
        EpisodeTask,
        SolveConfig,
        SolveStatus,
        convert_episode,
    )
    from ikstack.jobs.episode import Episode, SolvedEpisode
    from ikstack.jobs.formats import read_episode, read_solved, write_solved
    from ikstack.jobs.job import SolveSummary, find_episodes, run_job
    from ikstack.jobs.path import library_path_solver, solve_episode
    from ikstack.jobs.progress import Progress
    from ikstack.jobs.samples import resolve_input, sample_path

_LAZY = {
    "DatasetError": "ikstack.errors",
    "Episode": "ikstack.jobs.episode",
    "EpisodeStats": "ikstack.jobs.convert",
    "EpisodeTask": "ikstack.jobs.convert",
    "Progress": "ikstack.jobs.progress",
    "SolveConfig": "ikstack.jobs.convert",
    "SolveStatus": "ikstack.jobs.convert",
    "SolveSummary": "ikstack.jobs.job",
    "SolvedEpisode": "ikstack.jobs.episode",
    "SolverUnavailableError": "ikstack.errors",
    "convert_episode": "ikstack.jobs.convert",
    "find_episodes": "ikstack.jobs.job",
    "library_path_solver": "ikstack.jobs.path",
    "read_episode": "ikstack.jobs.formats",
    "read_solved": "ikstack.jobs.formats",
    "resolve_input": "ikstack.jobs.samples",
    "run_job": "ikstack.jobs.job",
    "sample_path": "ikstack.jobs.samples",
    "solve_episode": "ikstack.jobs.path",
    "write_solved": "ikstack.jobs.formats",
}


__getattr__, __dir__ = lazy_names("ikstack.jobs", _LAZY, globals())
__all__ = [
    "DatasetError",
    "Episode",
    "EpisodeStats",
    "EpisodeTask",
    "Progress",
    "SolveConfig",
    "SolveStatus",
    "SolveSummary",
    "SolvedEpisode",
    "SolverUnavailableError",
    "convert_episode",
    "find_episodes",
    "library_path_solver",
    "read_episode",
    "read_solved",
    "resolve_input",
    "run_job",
    "sample_path",
    "solve_episode",
    "write_solved",
]
