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
from ikstack.backends.warp.runtime import device as get_device
from ikstack.backends.warp.runtime import warp
from ikstack.errors import InputError
from ikstack.ik import IKResult
from ikstack.ik.numerical import LevenbergMarquardt
from ikstack.model import Chain
from ikstack.vocabulary import DampingRule

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
        damping: DampingRule | str = DampingRule.CHAN,
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
        wp, dev = warp(), get_device(device)
        from ikstack.backends.warp import _structs as st

        self._wp, self._dev = wp, dev
        self.device = str(dev)
        self.chunk_size = int(chunk_size)
        # the CPU kernels' records as device structs: chain, search settings, coupled-joint
        # tables
        self._chain_struct = st.CHAIN_T.make(self._chain_data, dev)
        self._settings_struct = self._device_settings(self._settings)
        self._cons_struct = st.CONSTRAINTS_T.make(self._cons_data, dev)

    def _device_settings(self, settings: Any) -> Any:
        from ikstack.backends.warp._structs import LM_T

        return LM_T.make(settings, self._dev)

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
        from ikstack.backends.warp._structs import SCRATCH_ROWS_T

        o = self.options
        restarts = o.max_restarts if max_restarts is None else max_restarts
        n, dof = Tt.shape[0], self.chain.dof
        key = self._key(n)  # one key a call, as on the CPU path
        if n == 0:
            return
        wp, dev = self._wp, self._dev
        f64, i32 = wp.float64, wp.int32
        settings = self._settings_struct
        if restarts != self._settings.max_restarts:
            settings = self._device_settings(self._settings._replace(max_restarts=restarts))
        for a in range(0, n, self.chunk_size):
            b = min(n, a + self.chunk_size)
            m = b - a
            wk = SCRATCH_ROWS_T.zero_rows(m, dev, dof=dof, k=max(dof, 6))
            found = _lm.Found()
            found.q = wp.empty((m, dof), dtype=f64, device=dev)
            found.codes = wp.empty(m, dtype=i32, device=dev)
            found.iters = wp.empty(m, dtype=i32, device=dev)
            found.restarts = wp.empty(m, dtype=i32, device=dev)
            wp.launch(
                _lm.lm_kernel,
                dim=m,
                device=dev,
                inputs=[
                    wp.array(np.ascontiguousarray(Tt[a:b]), dtype=wp.mat44d, device=dev),
                    wp.array(
                        np.ascontiguousarray(Q0[a:b], dtype=np.float64), dtype=f64, device=dev
                    ),
                    self._chain_struct,
                    settings,
                    key,
                    self._cons_struct,
                    wk,
                    found,
                ],
            )
            Q[a:b] = found.q.numpy()
            codes[a:b] = found.codes.numpy()
            iters[a:b] = found.iters.numpy()
            rest[a:b] = found.restarts.numpy()


def solve(
    chain: Chain,
    T_base_tcp: ArrayLike,
    q0: ArrayLike | None = None,
    *,
    device: str = "cpu",
    damping: DampingRule | str = DampingRule.CHAN,
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
