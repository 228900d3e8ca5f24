"""Shared numerics of the general-6R and locked-joint solvers: geometry, one batched solve, and
the certified selection that turns candidate pools into an :class:`~ikstack.ik.IKResult`."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack.errors import ShapeError, UnsupportedGeometryError
from ikstack.ik._data import chain_data
from ikstack.ik._gate import kernel_array
from ikstack.ik.analytic import _gate_stage  # a module: it imports this package (cycle)
from ikstack.ik.analytic._select import SELECT
from ikstack.ik.analytic._verdict import verdict
from ikstack.ik.analytic.general6r import _backsub as BS
from ikstack.ik.analytic.general6r import _elimination as EL
from ikstack.ik.analytic.general6r import _pencil as PN
from ikstack.ik.result import IKResult, fk_errors
from ikstack.kinematics.forward import compile_chain, fk_jacobian
from ikstack.model import Chain, JointType
from ikstack.model.chain_cache import ChainCache
from ikstack.spatial import as_transforms, as_vectors, se3

Array = NDArray[np.float64]

#: offset of the half-angle chart of the hidden joint: x = tan((q3 - PHI) / 2)
PHI = 0.3
#: eigenvalues with |Im| <= IMAG_TOL * (1 + |lambda|) are treated as real (then refined): a
#: target a little beyond a tangent (within the FK gate) makes a complex pair of that size
IMAG_TOL = 1e-2
#: bounded determinant-Newton corrections per root
NEWTON_ITERS = 3
#: found candidates whose FK errors exceed the gate by no more than this [m, rad] are polished
POLISH_BELOW = 1e-3
#: Levenberg-Marquardt steps of that polish
POLISH_ITERS = 10
#: slots per 6R solve
ROOTS = EL.MAX_ROOTS
#: item counts from which the kernels run on all cores
PARALLEL_ITEMS = 64


def require_revolute(chain: Chain, dof: int, who: str) -> None:
    """Raise :class:`UnsupportedGeometryError` unless ``chain`` has ``dof`` revolute joints."""
    if chain.dof != dof:
        raise UnsupportedGeometryError(
            f"{who} needs a {dof}-joint chain; {chain!r} has {chain.dof}"
        )
    bad = [
        n
        for n, t in zip(chain.joint_names, chain.joint_types, strict=True)
        if t == JointType.PRISMATIC
    ]
    if bad:
        raise UnsupportedGeometryError(f"{who} needs revolute joints; prismatic: {bad}")


def poe_factors(chain: Chain) -> tuple[Array, Array]:
    """``(P (dof, 4, 4), E (4, 4))`` with ``T_base_tcp = P_1 Z(q_1) ... P_n Z(q_n) E``.

    Built from the chain's compiled canonical data (every joint axis is local z).
    """
    c = compile_chain(chain)
    P = np.zeros((c.dof, 4, 4))
    P[:, :3, :3] = c.Rs
    P[:, :3, 3] = c.ps
    P[:, 3, 3] = 1.0
    E = np.eye(4)
    E[:3, :3] = c.R_end
    E[:3, 3] = c.p_end
    return P, E


#: 6R elimination data for G charts (:data:`._pencil.GEOMETRY`)
Geometry = PN.Geometry


def geometry(P: Array, E: Array, lock: int, lams: Array, shift: int) -> Any:
    """:data:`Geometry` with joint ``lock`` of a 7-factor chain folded at each of ``lams`` (6
    factors: no folding), roles by ``shift``."""
    G = int(lams.shape[0])
    out = Geometry(
        np.empty((G, 6, 4, 4)),
        np.empty((G, 4, 4)),
        np.empty((G, 4, 4)),
        np.empty((G, 14, 27)),
        int(shift),
    )
    PN.build_geometry(
        np.ascontiguousarray(P),
        np.ascontiguousarray(E),
        int(lock),
        np.ascontiguousarray(lams, dtype=np.float64),
        out,
    )
    return out


def concat_geometry(a: Any, b: Any) -> Any:
    """The charts of :data:`Geometry` ``a``, then ``b`` (one role shift)."""
    if a.shift != b.shift:
        raise ValueError("geometries with different role shifts cannot be combined")
    return Geometry(
        np.concatenate([a.P, b.P]),
        np.concatenate([a.E, b.E]),
        np.concatenate([a.Ei, b.Ei]),
        np.concatenate([a.left, b.left]),
        a.shift,
    )


def as_targets(T: ArrayLike, name: str = "T_base_tcp") -> tuple[Array, bool]:
    """Targets as (N, 4, 4) finite rigid transforms, and whether a single (4, 4) was given."""
    arr = as_transforms(T, name)
    if arr.ndim == 2:
        return arr[None].copy(), True
    if arr.ndim != 3:
        raise ShapeError(name, arr.shape, "(4, 4) or (N, 4, 4)")
    return arr, False


def conditioned(T: Array) -> Array:
    """Copies of ``T`` whose rotations got two Newton-Schulz polar steps.

    Used only to evaluate the elimination coefficients, whose algebraic identities assume an
    exact rotation (float32 round-off breaks them); the final FK check uses the original ``T``.
    """
    out = np.array(T, dtype=np.float64, copy=True)
    R = out[:, :3, :3]
    eye = np.eye(3)
    for _ in range(2):
        R = 0.5 * R @ (3.0 * eye - np.swapaxes(R, -1, -2) @ R)
    out[:, :3, :3] = R
    return out


def solve_items(
    Tc: Array,
    tidx: NDArray[np.int64],
    gidx: NDArray[np.int64],
    geom: Any,
    lower6: Array,
    upper6: Array,
) -> tuple[Array, Array]:
    """Candidate 6R joint vectors (K, 16, 6) and pose residuals (K, 16) for K items.

    Item k pairs conditioned target ``Tc[tidx[k]]`` with chart ``gidx[k]`` of ``geom``.
    Empty slots hold zeros and an infinite residual.
    """
    K = int(tidx.shape[0])
    items = PN.new_items(tidx, gidx)
    # one kernel type whatever the source: a chain's own limits are read-only, and the
    # conditioned copy of a Fortran-ordered target batch keeps its order
    Tc, lower6, upper6 = kernel_array(Tc), kernel_array(lower6), kernel_array(upper6)
    cfg = (PHI, IMAG_TOL, NEWTON_ITERS, lower6, upper6)  # the fields of PN.PencilSettings
    # few items: the records go as plain tuples of their fields (see PN.prepare_fields); from
    # PARALLEL_ITEMS on, typing them whole is a few percent of the call
    parallel = K >= PARALLEL_ITEMS
    if parallel:
        PN.prepare_parallel(Tc, geom, PN.PencilSettings(*cfg), items)
    else:
        PN.prepare_fields(Tc, tuple(geom), cfg, tuple(items))
    # a FAILED item's companion matrix is zeros (the kernel wrote them): finite eigenvalues
    w = np.linalg.eigvals(items.M)
    items.w_re[:] = w.real
    items.w_im[:] = w.imag
    if parallel:
        BS.backsub_parallel(geom, PN.PencilSettings(*cfg), items)
    else:
        BS.backsub_fields(tuple(geom), cfg, tuple(items))
    return items.q, items.res


def polish_near(
    chain: Chain, q: Array, found: NDArray[np.bool_], T: Array, pos_tol: float, rot_tol: float
) -> None:
    """Polish, in place, the found candidates ``q (N, K, dof)`` of targets ``T (N, 4, 4)`` that
    miss the FK gate by little (errors at most :data:`POLISH_BELOW`); one that lands on another
    found slot's solution (within the kernel's duplicate tolerance) is unmarked in ``found``.

    A nearly double root (a near-tangent pair: the elbow nearly straight, the wrist centre
    nearly on an axis, or a target a little beyond a tangent that the gate still accepts) is an
    eigenvalue computed to about the square root of machine precision, or a complex pair whose
    real part is taken; its joint vector can miss the gate although a configuration meeting it
    lies next to it. At most :data:`POLISH_ITERS` Levenberg-Marquardt steps, each kept only
    where it lowers the pose error (else its damping grows); the gate then judges as before.
    """
    rows, cols = np.nonzero(found)
    if rows.size == 0:
        return
    qf = q[rows, cols]
    pe, re = fk_errors(chain, qf, T[rows])
    near = ((pe > pos_tol) | (re > rot_tol)) & (pe <= POLISH_BELOW) & (re <= POLISH_BELOW)
    if not near.any():
        return
    rows, cols = rows[near], cols[near]
    x = qf[near]
    Tt = T[rows]
    Tq, J = fk_jacobian(chain, x)
    e = se3.pose_error(Tt, Tq)
    cost = np.linalg.norm(e, axis=-1)
    mu = np.full(x.shape[0], 1e-12)
    eye = np.eye(6)
    for _ in range(POLISH_ITERS):
        # dq = J^T (J J^T + mu tr I)^-1 e: 6x6 whatever the joint count, regular for mu > 0
        JT = np.swapaxes(J, 1, 2)
        A = J @ JT
        A += (mu * np.trace(A, axis1=1, axis2=2) + 1e-300)[:, None, None] * eye
        try:
            trial = x + (JT @ np.linalg.solve(A, e[..., None]))[..., 0]
        except np.linalg.LinAlgError:  # pragma: no cover - regular for mu > 0; never raise
            break
        Tn, Jn = fk_jacobian(chain, trial)
        en = se3.pose_error(Tt, Tn)
        cn = np.linalg.norm(en, axis=-1)
        better = cn < cost
        x[better], J[better], e[better], cost[better] = (
            trial[better],
            Jn[better],
            en[better],
            cn[better],
        )
        mu = np.where(better, np.maximum(mu * 0.1, 1e-12), mu * 100.0)
    q[rows, cols] = x
    # a polished root that reached another found slot's solution is that solution: dropped
    for r, c in zip(rows, cols, strict=True):
        others = np.flatnonzero(found[r])
        others = others[others != c]
        d = np.abs(np.angle(np.exp(1j * (q[r, others] - q[r, c])))).max(axis=-1)
        if (d < BS.DUP_TOL).any():
            found[r, c] = False


def seeds_for(chain: Chain, seed: ArrayLike | None, n: int) -> Array:
    """(n, dof) seeds: the given one(s) broadcast, or the middle of the limits."""
    if seed is None:
        with np.errstate(invalid="ignore"):  # continuous joints: middle() is 0 there
            mid = chain.middle()
        return np.broadcast_to(mid, (n, chain.dof)).copy()
    s = as_vectors(seed, "q0", chain.dof)
    s = np.atleast_2d(s)
    if s.shape[0] not in (1, n):
        raise ShapeError("q0", s.shape, f"({chain.dof},) or ({n}, {chain.dof})")
    return np.broadcast_to(s, (n, chain.dof)).copy()


#: a chain's selection data at given tolerances (records built once, not on every call)
_SELECTION: ChainCache[tuple[Any, Any, Array, Array]] = ChainCache("general-mode selection", 64)


def _selection_data(chain: Chain, pos_tol: float, rot_tol: float) -> tuple[Any, Any, Array, Array]:
    """``(chain record, selection record, lo, hi)`` of :func:`select` (the limits less the
    chain's kinematic margin, unit joint weights, no step bound), kept per chain and
    tolerances."""
    key = (float(pos_tol), float(rot_tol))
    held = _SELECTION.get((id(chain), key))
    if held is not None:
        return held
    km = chain.kinematic_margin
    lo = np.ascontiguousarray(chain.lower + km)
    hi = np.ascontiguousarray(chain.upper - km)
    sel = SELECT.make(
        lo=lo,
        hi=hi,
        W=np.ones(chain.dof),
        revolute=np.ascontiguousarray(chain.is_revolute),
        step=np.inf,
        max_dq=0.0,
        tol_p=pos_tol,
        tol_r=rot_tol,
    )
    return _SELECTION.add(chain, (chain_data(compile_chain(chain)), sel, lo, hi), key)


def select(
    chain: Chain,
    T: Array,
    q_all: Array,
    found: NDArray[np.bool_],
    seeds: Array,
    pos_tol: float,
    rot_tol: float,
    method: str,
    return_all: bool,
) -> IKResult:
    """Per target, the valid candidate nearest the seed, certified: the analytic pipeline's
    gate and selection stages (:func:`.._gate_stage.gate_stage`, every candidate gated, and
    :func:`.._verdict.verdict`), as
    :class:`~ikstack.ik.analytic.AnalyticIK` runs them, with unit joint weights and no step
    bound.

    Each found slot is moved to its representative nearest the seed within the limits
    (reduced by the chain's kinematic margin; the seed is projected into them first), and
    gated by FK, the limits and the coupled-joint constraints. Slots that fail are masked:
    ``valid_all`` is False there and their joint values are limit-projected (finite).
    """
    data = _selection_data(chain, pos_tol, rot_tol)
    lo, hi = data[2], data[3]
    S = np.ascontiguousarray(np.minimum(np.maximum(seeds, lo), hi))
    pool = (
        np.ascontiguousarray(np.where(found[..., None], q_all, S[:, None, :])),
        np.ascontiguousarray(found, dtype=np.bool_).copy(),
    )
    flags = _gate_stage.gate_stage(
        chain, data, np.ascontiguousarray(T), S, pool, False, 0, False, None
    )
    tolerances = (pos_tol, rot_tol, np.zeros(T.shape[0]))
    return verdict(chain, T, S, flags, tolerances, method, return_all)


def twin_roots(q: Array, res: Array, shift: int) -> int:
    """Pairs of accurate candidates of one item sharing the eigenvalue joint's angle.

    ``q (K, 16, 6)``, ``res (K, 16)`` from :func:`solve_items`. Two solutions on one hidden
    angle are a double eigenvalue; back-substitution splits its two-dimensional null space, but
    a cluster of such roots is less accurate than simple ones, so role shifts without them are
    preferred.
    """
    h = q[:, :, (shift + 2) % 6]
    ok = res < 1e-9
    dh = np.abs(np.angle(np.exp(1j * (h[:, :, None] - h[:, None, :]))))
    dq = np.abs(np.angle(np.exp(1j * (q[:, :, None, :] - q[:, None, :, :])))).max(axis=-1)
    twin = (dh < 1e-7) & (dq > 1e-4) & ok[:, :, None] & ok[:, None, :]
    return int(twin.sum()) // 2


def choose_shift(
    P: Array,
    E: Array,
    lock: int,
    q_lock: Array,
    T: Array,
    q6_true: Array,
    lower6: Array,
    upper6: Array,
) -> tuple[int, int]:
    """The role shift recovering the most known solutions, and that count; among those
    recovering equally many, the one with the fewest :func:`twin_roots` (ties: the first).

    ``T`` (n, 4, 4) are FK targets of configurations whose locked value is ``q_lock`` (n,) and
    whose other six joints are ``q6_true`` (n, 6). Special geometries (perpendicular or parallel
    neighbours with offsets) make some role assignments' 12x12 matrix singular for every value
    of the eigenvalue joint; a shift whose matrix is regular recovers them all.

    Raises:
        UnsupportedGeometryError: no shift recovers any sample (the elimination is singular for
            every role assignment, e.g. all axes parallel: a redundant planar chain).
    """
    n = T.shape[0]
    best, best_score, best_twins = 0, -1, 0
    for shift in (0, 5, 4, 1, 2, 3):
        geom = geometry(P, E, lock, q_lock, shift)
        q, res = solve_items(
            conditioned(T),
            np.arange(n, dtype=np.int64),
            np.arange(n, dtype=np.int64),
            geom,
            lower6,
            upper6,
        )
        d = np.abs(np.angle(np.exp(1j * (q - q6_true[:, None, :])))).max(axis=-1)
        score = int(((d < 1e-6) & np.isfinite(res)).any(axis=1).sum())
        twins = twin_roots(q, res, shift)
        if score > best_score or (score == best_score and twins < best_twins):
            best, best_score, best_twins = shift, score, twins
        if score == n and twins == 0:
            break
    if best_score == 0:
        raise UnsupportedGeometryError(
            "the Raghavan-Roth elimination of this chain is singular for every cyclic role "
            f"assignment (no FK sample of {n} was recovered); the chain is degenerate for "
            "general 6R elimination (e.g. too many parallel axes); use a closed-form family "
            "or numerical IK"
        )
    return best, best_score
