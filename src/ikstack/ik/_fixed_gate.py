"""Single-target helpers around the compiled FK gate (:mod:`ikstack.ik._gate`).

- :func:`constraint_tables`: a chain's coupled-joint constraints as arrays the compiled gate
  evaluates (:class:`~ikstack.model.QuadrantPolynomialConstraint`,
  :class:`~ikstack.model.LinearJointConstraint`); any other constraint type makes the callers
  evaluate every constraint with its own Python code;
- :class:`FastGate`: :func:`ikstack.ik.certify` for fixed tolerances on compiled code, with the
  same numbers and verdicts (it falls back to ``certify`` when a constraint cannot be decided);
- :func:`result_one`: an :class:`~ikstack.ik.IKResult` through its fast constructor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit
from numpy.typing import NDArray

from ikstack.ik._data import GATE, ChainData, ConstraintData, GateData, chain_data, constraint_data
from ikstack.ik._gate import certify_rows, certify_rows_parallel
from ikstack.ik.result import IKResult, certify
from ikstack.kinematics import compile_chain
from ikstack.model import Chain
from ikstack.model.chain_cache import ChainCache
from ikstack.model.constraints import LinearJointConstraint, QuadrantPolynomialConstraint

Array = NDArray[np.float64]

#: rows from which the gate runs on all cores
PARALLEL_ROWS = 512

#: rows below which the gate passes its records to compiled code as plain tuples
#: (:func:`certify_fields`): there the ~2 us numba spends typing three named tuples is a tenth of
#: the call or more; from here on it is a few percent, and the records go whole, so a first
#: batch run compiles no second entry point (about 0.3 s)
FIELDS_ROWS = 64


@njit(cache=True)
def certify_fields(Q, T, chain, cons, gate, ok, perr, rerr, Tbuf):  # pragma: no cover - compiled
    """:func:`certify_rows` with the chain, constraint and gate records passed as plain tuples
    of their fields (in field order), rebuilt here.

    For a call from Python: numba types a named tuple's fields on every call through a slow
    path (about 2 us for these three records against about 0.6 us as plain tuples, numba 0.68),
    and the records cost nothing inside compiled code. A plain tuple keeps numba's type check
    of every field (unlike a packed layout) and compiles no reshape."""
    return certify_rows(
        Q, T, ChainData(*chain), ConstraintData(*cons), GateData(*gate), ok, perr, rerr, Tbuf
    )


@dataclass(frozen=True)
class ConstraintTables:
    """A chain's coupled-joint constraints as arrays for :func:`certify_rows`."""

    qidx: NDArray[np.int64]  #: (m, 2) joints (i, j) of each quadrant-polynomial constraint
    qcoef: Array  #: (m, 2, 2, 4) rows [a0, a1, a2, +1 upper / -1 lower] by (q_i >= 0, q_j >= 0)
    A: Array  #: (r, dof) linear rows A q <= b
    b: Array  #: (r,)
    compiled: bool  #: every constraint is in the tables (else Python evaluates them all)


_TABLES: ChainCache[ConstraintTables] = ChainCache("constraint tables", 256)


def constraint_tables(chain: Chain) -> ConstraintTables:
    """The chain's constraints as arrays (built once per chain)."""
    cached = _TABLES.get(id(chain))
    if cached is not None:
        return cached
    qidx: list[tuple[int, int]] = []
    qcoef: list[Array] = []
    rows_A: list[Array] = []
    rows_b: list[float] = []
    compiled = True
    for c in chain.constraints:
        if type(c) is QuadrantPolynomialConstraint:
            table = np.zeros((2, 2, 4))
            for r in c.rows:
                table[int(r.i_nonneg), int(r.j_nonneg)] = (
                    r.a0,
                    r.a1,
                    r.a2,
                    1.0 if r.upper else -1.0,
                )
            qidx.append((c.joint_i, c.joint_j))
            qcoef.append(table)
        elif type(c) is LinearJointConstraint and c.A.shape[1] == chain.dof:
            rows_A.extend(np.asarray(c.A, dtype=np.float64))
            rows_b.extend(float(v) for v in c.b)
        else:
            compiled = False
    dof = chain.dof
    tabs = ConstraintTables(
        np.array(qidx, dtype=np.int64).reshape(-1, 2),
        np.array(qcoef, dtype=np.float64).reshape(-1, 2, 2, 4),
        np.array(rows_A, dtype=np.float64).reshape(-1, dof),
        np.array(rows_b, dtype=np.float64).reshape(-1),
        compiled,
    )
    if not compiled:  # Python evaluates every constraint: the kernel sees none
        tabs = ConstraintTables(
            np.zeros((0, 2), np.int64),
            np.zeros((0, 2, 2, 4)),
            np.zeros((0, dof)),
            np.zeros(0),
            False,
        )
    return _TABLES.add(chain, tabs)


class FastGate:
    """:func:`ikstack.ik.certify` for one chain and fixed tolerances, on compiled code.

    Args:
        chain: the chain.
        position_tolerance: [m].
        rotation_tolerance: [rad].
        limit_tolerance: allowed excess over the limits (representation round-off).
    """

    def __init__(
        self,
        chain: Chain,
        position_tolerance: float,
        rotation_tolerance: float,
        limit_tolerance: float = 0.0,
    ):
        self.chain = chain
        self.ptol = float(position_tolerance)
        self.rtol = float(rotation_tolerance)
        self.limit_tolerance = float(limit_tolerance)
        # the same bounds as Chain.within_limits(q, tol) computes
        self.lo = np.ascontiguousarray(chain.lower + 0.0 - self.limit_tolerance)
        self.hi = np.ascontiguousarray(chain.upper - 0.0 + self.limit_tolerance)
        self.cc = compile_chain(chain)
        self.tabs = constraint_tables(chain)
        self._python_constraints = bool(chain.constraints) and not self.tabs.compiled
        #: the gate's chain, constraint and gate records, built once
        self._records = (
            chain_data(self.cc),
            constraint_data(self.tabs),
            GATE.make(lo=self.lo, hi=self.hi, tol_p=self.ptol, tol_r=self.rtol),
        )
        #: the same as plain tuples, for :func:`certify_fields`
        chain_rec, cons_rec, gate_rec = self._records
        self._fields = (tuple(chain_rec), tuple(cons_rec), tuple(gate_rec))

    def __call__(
        self, Q: Array, T: Array, serial: bool = False
    ) -> tuple[NDArray[np.bool_], Array, Array]:
        """``(ok, position_error, rotation_error)`` of rows ``Q (n, dof)`` (C-contiguous
        float64) against ``T (n or 1, 4, 4)`` (C-contiguous float64): fresh arrays. ``serial``
        keeps many rows of a few targets on the calling thread (off numba's thread pool)."""
        n = Q.shape[0]
        ok = np.empty(n, dtype=np.bool_)
        perr = np.empty(n)
        rerr = np.empty(n)
        if n >= PARALLEL_ROWS and not serial:
            undecided = certify_rows_parallel(Q, T, *self._records, ok, perr, rerr)
        elif n < FIELDS_ROWS:
            undecided = certify_fields(Q, T, *self._fields, ok, perr, rerr, np.empty((4, 4)))
        else:
            undecided = certify_rows(Q, T, *self._records, ok, perr, rerr, np.empty((4, 4)))
        if undecided or self._python_constraints:
            # the general gate decides (same numbers; its constraint verdicts are authoritative)
            return certify(
                self.chain,
                Q,
                T if T.shape[0] == n else T[0],
                self.ptol,
                self.rtol,
                self.limit_tolerance,
            )
        return ok, perr, rerr


#: ``result_one(q, ok, perr, rerr, status, method, iterations, restarts)``: an
#: :class:`~ikstack.ik.IKResult` through its fast constructor (the classmethod itself: no
#: wrapper call on a single-target solve)
result_one = IKResult._trusted
