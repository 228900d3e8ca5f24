"""Old public names kept for one release: each works as before and warns (DeprecationWarning)
naming its replacement."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from ikstack.errors import InputError


def warn_renamed(old: str, new: str, stacklevel: int = 3) -> None:
    """Warn that ``old`` is now ``new`` (it goes in the next release)."""
    warnings.warn(f"{old} is deprecated; use {new} (the old name goes in the next release)",
                  DeprecationWarning, stacklevel=stacklevel)


def renamed_attribute(old: str, new: str) -> property:
    """A property ``old`` that warns and reads (and, where settable, writes) attribute ``new``."""

    def get(self: Any) -> Any:
        warn_renamed(f"{type(self).__name__}.{old}", f".{new}")
        return getattr(self, new)

    return property(get, doc=f"Deprecated name of :attr:`{new}`.")


def renamed_module_names(package: str, table: Mapping[str, tuple[str, str]],
                         fallback: Callable[[str], Any] | None = None) -> Callable[[str], Any]:
    """A module ``__getattr__`` for renamed names: ``table`` maps each old name to ``(module,
    new name)``; an old name warns and gives the new object. Other names go to ``fallback``
    (a lazy-import ``__getattr__``), else raise AttributeError."""

    def __getattr__(name: str) -> Any:
        entry = table.get(name)
        if entry is not None:
            module, new = entry
            warn_renamed(f"{package}.{name}", f"{module}.{new}")
            return getattr(importlib.import_module(module), new)
        if fallback is not None:
            return fallback(name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def renamed_keyword(kwargs: dict[str, Any], old: str, new: str, value: Any, where: str,
                    default: Any = None) -> Any:
    """The value of keyword ``new`` when ``old`` may still be passed in ``kwargs`` (popped;
    warns). Passing both is an :class:`~ikstack.errors.InputError`."""
    if old not in kwargs:
        return value
    old_value = kwargs.pop(old)
    if value is not default:
        raise InputError(f"{where} got both {old!r} and {new!r}; pass only {new!r}")
    warn_renamed(f"{where}({old}=...)", f"{new}=...", stacklevel=5)  # the subclass's caller
    return old_value


def old_seed(q0: Any, seed: Any, where: str) -> Any:
    """``seed=`` given where the joint guess is now ``q0=``: warns and gives ``seed``
    (``q0`` given too is an :class:`~ikstack.errors.InputError`)."""
    if q0 is not None:
        raise InputError(f"{where} got both 'seed' and 'q0'; pass only 'q0' (the joint guess)")
    warn_renamed(f"{where}(seed=...)", "q0=... (the joint guess)", stacklevel=4)
    return seed
