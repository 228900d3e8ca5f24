# mypy: ignore-errors
"""The device's own steps of the generated selection (``_gen_selection``, from
:mod:`ikstack.ik.analytic._selection`): the FK of a slot and its polish, which read the
device's data layout (the chain as a struct, the polish's scratch a row a thread), so each
is written here once for the device, with the CPU step's arguments (the translator's hooks).
The constrained selection (``_gen_constrained``) reads its device context (:class:`Polish`)
from here too; its check of a row's slots against the constraint tables is generated.

The selection's device context (``dev(Polish)``) is the polish struct and the thread's row:
the polish reads its per-thread scratch from it (``iters = 0``: never touched), the FK its
placeholder arrays of joint axes and origins (never written: no Jacobian).
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._gen_gate import fk_error_one
from ikstack.backends.warp._kernels import kinematics_kernels
from ikstack.backends.warp._polish import Polish, polish_one
from ikstack.backends.warp._structs import CHAIN_T, CONSTRAINTS_T

__all__ = ["Polish", "fk_gate", "polish_slot", "pose_errors"]

Chain = CHAIN_T.type
Constraints = CONSTRAINTS_T.type

_pose = kinematics_kernels()["pose"]
_tcp_matrix = kinematics_kernels()["tcp_matrix"]


@wp.func
def pose_errors(
    q: wp.array2d(dtype=wp.float64),
    row: int,
    Tt: wp.mat44d,
    ch: Chain,
    zs: wp.array2d(dtype=wp.vec3d),
    os: wp.array2d(dtype=wp.vec3d),
):
    """FK of ``q[row]`` against ``Tt`` (``zs``, ``os``: placeholders, not written):
    ``(position error, rotation error)``, the generated
    :func:`ikstack.ik._gate.fk_error_one` (the candidate gate's and certify's errors)."""
    R0, p0 = _pose(q, row, ch.Rs, ch.ps, ch.kinds, zs, os, 0)
    e = fk_error_one(_tcp_matrix(R0, p0, ch), Tt)
    return e[0], e[1]


@wp.func
def fk_gate(
    chain: Chain,
    Q: wp.array2d(dtype=wp.float64),
    k: int,
    T: wp.mat44d,
    scratch: Polish,
    scratch_row: int,
):
    """:func:`ikstack.ik.analytic._select.fk_gate` on the device: ``(perr, rerr)`` of slot
    ``Q[k]`` against ``T``; the errors as certify measures them are kept in ``scratch.PE``,
    ``scratch.RC`` (the certified mask reads them)."""
    pe, re = pose_errors(Q, k, T, chain, scratch.zs, scratch.os)
    scratch.PE[scratch_row, k] = pe
    scratch.RC[scratch_row, k] = re
    return pe, re


@wp.func
def polish_slot(
    Q: wp.array2d(dtype=wp.float64),
    k: int,
    T: wp.mat44d,
    chain: Chain,
    piters: int,
    max_dq: wp.float64,
    ptol: wp.float64,
    rtol: wp.float64,
    scratch: Polish,
    scratch_row: int,
):
    """:func:`ikstack.ik.analytic._selection.polish_slot` on the device: at most
    ``scratch.iters`` (= ``piters``) corrections of ``Q[k]``, each joint's move capped at
    ``scratch.max_dq``, in the thread's scratch row."""
    polish_one(Q, k, scratch_row, T, chain, ptol, rtol, scratch)
