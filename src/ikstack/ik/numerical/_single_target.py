"""One numerical-IK target in one compiled call: the search loop, then the FK gate.

The same kernels as the batched path (:func:`._kernels.solve_batch`, then
:func:`ikstack.ik._gate.certify_rows`, the kernel behind :func:`ikstack.ik.certify`), so the
numbers are the general path's. A solver's records (chain, constraints, search settings, gate)
travel packed in one float and one int array (a compiled call pays per argument, and more for a
named tuple): :data:`PACKING` packs them and unpacks them inside the kernel, both from the
records' definitions.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ikstack._records import Packing
from ikstack.ik._data import CHAIN, CONSTRAINTS, GATE
from ikstack.ik._gate import certify_rows
from ikstack.ik.numerical._kernels import SETTINGS, solve_batch

#: chain, constraints, search settings and gate of :func:`solve_gate_one`
PACKING = Packing(CHAIN, CONSTRAINTS, SETTINGS, GATE)
_unpack = PACKING.unpack


@njit(cache=True)
def solve_gate_one(
    Tt, Q0, fl, il, key, Q, codes, iters, restarts, ok, perr, rerr
):  # pragma: no cover - compiled
    """:func:`._kernels.solve_batch` for ``Tt (1, 4, 4)`` from ``Q0 (1, dof)`` with restarts
    seeded by ``key`` (``fl, il``: :data:`PACKING`'s arrays) into ``Q, codes, iters,
    restarts``, then the FK gate of the answer into ``ok, perr, rerr``. Returns the number of
    rows whose constraints the gate could not decide (see
    :func:`ikstack.ik._gate.certify_rows`).

    The outputs are separate arguments, not one tuple: the dispatcher types a tuple of seven
    arrays on every call, about 0.1-0.17 us more than seven arrays (numba 0.68), on a call of a
    few microseconds."""
    chain, cons, lm, gate = _unpack(fl, il)
    solve_batch(Tt, Q0, chain, cons, lm, key, Q, codes, iters, restarts)
    return certify_rows(Q, Tt, chain, cons, gate, ok, perr, rerr, np.empty((4, 4)))
