"""Old public names kept for one release: each works as before and warns
(:class:`~ikstack.errors.IKStackDeprecationWarning`, a DeprecationWarning) naming its
replacement. The warning points at the caller's line: the first frame outside ikstack."""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from collections.abc import Callable, Mapping
from types import FrameType
from typing import Any

from ikstack.errors import IKStackDeprecationWarning, InputError

_PACKAGE = os.path.dirname(__file__) + os.sep  # as the code objects of its modules spell it


def _outside_stacklevel() -> int:
    """The ``stacklevel`` of the first frame outside ikstack, for a ``warnings.warn`` called by
    this function's caller. Frames of the import machinery are skipped without counting, as
    ``warnings.warn`` skips them (a ``from ikstack.x import old_name`` passes through them)."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        while (
            frame is not None
            and "importlib" in frame.f_code.co_filename
            and "_bootstrap" in frame.f_code.co_filename
        ):
            frame = frame.f_back
        level += 1
    return level


def warn_deprecated(message: str) -> None:
    """Warn (:class:`~ikstack.errors.IKStackDeprecationWarning`) at the caller's line outside
    ikstack that something it uses goes in the next release; ``message`` says what to use."""
    warnings.warn(message, IKStackDeprecationWarning, stacklevel=_outside_stacklevel())


def warn_renamed(old: str, new: str) -> None:
    """Warn that ``old`` is now ``new`` (it goes in the next release)."""
    warnings.warn(
        f"{old} is deprecated; use {new} (the old name goes in the next release)",
        IKStackDeprecationWarning,
        stacklevel=_outside_stacklevel(),
    )


def renamed_attribute(old: str, new: str) -> property:
    """A property ``old`` that warns and reads (and, where settable, writes) attribute ``new``."""

    def get(self: Any) -> Any:
        warn_renamed(f"{type(self).__name__}.{old}", f".{new}")
        return getattr(self, new)

    return property(get, doc=f"Deprecated name of :attr:`{new}`.")


def renamed_module_names(
    package: str, table: Mapping[str, tuple[str, str]], fallback: Callable[[str], Any] | None = None
) -> Callable[[str], Any]:
    """A module ``__getattr__`` for renamed names: ``table`` maps each old name to ``(module,
    new name)``; an old name warns and gives the new object. Other names go to ``fallback``
    (a lazy-import ``__getattr__``), else raise AttributeError."""

    def __getattr__(name: str) -> Any:
        entry = table.get(name)
        if entry is not None:
            module, new = entry
            # ``from package import old`` asks twice: the import system's check of a package's
            # from-list, then the import itself; only the second warns
            if sys._getframe(1).f_code.co_name != "_handle_fromlist":
                warn_renamed(f"{package}.{name}", f"{module}.{new}")
            return getattr(importlib.import_module(module), new)
        if fallback is not None:
            return fallback(name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def renamed_keyword(
    kwargs: dict[str, Any], old: str, new: str, value: Any, where: str, default: Any = None
) -> Any:
    """The value of keyword ``new`` when ``old`` may still be passed in ``kwargs`` (popped;
    warns). Passing both is an :class:`~ikstack.errors.InputError`."""
    if old not in kwargs:
        return value
    old_value = kwargs.pop(old)
    if value is not default:
        raise InputError(f"{where} got both {old!r} and {new!r}; pass only {new!r}")
    warn_renamed(f"{where}({old}=...)", f"{new}=...")
    return old_value


def old_seed(q0: Any, seed: Any, where: str) -> Any:
    """``seed=`` given where the joint guess is now ``q0=``: warns and gives ``seed``
    (``q0`` given too is an :class:`~ikstack.errors.InputError`)."""
    if q0 is not None:
        raise InputError(f"{where} got both 'seed' and 'q0'; pass only 'q0' (the joint guess)")
    warn_renamed(f"{where}(seed=...)", "q0=... (the joint guess)")
    return seed
