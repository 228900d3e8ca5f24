"""``solve_ik``: one front door to every IK solver of a chain.

``method="auto"`` picks, per chain, the solver of least expected cost per target among those
expected to succeed (:func:`route`): a closed-form analytic mode (strict, which also covers
chains within the axis alignment tolerance of a family, such as rounded URDFs, by polishing on
the true chain; or near mode for chains only near a family) when its candidate count makes it
cheaper than the numerical solver, else Levenberg-Marquardt. In practice: 6R families (8
candidates, a few microseconds) go analytic; 7R families (a thousand candidates or more from
sampled swivels or locks) go numerical, tens of microseconds instead of hundreds to thousands.
The algebraic mode of the analytic solver (general 6R elimination; locked-joint elimination
for 7R arms without a closed form, such as Flexiv Rizon 4 / 4s) is explicit:
``method="analytic", mode="general"``; ``"auto"`` never picks it. The result's ``method`` says
which solver ran; ``benchmarks/bench_routing.py`` publishes the choice and its measured cost
for every bundled arm.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from typing import Any

from numpy.typing import ArrayLike

from ikstack._deprecated import old_seed
from ikstack.errors import InputError, UnsupportedGeometryError
from ikstack.ik.numerical import DampedLeastSquaresIK, LevenbergMarquardt, NumericalIK
from ikstack.ik.result import IKResult
from ikstack.model import Chain
from ikstack.model.chain_cache import ChainCache
from ikstack.vocabulary import METHODS

_NUMERICAL: dict[str, type[NumericalIK]] = {
    "numerical": LevenbergMarquardt,
    "lm": LevenbergMarquardt,
    "dls": DampedLeastSquaresIK,
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


#: what the front door derived per chain: its route, its analytic solvers by mode and its
#: numerical solvers by method and options, keyed ``(id(chain), key)``; solvers are built on
#: a private copy of the chain, so the cache never keeps the caller's chain alive
_DOOR: ChainCache[Any] = ChainCache("IK front door", 64)


def _numerical_solver(chain: Chain, method: str, options: dict[str, Any]) -> NumericalIK:
    """A numerical solver, reused per chain and options (construction validates options)."""
    cls = _NUMERICAL[method]
    try:
        key = (method, tuple(sorted((k, _hashable(v)) for k, v in options.items())))
        solver = _DOOR.get((id(chain), key))
    except TypeError:
        return cls(chain, **options)
    if solver is None:
        solver = _DOOR.add(chain, cls(chain.replace(), **options), key)
    return solver  # type: ignore[no-any-return]


#: expected cost of one target [us]: an analytic mode's base cost plus its cost per candidate
#: slot (strict: generation, representatives and the lazy FK gate; near: each slot's bounded
#: polish on the true model), and Levenberg-Marquardt's with its success rate on TRAC-IK's
#: protocol; single calls, measured by benchmarks/bench_routing.py and bench_numerical.py
ANALYTIC_BASE_US = 3.0
ANALYTIC_SLOT_US = {"strict": 0.4, "near": 3.0}
NUMERICAL_US = 50.0
NUMERICAL_SUCCESS = 0.998


@dataclass(frozen=True)
class Route:
    """What ``solve_ik(method="auto")`` runs for a chain, and why.

    Attributes:
        method: ``"analytic"`` or ``"numerical"``.
        mode: the analytic mode (``"strict"`` or ``"near"``), or None.
        family: the analytic family the classifier found, or None.
        candidates: candidate slots per target of that family's mode (0 if none).
        analytic_us: expected cost per target of the analytic mode [us] (inf if none).
        numerical_us: expected cost per target of the numerical solver [us] (per success).
        reason: the decision in words.
    """

    method: str
    mode: str | None
    family: str | None
    candidates: int
    analytic_us: float
    numerical_us: float
    reason: str


def route(chain: Chain) -> Route:
    """The solver ``solve_ik(method="auto")`` runs for ``chain``: the one of least expected cost
    per target, counting the numerical solver's failures as retries (its cost divided by its
    success rate); the analytic modes are complete over their candidates (success 1)."""
    _, solver, cls = _analytic_solver(chain, None)
    numerical = NUMERICAL_US / NUMERICAL_SUCCESS
    family = None if cls is None else getattr(cls, "family", None)
    if solver is None:
        why = "no closed-form family" if family is None else "analytic solver unavailable"
        return Route("numerical", None, family, 0, math.inf, numerical, why)
    mode = (
        "near" if getattr(solver, "near", False) or getattr(cls, "needs_near", False) else "strict"
    )
    k = getattr(solver, "K", None)
    if not isinstance(k, int):  # a solver that does not say: trust the classifier
        return Route(
            "analytic",
            mode,
            family,
            0,
            math.nan,
            numerical,
            "closed-form family (candidate count unknown)",
        )
    cost = ANALYTIC_BASE_US + ANALYTIC_SLOT_US[mode] * k
    if cost <= numerical:
        return Route(
            "analytic",
            mode,
            family,
            k,
            cost,
            numerical,
            f"{family} ({mode}, {k} candidates): ~{cost:.0f} us <= numerical ~{numerical:.0f} us",
        )
    return Route(
        "numerical",
        None,
        family,
        k,
        cost,
        numerical,
        f"{family} ({mode}) expands {k} candidates, ~{cost:.0f} us a target; the "
        f"numerical solver expects ~{numerical:.0f} us",
    )


def _analytic_solver(chain: Chain, mode: str | None = None) -> tuple[bool, Any, Any]:
    """``(analytic package available, its solver for the chain or None, classification)``,
    built once per chain and mode (so a single-target call pays no classification).
    ``mode=None`` takes the classifier's closed-form mode, if any."""
    key = ("analytic", mode)
    hit = _DOOR.get((id(chain), key))
    if hit is not None:
        return hit  # type: ignore[no-any-return]
    mod = _analytic_module()
    own = chain.replace()  # the solver's copy: the cache holds no reference to ``chain``
    cls = None if mod is None else mod.classify(own)
    solver = None
    if mod is not None:
        if mode is not None:
            solver = mod.AnalyticIK(own, mode=mode)
        elif cls is not None and cls.family is not None:
            solver = mod.AnalyticIK(own, mode="near" if cls.needs_near else "strict")
    return _DOOR.add(chain, (mod is not None, solver, cls), key)  # type: ignore[no-any-return]


def _hashable(v: Any) -> Any:
    if isinstance(v, list | tuple):
        return tuple(_hashable(x) for x in v)
    if hasattr(v, "tolist") and hasattr(v, "shape"):
        return ("array", tuple(v.shape), tuple(v.ravel().tolist()))
    return v


def solve_ik(
    chain: Chain,
    T_base_tcp: ArrayLike,
    q0: ArrayLike | None = None,
    method: str = "auto",
    **options: Any,
) -> IKResult:
    """Solve inverse kinematics for one target (4, 4) or a batch (N, 4, 4) or (..., 4, 4)
    (leading batch dimensions shape the result: ``q`` (..., dof)).

    Args:
        chain: the chain to solve for.
        T_base_tcp: target TCP poses in the chain's base frame [m].
        q0: (dof,) or (N, dof) joint guess near which to solve [rad or m]; the numerical
            solver starts there (the middle of the limits when None) and the analytic solver
            ranks its branches by distance to it (``seed``, its former name, warns).
        method: ``"auto"`` (the solver of least expected cost, :func:`route`: a closed-form
            family where its candidates are few, e.g. 6R arms; numerical otherwise, e.g. 7R
            arms and chains only the algebraic mode solves), ``"analytic"``, ``"numerical"``
            (Levenberg-Marquardt), ``"lm"`` or ``"dls"``.
        **options: numerical options (:class:`~ikstack.ik.numerical.NumericalConfig` fields,
            and ``damping``/``damping_parameter`` of the step; ``rng`` seeds the restarts).
            With ``method="analytic"``
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
    if "seed" in options:
        q0 = old_seed(q0, options.pop("seed"), "solve_ik")
    seed = q0
    if method not in METHODS:
        raise InputError(f"method {method!r} is unknown; valid methods: {', '.join(METHODS)}")
    if method == "auto":
        r = _DOOR.get((id(chain), "route"))
        if r is None:
            r = _DOOR.add(chain, route(chain), "route")
        if r.method == "analytic":
            return _analytic_solver(chain, None)[1].solve(T_base_tcp, seed)  # type: ignore[no-any-return]
        method = "numerical"
    if method == "analytic":
        if set(options) - {"mode"}:
            raise InputError(
                f"method='analytic' takes only the option 'mode'; got {sorted(options)}"
            )
        mode = options.get("mode")
        available, solver, cls = _analytic_solver(chain, mode)
        if solver is not None:
            return solver.solve(T_base_tcp, seed)
        why = (
            "the analytic solvers are not available in this build"
            if not available
            else f"no closed-form family covers {chain!r}"
            + (
                "; mode='general' solves it algebraically"
                if cls is not None and getattr(cls, "general", False)
                else ""
            )
        )
        raise UnsupportedGeometryError(f"method='analytic': {why}; use method='numerical'")
    return _numerical_solver(chain, method, options).solve(T_base_tcp, seed)
