"""Both entry points agree at singular wrists: ``solve(T, seed)`` (the fused nearest-solution
kernel for one target and for a batch, the general path for float32) returns the valid slot of
``solve(T, seed, return_all=True)`` nearest the seed, under the selection's weighted distance,
with the same status. A singular wrist's one-parameter family has more than one representative
among the candidates (the seed's joint 4, the seed's residual turn split evenly, and for a
three-parallel arm the elbow moved to mid reach): the nearest answer must see them all.

Targets are FK of configurations at and 1e-9 / 1e-6 rad from the wrist singularity (joint 5 at
zero), and from the shoulder and elbow singularities, seeds random within the limits (and the
default seed); every answer is checked with Pinocchio's FK of a URDF of the arm (the bundled
UR5 URDF, or one written here from the arm's axes and offsets).
"""

from __future__ import annotations

import numpy as np
import pytest
from analytic_arms import industrial_hp, pinocchio_fk, singular_along

import ikstack.robots as robots
from ikstack.ik.analytic import AnalyticIK, _single_target
from ikstack.ik.analytic.geometry import chain_from_hp

pin = pytest.importorskip("pinocchio")

EX, EY, EZ = np.eye(3)
Z = np.zeros(3)
OFFSETS = (0.0, 1e-9, -1e-9, 1e-6, -1e-6)
N = 100  # singular configurations per arm (each also moved by every nonzero offset)


def urdf_from_hp(H: np.ndarray, P: np.ndarray) -> str:
    """A URDF of the revolute chain with axes ``H`` and offsets ``P`` (zero configuration,
    every frame aligned with the base), tip link ``tool``."""

    def v(x: np.ndarray) -> str:
        return " ".join(repr(float(c)) for c in x)

    links = "".join(f'<link name="l{i}"/>' for i in range(7)) + '<link name="tool"/>'
    joints = "".join(
        f'<joint name="joint{i + 1}" type="revolute"><parent link="l{i}"/>'
        f'<child link="l{i + 1}"/><origin xyz="{v(P[i])}" rpy="0 0 0"/>'
        f'<axis xyz="{v(H[i])}"/><limit lower="-7" upper="7" effort="1" velocity="1"/>'
        f"</joint>"
        for i in range(6)
    )
    tool = (
        f'<joint name="tool_joint" type="fixed"><parent link="l6"/><child link="tool"/>'
        f'<origin xyz="{v(P[6])}" rpy="0 0 0"/></joint>'
    )
    return f'<robot name="hp">{links}{joints}{tool}</robot>'


def arm(name: str):
    if name == "ur5":
        chain = robots.load("ur5")
        fk = pinocchio_fk(None, str(robots.data_path("ur5.urdf")), chain.tip, chain.joint_names)
        return chain, fk
    H, P, lo, hi = industrial_hp()[name]
    chain = chain_from_hp(H, P, lower=lo, upper=hi, name=name)
    return chain, pinocchio_fk(urdf_from_hp(H, P), None, "tool", chain.joint_names)


def singular_targets(chain, fk, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Targets (FK by Pinocchio) with joint 5 at and near the wrist singularity (``N``
    configurations), and a few at and near the shoulder and elbow singularities (the wrist
    centre on the first axis, the elbow straight: ``det J`` vanishing along joint 2 or 3), with
    random in-limit seeds."""
    lo = chain.lower + chain.kinematic_margin
    hi = chain.upper - chain.kinematic_margin
    q = rng.uniform(lo, hi, (N, 6))
    q[:, 4] = 0.0
    rows = [q] + [singular_along(chain, j, rng.uniform(lo, hi, (N // 4, 6))) for j in (1, 2)]
    q = np.concatenate(
        [r + np.eye(6)[j] * off for r, j in zip(rows, (4, 1, 2), strict=True) for off in OFFSETS]
    )
    q = q[chain.within_limits(q)]
    T = fk(q)
    seeds = rng.uniform(lo, hi, (len(q), 6))
    return T, seeds


def distance(ik: AnalyticIK, q: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """The selection's distance: weighted squared joint distance to the seed projected into the
    limits (less the kinematic margin)."""
    chain = ik.chain
    s = np.clip(seed, chain.lower + chain.kinematic_margin, chain.upper - chain.kinematic_margin)
    return np.sum(ik.weights * (q - s) ** 2, axis=-1)


def disagreements(
    ik: AnalyticIK, seeds: np.ndarray, q: np.ndarray, success: np.ndarray, status: np.ndarray, every
) -> list:
    """Rows where ``solve``'s answer (``q``, ``success``, ``status``) is not ``every``'s
    nearest valid slot."""
    bad = []
    for i in range(len(q)):
        if status[i] != every.status[i] or success[i] != every.valid_all[i].any():
            bad.append((i, "status", int(status[i]), int(every.status[i])))
            continue
        if not success[i]:
            continue
        slots = every.q_all[i][every.valid_all[i]]
        d = distance(ik, slots, seeds[i])
        best = slots[np.argmin(d)]
        ds = float(distance(ik, q[i], seeds[i]))
        if np.abs(q[i] - best).max() > 1e-9 and abs(ds - d.min()) > 1e-12 * max(1.0, ds):
            bad.append((i, "farther" if ds > d.min() else "nearer", ds, float(d.min())))
    return bad


@pytest.mark.parametrize("name", ["ur5", "puma560", "kuka_kr", "second_meet"])
def test_solve_returns_the_nearest_valid_slot_of_return_all_at_singularities(name):
    chain, fk = arm(name)
    ik = AnalyticIK(chain)
    T, seeds = singular_targets(chain, fk, np.random.default_rng(17))
    problems = {}
    middle = np.broadcast_to(chain.middle(), seeds.shape)
    for dtype in (np.float64, np.float32):
        Tt = T.astype(dtype)
        # the default seed (the middle of the limits), batched
        every = ik.solve(Tt, return_all=True)
        batch = ik.solve(Tt)
        problems[f"{np.dtype(dtype).name} middle"] = disagreements(
            ik, middle, batch.q, batch.success, batch.status, every
        )
        every = ik.solve(Tt, seeds, return_all=True)
        batch = ik.solve(Tt, seeds)
        # one target per call: the single-target fast path (float64) and the general path
        single = [ik.solve(Tt[i], seeds[i]) for i in range(len(T))]
        answers = {
            "batch": (batch.q, batch.success, batch.status),
            "single": (
                np.concatenate([s.q for s in single]),
                np.concatenate([s.success for s in single]),
                np.concatenate([s.status for s in single]),
            ),
        }
        for how, (q, ok, status) in answers.items():
            problems[f"{np.dtype(dtype).name} {how}"] = disagreements(
                ik, seeds, q, ok, status, every
            )
            assert ok.mean() >= 0.99, (dtype, how, np.bincount(status))
            F = fk(q[ok])
            tol = 1e-6 if dtype is np.float64 else 2e-6
            assert np.abs(F[:, :3, 3] - T[ok, :3, 3]).max() <= tol
            assert np.abs(F[:, :3, :3] - T[ok, :3, :3]).max() <= tol
    counts = {k: len(v) for k, v in problems.items()}
    assert not any(counts.values()), (counts, {k: v[:3] for k, v in problems.items() if v})


def test_an_elbow_straight_by_round_off_is_decided_by_the_nearest_kernel_itself():
    # targets at the elbow-straight singularity moved outward by up to 6e-7 m: the elbow
    # subproblem is then least squares within round-off of its tangent solution, which the
    # all-solutions path counts as exact (and the FK gate accepts); the nearest-solution kernel
    # must count it too, not leave the row to the general path
    chain, fk = arm("ur5")
    ik = AnalyticIK(chain)
    rng = np.random.default_rng(5)
    lo = chain.lower + chain.kinematic_margin
    hi = chain.upper - chain.kinematic_margin
    q = singular_along(chain, 2, rng.uniform(lo, hi, (400, 6)))
    T0 = fk(q)
    shoulder = np.array([0.0, 0.0, 0.089159])  # on joint 2's axis (the UR5's d1)
    out = T0[:, :3, 3] - shoulder
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    T = np.concatenate([T0] * 4)
    T[:, :3, 3] += np.repeat([1e-8, 1e-7, 3e-7, 6e-7], len(q))[:, None] * np.tile(out, (4, 1))
    seeds = rng.uniform(lo, hi, (len(T), 6))
    n = len(T)
    qq, pe, re = np.empty((n, 6)), np.empty(n), np.empty(n)
    code = np.empty(n, dtype=np.int64)
    fl, il = ik._pack6  # the 6R family's packing
    _single_target.six_batch(seeds, T, fl, il, ik._kfam, (qq, pe, re, code), False)
    assert (code == _single_target.DONE).all(), np.flatnonzero(code != _single_target.DONE)
    r = ik.solve(T, seeds)
    every = ik.solve(T, seeds, return_all=True)
    assert not disagreements(ik, seeds, r.q, r.success, r.status, every)
    assert r.success.all()
    F = fk(r.q)
    assert np.abs(F[:, :3, 3] - T[:, :3, 3]).max() <= 1e-6
    assert np.abs(F[:, :3, :3] - T[:, :3, :3]).max() <= 1e-6
