"""Batched numerical IK on Warp: the CPU path's Levenberg-Marquardt, one thread per target.

:class:`WarpLevenbergMarquardt` is :class:`ikstack.ik.numerical.LevenbergMarquardt` with its
compiled loop replaced by a Warp port (:mod:`._lm`): the same step (Chan's damping by
default, Sugihara's on request; a task-space ``m x m`` system when fewer weighted rows than
joints, as for a 7-joint arm), the same limit handling (active-set ``PROJECT`` by default),
stall rule, step cap and failure codes, random restarts drawn from the same per-target
splitmix64 stream, so each target starts every restart where the CPU path does, and the same
in-loop check of tabled coupled-joint constraints (quadrant polynomials such as Marvin's J6/J7
coupling, linear rows): a converged answer violating one ends its search and the next restart
follows. Everything around the loop is the CPU class's own code: option validation,
:func:`ikstack.ik.certify` of every result on the host, the statuses, and the host retries for
what the loop cannot decide (constraint kinds without tables, a linear row within round-off of
its bound), exactly as on the CPU path. FK and the Jacobian follow the kinematics layer's
kernel operation by operation, so on the ``cpu`` device every iterate is the CPU path's, bit
for bit; on a GPU, whose ``sin``/``cos`` and fused multiply-adds round differently in the last
bits, a rare chaotic search (near a singularity) may end elsewhere.

Not supported on the device: ``time_budget`` (a wall-clock check inside the loop).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack._deprecated import old_seed, renamed_keyword
from ikstack.backends.warp.kinematics import _prepare, constraint_arrays
from ikstack.errors import InputError
from ikstack.ik import IKResult
from ikstack.ik.numerical import LevenbergMarquardt
from ikstack.model import Chain

Array = NDArray[np.float64]


class WarpLevenbergMarquardt(LevenbergMarquardt):
    """:class:`~ikstack.ik.numerical.LevenbergMarquardt` whose searches run on a Warp device.

    Args:
        chain: the chain to solve for.
        device: ``"cpu"``, ``"cuda"`` or ``"cuda:<i>"``; no silent fallback.
        damping, damping_parameter: as for :class:`LevenbergMarquardt`.
        chunk_size: targets per launch (device scratch is about 2 KB a target for seven
            joints).
        **options: :class:`~ikstack.ik.numerical.NumericalConfig` fields except
            ``time_budget``.

    Raises:
        InputError: a bad option, or ``time_budget`` (not supported on the device).
        DeviceUnavailableError: the device does not exist.
    """

    def __init__(
        self,
        chain: Chain,
        device: str = "cpu",
        damping: str = "chan",
        damping_parameter: float | None = None,
        chunk_size: int = 65536,
        **options: Any,
    ) -> None:
        if options.get("time_budget") is not None:
            raise InputError(
                "time_budget is not supported by the warp backend's numerical IK "
                "(no wall clock inside a device kernel)"
            )
        if not isinstance(chunk_size, int | np.integer) or chunk_size < 1:
            raise InputError(f"chunk_size must be a positive integer; got {chunk_size!r}")
        super().__init__(chain, damping, damping_parameter, **options)
        wp, dev, _flat, _batch, data = _prepare(chain, np.zeros((1, chain.dof)), device)
        self._wp, self._dev, self._data = wp, dev, data
        self.device = str(dev)
        self.chunk_size = int(chunk_size)
        f64 = wp.float64
        self._consts = [
            wp.array(np.ascontiguousarray(a, dtype=np.float64), dtype=f64, device=dev)
            for a in (self._lo, self._hi, self._slo, self._shi, self._w, np.sqrt(self._w))
        ]
        # the coupled-joint tables the compiled loop checks, as the CPU kernels take them
        self._tables = constraint_arrays(wp, dev, self._tabs, chain.dof)

    @property
    def method(self) -> str:
        """``"warp:numerical:lm"``."""
        return "warp:numerical:lm"

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
        from ikstack.backends.warp import _lm

        o = self.options
        restarts = o.max_restarts if max_restarts is None else max_restarts
        n, dof = Tt.shape[0], self.chain.dof
        key = self._key(n)  # one key a call, as on the CPU path
        if n == 0:
            return
        wp, dev, d = self._wp, self._dev, self._data
        f64, i32 = wp.float64, wp.int32
        for a in range(0, n, self.chunk_size):
            b = min(n, a + self.chunk_size)
            m = b - a
            k6 = max(dof, 6)
            s = {
                "q": (m, dof),
                "J": (m, 6, dof),
                "e": (m, 6),
                "Jw": (m, 6, dof),
                "ew": (m, 6),
                "y": (m, 6),
                "L": (m, k6, k6),
                "G": (m, k6, k6),
                "dq": (m, dof),
                "out": (m, dof),
            }
            buf = {k: wp.empty(v, dtype=f64, device=dev) for k, v in s.items()}
            held = wp.zeros((m, dof), dtype=i32, device=dev)
            out_i = [wp.empty(m, dtype=i32, device=dev) for _ in range(3)]
            wp.launch(
                _lm.lm_kernel,
                dim=m,
                device=dev,
                inputs=[
                    wp.array(np.ascontiguousarray(Tt[a:b]), dtype=wp.mat44d, device=dev),
                    wp.array(
                        np.ascontiguousarray(Q0[a:b], dtype=np.float64), dtype=f64, device=dev
                    ),
                    d["Rs"],
                    d["ps"],
                    d["kinds"],
                    d["R_end"],
                    d["p_end"],
                    *self._consts,
                    o.position_tolerance,
                    o.rotation_tolerance,
                    int(self.step_kind),
                    self.damping,
                    int(o.limits),
                    int(o.max_iterations),
                    int(restarts),
                    key,
                    *self._tables,
                    buf["q"],
                    buf["J"],
                    buf["e"],
                    buf["Jw"],
                    buf["ew"],
                    buf["y"],
                    buf["L"],
                    buf["G"],
                    buf["dq"],
                    held,
                    buf["out"],
                    *out_i,
                ],
            )
            Q[a:b] = buf["out"].numpy()
            codes[a:b] = out_i[0].numpy()
            iters[a:b] = out_i[1].numpy()
            rest[a:b] = out_i[2].numpy()


def solve(
    chain: Chain,
    T_base_tcp: ArrayLike,
    q0: ArrayLike | None = None,
    *,
    device: str = "cpu",
    damping: str = "chan",
    damping_parameter: float | None = None,
    rng: int | np.random.Generator | None = 0,
    **options: Any,
) -> IKResult:
    """Solve N targets on ``device`` with :class:`WarpLevenbergMarquardt` (one-shot helper).

    Args:
        T_base_tcp: (N, 4, 4) or (4, 4) targets in the base frame.
        q0: (N, dof), (1, dof) or (dof,) joint guesses; default the middle of the limits
            (``seed``, its former name, warns).
        rng: the restarts' randomness (``NumericalConfig.rng``; ``rng_seed``, its former
            name, warns).
        **options: other :class:`~ikstack.ik.numerical.NumericalConfig` fields.
    """
    where = "ikstack.backends.warp.numerical.solve"
    if "seed" in options:  # here the joint guess (a LevenbergMarquardt's seed= was its rng)
        q0 = old_seed(q0, options.pop("seed"), where)
    rng = renamed_keyword(options, "rng_seed", "rng", rng, where, default=0)
    return WarpLevenbergMarquardt(
        chain, device, damping, damping_parameter, rng=rng, **options
    ).solve(T_base_tcp, q0)
