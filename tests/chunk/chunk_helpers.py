"""Helpers of the chunk/QP tests: start poses and reachable chunks."""

from __future__ import annotations

import numpy as np

from ikstack.chunk import ChunkRequest

#: a comfortable start pose per arm [deg] (J6/J7 in opposite quadrants for the two arms)
Q0_DEG = {
    "left": [10.0, 30.0, 0.0, -60.0, 0.0, 20.0, 10.0],
    "right": [-10.0, 30.0, 0.0, -60.0, 0.0, -20.0, -10.0],
}


def q0() -> dict[str, np.ndarray]:
    return {k: np.radians(v) for k, v in Q0_DEG.items()}


def reachable_chunk(
    arms, H: int, reach_m: float = 0.02, turn_deg: float = 5.0, t0: float = 0.0
) -> ChunkRequest:
    """H TCP knots per arm along a small smooth move from the start pose (FK of q0)."""
    from ikstack.spatial import rotvec_to_matrix

    q = {name: v for name, v in q0().items() if name in arms}
    T = {}
    for name, chain in arms.items():
        T0 = chain.fk(q[name])
        s = np.linspace(1.0 / H, 1.0, H)
        Ts = np.repeat(T0[None], H, axis=0)
        Ts[:, 0, 3] += reach_m * s
        Ts[:, 2, 3] -= 0.5 * reach_m * s
        R = rotvec_to_matrix(np.outer(s, [0.0, 0.0, np.radians(turn_deg)]))
        Ts[:, :3, :3] = R @ T0[:3, :3]
        T[name] = Ts
    return ChunkRequest(T, q, t0)
