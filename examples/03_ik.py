"""Inverse kinematics: the front door, every analytic solution, a continuous path, numerical."""

import numpy as np

import ikstack
from ikstack import robots
from ikstack.ik.analytic import AnalyticIK, classify
from ikstack.ik.numerical import LevenbergMarquardt

ur5 = robots.load("ur5")
print("UR5 family:", classify(ur5).family)

rng = np.random.default_rng(0)
q_true = ur5.random_q(rng, 1000)
T = ikstack.fk(ur5, q_true)

res = ikstack.solve_ik(ur5, T)  # analytic here; every success certified by FK
print(
    f"{res.method}: {res.success.mean():.1%} solved, worst error {res.position_error.max():.1e} m"
)

every = AnalyticIK(ur5).solve(T[:1], return_all=True)
print("valid branches of the first target:", int(every.valid_all.sum()))

# a continuous path: each frame seeded by the previous selection
t = np.linspace(0.0, 1.0, 200)[:, None]
q_path = ur5.middle() + 0.4 * np.sin(2 * np.pi * t * np.arange(1, 7) / 4)
path = AnalyticIK(ur5).solve_path(ikstack.fk(ur5, q_path), q0=q_path[0])
print("path frames solved:", int(path.success.sum()), "of", len(path))

# a redundant arm, numerically, position only
panda = robots.load("panda")
targets = ikstack.fk(panda, panda.random_q(rng, 200))
num = LevenbergMarquardt(panda, mask="position").solve(targets)
print(f"panda position-only LM: {num.success.mean():.1%}")

# failure is a status, not an exception
far = T[0].copy()
far[0, 3] += 5.0
miss = ikstack.solve_ik(ur5, far)
print("unreachable:", bool(miss.success[0]), "-", miss.reason(0))
