# mypy: ignore-errors
"""Warp kernel definitions (Warp's DSL: its type annotations are runtime objects).

Built on first use, so importing ikstack never imports Warp.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ikstack.backends.warp.runtime import warp

#: the chain record's struct (:data:`._structs.CHAIN_T`), set when the kernels are built
Chain: Any = None


@lru_cache(maxsize=1)
def kinematics_kernels() -> dict[str, Any]:
    wp = warp()
    from ikstack.backends.warp._structs import CHAIN_T

    global Chain  # the kernels' annotations are read from this module's names
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
        R = wp.identity(n=3, dtype=wp.float64)
        p = wp.vec3d(wp.float64(0.0), wp.float64(0.0), wp.float64(0.0))
        for i in range(Rs.shape[0]):
            p = p + R * ps[i]
            R = R * Rs[i]
            qi = q[k, i]
            c0 = wp.vec3d(R[0, 0], R[1, 0], R[2, 0])
            c1 = wp.vec3d(R[0, 1], R[1, 1], R[2, 1])
            c2 = wp.vec3d(R[0, 2], R[1, 2], R[2, 2])
            if record != 0:
                zs[k, i] = c2
                os[k, i] = p
            if kinds[i] == 0:
                c = wp.cos(qi)
                s = wp.sin(qi)
                n0 = c * c0 + s * c1
                n1 = -s * c0 + c * c1
                R = wp.matrix_from_cols(n0, n1, c2)
            else:
                p = p + c2 * qi
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
            z = zs[k, i]
            if kinds[i] == 0:
                v = wp.cross(z, pe - os[k, i])
                J[k, 0, i] = v[0]
                J[k, 1, i] = v[1]
                J[k, 2, i] = v[2]
                J[k, 3, i] = z[0]
                J[k, 4, i] = z[1]
                J[k, 5, i] = z[2]
            else:
                J[k, 0, i] = z[0]
                J[k, 1, i] = z[1]
                J[k, 2, i] = z[2]
                J[k, 3, i] = wp.float64(0.0)
                J[k, 4, i] = wp.float64(0.0)
                J[k, 5, i] = wp.float64(0.0)

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
        pe = p + R * ch.p_end
        Re = R * ch.R_end
        out[k] = wp.mat44d(
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
        pe = p + R * ch.p_end
        Re = R * ch.R_end
        out[k] = wp.mat44d(
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
        jacobian_columns(k, ch.Rs.shape[0], ch.kinds, zs, os, pe, J)

    return {
        "fk": fk_kernel,
        "jac": jac_kernel,
        "pose": chain_pose,
        "jacobian_columns": jacobian_columns,
    }
