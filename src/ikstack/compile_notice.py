"""A one-line notice on stderr when ikstack compiles kernels (first run of a path only).

ikstack's kernels are compiled by numba on first use and cached on disk, so only the first run
of each path (a kinematics call, an IK family, the servo cycle, ...) waits for the compiler;
later runs load the machine code. Without a word, that first wait looks like a hang. When a
kernel of ikstack compiles (not when it loads from the cache) this module prints, once per
area and process::

    ikstack: compiling analytic IK kernels (first run only; cached for later runs)

``IKSTACK_COMPILE_NOTICE=0`` in the environment silences it; ``ikstack warmup`` compiles
ahead (for images and CI). :func:`install` is called by :mod:`ikstack.spatial`, which every
module with kernels imports, so the notice covers every kernel.

The same listener shortens that wait. The compiler copies its intermediate code object by
object, and every full collection of Python's cyclic garbage collector walks every live object
of the process: on a first UR5 ``solve_ik`` 18 of them cost about 3 s of 20, mostly walking
objects that were alive before the compilation began (the interpreter's, numpy's, numba's).
While a kernel of ikstack compiles (the outermost compilation, callees included) those objects
are set aside (:func:`gc.freeze`) and the collector runs a full collection after
:data:`COMPILE_FULL_EVERY` collections of the middle generation instead of 10; the young
generations are collected as usual. There, 5 full collections take 0.7 s, and the process's
peak memory grows from 329 to 365 MB (garbage of the compilation collected a little later).
When the compilation ends, also when it fails, the objects go back to the oldest generation
(:func:`gc.unfreeze`) and the thresholds come back. A program that turned the collector off,
a program that froze objects itself (left frozen, thresholds only), and the compilation of
other code (a user's own ``njit`` functions) are left alone.

The compiler's copies also recurse deeply, and the interpreter keeps Python frames in 16 KiB
chunks that it maps from, and unmaps to, the operating system as the stack grows and shrinks:
recursion whose depth keeps crossing a chunk's edge maps and unmaps one on every call there
(0.07-0.7 million times in a first analytic IK compile, up to about 5 s, depending on how deep
the compile starts). For the same outermost compilation the C++ module's frame cache
(``ikstack._native.frame_cache_start``) keeps the chunks given back and hands them out again;
it gives them back and puts the interpreter's allocator back when the compilation ends.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
from typing import Any

#: module prefix -> what the notice calls its kernels (the longest matching prefix wins)
AREAS: dict[str, str] = {
    "ikstack.spatial": "spatial",
    "ikstack.kinematics": "kinematics",
    "ikstack.ik": "IK certification",
    "ikstack.ik.analytic": "analytic IK",
    "ikstack.ik.analytic.general6r": "general 6R IK",
    "ikstack.ik.numerical": "numerical IK",
    "ikstack.diffik": "differential IK",
    "ikstack.servo": "servo",
    "ikstack.chunk": "chunk decoder",
    "ikstack.validate": "model check",
}

#: while a kernel of ikstack compiles, the collector's oldest generation collects after this
#: many collections of the middle one (Python's default: 10)
COMPILE_FULL_EVERY = 40

_state = threading.local()
_shown: set[str] = set()
_installed = False
#: what the outermost compilation under way changed, to undo when it ends: the collector's
#: thresholds and whether it froze the live objects (None: nothing; compilations run one at a
#: time, under numba's compiler lock)
_paused: tuple[tuple[int, ...], bool] | None = None
#: the outermost compilation under way turned the frame cache on
_frames_cached = False


def area_of(module: str) -> str | None:
    """The area name of an ikstack module (None outside ikstack)."""
    if not module.startswith("ikstack."):
        return None
    best = ""
    for prefix in AREAS:
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best):
            best = prefix
    return AREAS.get(best, module.split(".")[1])


def enabled() -> bool:
    """False when ``IKSTACK_COMPILE_NOTICE`` is ``0``, ``false``, ``no`` or ``off``."""
    return os.environ.get("IKSTACK_COMPILE_NOTICE", "1").strip().lower() not in (
        "0",
        "false",
        "no",
        "off",
    )


def _frame_cache() -> Any:
    """The C++ module's frame cache functions (None where the module is not built)."""
    try:
        from ikstack import _native
    except ImportError:
        return None
    return _native if hasattr(_native, "frame_cache_start") else None


def _on_start(module: str) -> None:
    global _paused, _frames_cached
    depth = getattr(_state, "depth", 0)
    _state.depth = depth + 1
    if depth:  # a callee compiled inside a kernel's compilation: already announced
        return
    area = area_of(module)
    if area is None:
        return
    if gc.isenabled() and _paused is None:
        young, middle, oldest = saved = gc.get_threshold()
        freeze = gc.get_freeze_count() == 0  # a program's own frozen objects stay its own
        if freeze:
            gc.freeze()
        _paused = (saved, freeze)
        gc.set_threshold(young, middle, max(oldest, COMPILE_FULL_EVERY))
    if not _frames_cached:
        native = _frame_cache()
        _frames_cached = native is not None and bool(native.frame_cache_start())
    if area in _shown or not enabled():
        return
    _shown.add(area)
    try:
        print(
            f"ikstack: compiling {area} kernels (first run only; cached for later runs)",
            file=sys.stderr,
            flush=True,
        )
    except (OSError, ValueError):  # stderr closed
        pass


def _on_end() -> None:
    global _paused, _frames_cached
    _state.depth = max(0, getattr(_state, "depth", 1) - 1)
    if _state.depth == 0 and _frames_cached:
        _frames_cached = False
        _frame_cache().frame_cache_stop()
    if _state.depth == 0 and _paused is not None:
        saved, froze = _paused
        _paused = None
        if froze:
            gc.unfreeze()
        gc.set_threshold(*saved)


def install() -> None:
    """Listen to numba's compile events (idempotent)."""
    global _installed
    if _installed:
        return
    from numba.core import event

    class _Listener(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            func = getattr(ev.data.get("dispatcher"), "py_func", None)
            _on_start(getattr(func, "__module__", "") or "")

        def on_end(self, ev: event.Event) -> None:
            _on_end()

    event.register("numba:compile", _Listener())
    _installed = True


__all__ = ["AREAS", "COMPILE_FULL_EVERY", "area_of", "enabled", "install"]
