"""7R arms without a closed-form family (e.g. Flexiv Rizon 4 / 4s): lock one joint at sampled
values and solve each remaining general 6R chain exactly (:class:`General6R`'s elimination)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack._deprecated import old_seed
from ikstack.errors import InputError
from ikstack.ik._immutable import Immutable
from ikstack.ik.analytic.config import SEARCHES as SEARCHES  # re-exported
from ikstack.ik.analytic.config import LockSearch, lock_search
from ikstack.ik.analytic.general6r import _engine as EN
from ikstack.ik.analytic.general6r.solver import _check_tolerance
from ikstack.ik.result import IKResult, IKStatus, batch_dims, fk_errors, flatten_batch
from ikstack.kinematics import fk_jacobian
from ikstack.model import Chain
from ikstack.spatial import se3

Array = NDArray[np.float64]

#: lock samples a near_q0 search adds: the guess's value, 3 symmetric offset pairs, and
#: the lock components of one and two Gauss-Newton steps from the guess toward the target
N_LOCAL = 9


class LockedJoint7R(Immutable):
    """Locked-joint algebraic IK of a 7R chain: lock samples x 16 roots of a 6R pencil each.

    Joint ``lock_joint`` is frozen at each sample value; the other six form a general 6R chain
    solved exactly by elimination (no iteration in joint or Cartesian space). Candidates per
    target: ``num_locks * 16`` with ``search="fixed"`` (a grid of cell centres over the lock
    joint's limits), ``(num_locks + 9) * 16`` with ``search="near_q0"``, which adds the seed's
    own lock value, the offsets ``+-local_offsets`` around it, and the lock values of one and two
    Gauss-Newton steps from the seed toward the target (a prediction of the lock angle only:
    every returned joint vector still comes from pencil roots). Every slot passes the FK gate,
    the limits and the chain's constraints (:func:`ikstack.ik.certify`).

    Finite lock sampling can miss a narrow feasible interval of the locked joint; such targets
    are reported as failures, never as approximate successes.

    Args:
        chain: a 7-joint revolute chain.
        lock_joint: index of the joint to lock; ``None`` picks an end joint (0 or 6), whichever
            (with the best role assignment of the remaining 6R loop, see
            :func:`._engine.choose_shift`) recovers more of 8 fixed FK samples (ties: 6).
        num_locks: grid samples over the lock joint's limits (``[-pi, pi)`` if unbounded).
        search: a :class:`LockSearch`, ``"fixed"`` or ``"near_q0"`` (the default for
            :meth:`solve`; ``"seed_local"``, the former name of ``"near_q0"``, warns).
        position_tolerance: FK gate [m].
        rotation_tolerance: FK gate [rad].
        local_offsets: [rad] symmetric offsets of the near_q0 samples (three values).

    Raises:
        UnsupportedGeometryError: not seven revolute joints.
        InputError: a bad lock joint, sample count, search name or tolerance.
    """

    method = "analytic:general6r_locked"

    def __init__(
        self,
        chain: Chain,
        lock_joint: int | None = None,
        num_locks: int = 16,
        search: str = "fixed",
        position_tolerance: float = 1e-6,
        rotation_tolerance: float = 1e-6,
        local_offsets: Sequence[float] = (0.02, 0.08, 0.25),
    ):
        EN.require_revolute(chain, 7, "LockedJoint7R")
        if not isinstance(num_locks, (int, np.integer)) or num_locks < 1:
            raise InputError(f"num_locks must be a positive integer; got {num_locks!r}")
        self.search = lock_search(search)
        offs = np.asarray(local_offsets, dtype=np.float64)
        if offs.shape != (3,) or not np.all(np.isfinite(offs)) or np.any(offs <= 0):
            raise InputError(
                f"local_offsets must be three positive angles [rad]; got {local_offsets!r}"
            )
        self.local_offsets = offs
        self.chain = chain
        self.position_tolerance = _check_tolerance("position_tolerance", position_tolerance)
        self.rotation_tolerance = _check_tolerance("rotation_tolerance", rotation_tolerance)
        self.num_locks = int(num_locks)
        self._P, self._E = EN.poe_factors(chain)
        if lock_joint is not None and (
            not isinstance(lock_joint, (int, np.integer)) or not 0 <= lock_joint < 7
        ):
            raise InputError(f"lock_joint must be a joint index in 0..6; got {lock_joint!r}")
        rng = np.random.default_rng(0)
        q = chain.random_q(rng, 8)
        T = chain.fk(q)
        best: tuple[int, int, int] = (-1, 6, 0)  # (score, lock, shift)
        for k in (6, 0) if lock_joint is None else (int(lock_joint),):
            lo6, hi6 = np.delete(chain.lower, k), np.delete(chain.upper, k)
            shift, score = EN.choose_shift(
                self._P, self._E, k, q[:, k], T, np.delete(q, k, 1), lo6, hi6
            )
            if score > best[0]:
                best = (score, k, shift)
        self.role_shift = best[2]
        self._set_lock(best[1])

    # ------------------------------------------------------------------ setup
    def _grid(self, k: int) -> Array:
        km = self.chain.kinematic_margin
        lo, hi = self.chain.lower[k] + km, self.chain.upper[k] - km
        if not (np.isfinite(lo) and np.isfinite(hi)):
            lo, hi = -math.pi, math.pi
        return lo + (np.arange(self.num_locks) + 0.5) * (hi - lo) / self.num_locks

    def _set_lock(self, k: int) -> None:
        self.lock_joint = k
        self.lock_values = self._grid(k)
        self._grid_geom = EN.geometry(self._P, self._E, k, self.lock_values, self.role_shift)
        km = self.chain.kinematic_margin  # kept from the limits, as every solver does
        self._lower6 = np.ascontiguousarray(np.delete(self.chain.lower, k) + km)
        self._upper6 = np.ascontiguousarray(np.delete(self.chain.upper, k) - km)

    @property
    def num_candidates(self) -> int:
        """Candidate slots per target for the default search."""
        return self.candidates_for(self.search)

    def candidates_for(self, search: str) -> int:
        """Candidate slots per target: ``num_locks * 16`` or ``(num_locks + 9) * 16``."""
        extra = N_LOCAL if lock_search(search) == LockSearch.NEAR_Q0 else 0
        return (self.num_locks + extra) * EN.ROOTS

    # ------------------------------------------------------------------ numerics
    def _local_locks(self, T: Array, seeds: Array) -> Array:
        """(N, 9) lock samples around each seed (clipped into the lock joint's limits)."""
        k = self.lock_joint
        s = seeds[:, k]
        cols = [s]
        for o in self.local_offsets:
            cols += [s + o, s - o]
        q = seeds
        for _ in range(2):
            Tq, J = fk_jacobian(self.chain, q)
            e = se3.pose_error(T, Tq)
            dq = np.einsum("nij,nj->ni", np.linalg.pinv(J, rcond=1e-6), e)
            q = q + np.clip(dq, -1.0, 1.0)
            cols.append(q[:, k])
        lams = np.stack(cols, axis=1)
        km = self.chain.kinematic_margin
        lo, hi = self.chain.lower[k] + km, self.chain.upper[k] - km
        if np.isfinite(lo) and np.isfinite(hi):
            return np.clip(lams, lo, hi)
        return lams

    def _pool(self, T: Array, seeds: Array | None, search: str) -> tuple[Array, NDArray[np.bool_]]:
        N = T.shape[0]
        L = self.num_locks
        Tc = EN.conditioned(T)
        tidx = np.repeat(np.arange(N, dtype=np.int64), L)
        gidx = np.tile(np.arange(L, dtype=np.int64), N)
        geom = self._grid_geom
        lams = np.tile(self.lock_values, N)
        local_search = search == LockSearch.NEAR_Q0 and seeds is not None
        if local_search and seeds is not None:
            local = self._local_locks(T, seeds)
            extra = EN.geometry(self._P, self._E, self.lock_joint, local.ravel(), self.role_shift)
            geom = EN.concat_geometry(geom, extra)
            tidx = np.concatenate([tidx, np.repeat(np.arange(N, dtype=np.int64), N_LOCAL)])
            gidx = np.concatenate([gidx, L + np.arange(N * N_LOCAL, dtype=np.int64)])
            lams = np.concatenate([lams, local.ravel()])
        q6, res = EN.solve_items(Tc, tidx, gidx, geom, self._lower6, self._upper6)
        q7 = np.insert(q6, self.lock_joint, lams[:, None], axis=2)  # (K, 16, 7)
        found = np.isfinite(res)
        EN.polish_near(
            self.chain, q7, found, T[tidx], self.position_tolerance, self.rotation_tolerance
        )
        if not local_search:
            return q7.reshape(N, L * EN.ROOTS, 7), found.reshape(N, L * EN.ROOTS)
        n_grid = N * L
        qg = q7[:n_grid].reshape(N, L * EN.ROOTS, 7)
        ql = q7[n_grid:].reshape(N, N_LOCAL * EN.ROOTS, 7)
        fg = found[:n_grid].reshape(N, L * EN.ROOTS)
        fl = found[n_grid:].reshape(N, N_LOCAL * EN.ROOTS)
        return np.concatenate([qg, ql], axis=1), np.concatenate([fg, fl], axis=1)

    def pool_at(self, T: Array, lams: Array) -> tuple[Array, NDArray[np.bool_]]:
        """Candidates ``(1, len(lams) * 16, 7)`` and their found mask for one target ``T``
        (1, 4, 4) with the locked joint at ``lams`` (solved in runs below the kernels'
        parallel threshold: one target never enters numba's thread pool)."""
        Tc = EN.conditioned(T)
        qs, fs = [], []
        step = EN.PARALLEL_ITEMS - 1
        for a in range(0, lams.shape[0], step):
            part = np.ascontiguousarray(lams[a : a + step], dtype=np.float64)
            L = part.shape[0]
            geom = EN.geometry(self._P, self._E, self.lock_joint, part, self.role_shift)
            q6, res = EN.solve_items(
                Tc,
                np.zeros(L, dtype=np.int64),
                np.arange(L, dtype=np.int64),
                geom,
                self._lower6,
                self._upper6,
            )
            q7 = np.insert(q6, self.lock_joint, part[:, None], axis=2)
            found = np.isfinite(res)
            EN.polish_near(
                self.chain,
                q7,
                found,
                np.repeat(T, L, axis=0),
                self.position_tolerance,
                self.rotation_tolerance,
            )
            qs.append(q7.reshape(L * EN.ROOTS, 7))
            fs.append(found.reshape(L * EN.ROOTS))
        return np.concatenate(qs)[None], np.concatenate(fs)[None]

    @property
    def lock_range(self) -> tuple[float, float, bool]:
        """The locked joint's sampled range and whether it is its limits (else a turn)."""
        k = self.lock_joint
        km = self.chain.kinematic_margin
        lo, hi = self.chain.lower[k] + km, self.chain.upper[k] - km
        if np.isfinite(lo) and np.isfinite(hi):
            return float(lo), float(hi), True
        return -math.pi, math.pi, False

    # ------------------------------------------------------------------ public
    def solve(
        self,
        T_base_tcp: ArrayLike,
        q0: ArrayLike | None = None,
        return_all: bool = False,
        search: str | None = None,
        *,
        seed: ArrayLike | None = None,
    ) -> IKResult:
        """The certified solution nearest to the joint guess ``q0`` for each target.

        Args:
            T_base_tcp: (N, 4, 4), (4, 4) or (..., 4, 4) targets (finite rigid transforms).
            q0: (7,) or (N, 7) [rad]; the middle of the limits when omitted (a near_q0
                search then samples around the middle). ``seed``, its former name, warns.
            return_all: also return the candidate pool (``q_all``, ``valid_all``).
            search: override the instance's search (``"fixed"`` or ``"near_q0"``).

        Returns:
            An :class:`~ikstack.ik.IKResult` of length N with ``method``
            ``"analytic:general6r_locked"``.
        """
        if seed is not None:
            q0 = old_seed(q0, seed, "LockedJoint7R.solve")
        seed = q0
        lead = batch_dims(T_base_tcp)
        if lead is not None:  # (..., 4, 4): solved flat, shaped back
            Tf, sf = flatten_batch(T_base_tcp, seed, self.chain.dof, lead)
            return self.solve(Tf, sf, return_all, search).reshaped(lead)
        mode = self.search if search is None else lock_search(search)
        T, _ = EN.as_targets(T_base_tcp)
        seeds = EN.seeds_for(self.chain, seed, T.shape[0])
        q_all, found = self._pool(T, seeds, mode)
        return EN.select(
            self.chain,
            T,
            q_all,
            found,
            seeds,
            self.position_tolerance,
            self.rotation_tolerance,
            self.method,
            return_all,
        )

    def solve_path(
        self,
        targets: ArrayLike,
        q0: ArrayLike | None = None,
        search: str | None = None,
        *,
        seed: ArrayLike | None = None,
    ) -> IKResult:
        """Solve a sequence of poses, each seeded by the previous frame's selection.

        A frame without a certified solution holds the previous pose (its status says why; its
        errors are those of the held pose against that frame's target).

        Args:
            targets: (T, 4, 4) poses in path order.
            q0: (7,) [rad] configuration before the first frame (required; ``seed``, its
                former name, warns).
            search: override the instance's search; ``"near_q0"`` regenerates the local lock
                samples from each preceding selection (recommended for continuous paths).
        """
        if seed is not None:
            q0 = old_seed(q0, seed, "LockedJoint7R.solve_path")
        if q0 is None:
            raise InputError(
                "LockedJoint7R.solve_path needs q0, the configuration before the first frame"
            )
        seed = q0
        mode = self.search if search is None else lock_search(search)
        T, _ = EN.as_targets(targets, "targets")
        prev = EN.seeds_for(self.chain, seed, 1)
        if not self.chain.within_limits(prev)[0]:
            prev = self.chain.clip(prev)
        n = T.shape[0]
        q = np.empty((n, 7))
        success = np.zeros(n, dtype=bool)
        status = np.full(n, int(IKStatus.UNREACHABLE), dtype=np.int64)
        for t in range(n):
            r = self.solve(T[t : t + 1], prev, search=mode)
            if r.success[0]:
                prev = r.q
                success[t] = True
            status[t] = int(r.status[0])
            q[t] = prev[0]
        pe, re = fk_errors(self.chain, q, T)
        zeros = np.zeros(n, dtype=np.int64)
        return IKResult(
            q=q,
            success=success,
            position_error=pe,
            rotation_error=re,
            status=status,
            method=self.method,
            iterations=zeros,
            restarts=zeros.copy(),
        )
