"""Multi-arm chunk decoding in persistent worker processes, one per arm.

Workers are started once (not per chunk), each builds its arm's decoder, and then serves
chunks: every arm decodes from the request's observed state, in parallel, and the parent merges
the results atomically (any failure rejects the whole chunk). The calling process only waits on
pipes, so a control loop in it (another thread, or the same thread polling
:meth:`PendingChunk.done`) keeps ticking while a chunk decodes.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from ikstack.chunk.decode import (
    ArmSpec,
    check_arm_names,
    check_interval,
    check_request,
    merge_results,
)
from ikstack.chunk.types import ArmDecodeResult, ChunkRequest, DecodedChunk
from ikstack.errors import ConfigError, IKStackError, InputError, WorkerError


def _worker_main(conn: Connection, spec: ArmSpec) -> None:  # pragma: no cover - subprocess
    try:
        decoder = spec.build()
        decoder.warm_up()
    except Exception as exc:  # report any build failure to the parent
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
        return
    conn.send(("ready", os.getpid()))
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            return
        if msg is None:
            return
        job, q0, T, interval = msg
        try:
            t0, c0 = time.monotonic(), time.process_time()
            res = decoder.decode(q0, T, interval)
            span = (t0, time.monotonic(), time.process_time() - c0)
            conn.send(("ok", job, (res, span)))
        except IKStackError as exc:  # sent as text: not every error class unpickles
            conn.send(("raise", job, (isinstance(exc, InputError), type(exc).__name__, str(exc))))
        except Exception as exc:  # noqa: BLE001 - any crash is reported, not hidden
            conn.send(("crash", job, repr(exc)))


class PendingChunk:
    """A chunk being decoded by the workers; poll :meth:`done` or block on :meth:`result`."""

    def __init__(self, owner: ParallelChunkDecoder, request: ChunkRequest, job: int):
        self._owner = owner
        self.request = request
        self.job = job
        self._results: dict[str, ArmDecodeResult] = {}
        self._error: BaseException | None = None
        self._merged: DecodedChunk | None = None
        self._answered: set[str] = set()
        #: per arm, (start, end) on the system's monotonic clock [s] and the worker's CPU time
        #: [s] for this chunk: overlapping spans show the arms decoding at the same time
        self.timings: dict[str, tuple[float, float, float]] = {}

    def _collect(self, name: str, block: bool) -> None:
        conn = self._owner._conns[name]
        if not block and not conn.poll():
            return
        self._answered.add(name)
        try:
            kind, job, payload = conn.recv()
            while isinstance(job, int) and job < self.job:  # a late answer to a failed chunk
                kind, job, payload = conn.recv()
        except (EOFError, OSError):
            self._owner._dead.add(name)
            self._error = WorkerError(
                f"the decode worker of arm {name!r} died (a fresh one starts on the next chunk)"
            )
            return
        if job != self.job:
            self._error = WorkerError(f"arm {name!r} answered job {job}; expected {self.job}")
        elif kind == "ok":
            self._results[name], self.timings[name] = payload
        elif kind == "raise":
            is_input, cls, msg = payload
            err = InputError if is_input else IKStackError
            self._error = err(f"arm {name!r}: {cls}: {msg}")
        else:
            self._error = WorkerError(f"the decode worker of arm {name!r} failed: {payload}")

    def done(self) -> bool:
        """Whether every arm has answered (never blocks)."""
        if self._merged is not None or self._error is not None:
            return True
        for name in self._owner.arm_names:
            if name not in self._answered:
                self._collect(name, block=False)
        return len(self._answered) == len(self._owner.arm_names)

    def result(self) -> DecodedChunk:
        """The merged chunk (blocks until every arm answered).

        Raises:
            IKStackError: an input error found by a worker, or a worker failure.
        """
        if self._merged is None:
            for name in self._owner.arm_names:  # drain every arm, even after an error
                if name not in self._results and name not in self._answered:
                    self._collect(name, block=True)
            self._owner._pending = None
            if self._error is not None:
                raise self._error
            o = self._owner
            self._merged = merge_results(
                self.request,
                self._results,
                o.arm_names,
                o.action_interval_s,
                {s.name: s.method for s in o.specs},
            )
        return self._merged


class ParallelChunkDecoder:
    """Decodes chunks with one persistent worker process per arm.

    Args:
        arms: the arms' recipes (unique names).
        action_interval_s: the fixed policy action interval [s].
        start_method: the multiprocessing start method (``"spawn"`` by default: workers share
            no threads or locks with the caller). As with any spawned process, a script that
            builds the decoder at import time needs the ``if __name__ == "__main__":`` guard.

    Close it (or use it as a context manager) to stop the workers; each worker compiles and
    warms its decoder once at start, so the first chunk costs no more than later ones.

    Raises:
        ConfigError: a worker could not build its arm's decoder (the message says why).
    """

    def __init__(
        self, arms: Sequence[ArmSpec], action_interval_s: float, start_method: str = "spawn"
    ):
        self.arm_names = check_arm_names(arms)
        self.specs = tuple(arms)
        self.action_interval_s = check_interval(action_interval_s)
        self._ctx: Any = mp.get_context(start_method)
        self._conns: dict[str, Connection] = {}
        self._procs: dict[str, Any] = {}
        self.worker_pids: dict[str, int] = {}
        self._pending: PendingChunk | None = None
        self._dead: set[str] = set()
        self._job = 0
        try:
            for spec in self.specs:
                self._start(spec)
            for name in self.arm_names:
                self._await_ready(name)
        except BaseException:
            self.close()
            raise

    def _start(self, spec: ArmSpec) -> None:
        parent, child = self._ctx.Pipe()
        p = self._ctx.Process(
            target=_worker_main, args=(child, spec), daemon=True, name=f"ikstack-decode-{spec.name}"
        )
        p.start()
        child.close()
        self._conns[spec.name] = parent
        self._procs[spec.name] = p

    def _await_ready(self, name: str) -> None:
        try:
            kind, payload = self._conns[name].recv()
        except (EOFError, OSError):
            kind, payload = "error", "the process exited before it was ready"
        if kind != "ready":
            raise ConfigError(f"the decode worker of arm {name!r} failed to start: {payload}")
        self.worker_pids[name] = int(payload)

    def _replace_dead_workers(self) -> None:
        """Start a fresh worker for every arm whose worker's death was reported; report (as
        :class:`WorkerError`) a death not reported yet."""
        for spec in self.specs:
            name = spec.name
            if name not in self._dead:
                if not self._procs[name].is_alive():
                    self._dead.add(name)
                    raise WorkerError(
                        f"the decode worker of arm {name!r} died (a fresh one "
                        "starts on the next chunk)"
                    )
                continue
            old = self._procs[name]
            if old.is_alive():
                old.terminate()
            old.join(timeout=5)
            self._conns[name].close()
            self._start(spec)
            self._await_ready(name)
            self._dead.discard(name)

    def submit(self, request: ChunkRequest) -> PendingChunk:
        """Start decoding ``request`` on every arm's worker and return at once.

        Raises:
            InputError: a malformed request, or a chunk is still pending.
            WorkerError: an arm's worker died (the message names the arm); this call starts
                a fresh worker for any arm whose worker died before it.
        """
        if self._pending is not None:
            raise InputError("a chunk is still being decoded; take its result() first")
        check_request(request, self.arm_names)
        self._replace_dead_workers()
        self._job += 1
        for name in self.arm_names:
            try:
                self._conns[name].send(
                    (
                        self._job,
                        request.q_observed[name],
                        request.T_base_tcp[name],
                        self.action_interval_s,
                    )
                )
            except (OSError, ValueError):  # the worker died since the check above
                self._dead.add(name)
                raise WorkerError(
                    f"the decode worker of arm {name!r} died (a fresh one starts on the next chunk)"
                ) from None
        self._pending = PendingChunk(self, request, self._job)
        return self._pending

    def decode(self, request: ChunkRequest) -> DecodedChunk:
        """Decode ``request`` on the workers and wait for the merged result."""
        return self.submit(request).result()

    def close(self) -> None:
        """Stop the workers (idempotent)."""
        for _name, conn in list(self._conns.items()):
            try:
                conn.send(None)
            except (OSError, ValueError):
                pass
        for _name, p in list(self._procs.items()):
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()
        self._procs.clear()

    def __enter__(self) -> ParallelChunkDecoder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
