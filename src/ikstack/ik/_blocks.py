"""Blocks of rows of one compiled serial kernel on several threads (the kernel releases the GIL).

A numba ``parallel=True`` twin of a serial kernel is a second compilation of the same call
tree, and the parallel lowering is among the slowest compilations of a first run. Running
the serial kernel itself on row blocks from a few Python threads compiles nothing more; the
answers are the same whenever each row's result is its own (it is for every kernel that
runs here).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

_POOL: ThreadPoolExecutor | None = None
_POOL_SIZE = 0
_LOCK = threading.Lock()


def _pool(threads: int) -> ThreadPoolExecutor:
    global _POOL, _POOL_SIZE
    with _LOCK:
        if _POOL is None or _POOL_SIZE < threads:
            if _POOL is not None:
                _POOL.shutdown(wait=False)
            _POOL = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="ikstack-rows")
            _POOL_SIZE = threads
        return _POOL


def run_blocks(
    kernel: Callable[..., Any],
    args: Sequence[Any],
    rows: Sequence[int],
    n: int,
    block: int,
    threads: int,
) -> None:
    """``kernel(*args)`` over rows ``0 .. n`` in blocks of ``block`` rows on ``threads``
    threads; the arguments at the positions ``rows`` are sliced to each block's rows (C
    arrays stay C arrays: the kernel's one compiled signature serves every block).

    Blocks are taken one at a time by whichever thread is free (consecutive slow rows, common
    in a path, are shared out). ``kernel`` must be compiled with ``nogil=True``; an exception
    in any block is raised here once every thread has stopped.
    """
    nblk = (n + block - 1) // block
    threads = max(1, min(threads, nblk))
    if threads == 1:
        kernel(*args)
        return
    todo = iter(range(nblk))
    lock = threading.Lock()
    at = set(rows)

    def work() -> None:
        while True:
            with lock:
                b = next(todo, -1)
            if b < 0:
                return
            k0 = b * block
            k1 = min(n, k0 + block)
            kernel(*(a[k0:k1] if i in at else a for i, a in enumerate(args)))

    futures = [_pool(threads).submit(work) for _ in range(threads)]
    for f in futures:
        f.result()
