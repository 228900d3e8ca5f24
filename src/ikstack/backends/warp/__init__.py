"""The Warp backend (extra ``warp``): float64 kernels on CPU or CUDA, imported lazily."""

from ikstack.backends.warp.analytic import WarpAnalyticIK
from ikstack.backends.warp.kinematics import fk, fk_jacobian, jacobian
from ikstack.backends.warp.numerical import WarpLevenbergMarquardt
from ikstack.backends.warp.runtime import DeviceUnavailableError

__all__ = [
    "DeviceUnavailableError",
    "WarpAnalyticIK",
    "WarpLevenbergMarquardt",
    "fk",
    "fk_jacobian",
    "jacobian",
]
