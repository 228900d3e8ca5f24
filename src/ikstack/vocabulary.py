"""The names ikstack's public arguments take, defined once: IK methods, compute backends and
their devices, the analytic solver's modes, the servo's kernels, a solve job's engines and the
model check's FK kinematics.

A leaf module (it imports nothing from ikstack), so the command line can build its parser from
it without loading a solver. Every enum here is also a ``str``: ``Method.AUTO == "auto"``, and a
plain string is accepted wherever an enum is.

Words: a **method** is the IK algorithm (analytic, numerical...); a **backend** is where the
kernels run (``numpy``: the compiled CPU path; ``warp``: NVIDIA Warp on CPU or CUDA), on a
**device** (``cpu``, ``cuda``, ``cuda:1``). The servo's C++ implementation is its ``kernel``;
the chunk decoder's IK method is its ``method`` (:class:`DecodeMethod`); the model check runs
against an FK ``model``.
"""

from __future__ import annotations

from enum import Enum


class StrEnum(str, Enum):
    """A string enum whose ``str()`` and format are its value (``f"{Method.AUTO}"`` is
    ``"auto"`` on every Python version); its hash and equality are ``str``'s (``str`` comes
    first in the method order), so ``{"auto": 1}[Method.AUTO]`` works."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class Method(StrEnum):
    """An IK method of :func:`ikstack.solve_ik`."""

    AUTO = "auto"  #: the solver of least expected cost for the chain
    ANALYTIC = "analytic"  #: closed form (or the algebraic general mode)
    NUMERICAL = "numerical"  #: Levenberg-Marquardt with restarts
    LM = "lm"  #: Levenberg-Marquardt (the same as ``numerical``)
    DLS = "dls"  #: damped least squares


#: every method :func:`ikstack.solve_ik` and ``ikstack ik --method`` accept
METHODS: tuple[str, ...] = tuple(m.value for m in Method)
#: the methods a path job (``ikstack solve``, :mod:`ikstack.jobs`) accepts
PATH_METHODS: tuple[str, ...] = (Method.AUTO.value, Method.ANALYTIC.value, Method.NUMERICAL.value)
#: the methods a path job tries the closed form with (a path job's ``auto`` and ``analytic``)
ANALYTIC_PATH_METHODS: tuple[str, ...] = (Method.AUTO.value, Method.ANALYTIC.value)
#: the methods the viewer's IK gizmo takes (``ikstack view --method``)
VIEWER_METHODS: tuple[str, ...] = (Method.AUTO.value, Method.NUMERICAL.value)
#: the velocity solvers of the servo demo (``ikstack servo-demo --solver``): damped least
#: squares and the box-constrained QP (:mod:`ikstack.diffik`)
VELOCITY_SOLVERS: tuple[str, ...] = ("dls", "box_qp")


class AnalyticMode(StrEnum):
    """How :class:`~ikstack.ik.analytic.AnalyticIK` solves (a ``str``: ``"strict"`` works)."""

    STRICT = "strict"  #: exact families only (and chains within the axis alignment tolerance)
    NEAR = "near"  #: the nearest exact surrogate, polished on the true model
    GENERAL = "general"  #: algebraic: any revolute 6R (elimination) or 7R (a locked joint)


#: every analytic mode's name
ANALYTIC_MODES: tuple[str, ...] = tuple(m.value for m in AnalyticMode)


class DecodeMethod(StrEnum):
    """How a chunk decoder turns an arm's TCP knots into joint knots (``ik_method`` in an
    embodiment profile; :mod:`ikstack.chunk`)."""

    ANALYTIC = "analytic"  #: analytic IK per knot, nearest valid branch (the default)
    DIFF = "diff"  #: the velocity QP, substep by substep


#: every chunk decode method
DECODE_METHODS: tuple[str, ...] = tuple(m.value for m in DecodeMethod)


class Backend(StrEnum):
    """Where the kernels run."""

    NUMPY = "numpy"  #: the compiled CPU path (numba), always available
    WARP = "warp"  #: NVIDIA Warp kernels in float64 on CPU or CUDA (extra ``warp``)


#: every compute backend
BACKENDS: tuple[str, ...] = tuple(b.value for b in Backend)
#: the device kinds, and those each backend runs on (a CUDA device may carry an index)
DEVICES: tuple[str, ...] = ("cpu", "cuda")
BACKEND_DEVICES: dict[str, tuple[str, ...]] = {
    Backend.NUMPY.value: ("cpu",),
    Backend.WARP.value: ("cpu", "cuda"),
}
#: one line per backend, for help texts and ``ikstack robots``-style listings
BACKEND_TEXT: dict[str, str] = {
    Backend.NUMPY.value: "compiled CPU path (numba), always available",
    Backend.WARP.value: "NVIDIA Warp kernels in float64 on CPU or CUDA (extra 'warp')",
}

#: the servo's kernels (``Servo(..., kernel=)``): the C++ library's
SERVO_KERNELS: tuple[str, ...] = ("native",)
#: where a solve job's episodes run (``ikstack solve --engine``): a local process pool or a Ray
#: cluster (extra ``ray``); not a compute backend
ENGINES: tuple[str, ...] = ("local", "ray")
#: whose forward kinematics the model check runs against (``ikstack validate --kinematics``,
#: :func:`ikstack.validate.load_fk_model`): the chain's own, or MuJoCo's (extra ``mujoco``)
FK_KINEMATICS: tuple[str, ...] = ("ikstack", "mujoco")


class DampingRule(StrEnum):
    """The adaptive damping of :class:`ikstack.ik.numerical.LevenbergMarquardt` (``damping=``),
    with ``E = 1/2 e^T W e`` the weighted squared pose error."""

    CHAN = "chan"  #: ``lambda = k E`` (Chan and Lawrence 1988; the default)
    SUGIHARA = "sugihara"  #: ``lambda = E + w_n`` (Sugihara 2011)


#: every damping rule of the Levenberg-Marquardt solver
DAMPING_RULES: tuple[str, ...] = tuple(d.value for d in DampingRule)
