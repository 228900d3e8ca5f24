""":meth:`AnalyticIK.solve_path <ikstack.ik.analytic.AnalyticIK.solve_path>`: continuous paths,
each frame seeded by the previous selection.

The call's options (the step bound, the general mode's lock search) travel as arguments down
to the frame solves; nothing of the solver is changed, so one solver can serve paths and
single targets on several threads at once.
"""

from __future__ import annotations

import math
from types import EllipsisType
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack.errors import InputError
from ikstack.ik.analytic import _path
from ikstack.ik.result import IKResult, IKStatus, certify
from ikstack.spatial import project_rigid

if TYPE_CHECKING:
    from ikstack.ik.analytic.solver import AnalyticIK

Array = NDArray[np.float64]

#: compiled path outcome code -> IKStatus
_STATUS = np.array(
    [
        int(IKStatus.SUCCESS),
        int(IKStatus.UNREACHABLE),
        int(IKStatus.JOINT_LIMITS),
        int(IKStatus.STEP_LIMIT),
    ],
    dtype=np.int64,
)


def step_bound(max_joint_step: float | None) -> float:
    """A step bound [rad] as a float (inf: none), or InputError."""
    if max_joint_step is None:
        return math.inf
    if not (
        isinstance(max_joint_step, int | float | np.integer | np.floating)
        and math.isfinite(max_joint_step)
        and max_joint_step > 0
    ):
        raise InputError(f"max_joint_step must be positive and finite; got {max_joint_step!r}")
    return float(max_joint_step)


def solve_path(
    ik: AnalyticIK,
    targets: ArrayLike,
    seed: ArrayLike | None,
    compiled: bool,
    max_joint_step: float | None | EllipsisType,
    search: str | None,
) -> IKResult:
    """:meth:`AnalyticIK.solve_path` (see there)."""
    step = ik._step if max_joint_step is ... else step_bound(max_joint_step)
    g = ik._general
    if search is not None and g is None:
        raise InputError(
            f"search applies to mode='general' only; this solver's mode is {ik.mode!r}"
        )
    T, _ = ik._targets(targets)
    prev = ik._seeds(seed, 1)
    fam = None if g is None else g.with_search(ik._path_search if search is None else search)
    if seed is None and step < math.inf and T.shape[0]:
        # nothing to step from yet: the bound holds between frames, not against the default
        # seed (the middle of the limits), so frames up to the first success are solved
        # without it (with the solver's own lock samples unless ``search`` was given)
        probe = None if search is None else fam
        for first in range(T.shape[0]):
            r = ik._solve(T[first : first + 1], prev, False, math.inf, probe)
            if r.success[0]:
                parts = [frame_path(ik, T[:first], prev, step, probe)] if first else []
                parts.append(_continue(ik, T[first:], ik._seeds(r.q[0], 1), compiled, step, fam))
                return IKResult.concat(parts, ik.method)
        return frame_path(ik, T, prev, step, probe)
    return _continue(ik, T, prev, compiled, step, fam)


def _continue(
    ik: AnalyticIK, T: Array, prev: Array, compiled: bool, step: float, general: Any
) -> IKResult:
    """The path from ``prev`` under the step bound ``step``; ``general``: the general mode's
    family for paths (then frame by frame), else None."""
    if general is not None:
        return frame_path(ik, T, prev, step, general)
    if compiled and T.shape[0] and not ik.near and not ik.polish and not ik.chain.constraints:
        r = _compiled_path(ik, T, prev, step)
        if r is not None:
            return r
    return frame_path(ik, T, prev, step, None)


def _compiled_path(ik: AnalyticIK, T: Array, prev: Array, step: float) -> IKResult | None:
    # as in AnalyticIK._solve: the loop solves and gates the nearest rotations; the path is
    # certified against the targets as given, the rotation tolerance widened per frame by the
    # distance to that rotation
    Tp, dev = project_rigid(T)
    cc = ik._cc
    gate = (
        ik._lo,
        ik._hi,
        ik._revolute,
        cc.Rs,
        cc.ps,
        cc.kinds,
        cc.R_end,
        cc.p_end,
        ik.position_tolerance,
        ik.rotation_tolerance,
        step,
        ik.weights,
    )
    out = _path.run(ik.family, np.ascontiguousarray(Tp), np.ascontiguousarray(prev[0]), gate)
    if out is None:
        return None
    q, code = out
    found = code == _path.FOUND
    ok, perr, rerr = certify(ik.chain, q, T, ik.position_tolerance, ik.rotation_tolerance + dev)
    success = found & ok
    bad = np.flatnonzero(found & ~ok)
    if bad.size:
        # the compiled gate passed a selection certify rejects (round-off at the tolerance):
        # from that frame on, the frame-by-frame loop decides
        i = int(bad[0])
        start = q[i - 1 : i] if i else prev
        rest = frame_path(ik, T[i:], np.ascontiguousarray(start), step, None)
        q[i:], success[i:] = rest.q, rest.success
        perr[i:], rerr[i:] = rest.position_error, rest.rotation_error
        status = np.empty(T.shape[0], dtype=np.int64)
        status[:i] = _STATUS[code[:i]]
        status[i:] = rest.status
    else:
        status = _STATUS[code]
    zeros = np.zeros(T.shape[0], dtype=np.int64)
    return IKResult(q, success, perr, rerr, status, ik.method, zeros, zeros.copy())


def frame_path(ik: AnalyticIK, T: Array, prev: Array, step: float, family: Any) -> IKResult:
    """Frame by frame: each frame solved as a target of its own from the previous selection,
    with the step bound ``step`` and the candidates of ``family`` (None: the solver's)."""
    n, dof = T.shape[0], ik.chain.dof
    q = np.empty((n, dof))
    success = np.zeros(n, dtype=bool)
    perr = np.empty(n)
    rerr = np.empty(n)
    status = np.empty(n, dtype=np.int64)
    for i in range(n):
        r = ik._solve(T[i : i + 1], prev, False, step, family)
        perr[i] = r.position_error[0]
        rerr[i] = r.rotation_error[0]
        status[i] = r.status[0]
        if r.success[0]:
            prev = r.q.copy()
            success[i] = True
        q[i] = prev[0]
    if n and (~success).any():
        _, pe, re = certify(ik.chain, q, T, ik.position_tolerance, ik.rotation_tolerance)
        perr = np.where(success, perr, pe)
        rerr = np.where(success, rerr, re)
    zeros = np.zeros(n, dtype=np.int64)
    return IKResult(q, success, perr, rerr, status, ik.method, zeros, zeros.copy())
