"""Solvers immutable once built, so that one solver can be shared by threads.

A solver derives everything it needs from its chain and options while it is constructed;
a call's own options (a path's step bound, a search mode) are arguments of that call, never
attributes set for its duration. :class:`Immutable` enforces it: attributes are set by the
constructors (the class's ``__init__`` and its bases'), and setting or deleting one afterwards
raises :class:`AttributeError`.
"""

from __future__ import annotations

from typing import Any


class _FreezeAfterInit(type):
    """Marks an instance built once the outermost ``__init__`` has returned."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        obj = super().__call__(*args, **kwargs)
        object.__setattr__(obj, "_built", True)
        return obj


class Immutable(metaclass=_FreezeAfterInit):
    """Base of objects whose attributes cannot change after construction."""

    _built = False

    def __setattr__(self, name: str, value: Any) -> None:
        if self._built:
            raise AttributeError(
                f"{type(self).__name__} is immutable once built (so it can be shared by "
                f"threads): {name!r} cannot be set; pass a call's options as its arguments, or "
                "build another solver"
            )
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if self._built:
            raise AttributeError(
                f"{type(self).__name__} is immutable once built: {name!r} cannot be deleted"
            )
        object.__delattr__(self, name)
