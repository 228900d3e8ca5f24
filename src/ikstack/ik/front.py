"""``solve_ik``: one front door to every IK solver of a chain.

``method="auto"`` uses the analytic solver where :mod:`ikstack.ik.analytic` classifies the
chain's family as supported (its near mode where the classifier says the model only nearly has
the family's structure), and the numerical solver otherwise. The algebraic mode of the analytic
solver (general 6R elimination; locked-joint elimination for 7R arms without a closed form, such
as Flexiv Rizon 4 / 4s) is explicit: ``method="analytic", mode="general"``; ``"auto"`` never
picks it (those arms get the numerical solver). The result's ``method`` says which solver ran.
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


def _analytic_solver(chain: Chain, mode: str | None = None) -> tuple[bool, Any, Any]:
    """``(analytic package available, its solver for the chain or None, classification)``,
    built once per chain and mode (cached on the immutable chain, so a single-target call pays
    no classification). ``mode=None`` takes the classifier's closed-form mode, if any."""
    cache = chain._cache.setdefault("front_door", {})
    key = ("analytic", mode)
    hit = cache.get(key)
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    mod = _analytic_module()
    cls = None if mod is None else mod.classify(chain)
    solver = None
    if mod is not None:
        if mode is not None:
            solver = mod.AnalyticIK(chain, mode=mode)
        elif cls is not None and cls.family is not None:
            solver = mod.AnalyticIK(chain, mode="near" if cls.needs_near else "strict")
    cache[key] = (mod is not None, solver, cls)
    return cache[key]  # type: ignore[no-any-return]


def _hashable(v: Any) -> Any:
    if isinstance(v, list | tuple):
        return tuple(_hashable(x) for x in v)
    if hasattr(v, "tolist") and hasattr(v, "shape"):
        return ("array", tuple(v.shape), tuple(v.ravel().tolist()))
    return v


def solve_ik(chain: Chain, T_base_tcp: ArrayLike, seed: ArrayLike | None = None,
             method: str = "auto", **options: Any) -> IKResult:
    """Solve inverse kinematics for one target (4, 4) or a batch (N, 4, 4) or (..., 4, 4)
    (leading batch dimensions shape the result: ``q`` (..., dof)).

    Args:
        chain: the chain to solve for.
        T_base_tcp: target TCP poses in the chain's base frame [m].
        seed: (dof,) or (N, dof) joint positions near which to solve [rad or m]; the numerical
            solver starts there (the middle of the limits when None) and the analytic solver
            ranks its branches by distance to it.
        method: ``"auto"`` (a closed-form family where one is supported, numerical
            otherwise: chains only the algebraic mode solves, e.g. Rizon 4, get the numerical
            solver), ``"analytic"``, ``"numerical"`` (Levenberg-Marquardt), ``"lm"`` or
            ``"dls"``.
        **options: numerical options (:class:`~ikstack.ik.numerical.NumericalOptions` fields,
            and ``damping``/``damping_parameter`` of the step). With ``method="analytic"``
            the only option is ``mode`` (:class:`~ikstack.ik.analytic.AnalyticIK`'s
            ``"strict"``, ``"near"`` or ``"general"``; by default the classifier's closed-form
            mode): ``mode="general"`` solves any revolute 6R/7R chain algebraically.

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
        if method == "analytic" and set(options) - {"mode"}:
            raise InputError("method='analytic' takes only the option 'mode'; got "
                             f"{sorted(options)}")
        mode = options.get("mode") if method == "analytic" else None
        available, solver, cls = _analytic_solver(chain, mode)
        if solver is not None:
            return solver.solve(T_base_tcp, seed=seed)
        if method == "analytic":
            why = ("the analytic solvers are not available in this build" if not available
                   else f"no closed-form family covers {chain!r}"
                   + ("; mode='general' solves it algebraically"
                      if cls is not None and getattr(cls, "general", False) else ""))
            raise UnsupportedGeometryError(f"method='analytic': {why}; use method='numerical'")
        method = "numerical"
    return _numerical_solver(chain, method, options).solve(T_base_tcp, seed=seed)
