"""Seeing results: the browser viewer (viser) and plots. Nothing below this layer imports it.

``Viewer`` needs the ``viz`` extra (viser; trimesh for meshes); importing this package does not
import viser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ikstack.viz.viewer import Viewer

__all__ = ["Viewer"]


def __getattr__(name: str) -> Any:
    if name == "Viewer":
        from ikstack.viz.viewer import Viewer

        return Viewer
    raise AttributeError(f"module 'ikstack.viz' has no attribute {name!r}")
