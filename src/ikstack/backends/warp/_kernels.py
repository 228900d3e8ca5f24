# mypy: ignore-errors
"""Warp kernel definitions (Warp's DSL: its type annotations are runtime objects).

Each joint's step, the TCP and each Jacobian column are generated from the CPU kernels'
source (``_gen_kinematics``: :func:`ikstack.kinematics._kernels.joint_step`, ``tool_pose``,
``joint_column``); here are only the loops over joints and configurations.

Built on first use, so importing ikstack never imports Warp.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ikstack.backends.warp.runtime import warp

#: the chain record's struct (:data:`._structs.CHAIN_T`) and the Warp module, set when the
#: kernels are built
Chain: Any = None
wp: Any = None


@lru_cache(maxsize=1)
def kinematics_kernels() -> dict[str, Any]:
    global Chain, wp  # the kernels' annotations are read from this module's names
    wp = warp()
    from ikstack.backends.warp._gen_kinematics import joint_column, joint_step, tool_pose
    from ikstack.backends.warp._structs import CHAIN_T

    Chain = CHAIN_T.type

    @wp.func
    def chain_pose(
        q: wp.array2d(dtype=wp.float64),
        k: int,
        Rs: wp.array(dtype=wp.mat33d),
        ps: wp.array(dtype=wp.vec3d),
        kinds: wp.array(dtype=wp.int32),
        zs: wp.array2d(dtype=wp.vec3d),
        os: wp.array2d(dtype=wp.vec3d),
        record: int,
    ):
        """The frame after the last joint of ``q[k]``, ``(R, p)``; with ``record`` each
        joint's axis and origin into ``zs[k]``, ``os[k]`` (for :func:`jacobian_columns`)."""
        R = wp.identity(n=3, dtype=wp.float64)
        p = wp.vec3d(wp.float64(0.0), wp.float64(0.0), wp.float64(0.0))
        for i in range(Rs.shape[0]):
            R, p = joint_step(R, p, Rs[i], ps[i], kinds[i], q[k, i])
            if record != 0:
                zs[k, i] = wp.vec3d(R[0, 2], R[1, 2], R[2, 2])
                os[k, i] = p
        return R, p

    @wp.func
    def jacobian_columns(
        k: int,
        n: int,
        kinds: wp.array(dtype=wp.int32),
        zs: wp.array2d(dtype=wp.vec3d),
        os: wp.array2d(dtype=wp.vec3d),
        pe: wp.vec3d,
        J: wp.array3d(dtype=wp.float64),
    ):
        """Geometric Jacobian columns at the TCP ``pe`` from recorded joint axes and origins."""
        for i in range(n):
            lin, ang = joint_column(kinds[i], zs[k, i], os[k, i], pe)
            for r in range(3):
                J[k, r, i] = lin[r]
                J[k, 3 + r, i] = ang[r]

    @wp.func
    def tcp_matrix(R: wp.mat33d, p: wp.vec3d, ch: Chain):
        """The (4, 4) TCP pose of the frame ``(R, p)`` after the last joint."""
        Re, pe = tool_pose(R, p, ch.R_end, ch.p_end)
        return wp.mat44d(
            Re[0, 0],
            Re[0, 1],
            Re[0, 2],
            pe[0],
            Re[1, 0],
            Re[1, 1],
            Re[1, 2],
            pe[1],
            Re[2, 0],
            Re[2, 1],
            Re[2, 2],
            pe[2],
            wp.float64(0.0),
            wp.float64(0.0),
            wp.float64(0.0),
            wp.float64(1.0),
        )

    @wp.kernel
    def fk_kernel(
        q: wp.array2d(dtype=wp.float64),
        ch: Chain,
        zs: wp.array2d(dtype=wp.vec3d),
        os: wp.array2d(dtype=wp.vec3d),
        out: wp.array(dtype=wp.mat44d),
    ):
        k = wp.tid()
        R, p = chain_pose(q, k, ch.Rs, ch.ps, ch.kinds, zs, os, 0)
        out[k] = tcp_matrix(R, p, ch)

    @wp.kernel
    def jac_kernel(
        q: wp.array2d(dtype=wp.float64),
        ch: Chain,
        zs: wp.array2d(dtype=wp.vec3d),
        os: wp.array2d(dtype=wp.vec3d),
        out: wp.array(dtype=wp.mat44d),
        J: wp.array3d(dtype=wp.float64),
    ):
        k = wp.tid()
        R, p = chain_pose(q, k, ch.Rs, ch.ps, ch.kinds, zs, os, 1)
        T = tcp_matrix(R, p, ch)
        out[k] = T
        pe = wp.vec3d(T[0, 3], T[1, 3], T[2, 3])
        jacobian_columns(k, ch.Rs.shape[0], ch.kinds, zs, os, pe, J)

    return {
        "fk": fk_kernel,
        "jac": jac_kernel,
        "pose": chain_pose,
        "jacobian_columns": jacobian_columns,
        "tcp_matrix": tcp_matrix,
    }
