"""Random chains the test folders share (this folder is on ``sys.path`` in every run: its
``conftest.py`` puts it there)."""

from __future__ import annotations

import numpy as np

from ikstack.model import Chain, JointType
from ikstack.spatial import se3, so3


def random_6r(seed: int, continuous: bool = False) -> Chain:
    """A 6R arm with random axes, origins and tool: no special geometry."""
    rng = np.random.default_rng(seed)
    origins = np.stack(
        [
            se3.make_transform(so3.exp(rng.normal(size=3)), 0.3 * rng.normal(size=3))
            for _ in range(6)
        ]
    )
    kind = JointType.CONTINUOUS if continuous else JointType.REVOLUTE
    return Chain(
        joint_names=tuple(f"j{i}" for i in range(6)),
        joint_types=(kind,) * 6,
        axes=rng.normal(size=(6, 3)),
        origins=origins,
        T_last_tip=se3.make_transform(so3.exp(rng.normal(size=3)), 0.1 * rng.normal(size=3)),
        lower=-np.pi * np.ones(6),
        upper=np.pi * np.ones(6),
        velocity_limits=np.ones(6),
        acceleration_limits=np.ones(6),
        jerk_limits=np.ones(6),
        name=f"random6r-{seed}",
    )
