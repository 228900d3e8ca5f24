"""Data derived from chains, kept by whoever derives it: bounded, weak and thread-safe.

A :class:`~ikstack.model.Chain` is immutable and holds no cache. Each owner of derived data
(compiled kinematics, analytic joint lines, constraint tables, the IK front door's solvers,
device arrays) keeps its own :class:`ChainCache`:

- keyed by the chain's identity (``id(chain)``, or ``(id(chain), key)`` for several values a
  chain), so a derived chain (``with_tcp``, ``with_limits``, ``replace``...) is another key and
  never sees its parent's data;
- weak: the cache holds no reference to a chain; when a chain is garbage-collected its
  entries are removed at once (a weak-reference callback, run before the chain's memory can be
  reused, so an identity never reaches another chain's entry);
- bounded: past ``maxsize`` entries the oldest goes (first in, first out);
- thread-safe: a read is one dict lookup (atomic, lock-free: the hot paths pay tens of
  nanoseconds); :meth:`ChainCache.add` is locked and keeps the first value stored for a key,
  so threads racing to derive the same data all get one object.

A value must not reference its chain (it would keep the chain alive until evicted): an owner
whose value needs a chain (a solver) builds it on a private copy (:meth:`Chain.replace`).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Hashable
from functools import partial
from typing import Any, Generic, TypeVar

V = TypeVar("V")

_ALL: list[weakref.ref[ChainCache[Any]]] = []


def all_caches() -> list[ChainCache[Any]]:
    """Every chain cache of the modules imported so far (for inspection and tests)."""
    live = (r() for r in _ALL)
    return sorted((c for c in live if c is not None), key=lambda c: c.name)


class ChainCache(dict[Hashable, V], Generic[V]):
    """Values derived from chains, keyed by ``id(chain)`` or ``(id(chain), key)``.

    Read with ``cache.get(id(chain))`` (or ``cache.get((id(chain), key))``); store with
    :meth:`add`, which returns the value the cache holds for that key afterwards.

    Args:
        name: what the cache holds (shown by ``repr``).
        maxsize: the most entries kept.
    """

    def __init__(self, name: str, maxsize: int):
        super().__init__()
        if maxsize < 1:
            raise ValueError(f"maxsize must be >= 1; got {maxsize}")
        self.name = name
        self.maxsize = int(maxsize)
        self._refs: dict[Hashable, weakref.ref[Any]] = {}
        self._lock = threading.Lock()
        _ALL.append(weakref.ref(self))

    def add(self, chain: object, value: V, key: Hashable = None) -> V:
        """Store ``value`` for ``chain`` (and ``key``) unless a value is already there; the
        value held afterwards (the first one stored wins)."""
        k: Hashable = id(chain) if key is None else (id(chain), key)
        with self._lock:
            held = super().get(k)
            if held is not None:
                return held
            # the callback runs before the chain's memory is freed, so before its id can name
            # another chain; it takes no lock (it may run inside this block, on this thread)
            self._refs[k] = weakref.ref(chain, partial(self._forget, k))
            self[k] = value
            while len(self) > self.maxsize:
                oldest = next(iter(self))
                self.pop(oldest, None)
                self._refs.pop(oldest, None)  # its callback dies with it
        return value

    def _forget(self, k: Hashable, ref: weakref.ref[Any]) -> None:
        if self._refs.get(k) is ref:
            self._refs.pop(k, None)
            self.pop(k, None)

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            super().clear()
            self._refs.clear()

    def __repr__(self) -> str:
        return f"ChainCache({self.name!r}, {len(self)}/{self.maxsize} entries)"
