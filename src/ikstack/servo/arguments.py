"""The servo's checked arguments and its ``kernel`` (the C++ kernel, ``"native"``; ``backend``
is its former name: in ikstack a backend is where the IK kernels run, numpy or warp)."""

from __future__ import annotations

import os
from typing import Any

from ikstack._deprecated import warn_deprecated, warn_renamed
from ikstack.diffik import DifferentialIK, DLSVelocitySolver
from ikstack.errors import InputError
from ikstack.model import Chain
from ikstack.servo.config import ServoConfig
from ikstack.servo.motion import MotionGenerator
from ikstack.vocabulary import SERVO_KERNELS

#: the servo kernel: the C++ library's (module ikstack._native)
KERNELS = SERVO_KERNELS
#: the retired compiled-Python kernel's name: accepted one more release with a
#: DeprecationWarning, and runs the C++ kernel
DEPRECATED_KERNELS = ("numba",)
#: the environment variable that picks the kernel when ``Servo(..., kernel=None)``
KERNEL_ENV = "IKSTACK_SERVO"


def kernel_name(name: str | None, argument: str = "kernel") -> str:
    """``name`` (the servo kernel's, given as ``argument``), else the ``IKSTACK_SERVO``
    environment variable, else ``"native"``.

    ``"numba"`` named the compiled-Python kernel, retired once the C++ one replayed it bit for
    bit: it warns (DeprecationWarning) and gives ``"native"``; it goes in the next release."""
    given = name
    name = given if given is not None else (os.environ.get(KERNEL_ENV) or "native")
    where = argument if given is not None else f"the {KERNEL_ENV} environment variable"
    if name in DEPRECATED_KERNELS:
        warn_deprecated(
            f"{where} {name!r}: the compiled-Python servo kernel is retired; the C++ "
            'kernel ("native") runs, with the same results. This value goes in the '
            "next release"
        )
        return "native"
    if name not in KERNELS:
        raise InputError(f"{where} must be {', '.join(map(repr, KERNELS))}; got {name!r}")
    return name


def check_arguments(
    chain: Any, config: Any, differential_ik: Any, motion_generator: Any
) -> tuple[ServoConfig, DifferentialIK]:
    """The servo's arguments checked: ``(config, solver)`` with their defaults filled in."""
    if not isinstance(chain, Chain):
        raise InputError(f"chain must be an ikstack Chain; got {type(chain).__name__}")
    cfg = config if config is not None else ServoConfig()
    if not isinstance(cfg, ServoConfig):
        raise InputError(f"config must be a ServoConfig; got {type(cfg).__name__}")
    solver = differential_ik if differential_ik is not None else DLSVelocitySolver()
    if not isinstance(solver, DifferentialIK):
        raise InputError(
            "differential_ik must be a DifferentialIK (implement solve(request)); "
            f"got {type(solver).__name__}"
        )
    if motion_generator is not None and not isinstance(motion_generator, MotionGenerator):
        raise InputError(
            f"motion_generator must be a MotionGenerator; got {type(motion_generator).__name__}"
        )
    if cfg.posture is not None and cfg.posture.shape != (chain.dof,):
        raise InputError(
            f"nullspace_reference has {cfg.posture.shape[0]} values; "
            f"the chain has {chain.dof} joints"
        )
    return cfg, solver


def resolve_kernel(kernel: str | None, backend: str | None) -> str:
    """The servo kernel from ``kernel=``, or from ``backend=``, its former name (warns)."""
    if backend is None:
        return kernel_name(kernel, "kernel")
    if kernel is not None:
        raise InputError("Servo got both 'kernel' and 'backend'; pass only 'kernel'")
    warn_renamed(
        "Servo(backend=...)", "kernel=... (a backend is where IK kernels run: numpy or warp)"
    )
    return kernel_name(backend, "backend")
