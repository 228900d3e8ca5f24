"""SO(3)/SE(3) on batched arrays, and the boundary checks every layer uses.

Conventions: transforms ``(..., 4, 4)`` float64 named for their frames (``T_base_tool``);
quaternions ``wxyz``; twists and pose errors ``[linear; angular]`` in the base frame.
"""

from ikstack import _numba_cache, compile_notice
from ikstack.spatial import se3, so3
from ikstack.spatial.checks import (
    RIGID_ATOL,
    as_float_array,
    as_rotations,
    as_transforms,
    as_vectors,
    check_finite,
)
from ikstack.spatial.se3 import (
    adjoint,
    from_pose,
    from_xyz_rpy,
    interpolate,
    inverse,
    make_transform,
    pose_error,
    position_rotation_error,
    project_rigid,
    to_pose,
)
from ikstack.spatial.so3 import (
    angle_between,
    euler_xyz_to_matrix,
    matrix_to_euler_xyz,
    matrix_to_quat,
    matrix_to_rotvec,
    quat_to_matrix,
    rotvec_to_matrix,
    rpy_to_matrix,
    skew,
    slerp,
    wrap_angle,
)

compile_notice.install()  # every module with kernels imports this layer
_numba_cache.install()

__all__ = [
    "RIGID_ATOL",
    "adjoint",
    "angle_between",
    "as_float_array",
    "as_rotations",
    "as_transforms",
    "as_vectors",
    "check_finite",
    "euler_xyz_to_matrix",
    "from_pose",
    "from_xyz_rpy",
    "interpolate",
    "inverse",
    "make_transform",
    "matrix_to_euler_xyz",
    "matrix_to_quat",
    "matrix_to_rotvec",
    "pose_error",
    "position_rotation_error",
    "project_rigid",
    "quat_to_matrix",
    "rotvec_to_matrix",
    "rpy_to_matrix",
    "se3",
    "skew",
    "slerp",
    "so3",
    "to_pose",
    "wrap_angle",
]
