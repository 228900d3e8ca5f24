"""Executors that run batches of episodes: a local process pool, or a Ray cluster.

Both call the same :func:`~.convert.convert_batch` on the same batches, so they write the
same bytes. Workers read inputs and write outputs themselves: on a multi-machine Ray cluster
the input and output folders must be on storage every node sees (a shared or network mount).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

from ikstack.errors import IKStackError, InputError, MissingExtraError
from ikstack.jobs.convert import EpisodeStats, EpisodeTask, SolveConfig, convert_batch

ENGINES = ("local", "ray")

Batch = list[EpisodeTask]
OnDone = Callable[[list[EpisodeStats]], None]


def default_workers() -> int:
    """All the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def run_engine(engine: str, config: SolveConfig, batches: list[Batch], workers: int,
               on_done: OnDone, ray_address: str | None = None) -> list[EpisodeStats]:
    """Run ``batches`` on ``engine``; ``on_done`` sees each batch's stats as it completes.

    Returns:
        Every episode's stats, in the order of ``batches``.
    """
    check_engine(engine, workers, ray_address)
    config = _portable(config)
    if engine == "local":
        parts = run_local(config, batches, workers, on_done)
    else:
        parts = run_ray(config, batches, workers, on_done, ray_address)
    return [s for part in parts for s in part]


def check_engine(engine: str, workers: int, ray_address: str | None = None) -> None:
    """Raise :class:`InputError` for an unknown engine, fewer than one worker, or a Ray address
    given to the local engine."""
    if engine not in ENGINES:
        raise InputError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    if workers < 1:
        raise InputError(f"workers must be at least 1; got {workers}")
    if engine == "local" and ray_address is not None:
        raise InputError("--ray-address needs --engine ray")


def _portable(config: SolveConfig) -> SolveConfig:
    """The config with the chain's derived caches dropped (they are rebuilt per worker)."""
    from dataclasses import replace

    return replace(config, chain=config.chain.replace())


def run_local(config: SolveConfig, batches: list[Batch], workers: int,
              on_done: OnDone) -> list[list[EpisodeStats]]:
    """Run in this process (one worker) or a pool of ``workers`` spawned processes."""
    results: list[list[EpisodeStats]] = [[] for _ in batches]
    if workers == 1 or len(batches) <= 1:
        for i, b in enumerate(batches):
            results[i] = convert_batch(config, b)
            on_done(results[i])
        return results
    ctx = multiprocessing.get_context("spawn")  # fork is unsafe once numba threads exist
    with ProcessPoolExecutor(max_workers=min(workers, len(batches)), mp_context=ctx) as pool:
        futures: dict[Future[list[EpisodeStats]], int] = {
            pool.submit(convert_batch, config, b): i for i, b in enumerate(batches)}
        pending = set(futures)
        try:
            while pending:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for f in done:
                    results[futures[f]] = f.result()
                    on_done(results[futures[f]])
        except BaseException:
            for f in pending:
                f.cancel()
            raise
    return results


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise MissingExtraError("ray", "ray") from None
    return ray


def run_ray(config: SolveConfig, batches: list[Batch], workers: int, on_done: OnDone,
            address: str | None = None) -> list[list[EpisodeStats]]:
    """Shard ``batches`` over Ray: the cluster at ``address``, or a local runtime of ``workers``
    CPUs when None. An already initialized Ray session is reused and left running."""
    ray = _ray()
    started = False
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"address": address, "include_dashboard": False,
                                  "log_to_driver": False, "configure_logging": False}
        if address is None:
            # a local runtime's workers import what this process imports
            kwargs["num_cpus"] = workers
            kwargs["runtime_env"] = {"env_vars": {"PYTHONPATH": os.pathsep.join(
                p for p in sys.path if p)}}
        ray.init(**kwargs)
        started = True
    results: list[list[EpisodeStats]] = [[] for _ in batches]
    pending: list[Any] = []
    try:
        remote = ray.remote(num_cpus=1)(convert_batch)
        cfg = ray.put(config)
        refs = [remote.remote(cfg, b) for b in batches]
        index = {ref: i for i, ref in enumerate(refs)}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                try:
                    part = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:
                    cause = getattr(exc, "cause", None)
                    if isinstance(cause, IKStackError):
                        raise cause from None
                    raise
                results[index[ref]] = part
                on_done(part)
        return results
    except BaseException:
        for ref in pending:
            ray.cancel(ref)
        raise
    finally:
        if started:
            ray.shutdown()
