"""Executors that run batches of episodes: a local process pool, or a Ray cluster.

Both call the same :func:`~.convert.convert_batch` on the same batches, so they write the
same bytes. Workers read inputs and write outputs themselves: on a multi-machine Ray cluster
the input and output folders must be on storage every node sees (a shared or network mount).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from ikstack.errors import IKStackError, InputError, MissingExtraError, WorkerError
from ikstack.jobs.convert import (
    EpisodeStats,
    EpisodeTask,
    SolveConfig,
    convert_batch,
    warm_here,
    warm_worker,
)
from ikstack.jobs.options import ENGINES

Batch = list[EpisodeTask]
OnDone = Callable[[list[EpisodeStats]], None]


def default_workers() -> int:
    """All the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def run_engine(
    engine: str,
    config: SolveConfig,
    batches: list[Batch],
    workers: int,
    on_done: OnDone,
    ray_address: str | None = None,
) -> list[EpisodeStats]:
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


#: batches queued ahead to each started pool worker (keeps it busy between refills)
QUEUED_PER_WORKER = 2
#: thread-count variables capped in pool workers so ``workers`` processes do not oversubscribe
#: the cores with compiled-kernel and BLAS threads (a value the user set is kept)
THREAD_VARIABLES = (
    "NUMBA_NUM_THREADS",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
)


def run_local(
    config: SolveConfig, batches: list[Batch], workers: int, on_done: OnDone
) -> list[list[EpisodeStats]]:
    """Run in this process (one worker), or here and in ``workers - 1`` spawned processes.

    This process works through the batches itself; each spawned process gets batches only once
    it has started and built its solver (imports and compiled-code loading take a good part of
    a second), a couple at a time from a feeder thread, so a small job never waits for workers
    to start and a large one keeps every worker busy. Each worker runs its compiled kernels on
    ``cores / workers`` threads.
    """
    results: list[list[EpisodeStats]] = [[] for _ in batches]
    if workers == 1 or len(batches) <= 1:
        for i, b in enumerate(batches):
            results[i] = convert_batch(config, b)
            on_done(results[i])
        return results
    helpers = min(workers, len(batches)) - 1
    warm_here(config)  # an empty compile cache is filled here once, then workers read it
    threads = str(max(1, default_workers() // workers))
    ctx = multiprocessing.get_context("spawn")  # fork is unsafe once numba threads exist
    saved = {k: os.environ.get(k) for k in (*THREAD_VARIABLES, "IKSTACK_COMPILE_NOTICE")}
    for k in THREAD_VARIABLES:  # read by the spawned processes at their start
        os.environ.setdefault(k, threads)
    os.environ["IKSTACK_COMPILE_NOTICE"] = "0"  # this process says it once, not every worker
    try:
        pool = ProcessPoolExecutor(
            max_workers=helpers,
            mp_context=ctx,
            initializer=exit_with_parent,
            initargs=(os.getpid(),),
        )
        feeder = _Feeder(pool, config, batches, helpers)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    received = 0
    try:
        with _numba_threads(int(threads)):
            while received < len(batches):
                mine = feeder.take()
                if mine is not None:
                    results[mine] = convert_batch(config, batches[mine])
                    on_done(results[mine])
                    received += 1
                while received < len(batches):
                    got = feeder.next_result(block=mine is None)
                    if got is None:
                        break
                    results[got[0]] = got[1]
                    on_done(got[1])
                    received += 1
            # a worker that failed to start while this process did the work still says why
            while feeder.next_result(block=False) is not None:
                pass
    finally:
        feeder.stop()
        # every batch done: no worker holds work, and one still starting (its imports take a
        # second or more) would hold this process's exit until it is up, only to be told to
        # stop (a small job such as the bundled sample waited on it); end them
        idle = (
            list((getattr(pool, "_processes", None) or {}).values())
            if received == len(batches)
            else []
        )
        # workers still starting get nothing to do; they exit on their own
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in idle:
            if proc.is_alive():
                proc.terminate()
    return results


#: how often a pool worker checks that its parent is alive [s]
PARENT_CHECK_INTERVAL = 0.2


def exit_with_parent(parent_pid: int) -> None:
    """Make this (worker) process end when ``parent_pid`` dies, even by ``kill -9``.

    On Linux the kernel sends SIGKILL at once (``PR_SET_PDEATHSIG``); everywhere a daemon
    thread also checks the parent every :data:`PARENT_CHECK_INTERVAL` seconds. A worker
    never outlives its job, so it never writes outputs the job no longer expects.
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(PARENT_CHECK_INTERVAL)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="ikstack-parent-watch", daemon=True).start()


def worker_failure(exc: BaseException, what: str) -> BaseException:
    """The error to raise for ``exc`` from a worker: ikstack's own errors as they are,
    anything else as a :class:`WorkerError` naming the worker and the real cause."""
    if isinstance(exc, IKStackError):
        return exc
    if isinstance(exc, BrokenProcessPool):
        return WorkerError(f"{what}: a worker process died ({exc})")
    return WorkerError(f"{what} failed: {type(exc).__name__}: {exc}")


class _Feeder:
    """Hands batches to pool workers once they are warm, from a background thread; this
    process takes the rest with :meth:`take`."""

    def __init__(
        self, pool: ProcessPoolExecutor, config: SolveConfig, batches: list[Batch], helpers: int
    ):
        self.pool = pool
        self.config = config
        self.batches = batches
        self.todo = list(range(len(batches)))[::-1]  # pop() takes the next batch in order
        self.lock = threading.Lock()
        self.stopped = False
        self.results: queue.SimpleQueue[tuple[int, Any]] = queue.SimpleQueue()
        self.warming: set[Future[None]] = {pool.submit(warm_worker, config) for _ in range(helpers)}
        self.running: dict[Future[list[EpisodeStats]], int] = {}
        self.thread = threading.Thread(target=self._run, name="ikstack-feeder", daemon=True)
        self.thread.start()

    def take(self) -> int | None:
        """The next batch for this process, or None when every batch is handed out."""
        with self.lock:
            return self.todo.pop() if self.todo else None

    def next_result(self, block: bool) -> tuple[int, list[EpisodeStats]] | None:
        """A batch a worker finished (waits for one when ``block``), or None; re-raises a
        worker's error."""
        try:
            i, value = self.results.get(block=block)
        except queue.Empty:
            return None
        if isinstance(value, BaseException):
            names = [t.name for t in self.batches[i]] if i >= 0 else []
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            what = f"the solve worker of episode(s) {shown}" if names else "a solve worker"
            err = worker_failure(value, what)
            if err is value:
                raise value
            raise err from value
        return i, value

    def stop(self) -> None:
        """Hand out nothing more; cancel what no worker has started."""
        with self.lock:
            self.stopped = True
            for f in self.running:
                f.cancel()
            for w in self.warming:
                w.cancel()

    def _run(self) -> None:
        ready = 0
        while True:
            with self.lock:
                pending: set[Future[Any]] = set(self.warming) | set(self.running)
            if not pending:
                return
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            with self.lock:
                for f in done:
                    if f in self.warming:
                        self.warming.discard(f)
                        if f.cancelled():
                            continue
                        exc = f.exception()
                        if exc is not None:  # a worker that cannot build the solver says why
                            self.results.put((-1, exc))
                        else:
                            ready += 1
                    else:
                        i = self.running.pop(f)
                        if not f.cancelled():
                            exc = f.exception()
                            self.results.put((i, exc if exc is not None else f.result()))
                while (
                    not self.stopped
                    and self.todo
                    and len(self.running) < (QUEUED_PER_WORKER * ready)
                ):
                    i = self.todo.pop()
                    self.running[self.pool.submit(convert_batch, self.config, self.batches[i])] = i


class _numba_threads:
    """Run compiled kernels of this thread on at most ``n`` threads inside the block."""

    def __init__(self, n: int):
        self.n = n
        self.saved: int | None = None

    def __enter__(self) -> None:
        try:
            import numba

            self.saved = int(numba.get_num_threads())
            numba.set_num_threads(max(1, min(self.n, self.saved)))
        except (ImportError, ValueError):
            self.saved = None

    def __exit__(self, *exc: object) -> None:
        if self.saved is not None:
            import numba

            numba.set_num_threads(self.saved)


def _ray() -> Any:
    try:
        import ray
    except ImportError:
        raise MissingExtraError("ray", "ray") from None
    return ray


def run_ray(
    config: SolveConfig,
    batches: list[Batch],
    workers: int,
    on_done: OnDone,
    address: str | None = None,
) -> list[list[EpisodeStats]]:
    """Shard ``batches`` over Ray: the cluster at ``address``, or a local runtime of ``workers``
    CPUs when None. An already initialized Ray session is reused and left running."""
    ray = _ray()
    started = False
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {
            "address": address,
            "include_dashboard": False,
            "log_to_driver": False,
            "configure_logging": False,
        }
        if address is None:
            # a local runtime's workers import what this process imports
            kwargs["num_cpus"] = workers
            # ... and run their compiled kernels on one thread each (one task per CPU)
            env = {k: os.environ.get(k, "1") for k in THREAD_VARIABLES}
            env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
            kwargs["runtime_env"] = {"env_vars": env}
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
                    names = ", ".join(t.name for t in batches[index[ref]][:3])
                    raise worker_failure(
                        cause if cause is not None else exc, f"the Ray task of episode(s) {names}"
                    ) from exc
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
