"""The last stages of the analytic pipeline: selection and certification.

Earlier stages (a family's candidates, then :func:`._gate_stage.gate_stage`: representatives
within the limits, the step bound, the FK gate and the weighted distance to the seed, and the
coupled-joint constraints) leave per-candidate flags and each target's selected slot (the
selection loop's, :mod:`._selection`); :func:`verdict` certifies the selected candidate with
:func:`ikstack.ik.certify` and says why a target failed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ikstack.ik.analytic._constrained import failure_rows
from ikstack.ik.analytic.families import PARALLEL_THRESHOLD
from ikstack.ik.result import IKResult, IKStatus, certify
from ikstack.model import Chain

Array = NDArray[np.float64]
#: a gate stage's flags: candidates (moved to representatives) and, per candidate, passed
#: every gate, met the FK gate, within the limits, met the constraints; then per target the
#: selected slot (the valid slot nearest the seed, ties: the lower slot) or -1
Flags = tuple[Array, Any, Any, Any, Any, NDArray[np.int64]]


def failure_status(FK: Any, LIM: Any, CON: Any) -> NDArray[np.int64]:
    """(N,) why no candidate of each target passed, from the gate's (N, K) flags
    (:func:`._constrained.failure_code`: no FK match, then none within the limits, then none
    meeting the constraints, else the step bound)."""
    out = np.empty(FK.shape[0], dtype=np.int64)
    FK, LIM, CON = (np.ascontiguousarray(x, dtype=np.bool_) for x in (FK, LIM, CON))
    failure_rows(FK, LIM, CON, out)
    return out


def verdict(
    chain: Chain,
    T: Array,
    S: Array,
    flags: Flags,
    tolerances: tuple[float, float, Array],
    method: str,
    return_all: bool,
    fast_gate: Any = None,
) -> IKResult:
    """Per target ``T`` (N, 4, 4) the selected candidate (the one that passed every gate nearest
    its seed ``S`` (N, dof)), certified by :func:`ikstack.ik.certify`.

    ``flags`` are :data:`Flags` (each (N, K) but the selection (N,)); ``tolerances`` is
    ``(position, rotation, deviation)``: the rotation tolerance is widened per target by its
    deviation (N,) from the nearest rotation, onto which it was projected before solving. A
    failed target holds its seed and a status saying why; ``return_all`` adds every candidate
    and its certified mask.
    ``fast_gate`` (a :class:`ikstack.ik._fixed_gate.FastGate` at the solver's tolerances),
    when given, certifies the candidates of a few exact targets on this thread.
    """
    Q, OK, FK, LIM, CON, idx = flags
    ptol, rtol0, dev = tolerances
    rtol = rtol0 + dev
    n, k, dof = Q.shape
    rows = np.arange(n)
    found = (idx >= 0) & OK[rows, idx]
    q = np.where(found[:, None], Q[rows, idx], S)
    ok, perr, rerr = certify(chain, q, T, ptol, rtol)
    success = found & ok
    status = np.full(n, int(IKStatus.SUCCESS), dtype=np.int64)
    fails = ~success
    if fails.any():
        status[fails] = failure_status(FK, LIM, CON)[fails]
        # a candidate the compiled gate passed but certify did not (round-off at the
        # tolerance): reported as not meeting the FK tolerances
        status[found & ~ok] = IKStatus.UNREACHABLE
        q[fails] = S[fails]
        if (found & ~ok).any():
            _, perr, rerr = certify(chain, q, T, ptol, rtol0)
    q_all = valid_all = None
    if return_all:
        if fast_gate is not None and n < PARALLEL_THRESHOLD and not dev.any():  # on this thread
            okc, _, _ = fast_gate(
                np.ascontiguousarray(Q.reshape(n * k, dof)),
                np.ascontiguousarray(np.repeat(T, k, axis=0)),
                serial=True,
            )
            okc = okc.reshape(n, k)
        else:
            okc, _, _ = certify(chain, Q, T[:, None], ptol, rtol[:, None])
        valid_all = OK & okc
        q_all = Q
    zeros = np.zeros(n, dtype=np.int64)
    return IKResult(q, success, perr, rerr, status, method, zeros, zeros.copy(), q_all, valid_all)
