"""The MotionGenerator extension point: turns a desired velocity into the cycle's reference.

The kernel hands a generator the measured state, the desired velocity (solver output after
singularity scaling and smoothing) and this cycle's velocity box (velocity, acceleration,
braking-distance and jerk bounds). The default, :class:`BoxIntegrator`, scales the velocity
into the box and integrates one cycle. A custom generator (an online trajectory generator, a
spline) is a trusted numerical backend: it must keep the whole interval and the stopping
trajectory after it within limits and continuity, and honour any jerk contract it declares.
The kernel re-validates only its final reference (finite, inside the box, inside position
limits); a reference that fails becomes a latched SOLVER_ERROR and a smooth halt.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
from numpy.typing import NDArray

from ikstack.diffik._linalg import scale_into_box

Array = NDArray[np.float64]


class MotionGenerator(ABC):
    """Produces ``(q_ref, dq_ref)`` for one cycle from a desired velocity."""

    @abstractmethod
    def generate(
        self,
        q: Array,
        dq: Array,
        desired_velocity: Array,
        lower: Array,
        upper: Array,
        q_lower: Array,
        q_upper: Array,
        dt: float,
    ) -> tuple[Array, Array]:
        """The reference at the end of the cycle.

        Args:
            q, dq: (dof,) measured state [rad, rad/s].
            desired_velocity: (dof,) what the task asks for [rad/s].
            lower, upper: (dof,) the cycle's velocity box (all kernel limits combined).
            q_lower, q_upper: (dof,) hard position limits.
            dt: cycle duration [s].

        Returns:
            ``(q_ref, dq_ref)``, each (dof,).
        """

    def reset(self) -> None:  # noqa: B027 - optional hook
        """Forget internal state (called by :meth:`Servo.reset`)."""


class BoxIntegrator(MotionGenerator):
    """Scale into the box (direction kept where possible), then ``q + dq dt``."""

    def generate(
        self,
        q: Array,
        dq: Array,
        desired_velocity: Array,
        lower: Array,
        upper: Array,
        q_lower: Array,
        q_upper: Array,
        dt: float,
    ) -> tuple[Array, Array]:
        """See :meth:`MotionGenerator.generate`."""
        v = np.empty_like(desired_velocity)
        scale_into_box(desired_velocity, lower, upper, v)
        q_ref = np.minimum(np.maximum(q + v * dt, q_lower), q_upper)
        return q_ref, v
