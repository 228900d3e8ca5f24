"""Lazy Warp import and device selection: a missing extra or a missing GPU is a clear error,
and nothing falls back silently to another device."""

from __future__ import annotations

from typing import Any

from ikstack.errors import DeviceUnavailableError as DeviceUnavailableError  # its old home
from ikstack.errors import MissingExtraError

_wp: Any = None


def warp() -> Any:
    """The ``warp`` module, initialized once (raises :class:`MissingExtraError` if absent)."""
    global _wp
    if _wp is None:
        try:
            import warp as wp  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            raise MissingExtraError("warp-lang", "warp") from None
        wp.config.log_level = getattr(wp, "LOG_WARNING", 30)  # no banner on init
        wp.init()
        _wp = wp
    return _wp


def device(name: str) -> Any:
    """A Warp device by name (``"cpu"``, ``"cuda"``, ``"cuda:1"``).

    Raises:
        DeviceUnavailableError: CUDA asked for on a machine without a usable GPU, or an unknown
            device; the message lists the devices that exist.
    """
    wp = warp()
    names = [str(d) for d in wp.get_devices()]
    if name.startswith("cuda") and not wp.is_cuda_available():
        raise DeviceUnavailableError(
            f"device {name!r} requested but no CUDA GPU is available (devices here: "
            f"{', '.join(names)}); ikstack does not fall back to the CPU silently"
        )
    try:
        return wp.get_device(name)
    except Exception:
        raise DeviceUnavailableError(
            f"unknown Warp device {name!r}; devices: {', '.join(names)}"
        ) from None
