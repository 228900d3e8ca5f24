"""Finite-difference Jacobians of any black-box forward kinematics."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ikstack.errors import InputError, ShapeError
from ikstack.spatial import as_float_array, check_finite, so3

Array = NDArray[np.float64]


def jacobian_fd(
    fk: Callable[[Array], ArrayLike], q: ArrayLike, eps: float = 1e-6, central: bool = True
) -> Array:
    """Jacobian (..., 6, dof) of a black-box ``fk(q) -> (..., 4, 4)`` by finite differences.

    The same convention as :func:`ikstack.kinematics.jacobian`: rows ``[linear; angular]`` in the
    base frame, linear part at the returned frame's origin. The angular part is the rotation
    vector of ``R(q + e) R(q - e)^T`` over ``2 eps`` (on the manifold, not an Euler difference).

    Args:
        fk: callable taking ``(dof,)`` (called once per perturbation) and returning (4, 4).
        q: (dof,) or (..., dof) joint positions.
        eps: step [rad or m]; the Jacobian-IK model check uses 1e-5 (1e-3 for float32 backends).
        central: central (default) or forward differences.
    """
    if not (np.isfinite(eps) and eps > 0):
        raise InputError(f"eps must be positive and finite; got {eps}")
    qa = as_float_array(q, "q")
    if qa.ndim == 0:
        raise ShapeError("q", qa.shape, "(dof,) or (..., dof)")
    check_finite(qa, "q")
    dof = qa.shape[-1]
    flat = qa.reshape(-1, dof)
    J = np.empty((flat.shape[0], 6, dof))
    for k, qk in enumerate(flat):
        T0 = None if central else np.asarray(fk(qk.copy()), dtype=np.float64)
        for i in range(dof):
            qp = qk.copy()
            qp[i] += eps
            Tp = np.asarray(fk(qp), dtype=np.float64)
            if central or T0 is None:
                qm = qk.copy()
                qm[i] -= eps
                Tm = np.asarray(fk(qm), dtype=np.float64)
                h = 2.0 * eps
            else:
                Tm, h = T0, eps
            if Tp.shape != (4, 4) or Tm.shape != (4, 4):
                raise ShapeError("fk(q)", Tp.shape, "(4, 4)")
            J[k, :3, i] = (Tp[:3, 3] - Tm[:3, 3]) / h
            J[k, 3:, i] = so3.log(Tp[:3, :3] @ Tm[:3, :3].T) / h
    return J.reshape(qa.shape[:-1] + (6, dof))
