"""``solve_ik``: one front door to every IK solver of a chain.

``method="auto"`` uses the analytic solver where :mod:`ikstack.ik.analytic` classifies the
chain's family as supported (its near mode where the classifier says the model only nearly has
the family's structure), and the numerical solver otherwise. The result's ``method`` says which
solver ran.
"""

from __future__ import annotations

import importlib
from typing import Any

from numpy.typing import ArrayLike

from ikstack.errors import InputError, UnsupportedGeometryError
from ikstack.ik.numerical import DampedLeastSquares, LevenbergMarquardt, NumericalIK
from ikstack.ik.result import IKResult
from ikstack.model import Chain

METHODS = ("auto", "analytic", "numerical", "lm", "dls")

_NUMERICAL: dict[str, type[NumericalIK]] = {
    "numerical": LevenbergMarquardt,
    "lm": LevenbergMarquardt,
    "dls": DampedLeastSquares,
}


def _analytic_module() -> Any | None:
    """The analytic package when it provides its classifier, else None."""
    try:
        mod = importlib.import_module("ikstack.ik.analytic")
    except ImportError:
        return None
    if not (hasattr(mod, "classify") and hasattr(mod, "AnalyticIK")):
        return None
    return mod


def _numerical_solver(chain: Chain, method: str, options: dict[str, Any]) -> NumericalIK:
    """A numerical solver, reused per chain and options (construction validates options)."""
    cls = _NUMERICAL[method]
    try:
        key = (method, tuple(sorted((k, _hashable(v)) for k, v in options.items())))
        hash(key)
    except TypeError:
        return cls(chain, **options)
    cache = chain._cache.setdefault("numerical_solvers", {})
    solver = cache.get(key)
    if solver is None:
        solver = cls(chain, **options)
        cache[key] = solver
    return solver


def _analytic_solver(chain: Chain) -> tuple[bool, Any | None]:
    """``(analytic package available, its solver for the chain or None)``, classified once per
    chain (cached on the immutable chain, so a single-target call pays no classification)."""
    cache = chain._cache.setdefault("front_door", {})
    hit = cache.get("analytic")
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    mod = _analytic_module()
    cls = None if mod is None else mod.classify(chain)
    solver = None
    if mod is not None and cls is not None and cls.family is not None:
        mode = "near" if cls.needs_near else "strict"
        solver = mod.AnalyticIK(chain, mode=mode)
    cache["analytic"] = (mod is not None, solver)
    return cache["analytic"]  # type: ignore[no-any-return]


def _hashable(v: Any) -> Any:
    if isinstance(v, list | tuple):
        return tuple(_hashable(x) for x in v)
    if hasattr(v, "tolist") and hasattr(v, "shape"):
        return ("array", tuple(v.shape), tuple(v.ravel().tolist()))
    return v


def solve_ik(chain: Chain, T_base_tcp: ArrayLike, seed: ArrayLike | None = None,
             method: str = "auto", **options: Any) -> IKResult:
    """Solve inverse kinematics for one target (4, 4) or a batch (N, 4, 4).

    Args:
        chain: the chain to solve for.
        T_base_tcp: target TCP poses in the chain's base frame [m].
        seed: (dof,) or (N, dof) joint positions near which to solve [rad or m]; the numerical
            solver starts there (the middle of the limits when None) and the analytic solver
            ranks its branches by distance to it.
        method: ``"auto"`` (analytic where the family is supported, numerical otherwise),
            ``"analytic"``, ``"numerical"`` (Levenberg-Marquardt), ``"lm"`` or ``"dls"``.
        **options: numerical options (:class:`~ikstack.ik.numerical.NumericalOptions` fields,
            and ``damping``/``damping_parameter`` of the step); the analytic solver runs with
            its defaults, so options are rejected when ``method="analytic"``.

    Returns:
        IKResult whose ``method`` names the solver used (``"numerical:lm"``,
        ``"analytic:<family>"``...). Every ``success`` is certified by FK.

    Raises:
        InputError: unknown method or option.
        UnsupportedGeometryError: ``method="analytic"`` for a chain no analytic family covers.
    """
    if not isinstance(chain, Chain):
        raise InputError(f"chain must be an ikstack Chain; got {type(chain).__name__}")
    if method not in METHODS:
        raise InputError(f"method {method!r} is unknown; valid methods: {', '.join(METHODS)}")
    if method in ("auto", "analytic"):
        available, solver = _analytic_solver(chain)
        if solver is not None:
            if method == "analytic" and options:
                raise InputError(f"method='analytic' takes no options; got {sorted(options)}")
            return solver.solve(T_base_tcp, seed=seed)
        if method == "analytic":
            why = ("the analytic solvers are not available in this build" if not available
                   else f"no analytic family covers {chain!r}")
            raise UnsupportedGeometryError(f"method='analytic': {why}; use method='numerical'")
        method = "numerical"
    return _numerical_solver(chain, method, options).solve(T_base_tcp, seed=seed)
