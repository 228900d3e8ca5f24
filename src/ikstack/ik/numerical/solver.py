"""The numerical-IK template: iteration caps, restarts, time budget, tolerances, certification.

A concrete solver (:class:`~ikstack.ik.numerical.DampedLeastSquaresIK`,
:class:`~ikstack.ik.numerical.LevenbergMarquardt`) only names its step; the base class owns
everything else. Every target of a batch runs the same compiled loop (``prange`` over targets
for large batches), and a single target is a batch of one on the same path.

Per target and per search (the first from the seed, then ``max_restarts`` random restarts drawn
uniformly within the limits) the loop iterates

.. math:: (J^T W J + \\lambda I)\\,\\Delta q = J^T W e, \\qquad q \\leftarrow \\Pi(q + \\Delta q)

with ``e = [p_t - p; rotvec(R_t R^T)]`` (base frame), ``W = diag(weights * mask)`` and
``Pi`` the limit handling. A search ends when the masked position and rotation errors meet the
tolerances or after ``max_iterations`` steps (or earlier, when it stalls); a converged answer
that violates a coupled-joint constraint ends its search as a failure. Whatever the loop
reports, success is decided afterwards by :func:`ikstack.ik.certify` (FK, limits, coupled
constraints).

A redundant chain solves the same step in task space, ``dq = Jw^T (Jw Jw^T + lambda I)^-1 ew``
(``Jw = W^(1/2) J``, ``ew = W^(1/2) e``): a 6 x 6 system instead of n x n, well conditioned as
``lambda`` vanishes. Large batches run blocks of targets on all cores, dealt out interleaved
so that a stretch of slow targets is shared by the threads.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import IntEnum

import numba
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack._deprecated import (
    old_seed,
    renamed_attribute,
    renamed_keyword,
    renamed_module_names,
)
from ikstack.errors import InputError, ShapeError
from ikstack.ik._blocks import run_blocks
from ikstack.ik._data import GATE, chain_data, constraint_data
from ikstack.ik._fixed_gate import FastGate, constraint_tables, result_one
from ikstack.ik._gate import RIGID, kernel_array, rigid_code
from ikstack.ik._immutable import Immutable
from ikstack.ik.numerical import _kernels as K
from ikstack.ik.numerical import _single_target as one
from ikstack.ik.result import IKResult, IKStatus, batch_dims, flatten_batch
from ikstack.kinematics import compile_chain, fk
from ikstack.kinematics._kernels import all_finite
from ikstack.model import Chain
from ikstack.spatial import RIGID_ATOL, as_transforms, as_vectors, se3

Array = NDArray[np.float64]
_F64 = np.dtype(np.float64)

#: batches at least this large run on all cores
PARALLEL_THRESHOLD = 64
#: the per-target arguments of :func:`._kernels.solve_batch` (targets, seeds, q, codes,
#: iterations, restarts), sliced per block by :func:`ikstack.ik._blocks.run_blocks`
_ROW_ARGS = (0, 1, 6, 7, 8, 9)

_MASKS = {
    "full": (1, 1, 1, 1, 1, 1),
    "position": (1, 1, 1, 0, 0, 0),
    "rotation": (0, 0, 0, 1, 1, 1),
}


class LimitMode(IntEnum):
    """How iterations treat joint position limits."""

    #: active set: a joint at a bound whose step points outwards is held and the other joints
    #: re-solved; every iterate projected onto the joint box (default)
    PROJECT = K.LIMITS_PROJECT
    CLAMP_STEP = K.LIMITS_CLAMP_STEP  #: the whole step shortened to stay in the box
    IGNORE = K.LIMITS_IGNORE  #: unconstrained; out-of-limit answers fail as JOINT_LIMITS


def _as_mask(mask: str | ArrayLike) -> Array:
    if isinstance(mask, str):
        try:
            return np.array(_MASKS[mask], dtype=np.float64)
        except KeyError:
            raise InputError(
                f"mask {mask!r} is unknown; use one of {sorted(_MASKS)} or six booleans "
                "[x, y, z, rx, ry, rz]"
            ) from None
    m = np.asarray(mask)
    if m.shape != (6,):
        raise ShapeError("mask", m.shape, "(6,) booleans [x, y, z, rx, ry, rz] or a name")
    return (m != 0).astype(np.float64)


def _margin_limits(chain: Chain, margin: float) -> tuple[Array, Array]:
    """The chain's limits less ``margin`` (a joint narrower than twice it keeps its own)."""
    lo = chain.lower + margin
    hi = chain.upper - margin
    narrow = lo > hi
    lo[narrow] = chain.lower[narrow]
    hi[narrow] = chain.upper[narrow]
    return np.ascontiguousarray(lo), np.ascontiguousarray(hi)


@dataclass(frozen=True)
class NumericalConfig:
    """Settings shared by every numerical step (all validated at construction); pass one as
    ``config=`` to a solver, or its fields as keywords (``NumericalOptions``, its former name,
    warns).

    Attributes:
        max_iterations: steps per search (the seed's search and each restart).
        max_restarts: random restarts after the seeded search.
        time_budget: [s] per target, checked between searches; None for no budget (the
            default, which keeps results deterministic).
        position_tolerance: [m] on the masked position error.
        rotation_tolerance: [rad] on the masked rotation error.
        weights: (6,) task weights ``[x, y, z, rx, ry, rz]`` (rotation rows in rad).
        mask: which of the six axes count: "full", "position", "rotation" or six booleans.
        limits: :class:`LimitMode`.
        rng: randomness of the restarts: an int seed (every call with the same inputs then
            gives the same outputs) or a ``numpy.random.Generator`` (each call draws from it).
            ``seed``, its former name, warns when given to a solver.
        margin: [rad or m] kept from every finite position limit; None takes the chain's
            ``kinematic_margin`` (as the analytic solvers do). It may raise that margin, never
            lower it.
    """

    max_iterations: int = 30
    max_restarts: int = 100
    time_budget: float | None = None
    position_tolerance: float = 1e-5
    rotation_tolerance: float = 1e-5
    weights: tuple[float, ...] = (1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
    mask: str | tuple[bool, ...] = "full"
    limits: LimitMode = LimitMode.PROJECT
    rng: int | np.random.Generator | None = 0
    margin: float | None = None

    def __post_init__(self) -> None:
        if int(self.max_iterations) < 1:
            raise InputError(f"max_iterations must be >= 1; got {self.max_iterations}")
        if int(self.max_restarts) < 0:
            raise InputError(f"max_restarts must be >= 0; got {self.max_restarts}")
        if self.time_budget is not None and not (self.time_budget > 0):
            raise InputError(
                f"time_budget must be positive seconds or None; got {self.time_budget}"
            )
        for name in ("position_tolerance", "rotation_tolerance"):
            v = getattr(self, name)
            if not (math.isfinite(v) and v > 0):
                raise InputError(f"{name} must be positive and finite; got {v}")
        w = np.asarray(self.weights, dtype=np.float64)
        if w.shape != (6,) or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise InputError(f"weights must be six finite values >= 0; got {self.weights}")
        if not (self.rng is None or isinstance(self.rng, np.random.Generator | int)):
            raise InputError(f"rng must be an int, a numpy Generator or None; got {self.rng!r}")
        if not np.any(w * _as_mask(self.mask) > 0):
            raise InputError("weights and mask leave no axis to solve for")
        object.__setattr__(self, "limits", LimitMode(self.limits))
        if self.margin is not None and not (math.isfinite(self.margin) and self.margin >= 0):
            raise InputError(f"margin must be finite and >= 0 [rad or m]; got {self.margin}")

    seed = renamed_attribute("seed", "rng")


class NumericalIK(Immutable):
    """Base of the numerical solvers: restarts, caps, budget, tolerances, certification.

    Subclasses set ``step_kind`` (a kernel step code) and ``damping`` (its parameter).

    A solver is immutable once built (setting an attribute raises :class:`AttributeError`),
    so threads may share one: with an int seed (or none) every call's answers are its own;
    with a ``numpy.random.Generator`` each call draws its restart key from it, in the order
    the threads call.

    Args:
        chain: the chain to solve for.
        **options: ``config=`` a :class:`NumericalConfig`, and/or its fields as keywords
            (which override the config's).
    """

    step_kind: int = K.STEP_LM_CHAN
    name: str = "numerical"

    def __init__(self, chain: Chain, damping: float, **options) -> None:
        if not isinstance(chain, Chain):
            raise InputError(f"chain must be an ikstack Chain; got {type(chain).__name__}")
        if not (math.isfinite(damping) and damping >= 0):
            raise InputError(f"damping must be finite and >= 0; got {damping}")
        if "seed" in options:  # the restarts' randomness, before it was named rng
            options["rng"] = renamed_keyword(
                options, "seed", "rng", options.get("rng"), type(self).__name__
            )
        config = options.pop("config", None)
        if config is not None and not isinstance(config, NumericalConfig):
            raise InputError(f"config must be a NumericalConfig; got {type(config).__name__}")
        try:
            self.options = (
                NumericalConfig(**options) if config is None else replace(config, **options)
            )
        except TypeError as exc:
            valid = ", ".join(NumericalConfig.__dataclass_fields__)
            raise InputError(f"{exc}; valid options: config, {valid}") from None
        self.config = self.options  #: the :class:`NumericalConfig` (also ``options``)
        self.chain = chain
        self.damping = float(damping)
        o = self.options
        self._cc = compile_chain(chain)
        self._w = np.ascontiguousarray(np.asarray(o.weights, dtype=np.float64) * _as_mask(o.mask))
        km = chain.kinematic_margin
        if o.margin is not None and o.margin < km:
            raise InputError(
                f"margin {o.margin:g} is below the chain's kinematic margin {km:g}: "
                "an option may raise it, never lower it"
            )
        self.margin = km if o.margin is None else float(o.margin)
        self._lo, self._hi = _margin_limits(chain, self.margin)
        self._slo = np.where(np.isfinite(self._lo), self._lo, -math.pi)
        self._shi = np.where(np.isfinite(self._hi), self._hi, math.pi)
        self._rng = o.rng if isinstance(o.rng, np.random.Generator) else None
        active = self._w > 0
        self._full_p = bool(active[:3].all())
        self._full_r = bool(active[3:].all())
        self._any_p = bool(active[:3].any())
        self._any_r = bool(active[3:].any())
        self._mid = chain.middle()
        # the first guess of a single target without one, for the compiled call
        self._mid1 = np.ascontiguousarray(self._mid, dtype=np.float64).reshape(1, chain.dof)
        # certify on compiled code (the same numbers as certify; all cores for large batches)
        tp = o.position_tolerance if self._full_p else math.inf
        tr = o.rotation_tolerance if self._full_r else math.inf
        self._fast_gate = FastGate(chain, tp, tr)
        self._partial = (self._any_p and not self._full_p) or (self._any_r and not self._full_r)
        tabs = constraint_tables(chain)
        # the kernels' records: chain, constraint tables, search settings
        self._chain_data = chain_data(self._cc)
        self._cons_data = constraint_data(tabs)
        self._settings = K.SETTINGS.make(
            lo=self._lo,
            hi=self._hi,
            slo=self._slo,
            shi=self._shi,
            w=self._w,
            tol_p=o.position_tolerance,
            tol_r=o.rotation_tolerance,
            damping=self.damping,
            budget=math.inf if o.time_budget is None else o.time_budget,
            step_kind=self.step_kind,
            limit_mode=int(o.limits),
            max_iter=o.max_iterations,
            max_restarts=o.max_restarts,
        )
        # one compiled call for a single target, unless the constraints need Python or a
        # subclass replaced the search or the gate
        own = type(self)._run is NumericalIK._run and type(self)._gate is NumericalIK._gate
        self._pack = (
            None
            if (chain.constraints and not tabs.compiled) or not own
            else (
                one.PACKING.pack(
                    self._chain_data,
                    self._cons_data,
                    self._settings,
                    GATE.make(lo=self._lo, hi=self._hi, tol_p=tp, tol_r=tr),
                )
            )
        )

    @property
    def method(self) -> str:
        """The result's ``method`` string, e.g. ``"numerical:lm"``."""
        return f"numerical:{self.name}"

    def solve(
        self, T_base_tcp: ArrayLike, q0: ArrayLike | None = None, *, seed: ArrayLike | None = None
    ) -> IKResult:
        """Solve targets ``T_base_tcp`` (4, 4), (N, 4, 4) or (..., 4, 4).

        Args:
            T_base_tcp: target TCP poses in the chain's base frame.
            q0: (dof,) or (N, dof) (or (..., dof) matching the targets) first guesses
                [rad or m]; the middle of the limits when None (0 for unbounded joints)
                (``seed``, its former name, warns).

        Returns:
            IKResult with (N,) rows (a single target gives N = 1; leading batch dimensions
            (..., 4, 4) give fields shaped (..., ) and ``q`` (..., dof)). Failed rows hold the best
            iterate, projected into the limits, and a status saying why.

        Raises:
            ShapeError, NonFiniteError, NotRigidTransformError: bad targets or q0.
        """
        if seed is not None:
            q0 = old_seed(q0, seed, f"{type(self).__name__}.solve")
        seed = q0
        T = T_base_tcp
        if type(T) is np.ndarray:
            T = kernel_array(T)  # read-only or strided: one copy, not a second compile
        if (
            type(T) is np.ndarray
            and T.shape == (4, 4)
            and T.dtype is _F64
            and (rigid_code(T, RIGID_ATOL) == RIGID)
        ):
            pass  # one rigid target: the compiled check accepted it
        elif not (
            isinstance(T, np.ndarray)
            and T.dtype == np.float64
            and T.ndim in (2, 3)
            and T.shape[-2:] == (4, 4)
            and K.rigid_ok(np.ascontiguousarray(T.reshape(-1, 4, 4)), RIGID_ATOL)
        ):
            lead = batch_dims(T_base_tcp)
            if lead is not None:  # (..., 4, 4): solved flat, shaped back
                Tf, sf = flatten_batch(T_base_tcp, seed, self.chain.dof, lead)
                return self.solve(Tf, sf).reshaped(lead)
            T = as_transforms(T_base_tcp, "T_base_tcp")  # converts, or names what is wrong
            if T.ndim not in (2, 3):
                raise ShapeError("T_base_tcp", T.shape, "(4, 4), (N, 4, 4) or (..., 4, 4)")
        Tt = kernel_array(T.reshape(-1, 4, 4))
        n = Tt.shape[0]
        dof = self.chain.dof
        if seed is None and n == 1 and self._pack is not None:
            Q0 = self._mid1  # read, never written, by the compiled call
        elif seed is None:
            Q0 = np.empty((n, dof))
            Q0[:] = self._mid
        else:
            Q0 = np.empty((n, dof))
            s = seed
            if not (
                isinstance(s, np.ndarray)
                and s.dtype == np.float64
                and s.ndim in (1, 2)
                and s.shape[-1] == dof
                and all_finite(s)
            ):
                s = as_vectors(seed, "q0", dof)  # converts, or names what is wrong
            if s.ndim > 2 or (s.ndim == 2 and s.shape[0] not in (1, n)):
                raise ShapeError("q0", s.shape, f"({dof},) or ({n}, {dof})")
            Q0[:] = s.reshape(-1, dof)
        Q = np.empty((n, dof))
        codes = np.empty(n, dtype=np.int64)
        iters = np.empty(n, dtype=np.int64)
        rest = np.empty(n, dtype=np.int64)
        if n == 1 and self._pack is not None:
            # the same search and gate as below, in one compiled call
            ok = np.empty(1, dtype=np.bool_)
            perr = np.empty(1)
            rerr = np.empty(1)
            if (
                one.solve_gate_one(
                    Tt, Q0, *self._pack, self._key(1), Q, codes, iters, rest, ok, perr, rerr
                )
                or self._partial
            ):
                ok, perr, rerr = self._gate(Q, Tt)
        else:
            self._run(Tt, Q0, Q, codes, iters, rest)
            ok, perr, rerr = self._gate(Q, Tt)
        if self.chain.constraints and not ok.all():
            self._retry_constraints(Tt, Q, codes, iters, rest, ok)
            ok, perr, rerr = self._gate(Q, Tt)
        status = codes
        if n == 1:  # the same rule as below, without the mask arithmetic
            if ok[0]:
                status[0] = IKStatus.SUCCESS
            elif codes[0] == K.CODE_SUCCESS:
                status[0] = IKStatus.ITERATION_LIMIT
        else:
            status[ok] = IKStatus.SUCCESS
            # a loop "success" the FK gate rejects (round-off at the tolerance) is a failure
            status[~ok & (codes == K.CODE_SUCCESS)] = IKStatus.ITERATION_LIMIT
        if n == 1:
            return result_one(Q, ok, perr, rerr, status, self.method, iters, rest)
        return IKResult(
            q=Q,
            success=ok,
            position_error=perr,
            rotation_error=rerr,
            status=status,
            method=self.method,
            iterations=iters,
            restarts=rest,
        )

    def _run(
        self,
        Tt: Array,
        Q0: Array,
        Q: Array,
        codes: NDArray[np.int64],
        iters: NDArray[np.int64],
        rest: NDArray[np.int64],
        max_restarts: int | None = None,
    ) -> None:
        n = Tt.shape[0]
        key = self._key(n)
        lm = self._settings
        if max_restarts is not None:
            lm = lm._replace(max_restarts=int(max_restarts))
        args = (Tt, Q0, self._chain_data, self._cons_data, lm, key, Q, codes, iters, rest)
        if n < PARALLEL_THRESHOLD:
            K.solve_batch(*args)
            return
        # the serial kernel on blocks of rows, one block at a time to a free thread (no
        # parallel twin to compile on a first run); each target's answer is its own
        run_blocks(K.solve_batch, args, _ROW_ARGS, n, K.BLOCK, numba.get_num_threads())

    def _key(self, n: int) -> int:
        """Seed of the restarts: drawn from a Generator, or fixed by an int seed (then every
        call with the same inputs gives the same outputs)."""
        top = 2**31 - 1
        if self._rng is not None:
            return int(self._rng.integers(0, top))
        seed = self.options.rng
        return (seed if isinstance(seed, int) else 0) % top

    def _retry_constraints(
        self,
        Tt: Array,
        Q: Array,
        codes: NDArray[np.int64],
        iters: NDArray[np.int64],
        rest: NDArray[np.int64],
        ok: NDArray[np.bool_],
    ) -> None:
        """Re-solve rows that converged onto a configuration violating a coupled-joint constraint
        the compiled loop could not evaluate (a constraint type without compiled tables, or a
        linear row within round-off of its bound): one search each from a random seed that
        satisfies the constraints, for up to ``max_restarts`` rounds. The compiled loop itself
        treats a converged answer violating a tabled constraint as a failed search and
        restarts."""
        pending = np.flatnonzero(~ok & (codes == K.CODE_SUCCESS))
        pending = pending[~self.chain.constraints_satisfied(Q[pending])]
        if pending.size == 0:
            return
        rng = self._rng if self._rng is not None else np.random.default_rng(self._key(0))
        for _ in range(self.options.max_restarts):
            if pending.size == 0:
                return
            seeds = self.chain.random_q(rng, 4 * pending.size)
            seeds = seeds[self.chain.constraints_satisfied(seeds)]
            if seeds.shape[0] < pending.size:
                continue
            seeds = np.ascontiguousarray(seeds[: pending.size])
            q2 = np.empty((pending.size, self.chain.dof))
            c2 = np.empty(pending.size, dtype=np.int64)
            i2 = np.empty(pending.size, dtype=np.int64)
            r2 = np.empty(pending.size, dtype=np.int64)
            self._run(np.ascontiguousarray(Tt[pending]), seeds, q2, c2, i2, r2, max_restarts=0)
            iters[pending] += i2
            rest[pending] += 1
            done = (c2 == K.CODE_SUCCESS) & self.chain.constraints_satisfied(q2)
            Q[pending[done]] = q2[done]
            pending = pending[~done]
        codes[pending] = IKStatus.CONSTRAINT

    def _gate(self, Q: Array, Tt: Array) -> tuple[NDArray[np.bool_], Array, Array]:
        """:func:`ikstack.ik.certify`, plus the masked errors when only some axes count."""
        o = self.options
        ok, perr, rerr = self._fast_gate(Q, Tt)
        if self.margin > 0.0:
            ok &= np.all((Q >= self._lo) & (Q <= self._hi), axis=1)
        if (self._any_p and not self._full_p) or (self._any_r and not self._full_r):
            e = se3.pose_error(Tt, fk(self.chain, Q)) * (self._w > 0)
            ok &= np.linalg.norm(e[:, :3], axis=1) <= o.position_tolerance
            ok &= np.linalg.norm(e[:, 3:], axis=1) <= o.rotation_tolerance
        return ok, perr, rerr


#: names renamed in this release, kept one release (they warn)
__getattr__ = renamed_module_names(__name__, {"NumericalOptions": (__name__, "NumericalConfig")})
