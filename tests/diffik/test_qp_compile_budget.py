"""The velocity QP's step compiles no second specialization of the shared FK kernels.

The step's workspace arrives as strided views (numba layout "A"); every other caller passes the
kinematics kernels C-contiguous arrays. A step that handed its views to a shared kernel made
numba compile that kernel once more (about a second of a first run), so the step inlines the FK
and Jacobian instead. Dispatcher signatures are what numba compiled or loaded in this process.
"""

from __future__ import annotations

import numpy as np

from ikstack.diffik import ActiveSetQPSolver
from ikstack.diffik import _qp_workspace as WS
from ikstack.kinematics import _kernels as KK
from ikstack.robots import load

#: per kernel, the argument positions of the chain's arrays and the outputs (``q`` may be any
#: view a caller holds)
CHAIN_AND_OUTPUTS = {"jac_one": (1, 2, 3, 4, 5, 6, 7), "fk_one": (1, 2, 3, 4, 5, 6)}


def _layouts(dispatcher, positions):
    return {getattr(sig[i], "layout", None) for sig in dispatcher.signatures for i in positions} - {
        None
    }


def test_qp_step_leaves_the_fk_kernels_one_layout():
    arm = load("marvin_left")  # coupled joints: every workspace field is used
    solver = ActiveSetQPSolver(arm)
    q = np.radians([10.0, 30.0, 0.0, -60.0, 0.0, 20.0, 10.0])
    T = solver.flange_fk_jacobian(q)[0]
    T[0, 3] += 0.002
    r1 = solver.step(q, T, 0.01)
    r2 = solver.step(r1.q, T, 0.01)  # from the cached kinematics
    assert r1.success and r2.success
    for name, positions in CHAIN_AND_OUTPUTS.items():
        assert _layouts(getattr(KK, name), positions) <= {"C"}, name
    for kernel in (WS.pre_step, WS.post_step):
        assert len(kernel.signatures) == 1
