"""The host side of :class:`~ikstack.backends.warp.WarpAnalyticIK`: its device records, its
scratch, and the launches of the candidate, selection and path kernels.

A :class:`DeviceSolve` is built once per solver and never changes afterwards: the chain, the
coupled-joint tables, the FK gate, the selection's settings and the family's data live on the
device as structs made from the CPU path's record definitions (:mod:`._structs`). Scratch
(candidates, flags, outputs) is taken from a :class:`ScratchPool` for the length of one call
and given back after it, so calls from several threads on one solver never share scratch;
the pool keeps at most :data:`IDLE_SETS` idle sets of one chunk each.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ikstack.ik._data import GATE, constraint_data
from ikstack.ik.analytic._polish import POLISH_WORK
from ikstack.ik.analytic.families import SRS, LockedJoint, SixR
from ikstack.ik.analytic.solver import NEAR_ITERATIONS, NEAR_MAX_STEP
from ikstack.spatial import project_rigid

Array = NDArray[np.float64]

#: idle scratch sets a pool keeps (one per thread that solved at once, up to this many)
IDLE_SETS = 4


class ScratchPool:
    """Device scratch sets of one chunk each, lent for one call at a time (thread-safe).

    Args:
        make: ``rows -> scratch set`` (a dict of device arrays and structs).
        limit: the most rows a set holds (the solver's ``chunk_size``).
    """

    def __init__(self, make: Any, limit: int):
        self._make = make
        self._limit = limit
        self._lock = threading.Lock()
        self._idle: list[tuple[int, dict[str, Any]]] = []
        self.capacity = 0

    def reserve(self, rows: int) -> None:
        """Grow the sets to at least ``rows`` rows (capped at one chunk); keeps one ready."""
        cap = min(int(rows), self._limit)
        with self._lock:
            if cap <= self.capacity:
                return
            self.capacity = cap
        made = self._make(cap)
        with self._lock:
            self._idle = [s for s in self._idle if s[0] >= self.capacity]
            if cap >= self.capacity and len(self._idle) < IDLE_SETS:
                self._idle.append((cap, made))

    def acquire(self, rows: int) -> tuple[int, dict[str, Any]]:
        """A set of at least ``rows`` rows (``rows`` at most one chunk), the caller's alone
        until :meth:`release`."""
        with self._lock:
            self.capacity = max(self.capacity, min(int(rows), self._limit))
            cap = self.capacity
            while self._idle:
                s = self._idle.pop()
                if s[0] >= cap:
                    return s
        return cap, self._make(cap)

    def release(self, s: tuple[int, dict[str, Any]]) -> None:
        """Give a set back (kept while fewer than :data:`IDLE_SETS` are idle)."""
        with self._lock:
            if s[0] >= self.capacity and len(self._idle) < IDLE_SETS:
                self._idle.append(s)

    @property
    def nbytes(self) -> int:
        """Bytes of the idle sets."""
        with self._lock:
            sets = [b for _, b in self._idle]
        total = 0
        for b in sets:
            for name, a in b.items():
                if name == "pol":
                    ws = [getattr(a.ws, f) for f, _, _ in POLISH_WORK.fields]
                    total += a.PL.capacity + sum(x.capacity for x in ws)
                elif name in ("w", "tg", "out", "sw"):
                    continue  # structs of the arrays counted here
                else:
                    total += a.capacity
        return int(total)


class DeviceSolve:
    """A solver's device data and launches (see the module); built once, never changed.

    Args:
        ik: the CPU :class:`~ikstack.ik.analytic.AnalyticIK` (its records and options).
        base: its family (a ported :class:`SixR`, :class:`SRS` or :class:`LockedJoint`).
        tabs: the chain's :class:`ikstack.ik._fixed_gate.ConstraintTables`.
        wp, dev: the Warp module and device.
        chunk_size: the most targets a launch takes.
        selection: selection and certification run on the device.
    """

    def __init__(
        self, ik: Any, base: Any, tabs: Any, wp: Any, dev: Any, chunk_size: int, selection: bool
    ):
        from ikstack.backends.warp import _structs as st

        self.wp, self.dev, self.base = wp, dev, base
        self.K, self.dof = int(base.K), int(base.dof)
        self.selection = selection
        self.polish = bool(ik.polish)
        chain = ik.chain
        self.chain = st.CHAIN_T.make(ik._chain_data, dev)
        self.con = st.CONSTRAINTS_T.make(constraint_data(tabs), dev)
        self.gate = st.GATE_T.make(
            GATE.make(
                lo=chain.lower,
                hi=chain.upper,  # certify: limit tolerance 0
                tol_p=ik.position_tolerance,
                tol_r=ik.rotation_tolerance,
            ),
            dev,
        )
        self._select_data = ik._select_data
        self.step = float(ik._select_data.step)
        self.sel = st.SELECT_T.make(ik._select_data, dev)
        if isinstance(base, SRS):
            self.fam = st.SRS_T.make(base, dev)
        elif isinstance(base, LockedJoint):
            self.fam = st.FAMILY6_T.make(st.family6_values(base.sub), dev)
            self.lock = st.LOCKED_T.make(st.locked_values(base), dev)
        else:
            self.fam = st.FAMILY6_T.make(st.family6_values(base), dev)
        self.rotation_tolerance = float(ik.rotation_tolerance)
        self.pool = ScratchPool(self._scratch, chunk_size)

    def settings_with_step(self, max_step: float | None) -> Any:
        """The selection's settings with ``max_joint_step`` ``max_step`` (None: the
        solver's)."""
        if max_step is None or max_step == self.step:
            return self.sel
        from ikstack.backends.warp._structs import SELECT_T

        return SELECT_T.make(self._select_data._replace(step=max_step), self.dev)

    # ------------------------------------------------------------------ scratch
    def _scratch(self, cap: int) -> dict[str, Any]:
        wp, dev, k, dof = self.wp, self.dev, self.K, self.dof
        i32, f64 = wp.int32, wp.float64
        b: dict[str, Any] = {
            "T": wp.empty(cap, dtype=wp.mat44d, device=dev),
            "S": wp.empty((cap, dof), dtype=f64, device=dev),
            "Q": wp.empty((cap, k, dof), dtype=f64, device=dev),
            "V": wp.empty((cap, k), dtype=i32, device=dev),
        }
        if self.selection:
            b["Tg"] = wp.empty(cap, dtype=wp.mat44d, device=dev)
            b["rtc"] = wp.empty(cap, dtype=f64, device=dev)
            b["q"] = wp.empty((cap, dof), dtype=f64, device=dev)
            b["status"] = wp.empty(cap, dtype=i32, device=dev)
            b["perr"] = wp.empty(cap, dtype=f64, device=dev)
            b["rerr"] = wp.empty(cap, dtype=f64, device=dev)
            b["pol"] = self.polish_struct(cap)
            b["w"] = self.slots(b["S"], b["Q"], b["V"])
            for name in ("OK", "FK", "LIM", "VALID", "CON", "D"):
                b[name] = getattr(b["w"], name)
            b["tg"] = self.targets(b["T"], b["Tg"], b["rtc"])
            b["out"] = self.written(b["q"], b["status"], b["perr"], b["rerr"])
        if isinstance(self.base, SRS):
            b["sw"] = self.swivels(cap)
            b["bounds"], b["psis"], b["used"] = b["sw"].bounds, b["sw"].psis, b["sw"].used
        return b

    def slots(self, S: Any, Q: Any, V: Any) -> Any:
        """A :class:`._selection.Slots` of the seeds ``S``, candidates ``Q`` and masks ``V``
        with fresh flags."""
        from ikstack.backends.warp._selection import Slots

        wp, dev = self.wp, self.dev
        rows, k, dof = Q.shape
        w = Slots()
        w.S, w.Q, w.V = S, Q, V
        w.Qf = Q.reshape((rows * k, dof))
        for name in ("OK", "FK", "LIM", "VALID", "CON", "DROP"):
            setattr(w, name, wp.empty((rows, k), dtype=wp.int32, device=dev))
        w.D = wp.empty((rows, k), dtype=wp.float64, device=dev)
        w.zs = w.os = wp.empty((1, 1), dtype=wp.vec3d, device=dev)
        return w

    @staticmethod
    def targets(T: Any, Tg: Any, rtc: Any) -> Any:
        from ikstack.backends.warp._selection import Targets

        tg = Targets()
        tg.T, tg.Tg, tg.rtc = T, Tg, rtc
        return tg

    @staticmethod
    def written(q: Any, status: Any, perr: Any, rerr: Any) -> Any:
        from ikstack.backends.warp._selection import Written

        out = Written()
        out.q, out.status, out.perr, out.rerr = q, status, perr, rerr
        return out

    def swivels(self, rows: int) -> Any:
        from ikstack.backends.warp._srs import MAX_ARCS, Swivels

        wp, dev = self.wp, self.dev
        sw = Swivels()
        sw.bounds = wp.empty((rows, MAX_ARCS), dtype=wp.float64, device=dev)
        sw.psis = wp.empty((rows, self.K // 8), dtype=wp.float64, device=dev)
        sw.used = wp.empty(rows, dtype=wp.int32, device=dev)
        return sw

    def polish_struct(self, rows: int) -> Any:
        """The device polish of :mod:`._polish` for ``rows`` threads: on for a chain within
        the alignment tolerance of its family (strict mode polishes the surrogate's candidates
        on the true chain, as the CPU path), else off with placeholder arrays."""
        from ikstack.backends.warp._polish import Polish
        from ikstack.backends.warp._structs import POLISH_WORK_ROWS_T

        wp, dev = self.wp, self.dev
        on = self.polish
        n, k, dof = (rows, self.K, self.dof) if on else (1, 1, 1)
        pol = Polish()
        pol.iters = NEAR_ITERATIONS if on else 0
        pol.max_dq = wp.float64(NEAR_MAX_STEP)
        pol.PL = wp.zeros((n, k), dtype=wp.int32, device=dev)
        pol.ws = POLISH_WORK_ROWS_T.zero_rows(n, dev, dof=dof)
        pol.zs = wp.zeros((1, 1), dtype=wp.vec3d, device=dev)
        pol.os = pol.zs
        # every slot's FK errors (written by each FK check before they are read)
        pol.PE = wp.empty((rows, self.K), dtype=wp.float64, device=dev)
        pol.RC = wp.empty((rows, self.K), dtype=wp.float64, device=dev)
        return pol

    # ------------------------------------------------------------------ launches
    def _candidates_into(self, b: dict[str, Any], T: Array, S: Array) -> tuple[Any, Any]:
        """Upload at most one chunk of targets and seeds into ``b`` and launch the family
        kernels; returns the device candidates ``(Q, V)`` (views of ``b``)."""
        from ikstack.backends.warp import _families, _srs

        m = T.shape[0]
        wp, dev, f = self.wp, self.dev, self.base
        b["T"][:m].assign(np.ascontiguousarray(T, dtype=np.float64))
        b["S"][:m].assign(np.ascontiguousarray(S, dtype=np.float64))
        Tm, Sm, Q, V = b["T"][:m], b["S"][:m], b["Q"][:m], b["V"][:m]
        if isinstance(f, SixR):
            wp.launch(_families.sixr_kernel, dim=m, device=dev, inputs=[self.fam, Tm, Sm, Q, V])
        elif isinstance(f, LockedJoint):
            wp.launch(
                _families.locked_kernel,
                dim=(m, f.K // 8),
                device=dev,
                inputs=[self.fam, self.lock, Tm, Sm, Q, V],
            )
        else:
            wp.launch(
                _srs.srs_swivels_kernel, dim=m, device=dev, inputs=[Tm, Sm, self.fam, b["sw"]]
            )
            wp.launch(
                _srs.srs_kernel,
                dim=(m, self.K // 8),
                device=dev,
                inputs=[Tm, Sm, self.fam, b["sw"], Q, V],
            )
        return Q, V

    def candidates(self, T: Array, S: Array) -> tuple[Array, NDArray[np.bool_]]:
        """Candidates of at most one chunk of targets, as fresh host arrays."""
        s = self.pool.acquire(T.shape[0])
        try:
            Q, V = self._candidates_into(s[1], T, S)
            return np.array(Q.numpy(), dtype=np.float64), np.array(V.numpy() != 0)
        finally:
            self.pool.release(s)

    def solve_chunk(
        self, T: Array, S: Array, return_all: bool, max_step: float | None = None
    ) -> tuple[Any, ...]:
        """Candidates, selection and certification of at most one chunk of targets on the
        device; ``(q, status, perr, rerr, q_all, valid_all)`` as fresh host arrays (the last
        two None unless ``return_all``: only (m, dof) and three (m,) arrays come back)."""
        from ikstack.backends.warp import _selection

        m = T.shape[0]
        s = self.pool.acquire(m)
        b = s[1]
        try:
            # rotations near orthonormal (float32, noise) are solved as the nearest rotation
            # and certified against the target as given, the rotation tolerance widened by
            # the distance to it (as the CPU path)
            Tp, deviation = project_rigid(T)
            Q, _ = self._candidates_into(b, Tp, S)
            b["Tg"][:m].assign(np.ascontiguousarray(T, dtype=np.float64))
            b["rtc"][:m].assign(self.rotation_tolerance + deviation)
            # rows past m are not touched: the kernel reads row i of thread i only
            self.wp.launch(
                _selection.select_kernel,
                dim=m,
                device=self.dev,
                inputs=[
                    b["tg"],
                    self.chain,
                    self.con,
                    self.gate,
                    self.settings_with_step(max_step),
                    0 if return_all else 1,
                    b["w"],
                    b["out"],
                    b["pol"],
                ],
            )
            q_all = valid_all = None
            if return_all:
                q_all = np.array(Q.numpy(), dtype=np.float64)
                valid_all = np.array(b["VALID"][:m].numpy() != 0)
            return (
                np.array(b["q"][:m].numpy(), dtype=np.float64),
                b["status"][:m].numpy().astype(np.int64),
                np.array(b["perr"][:m].numpy()),
                np.array(b["rerr"][:m].numpy()),
                q_all,
                valid_all,
            )
        finally:
            self.pool.release(s)

    def paths(self, T: Array, S: Array) -> tuple[Array, NDArray[np.int64], Array, Array]:
        """Paths ``T`` (P, F, 4, 4), F > 0, from seeds ``S`` (P, dof) in one launch:
        ``(q (P, F, dof), status, perr, rerr (P, F))`` (status < 0: undecided from there)."""
        from ikstack.backends.warp import _paths

        wp, dev, f = self.wp, self.dev, self.base
        P, nf = T.shape[0], T.shape[1]
        dof, k = self.dof, self.K
        i32, f64 = wp.int32, wp.float64
        seeds = wp.array(np.ascontiguousarray(S, dtype=np.float64), dtype=f64, device=dev)
        Q = wp.empty((P, k, dof), dtype=f64, device=dev)
        w = self.slots(seeds, Q, wp.empty((P, k), dtype=i32, device=dev))
        out = self.written(
            wp.empty((P * nf, dof), dtype=f64, device=dev),
            wp.empty(P * nf, dtype=i32, device=dev),
            wp.empty(P * nf, dtype=f64, device=dev),
            wp.empty(P * nf, dtype=f64, device=dev),
        )
        # frames are solved as their nearest rotations and certified as given (as the CPU
        # path); one row a frame, path after path
        Tp, deviation = project_rigid(T)

        def rows(x: Any, dtype: Any) -> Any:
            return wp.array(np.ascontiguousarray(x, dtype=np.float64), dtype=dtype, device=dev)

        tg = self.targets(
            rows(Tp.reshape(P * nf, 4, 4), wp.mat44d),
            rows(T.reshape(P * nf, 4, 4), wp.mat44d),
            rows((self.rotation_tolerance + deviation).reshape(P * nf), f64),
        )
        common = [tg, self.chain, self.con, self.gate, self.sel, w, out, self.polish_struct(P)]
        if isinstance(f, SixR):
            kernel, head = _paths.path6_kernel, [self.fam]
        elif isinstance(f, LockedJoint):
            kernel, head = _paths.path_locked_kernel, [self.fam, self.lock]
        else:
            kernel, head = _paths.path_srs_kernel, [self.fam, self.swivels(P)]
        wp.launch(kernel, dim=P, device=dev, inputs=head + common)
        return (
            out.q.numpy().reshape(P, nf, dof).astype(np.float64),
            out.status.numpy().reshape(P, nf).astype(np.int64),
            out.perr.numpy().reshape(P, nf).astype(np.float64),
            out.rerr.numpy().reshape(P, nf).astype(np.float64),
        )


__all__ = ["IDLE_SETS", "DeviceSolve", "ScratchPool"]
