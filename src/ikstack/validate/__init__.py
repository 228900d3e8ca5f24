"""The Jacobian-IK model check for any forward-kinematics backend.

``check_jacobian_ik(chain)`` samples targets by FK, solves each from the neutral pose with
damped least squares on a finite-difference Jacobian, and returns a
:class:`JacobianIKReport` (``format_table``, ``to_json``, ``exit_code``: 0 pass, 1 fail,
3 skipped). FK models: an ikstack chain, a MuJoCo model (``mujoco`` extra), or any function
(``FKBackend``, ``as_backend``, ``load_backend``: the former names, which warn).
"""

from ikstack._deprecated import renamed_module_names
from ikstack.validate.fk_models import (
    CallableFK,
    ChainFK,
    FKModel,
    MujocoFK,
    as_backend,
    as_fk_model,
    load_backend,
    load_fk_model,
)
from ikstack.validate.jacobian_ik import CheckConfig, check_jacobian_ik
from ikstack.validate.plot import plot_errors
from ikstack.validate.progress import progress_bar
from ikstack.validate.report import (
    LIKELY_CAUSES,
    CheckStatus,
    JacobianIKReport,
    TargetResult,
    format_table,
)

__all__ = [
    "LIKELY_CAUSES",
    "CallableFK",
    "ChainFK",
    "CheckConfig",
    "CheckStatus",
    "FKModel",
    "JacobianIKReport",
    "MujocoFK",
    "TargetResult",
    "as_backend",
    "as_fk_model",
    "check_jacobian_ik",
    "format_table",
    "load_backend",
    "load_fk_model",
    "plot_errors",
    "progress_bar",
]

#: names renamed in this release, kept one release (they warn)
__getattr__ = renamed_module_names(__name__, {"FKBackend": ("ikstack.validate", "FKModel")})
