"""Forward kinematics and Jacobians of a bundled robot and of a URDF file."""

from pathlib import Path

import numpy as np

import ikstack
from ikstack import robots

panda = robots.load("panda_hand")
print(panda.describe())

q = panda.middle()
T_base_tcp = ikstack.fk(panda, q)  # (4, 4), TCP in the base frame
J = ikstack.jacobian(panda, q)  # (6, 7): [linear; angular], base frame, at the TCP
print("TCP position [m]:", np.round(T_base_tcp[:3, 3], 4))
print("Jacobian condition number:", round(float(np.linalg.cond(J)), 2))

# Batched: any leading shape
Q = panda.random_q(np.random.default_rng(0), 10_000)
T = ikstack.fk(panda, Q)
print("batched FK:", T.shape)

# A URDF file, chain chosen by base and tip link
urdf = Path(__file__).with_name("planar2.urdf")
arm = ikstack.load_urdf(urdf, base="base", tip="tool", acceleration_limits=[3.0, 3.0])
print("planar2 tool at q = (0.7, -0.7):", np.round(arm.fk(np.array([0.7, -0.7]))[:2, 3], 4))
