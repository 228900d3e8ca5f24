"""Analytic IK on a Warp device (float64, CPU or CUDA): candidates, selection and the FK gate.

:class:`WarpAnalyticIK` has the contract of :class:`ikstack.ik.analytic.AnalyticIK`: the same
:func:`~ikstack.ik.analytic.classify` verdict picks the family, every family has the same
candidate count ``K`` and slot order, and the closed-form candidates are computed by Warp
ports of the CPU kernels (same formulas, same order of operations).

What runs where (``device_selection`` says which case a solver is in):

* Strict mode (UR5, iiwa14, Panda, ARX X5, Marvin, random 6R/7R arms of the ported
  families): everything runs on the device. One kernel per target moves each candidate to its
  ``2 pi`` representative nearest the seed within the limits (reduced by
  ``kinematic_margin``), checks the limits and ``max_joint_step``, FK-gates the candidates in
  order of weighted seed distance until one passes (the CPU path's lazy gate; every
  candidate with ``return_all``), checks the coupled-joint constraints with the CPU path's
  retries, and certifies the selection: finite, within the chain's limits, constraints
  satisfied, FK within both tolerances under the error definition of
  :func:`ikstack.ik.certify` (:func:`ikstack.ik.fk_errors`). Only ``q`` (N, dof), the status
  and the two errors come back (plus ``q_all`` and its certified mask with ``return_all``).
  With ``certify="host"`` the host runs :func:`ikstack.ik.certify` on the returned
  selections as well (a rejected one becomes a failure, as on the CPU path).
  :meth:`solve_path` and :meth:`solve_paths` run a whole path in one launch (one thread a
  path, looping over its frames). A chain within ``axis_alignment_tolerance`` of its family
  (URDF rounding) is solved on the exact surrogate and each candidate polished on the true
  chain on the device before its FK check (:mod:`._polish`, the CPU path's bounded polish).
* On the host, through the CPU path's own compiled code with candidates from the device:
  near mode (its seed-slot second pass), chains with a constraint type outside the compiled
  tables, and the rare row whose linear constraint is within round-off of zero (Python
  decides it, as on the CPU path).

Either way masks, selections and statuses equal the CPU path's (joint values to rounding;
polished candidates to the polish's stopping tolerance, about 1e-8). Targets whose rotation is
near orthonormal (float32, noise) are solved as the nearest rotation and certified against the
target as given, the rotation tolerance widened by the distance between them, as on the CPU
path. Singular targets follow the CPU kernels too: least-squares subproblem roots within
round-off of a tangent, the free first joint of a spherical-wrist arm whose wrist centre lies
on the first axis, and the representatives of a singular wrist's family nearest the seed.

Ported families: three parallel axes (forwards and reversed), spherical wrist or shoulder
(every position variant, subproblem 5 included), and SRS 7R swivel sampling (seed swivel,
``num_samples`` uniform swivels, and one swivel inside every joint-limit arc), and 7R arms
that become a 6R family with their first or last joint locked (Panda: the seed's value, then
``num_samples`` values over the limits). A family without a port is refused with
:class:`UnsupportedGeometryError` naming it.

Memory: targets are processed in chunks of ``chunk_size``; a set of device scratch holds one
chunk (``chunk_size * K * dof`` float64 candidates plus per-slot flags) and never grows past
it. Threads: a solver never changes after construction, so one solver may serve several
threads at once; each call in progress borrows a scratch set of its own (:mod:`._launch`) and
at most four idle sets are kept. With ``return_all`` the output ``q_all`` is (N, K, dof)
float64 on the host, ``8 N K dof`` bytes (UR5: K = 8, 384 bytes a target; iiwa14 SRS with 128
samples: K = 1416, ~79 KB a target).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack._deprecated import old_seed
from ikstack.backends.warp._launch import DeviceSolve
from ikstack.backends.warp.runtime import device as get_device
from ikstack.backends.warp.runtime import warp
from ikstack.errors import InputError, ShapeError, UnsupportedGeometryError
from ikstack.ik._fixed_gate import constraint_tables
from ikstack.ik.analytic import AnalyticIK
from ikstack.ik.analytic.families import SRS, LockedJoint, SixR
from ikstack.ik.result import IKResult, IKStatus, batch_dims, flatten_batch
from ikstack.ik.result import certify as host_certify
from ikstack.model import Chain
from ikstack.spatial import as_transforms, project_rigid

Array = NDArray[np.float64]


class _DeviceFamily:
    """A family whose ``solve`` runs the Warp port of the CPU family ``base`` in chunks."""

    def __init__(self, owner: WarpAnalyticIK, base: Any):
        self.owner = owner
        self.base = base
        self.name = base.name
        self.K = int(base.K)
        self.dof = int(base.dof)

    def solve(self, T: Array, seed: Array) -> tuple[Array, NDArray[np.bool_]]:
        n = T.shape[0]
        Q = np.empty((n, self.K, self.dof))
        V = np.empty((n, self.K), dtype=np.bool_)
        step = self.owner.chunk_size
        for i in range(0, n, step):
            j = min(n, i + step)
            Q[i:j], V[i:j] = self.owner._device_candidates(T[i:j], seed[i:j])
        return Q, V


class WarpAnalyticIK:
    """Closed-form IK on a Warp device with :class:`~ikstack.ik.analytic.AnalyticIK`'s contract.

    Args:
        chain: a 6R or 7R arm of a ported family.
        device: ``"cpu"``, ``"cuda"`` or ``"cuda:<i>"``; no silent fallback.
        mode, position_tolerance, rotation_tolerance, num_samples, weights, max_joint_step,
            tol: as for :class:`~ikstack.ik.analytic.AnalyticIK`.
        chunk_size: targets per device launch; bounds the device scratch.
        certify: ``"device"`` (the device's gate certifies; see the module) or ``"host"``
            (:func:`ikstack.ik.certify` on the host as well).

    Raises:
        UnsupportedGeometryError: no family fits, or the family is not in the Warp backend
            yet (named in the message).
        DeviceUnavailableError: the device does not exist (e.g. CUDA without a GPU).
        InputError: a bad option.
    """

    def __init__(
        self,
        chain: Chain,
        device: str = "cpu",
        mode: str = "strict",
        position_tolerance: float = 1e-6,
        rotation_tolerance: float = 1e-6,
        num_samples: int = 128,
        weights: ArrayLike | None = None,
        max_joint_step: float | None = None,
        tol: float = 1e-8,
        chunk_size: int = 512,
        certify: str = "device",
    ):
        if not isinstance(chunk_size, int | np.integer) or chunk_size < 1:
            raise InputError(f"chunk_size must be a positive integer; got {chunk_size!r}")
        self._ik = AnalyticIK(
            chain,
            mode=mode,
            position_tolerance=position_tolerance,
            rotation_tolerance=rotation_tolerance,
            num_samples=num_samples,
            weights=weights,
            max_joint_step=max_joint_step,
            tol=tol,
        )
        base = self._ik.family
        if not isinstance(base, SixR | SRS | LockedJoint):
            raise UnsupportedGeometryError(
                f"{chain.name or 'chain'}: analytic family {base.name!r} is not in the warp "
                "backend yet (use ikstack.ik.analytic.AnalyticIK on the CPU)"
            )
        self._wp = warp()
        self._dev = get_device(device)
        self.chain = chain
        self.device = str(self._dev)
        self.chunk_size = int(chunk_size)
        self.family_name = base.name
        self.method = "warp:" + self._ik.method
        self._ik = self._ik._with_family(_DeviceFamily(self, base))
        #: selection and certification run on the device (else on the host, see the module)
        tabs = constraint_tables(chain)
        self.device_selection = not self._ik.near and (tabs.compiled or not chain.constraints)
        if certify not in ("device", "host"):
            raise InputError(f"certify must be 'device' or 'host'; got {certify!r}")
        self.certify = certify
        # the device records and scratch (immutable; scratch is lent per call)
        self._run = DeviceSolve(
            self._ik, base, tabs, self._wp, self._dev, self.chunk_size, self.device_selection
        )

    @property
    def K(self) -> int:
        """Candidates per target (as :attr:`AnalyticIK.K`)."""
        return self._ik.K

    # ------------------------------------------------------------------ device scratch
    def prepare_buffers(self, max_batch: int) -> None:
        """Reserve device scratch for batches up to ``max_batch`` targets (capped at
        ``chunk_size``: larger batches reuse it chunk by chunk). Each call in progress holds a
        set of its own (threads solving at once on one solver never share scratch); idle
        sets are kept up to :data:`._launch.IDLE_SETS`."""
        if max_batch < 0:
            raise InputError(f"max_batch must be non-negative; got {max_batch}")
        self._run.pool.reserve(max_batch)

    @property
    def buffer_bytes(self) -> int:
        """Bytes of idle device scratch reserved now."""
        return self._run.pool.nbytes

    def _device_candidates(self, T: Array, S: Array) -> tuple[Array, NDArray[np.bool_]]:
        """Candidates of at most ``chunk_size`` targets, as fresh host arrays."""
        return self._run.candidates(T, S)

    # ------------------------------------------------------------------ solving
    def candidates(
        self, T_base_tcp: ArrayLike, seed: ArrayLike | None = None
    ) -> tuple[Array, NDArray[np.bool_]]:
        """The family's raw candidates before representatives, limits and the FK gate.

        Args:
            T_base_tcp: (4, 4) or (N, 4, 4) targets [m]; seed as in :meth:`solve`.

        Returns:
            ``(q (N, K_family, dof), exact (N, K_family))``: every slot finite; ``exact``
            marks branches that exist exactly (not certified; :meth:`solve` certifies).
        """
        T, _ = self._ik._targets(T_base_tcp)
        S = self._ik._seeds(seed, T.shape[0])
        return self._ik.family.solve(T, S)

    def solve(
        self,
        T_base_tcp: ArrayLike,
        q0: ArrayLike | None = None,
        return_all: bool = False,
        *,
        seed: ArrayLike | None = None,
    ) -> IKResult:
        """Solve targets; the valid solution nearest each joint guess (see
        :meth:`AnalyticIK.solve`).

        Args:
            T_base_tcp: (4, 4), (N, 4, 4) or (..., 4, 4) rigid TCP poses in the base frame [m].
            q0: (dof,), (1, dof) or (N, dof) joint guess [rad]; the middle of the limits by
                default (``seed``, its former name, warns).
            return_all: also return every candidate ``q_all`` (N, K, dof) float64 and its
                certified mask ``valid_all`` (N, K).

        Returns:
            :class:`~ikstack.ik.IKResult` with ``method`` ``"warp:analytic:<family>"``; its
            arrays are the caller's (never overwritten by later calls).
        """
        if seed is not None:
            q0 = old_seed(q0, seed, "WarpAnalyticIK.solve")
        seed = q0
        lead = batch_dims(T_base_tcp)
        if lead is not None:  # (..., 4, 4): solved flat, shaped back
            Tf, sf = flatten_batch(T_base_tcp, seed, self.chain.dof, lead)
            return self.solve(Tf, sf, return_all).reshaped(lead)
        T, _ = self._ik._targets(T_base_tcp)
        n = T.shape[0]
        S = self._ik._seeds(seed, n)
        if self.device_selection and n:
            return self._solve_device(T, S, return_all)
        parts = [
            self._ik.solve(T[i : i + self.chunk_size], S[i : i + self.chunk_size], return_all)
            for i in range(0, max(n, 1), self.chunk_size)
        ]
        return IKResult.concat(parts, self.method)

    def _solve_device(
        self, T: Array, S: Array, return_all: bool, max_step: float | None = None
    ) -> IKResult:
        n, step = T.shape[0], self.chunk_size
        parts = [
            self._run.solve_chunk(T[i : i + step], S[i : i + step], return_all, max_step)
            for i in range(0, n, step)
        ]
        q, status, perr, rerr = (np.concatenate([p[f] for p in parts]) for f in range(4))
        q_all = np.concatenate([p[4] for p in parts]) if return_all else None
        valid_all = np.concatenate([p[5] for p in parts]) if return_all else None
        und = np.flatnonzero(status < 0)
        if und.size:
            # a linear constraint within round-off of zero: Python decides, on the host path
            r = (
                self._ik.solve(T[und], S[und], return_all)
                if max_step is None
                else self._ik._solve(T[und], S[und], return_all, max_step)
            )
            q[und], status[und], perr[und], rerr[und] = (
                r.q,
                r.status,
                r.position_error,
                r.rotation_error,
            )
            if q_all is not None and valid_all is not None:
                q_all[und], valid_all[und] = r.q_all, r.valid_all
        if self.certify == "host":
            q, status, perr, rerr = self._host_certify(T, S, q, status, perr, rerr)
            if q_all is not None and valid_all is not None:
                rtol = self._ik.rotation_tolerance + project_rigid(T)[1]
                okc, _, _ = host_certify(
                    self.chain, q_all, T[:, None], self._ik.position_tolerance, rtol[:, None]
                )
                valid_all = valid_all & okc
        zeros = np.zeros(n, dtype=np.int64)
        return IKResult(
            q,
            status == IKStatus.SUCCESS,
            perr,
            rerr,
            status,
            self.method,
            zeros,
            zeros.copy(),
            q_all,
            valid_all,
        )

    def _host_certify(
        self, T: Array, S: Array, q: Array, status: NDArray[np.int64], perr: Array, rerr: Array
    ) -> tuple[Array, NDArray[np.int64], Array, Array]:
        """:func:`ikstack.ik.certify` of the device's selections on the host; a selection it
        rejects becomes a failure as in :meth:`AnalyticIK.solve` (seed, ``UNREACHABLE``)."""
        ik = self._ik
        ok, pe, re = host_certify(
            self.chain, q, T, ik.position_tolerance, ik.rotation_tolerance + project_rigid(T)[1]
        )
        bad = (status == IKStatus.SUCCESS) & ~ok
        q = np.where(bad[:, None], S, q)
        status = np.where(bad, int(IKStatus.UNREACHABLE), status).astype(np.int64)
        if bad.any():
            _, pe, re = host_certify(self.chain, q, T, ik.position_tolerance, ik.rotation_tolerance)
        return q, status, pe, re

    def solve_path(
        self, targets: ArrayLike, q0: ArrayLike | None = None, *, seed: ArrayLike | None = None
    ) -> IKResult:
        """A continuous path, each frame seeded by the previous selection; the selections of
        :meth:`AnalyticIK.solve_path` (failed frames hold the previous pose, with a status).

        With device selection (see the module) the whole path is one launch: one device
        thread loops over the frames (candidates, selection, certification), so nothing goes
        back to the host between frames. Otherwise the CPU path's loop runs with candidates
        from the device.

        Args:
            targets: (F, 4, 4) TCP poses [m].
            q0: (dof,) or (1, dof) start configuration [rad]; the middle of the limits by
                default (then, as on the CPU path, ``max_joint_step`` binds only from the
                first solved frame on; ``seed``, its former name, warns).
        """
        if seed is not None:
            q0 = old_seed(q0, seed, "WarpAnalyticIK.solve_path")
        seed = q0
        if not self.device_selection:
            r = self._ik.solve_path(targets, seed)
            return IKResult(
                r.q,
                r.success,
                r.position_error,
                r.rotation_error,
                r.status,
                self.method,
                r.iterations,
                r.restarts,
            )
        T, _ = self._ik._targets(targets)
        prev = self._ik._seeds(seed, 1)
        n = T.shape[0]
        if seed is None and self._ik.max_joint_step is not None and n:
            # nothing to step from yet: frames up to the first success are solved without it
            first = next(
                (
                    i
                    for i in range(n)
                    if self._solve_device(T[i : i + 1], prev, False, math.inf).success[0]
                ),
                None,
            )
            if first is not None:
                start = self._solve_device(T[first : first + 1], prev, False, math.inf).q
            if first is not None:
                parts = [self._device_paths(T[None, :first], prev)[0]] if first else []
                parts.append(self._device_paths(T[None, first:], start)[0])
                return IKResult.concat(parts, self.method)
        return self._device_paths(T[None], prev)[0]

    def solve_paths(
        self, targets: ArrayLike, q0: ArrayLike | None = None, *, seed: ArrayLike | None = None
    ) -> list[IKResult]:
        """Many continuous paths at once, one device thread each (:meth:`solve_path` of every
        path; one launch per ``chunk_size`` paths with device selection).

        Args:
            targets: (P, F, 4, 4) TCP poses [m]: P paths of F frames.
            q0: (dof,), (1, dof) or (P, dof) start configurations [rad] (``seed``, its
                former name, warns).

        Returns:
            One :class:`~ikstack.ik.IKResult` of F rows per path.
        """
        if seed is not None:
            q0 = old_seed(q0, seed, "WarpAnalyticIK.solve_paths")
        seed = q0
        T = as_transforms(targets, "targets")
        if T.ndim != 4:
            raise ShapeError("targets", T.shape, "(P, F, 4, 4)")
        P = T.shape[0]
        if not self.device_selection or (seed is None and self._ik.max_joint_step is not None):
            S = None if seed is None else self._ik._seeds(seed, P)
            return [self.solve_path(T[p], None if S is None else S[p]) for p in range(P)]
        S = self._ik._seeds(seed, P)
        out: list[IKResult] = []
        for i in range(0, P, self.chunk_size):
            out += self._device_paths(
                np.ascontiguousarray(T[i : i + self.chunk_size]), S[i : i + self.chunk_size]
            )
        return out

    def _device_paths(self, T: Array, S: Array) -> list[IKResult]:
        """Paths ``T`` (P, F, 4, 4) from seeds ``S`` (P, dof) in one launch."""
        P, nf = T.shape[0], T.shape[1]
        dof = self.chain.dof
        if nf == 0:
            z = np.zeros(0)
            zi = np.zeros(0, dtype=np.int64)
            return [
                IKResult(np.zeros((0, dof)), np.zeros(0, bool), z, z, zi, self.method, zi, zi)
                for _ in range(P)
            ]
        qh, st, pe, re = self._run.paths(T, S)
        zeros = np.zeros(nf, dtype=np.int64)
        out = []
        for p in range(P):
            r = IKResult(
                qh[p],
                st[p] == IKStatus.SUCCESS,
                pe[p],
                re[p],
                st[p],
                self.method,
                zeros,
                zeros.copy(),
            )
            und = np.flatnonzero(st[p] < 0)
            if und.size:
                # a constraint too close to call on the device: the host loop from that frame
                f0 = int(und[0])
                start = qh[p, f0 - 1 : f0] if f0 else S[p : p + 1]
                rest = self._ik.solve_path(T[p, f0:], start)
                head = IKResult(
                    qh[p, :f0],
                    r.success[:f0],
                    pe[p, :f0],
                    re[p, :f0],
                    st[p, :f0],
                    self.method,
                    zeros[:f0],
                    zeros[:f0],
                )
                r = IKResult.concat(
                    [
                        head,
                        IKResult(
                            rest.q,
                            rest.success,
                            rest.position_error,
                            rest.rotation_error,
                            rest.status,
                            self.method,
                            rest.iterations,
                            rest.restarts,
                        ),
                    ],
                    self.method,
                )
            out.append(r)
        return out
