"""The records the IK kernels share: a chain's kinematics and its coupled-joint constraint tables.

Each is a :class:`ikstack._records.Record` (a named tuple type for compiled code, with the
field dtypes and shapes its packing reads); the solvers build them once and pass them whole.
"""

from __future__ import annotations

from typing import Any

from ikstack._records import F, I, Record

#: a chain's compiled kinematics (:func:`ikstack.kinematics.compile_chain`), as
#: ``kinematics._kernels._jac_into`` takes it
CHAIN = Record(
    "ChainData",
    __name__,
    [
        ("Rs", F, ("dof", 3, 3)),  # per joint, its frame's rotation in the previous joint's frame
        ("ps", F, ("dof", 3)),  # per joint, its origin in the previous joint's frame
        ("kinds", I, ("dof",)),  # revolute 0, prismatic 1
        ("R_end", F, (3, 3)),  # the TCP in the last joint's frame
        ("p_end", F, (3,)),
    ],
)
ChainData = CHAIN.type

#: a chain's coupled-joint constraints (:func:`ikstack.ik._fixed_gate.constraint_tables`), as
#: :func:`ikstack.ik._gate.constraints_row` takes them
CONSTRAINTS = Record(
    "ConstraintData",
    __name__,
    [
        ("qidx", I, ("nq", 2)),  # joints (i, j) of each quadrant-polynomial constraint
        ("qcoef", F, ("nq", 2, 2, 4)),  # rows [a0, a1, a2, +1 upper / -1 lower] by quadrant
        ("A", F, ("nl", "dof")),  # linear rows A q <= b
        ("b", F, ("nl",)),
    ],
)
ConstraintData = CONSTRAINTS.type

#: the FK gate's settings (:func:`ikstack.ik._gate.certify_rows`): limits (tolerance applied)
#: and FK tolerances
GATE = Record(
    "GateData",
    __name__,
    [
        ("lo", F, ("dof",)),
        ("hi", F, ("dof",)),
        ("tol_p", F, ()),  # [m]
        ("tol_r", F, ()),  # [rad]
    ],
)
GateData = GATE.type


def chain_data(cc: Any) -> Any:
    """:data:`CHAIN` of a :class:`~ikstack.kinematics.forward.CompiledChain`."""
    return CHAIN.make(Rs=cc.Rs, ps=cc.ps, kinds=cc.kinds, R_end=cc.R_end, p_end=cc.p_end)


def constraint_data(tabs: Any) -> Any:
    """:data:`CONSTRAINTS` of :class:`ikstack.ik._fixed_gate.ConstraintTables`."""
    return CONSTRAINTS.make(qidx=tabs.qidx, qcoef=tabs.qcoef, A=tabs.A, b=tabs.b)
