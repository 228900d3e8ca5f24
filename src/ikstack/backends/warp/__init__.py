"""The Warp backend (extra ``warp``): float64 kernels on CPU or CUDA, imported lazily."""

from ikstack.backends.warp.analytic import WarpAnalyticIK
from ikstack.backends.warp.kinematics import fk, fk_jacobian, jacobian
from ikstack.backends.warp.runtime import DeviceUnavailableError

__all__ = ["DeviceUnavailableError", "WarpAnalyticIK", "fk", "fk_jacobian", "jacobian"]
