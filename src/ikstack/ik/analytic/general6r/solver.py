"""General 6R inverse kinematics by elimination (Raghavan-Roth 1993, Manocha-Canny 1994)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack._deprecated import old_seed
from ikstack.errors import InputError
from ikstack.ik._immutable import Immutable
from ikstack.ik.analytic.general6r import _engine as EN
from ikstack.ik.result import IKResult, batch_dims, flatten_batch
from ikstack.model import Chain

Array = NDArray[np.float64]


def _check_tolerance(name: str, value: float) -> float:
    v = float(value)
    if not (np.isfinite(v) and v > 0.0):
        raise InputError(f"{name} must be a finite positive number; got {value!r}")
    return v


class General6R(Immutable):
    """All (at most 16) IK solutions of any 6R chain, from one 24x24 eigenproblem per pose.

    The chain is used in product-of-exponentials form,
    ``T_base_tcp = P_1 Z(q_1) P_2 Z(q_2) ... P_6 Z(q_6) E`` (constant rigid ``P_i``, ``E``;
    ``Z`` a rotation about local z), taken from the chain's compiled data, so any axes and
    origins work without a DH conversion. At construction the left coefficient block of the 14
    Raghavan-Roth equations is computed numerically by exact interpolation (degree one in each
    joint's sine and cosine, see :mod:`._elimination`), and the cyclic assignment of joints to
    the elimination's roles is chosen (``role_shift``) so that special geometries do not make
    the 12x12 matrix singular. Per pose: the right block, elimination of two joints by its left
    null space (pivoted QR), the 12x12 matrix quadratic in the half-angle tangent
    ``x = tan((q_h - 0.3) / 2)`` of the hidden joint, linearized to a 24x24 companion matrix
    (direct chart, or reciprocal ``1 / x`` when that leading block is better conditioned, so
    large roots stay bounded), eigenvalues in one stacked LAPACK call, and back-substitution:
    eigenvalues with ``|Im| <= 1e-3 (1 + |x|)`` are refined by at most three bounded
    determinant-Newton steps on the original matrix (a step that would raise ``|det|`` is not
    taken), two joints come from its null vector, two from the eliminated block and the last
    from the target rotation.

    Every slot is certified by :func:`ikstack.ik.certify` (FK gate, limits, constraints).

    Args:
        chain: a 6-joint revolute chain (any axes, offsets, TCP).
        position_tolerance: FK gate [m].
        rotation_tolerance: FK gate [rad].

    Raises:
        UnsupportedGeometryError: not six revolute joints.
    """

    method = "analytic:general6r"

    def __init__(
        self, chain: Chain, position_tolerance: float = 1e-6, rotation_tolerance: float = 1e-6
    ):
        EN.require_revolute(chain, 6, "General6R")
        self.chain = chain
        self.position_tolerance = _check_tolerance("position_tolerance", position_tolerance)
        self.rotation_tolerance = _check_tolerance("rotation_tolerance", rotation_tolerance)
        P, E = EN.poe_factors(chain)
        rng = np.random.default_rng(0)
        q = chain.random_q(rng, 8)
        shift, _ = EN.choose_shift(P, E, 0, np.zeros(8), chain.fk(q), q, chain.lower, chain.upper)
        self.role_shift = shift
        self._geom = EN.geometry(P, E, 0, np.zeros(1), shift)

    @property
    def num_candidates(self) -> int:
        """Candidate slots per target (16)."""
        return EN.ROOTS

    def _raw(self, T: Array) -> tuple[Array, NDArray[np.bool_]]:
        N = T.shape[0]
        Tc = EN.conditioned(T)
        km = self.chain.kinematic_margin  # kept from the limits, as every solver does
        q, res = EN.solve_items(
            Tc,
            np.arange(N, dtype=np.int64),
            np.zeros(N, dtype=np.int64),
            self._geom,
            self.chain.lower + km,
            self.chain.upper - km,
        )
        found = np.isfinite(res)
        EN.polish_near(self.chain, q, found, T, self.position_tolerance, self.rotation_tolerance)
        return q, found

    def candidates(self, T_base_tcp: ArrayLike) -> tuple[Array, NDArray[np.bool_]]:
        """Every certified solution slot.

        Args:
            T_base_tcp: (N, 4, 4), (4, 4) or (..., 4, 4) targets (finite rigid transforms).

        Returns:
            ``(q (N, 16, 6), valid (N, 16))``; invalid slots hold finite, limit-projected values.
        """
        T, single = EN.as_targets(T_base_tcp)
        q, found = self._raw(T)
        res = EN.select(
            self.chain,
            T,
            q,
            found,
            EN.seeds_for(self.chain, None, T.shape[0]),
            self.position_tolerance,
            self.rotation_tolerance,
            self.method,
            True,
        )
        q_all, valid = res.q_all, res.valid_all
        if q_all is None or valid is None:  # pragma: no cover - select(return_all=True)
            raise RuntimeError("candidate pool missing")
        if single:
            return q_all[0], valid[0]
        return q_all, valid

    def solve(
        self,
        T_base_tcp: ArrayLike,
        q0: ArrayLike | None = None,
        return_all: bool = False,
        *,
        seed: ArrayLike | None = None,
    ) -> IKResult:
        """The certified solution nearest to the joint guess ``q0`` for each target.

        Args:
            T_base_tcp: (N, 4, 4), (4, 4) or (..., 4, 4) targets.
            q0: (6,) or (N, 6) [rad]; the middle of the limits when omitted (``seed``, its
                former name, warns).
            return_all: also return the 16-slot pool (``q_all``, ``valid_all``).

        Returns:
            An :class:`~ikstack.ik.IKResult` of length N (method ``"analytic:general6r"``).
        """
        if seed is not None:
            q0 = old_seed(q0, seed, "General6R.solve")
        seed = q0
        lead = batch_dims(T_base_tcp)
        if lead is not None:  # (..., 4, 4): solved flat, shaped back
            Tf, sf = flatten_batch(T_base_tcp, seed, self.chain.dof, lead)
            return self.solve(Tf, sf, return_all).reshaped(lead)
        T, _ = EN.as_targets(T_base_tcp)
        seeds = EN.seeds_for(self.chain, seed, T.shape[0])
        q, found = self._raw(T)
        return EN.select(
            self.chain,
            T,
            q,
            found,
            seeds,
            self.position_tolerance,
            self.rotation_tolerance,
            self.method,
            return_all,
        )
