# mypy: ignore-errors
"""The analytic path's bounded polish on the device (:func:`ikstack.ik.analytic._polish.
polish_one`): a chain within the alignment tolerance of its family is solved on the exact
surrogate, and each candidate the gate looks at is first moved onto the true chain by at most
``iters`` monotone Gauss-Newton corrections (damped normal equations, every joint's move capped
at ``max_dq``, a step kept only if it lowers ``|e_p| + |e_r|``, halving up to four times).

:class:`Polish` carries the options, the per-slot polished flags (no slot is polished twice
however many gate passes see it, as on the CPU path) and one row of scratch per thread. With
``iters = 0`` nothing is polished and its arrays are never touched (placeholders suffice).
The loop and its pieces are generated from the CPU source (``_gen_polish.py``:
``polish_into``); this file holds the options and the selection's call.
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._gen_polish import polish_into
from ikstack.backends.warp._structs import CHAIN_T, POLISH_WORK_ROWS_T

Chain = CHAIN_T.type


@wp.struct
class Polish:
    #: corrections per candidate (0: no polish)
    iters: int
    #: largest move of any joint per correction [rad]
    max_dq: wp.float64
    #: (rows, K) slots polished so far
    PL: wp.array2d(dtype=wp.int32)
    #: per-thread scratch (:data:`ikstack.ik.analytic._polish.POLISH_WORK`, a row a thread)
    ws: POLISH_WORK_ROWS_T.type
    #: (1, 1) placeholders for a pose call with the former signature (the selection's
    #: ``kinematics_kernels()["pose"]``, which no longer records joint axes and origins):
    #: never read or written
    zs: wp.array2d(dtype=wp.vec3d)
    os: wp.array2d(dtype=wp.vec3d)
    #: (rows, K) each slot's FK errors at its last FK check (position, and rotation as
    #: certify measures it): the certified mask of ``return_all`` reads them instead of
    #: computing the slot's FK a second time
    PE: wp.array2d(dtype=wp.float64)
    RC: wp.array2d(dtype=wp.float64)


@wp.func
def polish_one(
    Qf: wp.array2d(dtype=wp.float64),
    row: int,
    i: int,
    Tt: wp.mat44d,
    ch: Chain,
    ptol: wp.float64,
    rtol: wp.float64,
    pol: Polish,
):
    """At most ``pol.iters`` monotone corrections of ``Qf[row]`` in place (thread ``i``'s
    scratch); returns the count."""
    return polish_into(Qf[row], Tt, ch, pol.iters, pol.max_dq, ptol, rtol, pol.ws, i)
