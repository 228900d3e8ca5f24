"""Former home of the servo's argument checks and kernel choice (:mod:`ikstack.servo.arguments`;
"backend" now means only where the IK kernels run). Its names still work for one release and
warn."""

from __future__ import annotations

from ikstack._deprecated import renamed_module_names

_NEW = "ikstack.servo.arguments"

#: names renamed in this release, kept one release (they warn)
__getattr__ = renamed_module_names(
    __name__,
    {
        "BACKENDS": (_NEW, "KERNELS"),
        "DEPRECATED_BACKENDS": (_NEW, "DEPRECATED_KERNELS"),
        "BACKEND_ENV": (_NEW, "KERNEL_ENV"),
        "resolve_backend": (_NEW, "kernel_name"),
        "resolve_kernel": (_NEW, "resolve_kernel"),
        "check_arguments": (_NEW, "check_arguments"),
    },
)
