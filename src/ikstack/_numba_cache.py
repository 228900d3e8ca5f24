"""A stale or damaged cache file of an ikstack kernel is a cache miss, not a crash.

numba caches compiled kernels on disk and reads a kernel's index before it checks whether the
index is still fresh: when the index names a type that no longer exists (a record renamed or
moved by an ikstack upgrade; pip leaves numba's cache files behind) or the file is damaged (a
process killed while writing it, a full disk), the read raises (``AttributeError: Can't get
attribute ...``, ``EOFError``, ``UnpicklingError``) out of the user's first call. For ikstack's
own kernels, :func:`install` turns that into what a stale index already means: the index is
removed and the kernel compiles (and is cached again). Kernels of other packages keep numba's
behaviour.

The one place besides :mod:`ikstack.compile_notice` that touches numba's implementation
(``numba.core.caching.Cache.load_overload`` and ``save_overload``); a test damages a real
kernel's index and checks the next process compiles and then loads it.
"""

from __future__ import annotations

import os
from typing import Any

_installed = False


def _ours(cache: Any) -> bool:
    module = getattr(getattr(cache, "_py_func", None), "__module__", "") or ""
    return module.split(".")[0] == "ikstack"


def _drop_index(cache: Any) -> None:
    path = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
    if path:
        try:
            os.remove(path)
        except OSError:  # gone already, or read-only: numba then compiles without caching
            pass


def install() -> None:
    """Guard the loading of ikstack's cached kernels (idempotent)."""
    global _installed
    if _installed:
        return
    _installed = True
    try:
        from numba.core.caching import Cache
    except ImportError:  # a numba without this class: its own behaviour stands
        return
    load = getattr(Cache, "load_overload", None)
    save = getattr(Cache, "save_overload", None)
    if load is None or save is None:
        return

    def load_overload(self: Any, sig: Any, target_context: Any) -> Any:
        try:
            return load(self, sig, target_context)
        except Exception:
            if not _ours(self):
                raise
            _drop_index(self)  # stale or damaged: compile, and save a fresh index
            return None

    def save_overload(self: Any, sig: Any, data: Any) -> None:
        try:
            save(self, sig, data)
        except Exception:
            if not _ours(self):
                raise
            # an index that cannot be read or replaced: the kernel runs, uncached

    Cache.load_overload = load_overload  # type: ignore[method-assign]
    Cache.save_overload = save_overload  # type: ignore[method-assign]


__all__ = ["install"]
