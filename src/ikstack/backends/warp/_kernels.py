# mypy: ignore-errors
"""Warp kernel definitions (Warp's DSL: its type annotations are runtime objects).

The loops over joints are generated from the CPU kernels' source (``_gen_kinematics``:
:func:`ikstack.kinematics._kernels._chain_pose`, ``_finish``, ``_jac_into``, ``fk_one``,
``jac_one`` and the per-joint pieces they call); here are only the launches over
configurations (one a thread, as the CPU's ``fk_batch`` and ``jac_batch``) and two adapters
for the analytic selection (:func:`chain_pose`, :func:`tcp_matrix`).

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
    from ikstack.backends.warp._gen_kinematics import _chain_pose, _finish, _jac_into, tool_pose
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
        """The frame after the last joint of ``q[k]``, ``(R, p)``: the generated
        ``_chain_pose`` (``zs``, ``os``, ``record`` are unused: the selection's former
        signature)."""
        return _chain_pose(q[k], Rs, ps, kinds)

    @wp.func
    def tcp_matrix(R: wp.mat33d, p: wp.vec3d, ch: Chain):
        """The (4, 4) TCP pose of the frame ``(R, p)`` after the last joint, as a value."""
        Re, pe = tool_pose(R, p, ch.R_end, ch.p_end)
        # fmt: off
        return wp.mat44d(
            Re[0, 0], Re[0, 1], Re[0, 2], pe[0],
            Re[1, 0], Re[1, 1], Re[1, 2], pe[1],
            Re[2, 0], Re[2, 1], Re[2, 2], pe[2],
            wp.float64(0.0), wp.float64(0.0), wp.float64(0.0), wp.float64(1.0),
        )
        # fmt: on

    @wp.kernel
    def fk_kernel(q: wp.array2d(dtype=wp.float64), ch: Chain, out: wp.array3d(dtype=wp.float64)):
        k = wp.tid()
        R, p = _chain_pose(q[k], ch.Rs, ch.ps, ch.kinds)
        _finish(R, p, ch.R_end, ch.p_end, out[k])

    @wp.kernel
    def jac_kernel(
        q: wp.array2d(dtype=wp.float64),
        ch: Chain,
        out: wp.array3d(dtype=wp.float64),
        J: wp.array3d(dtype=wp.float64),
    ):
        k = wp.tid()
        _jac_into(q[k], ch.Rs, ch.ps, ch.kinds, ch.R_end, ch.p_end, J[k], out[k])

    return {"fk": fk_kernel, "jac": jac_kernel, "pose": chain_pose, "tcp_matrix": tcp_matrix}
