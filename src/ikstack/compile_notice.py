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
"""

from __future__ import annotations

import os
import sys
import threading

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

_state = threading.local()
_shown: set[str] = set()
_installed = False


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


def _on_start(module: str) -> None:
    depth = getattr(_state, "depth", 0)
    _state.depth = depth + 1
    if depth:  # a callee compiled inside a kernel's compilation: already announced
        return
    area = area_of(module)
    if area is None or area in _shown or not enabled():
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
    _state.depth = max(0, getattr(_state, "depth", 1) - 1)


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


__all__ = ["AREAS", "area_of", "enabled", "install"]
