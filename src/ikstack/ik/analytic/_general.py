"""The algebraic mode of :class:`~ikstack.ik.analytic.AnalyticIK` as a family: every root of
the general 6R elimination (6R chains) or of each locked 6R sub-chain (7R chains) becomes a
candidate, so representatives, limits, the step bound, the FK gate, weighted selection,
certification and paths are the same as for the closed-form families."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ikstack.errors import InputError
from ikstack.ik._immutable import Immutable
from ikstack.ik.analytic.config import lock_search
from ikstack.ik.analytic.general6r import SEARCHES, General6R, LockedJoint7R
from ikstack.model import Chain

Array = NDArray[np.float64]


class GeneralFamily(Immutable):
    """Candidates of :class:`General6R` (16 per target) or :class:`LockedJoint7R`
    (``(num_locks [+ 9]) * 16`` per target, ``search`` a :class:`LockSearch`).

    Candidate slots are the raw pencil roots (unfound roots are masked); the solver gates them.
    Immutable: :meth:`with_search` is the same solver with another lock search.
    """

    def __init__(self, solver: General6R | LockedJoint7R, search: str):
        if search not in SEARCHES:  # a former name was translated where the user gave it
            raise InputError(f"search must be one of {SEARCHES}; got {search!r}")
        self.solver = solver
        self.dof = solver.chain.dof
        self.search = search
        if isinstance(solver, LockedJoint7R):
            self.name = "locked7r"
            self.K = solver.candidates_for(search)
        else:
            self.name = "general6r"
            self.K = solver.num_candidates

    @classmethod
    def build(
        cls,
        chain: Chain,
        position_tolerance: float,
        rotation_tolerance: float,
        num_locks: int,
        search: str,
    ) -> GeneralFamily:
        """The family of ``chain``: :class:`LockedJoint7R` for seven joints, else
        :class:`General6R` (which names the problem for anything but six revolute joints)."""
        solver: General6R | LockedJoint7R
        if chain.dof == 7:
            solver = LockedJoint7R(
                chain,
                num_locks=num_locks,
                search=search,
                position_tolerance=position_tolerance,
                rotation_tolerance=rotation_tolerance,
            )
        else:
            solver = General6R(chain, position_tolerance, rotation_tolerance)
        return cls(solver, search)

    def with_search(self, search: str) -> GeneralFamily:
        """This family with ``search`` for the lock samples (7R; it sets ``K``); a former
        name of a search warns here, where a call's ``search`` arrives."""
        return self if search == self.search else GeneralFamily(self.solver, lock_search(search))

    def solve(self, T: Array, seed: Array) -> tuple[Array, NDArray[np.bool_]]:
        if isinstance(self.solver, LockedJoint7R):
            Q, V = self.solver._pool(T, seed, self.search)
        else:
            Q, V = self.solver._raw(T)
        V = V & np.all(np.isfinite(Q), axis=-1)
        return np.ascontiguousarray(Q), np.ascontiguousarray(V)
