"""The choices of ``ikstack solve`` (methods, engines, backends, devices, bundled samples).

A leaf module: it imports nothing from the solvers, so the command line can build its parser
(and print ``--help``) without loading a kernel.
"""

from __future__ import annotations

#: path-solving methods of a job
METHODS = ("auto", "analytic", "numerical")
#: where the episodes run: a local process pool or a Ray cluster
ENGINES = ("local", "ray")
#: kinematics backends of a job, and their devices
BACKENDS = ("numpy", "warp")
DEVICES = ("cpu", "cuda")
#: robots with a bundled sample, and the posture each sample moves around [rad]
SAMPLE_HOMES: dict[str, tuple[float, ...]] = {
    "ur5": (0.0, -1.2, 1.4, -1.8, -1.57, 0.3),
    "panda": (0.0, -0.6, 0.0, -2.2, 0.0, 1.8, 0.8),
    "marvin_left": (0.2, 0.5, 0.1, -1.2, 0.2, 0.3, 0.2),
}
