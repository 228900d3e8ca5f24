"""The Jacobian-IK model check, and decoding a two-arm action chunk into joint knots."""

import numpy as np

from ikstack import robots
from ikstack.chunk import ChunkRequest, bundled_profile_path, load_profile
from ikstack.spatial import make_transform
from ikstack.validate import check_jacobian_ik, format_table

report = check_jacobian_ik(robots.load("iiwa14"))
print(format_table(report))

profile = load_profile(bundled_profile_path("marvin_bimanual_diff"))
q0 = np.radians([10, 20, -10, -60, 10, 20, 10])
T_tcp, q_obs = {}, {}
for arm in ("left", "right"):
    chain = robots.load(f"marvin_{arm}_taccap")
    T0 = chain.fk(q0)
    T_tcp[arm] = np.stack(
        [T0 @ make_transform(np.eye(3), [0.002 * k, 0.001 * k, 0.0]) for k in range(1, 17)]
    )
    q_obs[arm] = q0
chunk = profile.decoder().decode(ChunkRequest(T_tcp, q_obs))
print(
    "chunk accepted:", chunk.success, "| knots per arm:", {a: q.shape for a, q in chunk.q.items()}
)
