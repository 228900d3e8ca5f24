"""``AnalyticIK``: every closed-form solution of a supported arm, certified, nearest the seed."""

from __future__ import annotations

import copy
import math
from types import EllipsisType
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack._deprecated import old_seed
from ikstack.errors import InputError, ShapeError, UnsupportedGeometryError
from ikstack.ik._fixed_gate import FastGate, constraint_tables, result_one
from ikstack.ik._gate import RIGID, kernel_array, rigid_code
from ikstack.ik._immutable import Immutable
from ikstack.ik.analytic import (
    _all6,
    _gate_stage,
    _path_solve,
    _select,
    _single_target,
    _verdict,
)
from ikstack.ik.analytic._general import GeneralFamily
from ikstack.ik.analytic.classify import Classification, Detection, classify, detections
from ikstack.ik.analytic.config import MODES as _MODES
from ikstack.ik.analytic.config import AnalyticConfig, LockSearch, lock_search
from ikstack.ik.analytic.families import PARALLEL_THRESHOLD, Family, SixR
from ikstack.ik.result import IKResult, batch_dims, flatten_batch
from ikstack.kinematics._kernels import all_finite
from ikstack.kinematics.forward import compile_chain
from ikstack.model import Chain
from ikstack.spatial import RIGID_ATOL, as_transforms, as_vectors, project_rigid

Array = NDArray[np.float64]
_F64 = np.dtype(np.float64)
#: the single-target path's constant rows (copied per result: a result owns its arrays)
_TRUE1 = np.ones(1, dtype=np.bool_)
_ZERO1 = np.zeros(1, dtype=np.int64)

#: near mode: at most this many Newton corrections, each moving no joint more than this [rad]
NEAR_ITERATIONS = 12
NEAR_MAX_STEP = 0.25
#: candidate scratch bound: targets are solved in chunks of at most this many candidates
CHUNK_CANDIDATES = 1 << 18
#: solver modes: :class:`~ikstack.ik.analytic.config.AnalyticMode`
MODES = _MODES


class AnalyticIK(Immutable):
    """Closed-form IK of an arm whose geometry fits an analytic family.

    The family is chosen from the chain's axes and origins (:func:`classify`). Candidates of
    the family are moved by whole turns to the representative nearest the seed within the
    limits (reduced by the chain's ``kinematic_margin``), gated by FK, coupled-joint
    constraints and ``max_joint_step``, and the valid one nearest the seed under ``weights``
    is returned. Every success is certified by :func:`ikstack.ik.certify`.

    Strict 6R families solve ``solve`` calls (one target or a batch, nearest solution) in one
    compiled pass per target that expands the family's branches in order of a lower bound on
    their distance to the seed and certifies the selection in place; the answers are those of
    the full enumeration bit for bit. Other families' candidates are selected and certified
    per target by one compiled row kernel too. One target is a batch of one through the same
    row kernel; targets that pass have no numpy glue per row; failures and ambiguous inputs
    are decided by the general path (the pipeline's stages: :mod:`._gate_stage`,
    :mod:`._verdict`).

    Args:
        chain: a 6R or 7R arm.
        mode: ``"strict"`` (exact families only), ``"near"`` (geometric solutions of the
            nearest exact surrogate, then at most 12 bounded monotone Newton corrections on the
            true model; also accepts exact arms) or ``"general"`` (algebraic: any revolute 6R
            chain by :class:`~ikstack.ik.analytic.general6r.General6R`'s elimination, method
            ``"analytic:general6r"``; any revolute 7R chain by
            :class:`~ikstack.ik.analytic.general6r.LockedJoint7R`, method
            ``"analytic:locked7r"``). The general mode is explicit: :func:`classify` reports it
            (``Classification.general``) for chains no closed-form family accepts, but
            ``solve_ik(method="auto")`` does not pick it.
        position_tolerance: FK gate [m].
        rotation_tolerance: FK gate [rad].
        num_samples: swivel samples (SRS) or locked-joint samples (7R with a locked joint),
            besides the seed's own value; a locked joint's samples (and the general mode's
            lock samples) are refined adaptively for targets none certifies.
        weights: (dof,) non-negative per-joint weights of the seed distance; ones by default.
        max_joint_step: optional bound [rad] on every joint's distance from the seed (from the
            previous frame in :meth:`solve_path`).
        tol: exactness tolerance of the classifier ([rad] parallel, [m] meeting axes).
        axis_alignment_tolerance: a chain that misses its family's exact conditions by no
            more than this ([rad] / [m]; default 1e-5: URDF rounding) is solved as the exact
            family on its nearest exact surrogate, the selection polished (at most 12 bounded
            Newton corrections) and certified on the true chain, in strict mode. It does not
            relax the FK gate.
        near_tolerance: the largest deviation ([rad] / [m]; default 0.025) near mode accepts.
        num_locks: general mode, 7R: grid samples of the locked joint.
        search: general mode, 7R: a :class:`LockSearch`, ``"fixed"`` (the grid) or ``"near_q0"``
            (the grid plus 9 samples around ``q0``; ``"seed_local"``, its former name, warns).
            None: ``"fixed"`` for :meth:`solve`, ``"near_q0"`` for :meth:`solve_path` (each
            frame samples around the previous selection).
        config: an :class:`~ikstack.ik.analytic.AnalyticConfig` holding every setting above;
            when given, it replaces the keywords.

    A solver is immutable once built (setting an attribute raises :class:`AttributeError`);
    a call's options are its arguments, so one solver can be shared by threads.

    Raises:
        UnsupportedGeometryError: no family fits (the message names the failed condition),
            or the chain is only near a family and ``mode`` is ``"strict"``, or ``mode`` is
            ``"general"`` and the chain is not a revolute 6R or 7R chain.
        InputError: a bad option.
    """

    def __init__(
        self,
        chain: Chain,
        mode: str = "strict",
        position_tolerance: float = 1e-6,
        rotation_tolerance: float = 1e-6,
        num_samples: int = 128,
        weights: ArrayLike | None = None,
        max_joint_step: float | None = None,
        tol: float = 1e-8,
        num_locks: int = 16,
        search: str | None = None,
        axis_alignment_tolerance: float = 1e-5,
        near_tolerance: float = 0.025,
        *,
        config: AnalyticConfig | None = None,
    ):
        if config is not None:
            if not isinstance(config, AnalyticConfig):
                raise InputError(f"config must be an AnalyticConfig; got {type(config).__name__}")
            AnalyticIK.__init__(self, chain, **config.keywords())
            return
        if mode not in MODES:
            raise InputError(f"mode must be one of {MODES}; got {mode!r}")
        for name, v in (
            ("position_tolerance", position_tolerance),
            ("rotation_tolerance", rotation_tolerance),
            ("tol", tol),
        ):
            if not (isinstance(v, int | float) and math.isfinite(v) and v > 0):
                raise InputError(f"{name} must be a positive finite number; got {v!r}")
        if not isinstance(num_samples, int | np.integer) or num_samples < 1:
            raise InputError(f"num_samples must be a positive integer; got {num_samples!r}")
        step = _path_solve.step_bound(max_joint_step)
        self.chain = chain
        self.mode = mode
        self.position_tolerance = float(position_tolerance)
        self.rotation_tolerance = float(rotation_tolerance)
        self.num_samples = int(num_samples)
        self.max_joint_step = None if max_joint_step is None else step
        self._step = step
        if weights is None:
            w = np.ones(chain.dof)
        else:
            w = as_vectors(weights, "weights", chain.dof)
            if w.shape != (chain.dof,) or np.any(w < 0):
                raise InputError(f"weights must be ({chain.dof},) and non-negative; got {w}")
        self.weights = np.ascontiguousarray(w, dtype=np.float64)
        self.classification: Classification = classify(
            chain, tol, axis_alignment_tolerance, near_tolerance
        )
        self.near = mode == "near"
        #: strict mode on a chain within the axis alignment tolerance of its family: the
        #: surrogate's candidates are polished on the true chain before the FK gate
        self.polish = mode == "strict" and self.classification.polish
        self.family: Family
        self._general: GeneralFamily | None = None
        self._path_search = LockSearch.NEAR_Q0 if search is None else lock_search(search)
        if mode == "general":
            self._general = GeneralFamily.build(
                chain,
                self.position_tolerance,
                self.rotation_tolerance,
                num_locks,
                LockSearch.FIXED if search is None else self._path_search,
            )
            self.family = self._general
            self.method = f"analytic:{self._general.name}"
        else:
            det = self._pick(detections(chain, tol, axis_alignment_tolerance, near_tolerance))
            self.family = det.build(self.num_samples)
            self.method = f"analytic:{det.name}" + (":near" if self.near else "")
        self._lo = np.ascontiguousarray(chain.lower + chain.kinematic_margin)
        self._hi = np.ascontiguousarray(chain.upper - chain.kinematic_margin)
        self._revolute = np.ascontiguousarray(chain.is_revolute)
        self._middle = np.minimum(np.maximum(chain.middle(), self._lo), self._hi)
        self._cc = compile_chain(chain)
        self._fast_gate = FastGate(chain, self.position_tolerance, self.rotation_tolerance)
        # single-target fast path (:meth:`_solve_one`): constant data packed for one compiled
        # call; chains with constraints the compiled gate cannot read take the general path
        self._middle1 = np.ascontiguousarray(self._middle[None])
        tabs = constraint_tables(chain)
        self._fast = tabs.compiled or not chain.constraints
        cc = self._cc
        fam = self.family
        six = fam if isinstance(fam, SixR) and not self.near and not self.polish else None
        self._six = six is not None and bool(np.all(cc.kinds == 0))  # revolute: _branches6
        # the family's kernel arguments (SixR.kfid, kvar, ksgn): its own code only is compiled
        self._kfam = (None, None, None) if six is None else (six.kfid, six.kvar, six.ksgn)
        # the kernels' records, and the single-target fast path's packings of them
        self._chain_data, self._select_data, self._pack, self._pack6 = (
            _single_target.solver_records(self, tabs, six, NEAR_MAX_STEP)
        )

    def _pick(self, dets: list[Detection]) -> Detection:
        c = self.classification
        if c.family is None:
            raise UnsupportedGeometryError(f"{self.chain.name or 'chain'}: {c.reason}")
        if c.needs_near and self.mode == "strict":
            raise UnsupportedGeometryError(
                f"{self.chain.name or 'chain'} is only near a family: {c.reason}; "
                "construct AnalyticIK(chain, mode='near') to solve it on the nearest exact "
                "surrogate with a bounded Newton polish on the true model"
            )
        return dets[0]

    def _with_family(self, family: Any) -> AnalyticIK:
        """This solver with its candidates from ``family`` (a device port of its family, with
        the same ``K`` and slots); everything else shared."""
        twin = copy.copy(self)
        object.__setattr__(twin, "family", family)
        return twin

    @property
    def K(self) -> int:
        """Candidates per target (fixed per family; one more in near mode: the seed)."""
        return int(self.family.K) + (1 if self.near else 0)

    # ------------------------------------------------------------------ boundary
    def _targets(self, T_base_tcp: ArrayLike) -> tuple[Array, bool]:
        T = as_transforms(T_base_tcp, "T_base_tcp")
        if T.ndim == 2:
            return kernel_array(T[None]), True
        if T.ndim != 3:
            raise ShapeError("T_base_tcp", T.shape, "(4, 4) or (N, 4, 4)")
        return kernel_array(T), False

    def _seeds(self, seed: ArrayLike | None, n: int) -> Array:
        # always a writable C copy: a broadcast of one row is a read-only view, and a read-only
        # seed array is another type to numba (every kernel taking it would compile again)
        dof = self.chain.dof
        if seed is None:
            return np.array(np.broadcast_to(self._middle, (n, dof)), order="C")
        s = as_vectors(seed, "q0", dof)
        if s.ndim == 1:
            s = s[None]
        if s.ndim != 2 or s.shape[0] not in (1, n):
            raise ShapeError("q0", s.shape, f"({dof},), (1, {dof}) or ({n}, {dof})")
        s = np.minimum(np.maximum(s, self._lo), self._hi)
        return np.array(np.broadcast_to(s, (n, dof)), order="C")

    # ------------------------------------------------------------------ solving
    def _pool(self, T: Array, S: Array, family: Any) -> tuple[Array, Any, int]:
        """The candidates stage: ``family``'s candidates ``(Q, V)`` of targets ``T`` from seeds
        ``S`` (in near mode the seed too, as the last slot) and the polish's iterations."""
        n = T.shape[0]
        Q, V = family.solve(T, S)
        piters = NEAR_ITERATIONS if self.polish else 0  # rounded chain: polish the surrogate's
        if self.near:
            # every surrogate branch (exact or least-squares) and the seed itself are initial
            # guesses for the bounded polish on the true model
            written = V | np.any(Q != S[:, None, :], axis=2)  # unwritten slots hold the seed
            Q = np.ascontiguousarray(np.concatenate([Q, S[:, None, :]], axis=1))
            V = np.concatenate([written, np.ones((n, 1), dtype=np.bool_)], axis=1)
            piters = NEAR_ITERATIONS
        return Q, V, piters

    def _candidates(
        self, T: Array, S: Array, lazy: bool, step: float, family: Any
    ) -> _verdict.Flags:
        """The candidates stage (:meth:`_pool`), then the gate stage
        (:func:`._gate_stage.gate_stage`) under this call's step bound ``step``."""
        Q, V, piters = self._pool(T, S, family)
        sel = self._select_data
        if sel.step != step:  # this call's step bound (solve_path's, as an argument)
            sel = sel._replace(step=float(step))
        return _gate_stage.gate_stage(
            self.chain,
            (self._chain_data, sel, self._lo, self._hi),
            T,
            S,
            (Q, V),
            lazy,
            piters,
            self.near,
            family,
        )

    def solve(
        self,
        T_base_tcp: ArrayLike,
        q0: ArrayLike | None = None,
        return_all: bool = False,
        *,
        seed: ArrayLike | None = None,
    ) -> IKResult:
        """Solve targets; the valid solution nearest each seed.

        Args:
            T_base_tcp: (4, 4), (N, 4, 4) or (..., 4, 4) rigid TCP poses in the base frame
                [m]; leading batch dimensions shape the result (``q`` (..., dof)), a single
                (4, 4) target gives one row.
            q0: (dof,), (1, dof) or (N, dof) (or (..., dof) matching the targets) joint
                guess [rad]; the middle of the limits by default. It is projected into the
                limits first (``seed``, its former name, warns).
            return_all: also return every candidate ``q_all`` (N, K, dof) and its certified
                mask ``valid_all`` (N, K).

        Returns:
            :class:`~ikstack.ik.IKResult` with ``method`` ``"analytic:<family>"``. Failed rows
            hold the limit-projected seed and a status saying why.
        """
        if seed is not None:
            q0 = old_seed(q0, seed, "AnalyticIK.solve")
        seed = q0
        if return_all and self._six and self._fast:
            every = _all6.solve_all(self, T_base_tcp, seed)
            if every is not None:
                return every
        if not return_all:
            fast = self._solve_one(T_base_tcp, seed)
            if fast is not None:
                return fast
            rows = self._solve_rows(T_base_tcp, seed)
            if rows is not None:
                return rows
        lead = batch_dims(T_base_tcp)
        if lead is not None:
            Tf, sf = flatten_batch(T_base_tcp, seed, self.chain.dof, lead)
            return self.solve(Tf, sf, return_all).reshaped(lead)
        T, _ = self._targets(T_base_tcp)
        S = self._seeds(seed, T.shape[0])
        if return_all:
            return self._solve(T, S, True)
        return self._solve_chunked(T, S)

    def _solve_chunked(self, T: Array, S: Array) -> IKResult:
        n = T.shape[0]
        chunk = max(1, CHUNK_CANDIDATES // self.K)
        if n <= chunk:
            return self._solve(T, S, False)
        parts = [self._solve(T[i : i + chunk], S[i : i + chunk], False) for i in range(0, n, chunk)]
        return IKResult.concat(parts, self.method)

    def _solve_one(self, T_base_tcp: Any, seed: Any) -> IKResult | None:
        """One (4, 4) float64 target solved to a certified success without numpy glue, or None
        (then the general path runs and decides: bad input, failures and every other shape).

        The same kernels in the same order as :meth:`_solve`, so a success here is the
        general path's result, number for number.
        """
        T = T_base_tcp
        if not (self._fast and type(T) is np.ndarray and T.shape == (4, 4) and T.dtype is _F64):
            return None
        f = T.flags  # kernel_array's test inline: a call costs a few percent of this path
        if not (f.c_contiguous and f.writeable):
            T = T.copy()
        if not (self._six or rigid_code(T, RIGID_ATOL) == RIGID):
            return None  # a 6R family's kernel checks the target itself
        dof = self.chain.dof
        if seed is None:
            S = self._middle1
        elif (
            type(seed) is np.ndarray
            and seed.dtype == np.float64
            and seed.size == dof
            and seed.shape[-1] == dof
            and all_finite(seed)
        ):
            S = np.minimum(np.maximum(seed.reshape(1, dof), self._lo), self._hi)
        else:
            return None
        q = np.empty((1, dof))
        perr = np.empty(1)
        rerr = np.empty(1)
        if self._six:
            fl, il = self._pack6  # type: ignore[misc]  # a 6R family's: set
            code = _single_target.six_one(S, T, fl, il, self._kfam, q, perr, rerr)
        else:
            T1 = np.ascontiguousarray(T.reshape(1, 4, 4))
            Q, V, piters = self._pool(T1, S, self.family)
            if self.near:
                V[:, -1] = False  # the seed initialization is the general path's second pass
            fl, il = self._pack
            code = _single_target.select_one(
                Q, V, S, T1, fl, il, _select.no_polish(piters), q, perr, rerr
            )
        if code != _single_target.DONE:
            return None
        # certified: the code is DONE. Copies of constant rows: a copy is ~110 ns, np.zeros
        # ~190 ns and np.ones ~800 ns, which this path notices
        return result_one(
            q,
            _TRUE1.copy(),
            perr,
            rerr,
            _ZERO1.copy(),
            self.method,
            _ZERO1.copy(),
            _ZERO1.copy(),
        )

    def _solve_rows(self, T_base_tcp: Any, seed: Any) -> IKResult | None:
        """(N, 4, 4) float64 targets through the row kernel :meth:`_solve_one` runs for one
        (:func:`._single_target.six_batch` for a 6R family, else the family's candidates then
        :func:`._single_target.select_batch`); rows it leaves undecided (failures, broken
        constraints, targets numpy must check) are solved by the general path. None for any
        other input (the general path validates it)."""
        T = T_base_tcp
        if not (
            self._fast
            and type(T) is np.ndarray
            and T.ndim == 3
            and T.shape[1:] == (4, 4)
            and T.dtype is _F64
            and T.shape[0] > 0
        ):
            return None
        T = kernel_array(T)
        if not (self._six or all_finite(T)):  # a 6R family's kernel checks each target
            return None
        n, dof = T.shape[0], self.chain.dof
        q = np.empty((n, dof))
        ok = np.empty(n, dtype=np.bool_)
        perr = np.empty(n)
        rerr = np.empty(n)
        code = np.empty(n, dtype=np.int64)
        if self._six:
            S = self._middle1 if seed is None else self._seeds(seed, n)
            fl, il = self._pack6  # type: ignore[misc]  # a 6R family's: set
            _single_target.six_batch(
                S, T, fl, il, self._kfam, (q, perr, rerr, code), n >= PARALLEL_THRESHOLD
            )
        else:
            S = self._seeds(seed, n)
            chunk = max(1, CHUNK_CANDIDATES // self.K)  # candidates held at once
            for i in range(0, n, chunk):
                j = min(n, i + chunk)
                Q, V, piters = self._pool(T[i:j], S[i:j], self.family)
                if self.near:
                    V[:, -1] = False  # the seed initialization is the general path's second pass
                _single_target.select_batch(
                    Q,
                    V,
                    S[i:j],
                    T[i:j],
                    *self._pack,
                    _select.no_polish(piters),
                    (q[i:j], ok[i:j], perr[i:j], rerr[i:j], code[i:j]),
                    j - i >= PARALLEL_THRESHOLD,
                )
        success = code == _single_target.DONE
        status = np.zeros(n, dtype=np.int64)  # IKStatus.SUCCESS
        rows = np.flatnonzero(~success)
        if rows.size:
            if (code == _single_target.NOT_RIGID).any():
                as_transforms(T, "T_base_tcp")  # raises unless rigid within the tolerance
            Sr = (
                S[rows]
                if S.shape[0] == n
                else np.ascontiguousarray(np.broadcast_to(S, (rows.size, dof)))
            )
            r = self._solve_chunked(np.ascontiguousarray(T[rows]), np.ascontiguousarray(Sr))
            q[rows], success[rows], status[rows] = r.q, r.success, r.status
            perr[rows], rerr[rows] = r.position_error, r.rotation_error
        zeros = np.zeros(n, dtype=np.int64)
        return IKResult(q, success, perr, rerr, status, self.method, zeros, zeros.copy())

    def _solve(
        self, T: Array, S: Array, return_all: bool, step: float | None = None, family: Any = None
    ) -> IKResult:
        """Targets ``T`` from seeds ``S`` with the step bound ``step`` (None: the solver's;
        inf: none) and the candidates of ``family`` (None: the solver's)."""
        family = self.family if family is None else family
        n, dof = T.shape[0], self.chain.dof
        k = int(family.K) + (1 if self.near else 0)
        if n == 0:
            z = np.zeros(0)
            return IKResult(
                np.zeros((0, dof)),
                np.zeros(0, dtype=bool),
                z,
                z.copy(),
                np.zeros(0, dtype=np.int64),
                self.method,
                np.zeros(0, np.int64),
                np.zeros(0, np.int64),
                np.zeros((0, k, dof)) if return_all else None,
                np.zeros((0, k), dtype=bool) if return_all else None,
            )
        # rotations within the input check's tolerance of orthonormal (float32, noise) are solved
        # as the nearest rotation; the gate judges against the target as given, its rotation
        # tolerance widened by the distance to that rotation
        Tp, dev = project_rigid(T)
        flags = self._candidates(
            np.ascontiguousarray(Tp),
            S,
            not return_all,
            self._step if step is None else step,
            family,
        )
        return _verdict.verdict(
            self.chain,
            T,
            S,
            flags,
            (self.position_tolerance, self.rotation_tolerance, dev),
            self.method,
            return_all,
            self._fast_gate,
        )

    def solve_path(
        self,
        targets: ArrayLike,
        q0: ArrayLike | None = None,
        compiled: bool = True,
        *,
        max_joint_step: float | None | EllipsisType = ...,
        search: str | None = None,
        seed: ArrayLike | None = None,
    ) -> IKResult:
        """Solve a continuous path: each frame seeded by the previous frame's selection.

        A failed frame reports its status and holds the previous pose; later frames continue
        from it. The step bound limits every joint's change between consecutive frames.

        The general mode solves frame by frame (7R: lock samples around each previous
        selection unless ``search="fixed"``). Strict mode on a chain without coupled-joint
        constraints runs the whole selection in one compiled loop over frames (the family
        kernel, representatives, limits, step bound and FK gate per frame, exactly as
        :meth:`solve` with the previous selection as seed), then certifies the selected path
        once; other cases solve frame by frame. The call's options are arguments: the solver
        is not changed, so threads may share it.

        Args:
            targets: (T, 4, 4) TCP poses [m].
            q0: (dof,) or (1, dof) start configuration [rad]; the middle of the limits by
                default (then the step bound holds from the first solved frame on; ``seed``,
                its former name, warns).
            compiled: False forces the frame-by-frame loop (same selections, slower).
            max_joint_step: this call's bound [rad] on every joint's change between frames;
                None: no bound; ``...`` (default): the solver's ``max_joint_step``.
            search: general mode, 7R: this call's lock samples, a :class:`LockSearch`
                (``"fixed"`` or ``"near_q0"``; ``"seed_local"``, its former name, warns);
                None: the solver's (``search`` of the constructor, else ``"near_q0"``).
        """
        if seed is not None:
            q0 = old_seed(q0, seed, "AnalyticIK.solve_path")
        return _path_solve.solve_path(self, targets, q0, compiled, max_joint_step, search)
