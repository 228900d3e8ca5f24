"""Compute backends: ``numpy`` (the compiled CPU path, always there) and ``warp`` (extra).

``ikstack.backends.warp`` imports Warp only when its functions are called.
"""

from ikstack.backends.registry import BACKENDS, BackendChoice, choose, describe

__all__ = ["BACKENDS", "BackendChoice", "choose", "describe"]
