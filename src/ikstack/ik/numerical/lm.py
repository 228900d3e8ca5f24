"""Levenberg-Marquardt with error-adaptive damping (Sugihara 2011; Chan and Lawrence 1988)."""

from __future__ import annotations

from ikstack.errors import InputError
from ikstack.ik.numerical import _kernels as K
from ikstack.ik.numerical.solver import NumericalIK
from ikstack.model import Chain
from ikstack.vocabulary import DAMPING_RULES, DampingRule

_DEFAULT_PARAM = {DampingRule.SUGIHARA: 1e-5, DampingRule.CHAN: 0.1}


class LevenbergMarquardt(NumericalIK):
    """Adaptive-damping step :math:`(J^T W J + \\lambda I)\\,\\Delta q = J^T W e`.

    With :math:`E = \\tfrac12 e^T W e`: Sugihara's rule :math:`\\lambda = E + w_n` keeps a floor
    ``w_n`` that bounds steps near singularities; Chan's rule :math:`\\lambda = k E` vanishes at
    the solution, so the last steps are Gauss-Newton (quadratic convergence).

    Args:
        chain: the chain to solve for.
        damping: a :class:`~ikstack.vocabulary.DampingRule` or its value: ``"chan"`` (default)
            or ``"sugihara"``.
        damping_parameter: ``k`` (Chan, default 0.1) or ``w_n`` (Sugihara, default 1e-5).
        **options: :class:`~ikstack.ik.numerical.NumericalConfig` fields.
    """

    name = "lm"

    def __init__(
        self,
        chain: Chain,
        damping: DampingRule | str = DampingRule.CHAN,
        damping_parameter: float | None = None,
        **options,
    ) -> None:
        try:
            rule = DampingRule(damping)
        except ValueError:
            raise InputError(
                f"damping {damping!r} is unknown; valid: {', '.join(map(repr, DAMPING_RULES))}"
            ) from None
        self.step_kind = K.STEP_LM_CHAN if rule is DampingRule.CHAN else K.STEP_LM_SUGIHARA
        self.damping_rule = rule
        param = _DEFAULT_PARAM[rule] if damping_parameter is None else damping_parameter
        super().__init__(chain, float(param), **options)
