"""The Jacobian-IK model check for any forward-kinematics backend.

``check_jacobian_ik(chain)`` samples targets by FK, solves each from the neutral pose with
damped least squares on a finite-difference Jacobian, and returns a
:class:`JacobianIKReport` (``format_table``, ``to_json``, ``exit_code``: 0 pass, 1 fail,
3 skipped). Backends: an ikstack chain, a MuJoCo model (``mujoco`` extra), or any function.
"""

from ikstack.validate.backends import (
    CallableFK,
    ChainFK,
    FKBackend,
    MujocoFK,
    as_backend,
    load_backend,
)
from ikstack.validate.jacobian_ik import check_jacobian_ik
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
    "CheckStatus",
    "FKBackend",
    "JacobianIKReport",
    "MujocoFK",
    "TargetResult",
    "as_backend",
    "check_jacobian_ik",
    "format_table",
    "load_backend",
    "plot_errors",
    "progress_bar",
]
