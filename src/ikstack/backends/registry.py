"""One registry for compute backends chosen by name: validates the name and the device."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ikstack.errors import InputError
from ikstack.vocabulary import BACKEND_DEVICES, BACKEND_TEXT

#: backend name -> (devices it accepts, what it is); the names are
#: :data:`ikstack.vocabulary.BACKENDS`
BACKENDS: dict[str, tuple[tuple[str, ...], str]] = {
    name: (devices, BACKEND_TEXT[name]) for name, devices in BACKEND_DEVICES.items()
}


@dataclass(frozen=True)
class BackendChoice:
    """A validated backend and device."""

    name: str
    device: str


def choose(backend: str = "numpy", device: str | None = None) -> BackendChoice:
    """Validate a backend and device name; nothing is imported or started here.

    Raises:
        InputError: an unknown backend or a device the backend does not run on; the message lists
            the valid choices.
    """
    if backend not in BACKENDS:
        valid = ", ".join(f"{k!r} ({v[1]})" for k, v in BACKENDS.items())
        raise InputError(f"unknown backend {backend!r}; valid backends: {valid}")
    devices = BACKENDS[backend][0]
    dev = device or "cpu"
    base = dev.split(":", 1)[0]
    if base not in devices:
        raise InputError(f"backend {backend!r} runs on {', '.join(devices)}; got device {dev!r}")
    return BackendChoice(backend, dev)


def describe() -> list[dict[str, Any]]:
    """The registered backends, their devices and what they are."""
    return [{"name": k, "devices": list(v[0]), "description": v[1]} for k, v in BACKENDS.items()]
