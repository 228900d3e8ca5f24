"""Deprecated module name of :mod:`ikstack.validate.fk_models` (in ikstack a backend is where
the IK kernels run, numpy or warp; the model check runs against FK models). Every name here
warns and gives the new module's object; the module goes in the next release."""

from __future__ import annotations

import importlib
from typing import Any

from ikstack._deprecated import warn_renamed

_NEW = {"FKBackend": "FKModel", "as_backend": "as_fk_model", "load_backend": "load_backend"}


def __getattr__(name: str) -> Any:
    module = importlib.import_module("ikstack.validate.fk_models")
    if name.startswith("__") or not hasattr(module, _NEW.get(name, name)):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warn_renamed(f"{__name__}.{name}", f"ikstack.validate.fk_models.{_NEW.get(name, name)}")
    return getattr(module, _NEW.get(name, name))
