"""The gate stage of the analytic pipeline: candidates to per-candidate flags.

:func:`gate_stage` runs :func:`._selection.finalize` (representatives within the limits, the step
bound, the FK gate, the weighted distance to the seed and, in near mode or on a rounded chain,
the bounded polish) over every target's candidates, then the coupled-joint constraints
(:func:`._constrained.constrain_row`: dropping a nearest candidate that breaks one and gating
again), then the adaptive lock refinement of a locked-joint family's unsolved targets. Each
target's selected slot is the selection loop's (:mod:`._selection`), chosen again among the
valid slots of a row whose flags the constraints or the refinement changed; certification
follows (:func:`._verdict.verdict`).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ikstack.ik._data import constraint_data
from ikstack.ik._fixed_gate import constraint_tables
from ikstack.ik.analytic import _constrained, _refine, _selection
from ikstack.ik.analytic._select import no_polish
from ikstack.ik.analytic._verdict import Flags
from ikstack.ik.analytic.families import PARALLEL_THRESHOLD
from ikstack.model import Chain

Array = NDArray[np.float64]


def gate_stage(
    chain: Chain,
    data: tuple[Any, Any, Array, Array],
    T: Array,
    S: Array,
    pool: tuple[Array, NDArray[np.bool_]],
    lazy: bool,
    piters: int,
    near: bool,
    family: Any,
) -> Flags:
    """:data:`._verdict.Flags` of the candidates ``pool = (Q (N, K, dof), V (N, K))`` (``Q``
    and ``V`` are written) of targets ``T`` (N, 4, 4) from seeds ``S`` (N, dof).

    ``data`` is ``(chain record, selection record, lo, hi)`` (:data:`ikstack.ik._data.CHAIN`,
    :data:`._select.SELECT`, the limits less the kinematic margin). With ``lazy`` only the
    nearest candidate passing every gate is marked (the others' flags are partial); else every
    candidate is gated. ``piters`` > 0 polishes candidates first; ``near``: the last slot is
    the seed, polished only for targets no other slot solves. ``family`` is the candidates'
    family (a locked-joint family's unsolved targets are refined; None: no refinement). The
    flags end with each target's selected slot (-1: none).
    """
    chain_rec, sel, lo, hi = data
    Q, V = pool
    n = T.shape[0]
    k = Q.shape[1]
    OK = np.empty((n, k), dtype=np.bool_)
    FK = np.empty((n, k), dtype=np.bool_)
    LIM = np.empty((n, k), dtype=np.bool_)
    D = np.empty((n, k))
    PL = np.zeros((n, k), dtype=np.bool_)  # slots polished so far (near mode)
    SEL = np.empty(n, dtype=np.int64)  # each target's selected slot

    def gate(Qs: Array, Vs: Any, Ss: Array, Ts: Array, *out: Any, every: bool = False) -> None:
        """Gate rows: ``out`` the flags ``(OK, FK, LIM, D, PL)`` and, unless the caller reads
        the flags only, the selected slots ``SEL``."""
        if len(out) == 5:
            out = (*out, np.empty(len(Ts), dtype=np.int64))
        _selection.finalize(
            Qs,
            Vs,
            Ss,
            Ts,
            chain_rec,
            sel,
            lazy and not every,
            piters,
            out,
            len(Ts) >= PARALLEL_THRESHOLD,
        )

    if near and lazy:
        # the seed initialization is the last resort: polished from afar it may stop within
        # the tolerances but short of the exact branch it converges to
        V[:, -1] = False
        gate(Q, V, S, T, OK, FK, LIM, D, PL, SEL)
        rows = np.flatnonzero(SEL < 0)
        if rows.size:
            # second pass over the seed slot alone: the surrogate slots were polished and
            # gated by the first pass (their flags stand), so no slot is polished twice
            V2 = np.zeros((rows.size, k), dtype=np.bool_)
            V2[:, -1] = True
            sub: list[Any] = [
                np.ascontiguousarray(a[rows]) for a in (Q, V, S, T, OK, FK, LIM, D, PL, SEL)
            ]
            sub[1] = V2
            gate(*sub)
            for a, b in zip((Q, OK, FK, LIM, D, PL), (0, 4, 5, 6, 7, 8), strict=True):
                a[rows, -1] = sub[b][:, -1]
            SEL[rows] = sub[9]  # the seed slot or none
            V[rows, -1] = True
    else:
        gate(Q, V, S, T, OK, FK, LIM, D, PL, SEL)
    CON = np.ones((n, k), dtype=np.bool_)
    if chain.constraints:
        CON = np.empty((n, k), dtype=np.bool_)
        arrays = (Q, V, S, T, (OK, FK, LIM, D, PL, SEL, CON, np.empty((n, k), dtype=np.bool_)))
        tabs = constraint_tables(chain)
        piters_ = no_polish(piters)
        # the first gate's slots decided by the chain's own code at once, a row gated again by
        # the tables; rows they cannot decide are decided by the chain's code at once and resume
        tabs_rec = constraint_data(tabs) if tabs.compiled else None
        records = (chain_rec, sel, tabs_rec, chain.constraints_satisfied)
        _constrained.constrain_rows(arrays, records, lazy, piters_)

    _refine.refine_locks(
        chain,
        family,
        T,
        S,
        lo,
        hi,
        (Q, V, OK, FK, LIM, CON, D, PL),
        partial(gate, every=True),
    )
    # the selection of rows whose flags the constraints or the refinement changed
    _selection.reselect(OK, D, SEL)
    return Q, OK, FK, LIM, CON, SEL
