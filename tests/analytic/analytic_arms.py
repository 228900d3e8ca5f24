"""Random arms with a family's structure imposed (IK-Geo's test method), as ikstack chains."""

from __future__ import annotations

import numpy as np

from ikstack.model import Chain, JointType


def unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def chain_from_lines(
    h: np.ndarray,
    r: np.ndarray,
    R_end: np.ndarray,
    p_end: np.ndarray,
    limit: float = 2 * np.pi,
    name: str = "random",
) -> Chain:
    """A chain whose joint ``i`` turns about the line ``(h_i, r_i)`` (base frame, zero pose)."""
    n = h.shape[0]
    origins = np.tile(np.eye(4), (n, 1, 1))
    origins[0, :3, 3] = r[0]
    origins[1:, :3, 3] = r[1:] - r[:-1]
    T_last_tip = np.eye(4)
    T_last_tip[:3, :3] = R_end
    T_last_tip[:3, 3] = p_end - r[-1]
    return Chain(
        joint_names=tuple(f"j{i}" for i in range(n)),
        joint_types=tuple(JointType.REVOLUTE for _ in range(n)),
        axes=h,
        origins=origins,
        T_last_tip=T_last_tip,
        lower=np.full(n, -limit),
        upper=np.full(n, limit),
        velocity_limits=np.full(n, 2.0),
        acceleration_limits=np.full(n, 10.0),
        jerk_limits=np.full(n, np.inf),
        name=name,
    )


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(3, 3)))
    q = q * np.sign(np.diag(r))
    if np.linalg.det(q) < 0:
        q[:, 0] = -q[:, 0]
    return q


STRUCTURES_6R = (
    "spherical_wrist",
    "spherical_two_parallel",
    "spherical_two_intersecting",
    "three_parallel",
    "spherical_shoulder",
    "three_parallel_reversed",
)


def random_arm(structure: str, rng: np.random.Generator) -> Chain:
    """A random 6R/7R arm with ``structure`` imposed on random axes and offsets."""
    n = 7 if structure in ("srs", "srs_offset_elbow", "locked_last") else 6
    h = unit(rng.normal(size=(n, 3)))
    r = rng.normal(scale=0.3, size=(n, 3))
    if structure.startswith("spherical_wrist") or structure in (
        "spherical_two_parallel",
        "spherical_two_intersecting",
    ):
        r[3] = r[4] = r[5] = rng.normal(scale=0.3, size=3)
    if structure == "spherical_two_parallel":
        h[2] = h[1] * rng.choice([-1.0, 1.0])
    if structure == "spherical_two_intersecting":
        r[1] = r[0]
    if structure == "three_parallel":
        h[2] = h[1] * rng.choice([-1.0, 1.0])
        h[3] = h[1] * rng.choice([-1.0, 1.0])
    if structure == "three_parallel_reversed":
        h[3] = h[2] * rng.choice([-1.0, 1.0])
        h[4] = h[2] * rng.choice([-1.0, 1.0])
    if structure in ("spherical_shoulder", "locked_last"):
        r[0] = r[1] = r[2] = rng.normal(scale=0.3, size=3)
    if structure in ("srs", "srs_offset_elbow"):
        r[0] = r[1] = r[2] = rng.normal(scale=0.3, size=3)
        r[4] = r[5] = r[6] = rng.normal(scale=0.3, size=3)
    return chain_from_lines(
        h, r, random_rotation(rng), rng.normal(scale=0.3, size=3), name=structure
    )


def singular_along(chain: Chain, joint: int, q: np.ndarray, grid: int = 48) -> np.ndarray:
    """Configurations where ``det J`` vanishes, found by moving ``joint`` of each row of ``q``
    (sign change on a grid over its limits, then bisection to round-off); rows without a root
    in the limits are dropped. For a decoupled 6R arm the determinant factors into shoulder,
    elbow and wrist terms, so joint 2, 3 and 5 (1-based) reach each singularity in turn."""
    lo = max(chain.lower[joint] + chain.kinematic_margin, -np.pi)
    hi = min(chain.upper[joint] - chain.kinematic_margin, np.pi)
    xs = np.linspace(lo, hi, grid)
    n = q.shape[0]

    def det(vals: np.ndarray, rows: np.ndarray) -> np.ndarray:
        qq = q[rows].copy()
        qq[:, joint] = vals
        return np.linalg.det(chain.jacobian(qq))

    D = np.stack([det(np.full(n, x), np.arange(n)) for x in xs], axis=1)
    change = np.sign(D[:, :-1]) * np.sign(D[:, 1:]) <= 0
    has = change.any(axis=1)
    rows = np.flatnonzero(has)
    k = change[rows].argmax(axis=1)
    a, b = xs[k], xs[k + 1]
    fa = D[rows, k]
    for _ in range(60):
        m = 0.5 * (a + b)
        fm = det(m, rows)
        left = np.sign(fa) * np.sign(fm) <= 0
        b = np.where(left, m, b)
        a = np.where(left, a, m)
        fa = np.where(left, fa, fm)
    out = q[rows].copy()
    out[:, joint] = 0.5 * (a + b)
    return out


def puma560() -> Chain:
    """A PUMA 560 layout: spherical wrist, shoulder offset, two parallel axes (joints 2, 3)."""
    ex, ey, ez = np.eye(3)
    h = np.array([ez, ey, ey, ez, ey, ez])
    wrist = 1.1 * ez + 0.13 * ey + 0.43 * ex
    r = np.array(
        [0.67 * ez, 0.67 * ez + 0.15 * ey, 0.67 * ez + 0.15 * ey + 0.43 * ex, wrist, wrist, wrist]
    )
    d = np.deg2rad
    chain = chain_from_lines(h, r, np.eye(3), r[5] + 0.056 * ez, name="puma560")
    return chain.replace(
        lower=d(np.array([-160, -225, -45, -110, -100, -266.0])),
        upper=d(np.array([160, 45, 225, 170, 100, 266.0])),
    )


def industrial_hp() -> dict[
    str, tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]
]:
    """Axes ``H`` (6, 3), offsets ``P`` (7, 3) and limits (or None) of published 6R layouts:
    PUMA 560, a KUKA-KR-like arm (joint 5 limited to +-125 deg), and one whose second and third
    axes meet ("second_meet")."""
    EX, EY, EZ = np.eye(3)
    Z = np.zeros(3)
    d = np.deg2rad
    return {
        "puma560": (
            np.array([EZ, EY, EY, EZ, EY, EZ]),
            np.array([0.67 * EZ, 0.15 * EY, 0.43 * EX, 0.43 * EZ - 0.02 * EY, Z, Z, 0.056 * EZ]),
            d(np.array([-160, -225, -45, -110, -100, -266.0])),
            d(np.array([160, 45, 225, 170, 100, 266.0])),
        ),
        "kuka_kr": (
            np.array([-EZ, EY, EY, -EX, EY, -EX]),
            np.array([0.675 * EZ, 0.35 * EX, 1.15 * EZ, -0.041 * EZ + 1.2 * EX, Z, Z, 0.215 * EX]),
            d(np.array([-185, -140, -120, -350, -125, -350.0])),
            d(np.array([185, 140, 168, 350, 125, 350.0])),
        ),
        "second_meet": (
            np.array([EZ, EY, EX, EZ, EY, EZ]),
            np.array([0.4 * EZ, 0.1 * EX, Z, 0.5 * EX + 0.3 * EZ, Z, Z, 0.1 * EZ]),
            None,
            None,
        ),
    }


def nearest_valid(q_all: np.ndarray, valid: np.ndarray, seed: np.ndarray, W) -> tuple:
    """The selection rule written out from its definition: per row the valid slot of least
    weighted distance ``sum_j W_j (q_j - seed_j)^2`` (summed joint by joint, in joint order),
    the lowest slot among equal distances (-1 where none is valid); and how many rows had two
    or more valid slots at that least distance."""
    n, k, dof = q_all.shape
    best = np.full(n, -1)
    ties = 0
    for i in range(n):
        dist = []
        for s in range(k):
            d = 0.0
            for j in range(dof):
                dd = float(q_all[i, s, j]) - float(seed[i, j])
                d += float(W[j]) * dd * dd
            dist.append(d)
        slots = [s for s in range(k) if valid[i, s]]
        if slots:
            least = min(dist[s] for s in slots)
            tied = [s for s in slots if dist[s] == least]
            best[i] = tied[0]
            ties += len(tied) >= 2
    return best, ties


#: joint weights with zeros on the joints that tell branches apart: exact ties between valid
#: slots become common
TIE_WEIGHTS = ((1.0, 0.0, 0.0, 0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0, 0.0, 1.0))


def tie_case(tight: bool, n: int = 60) -> tuple[Chain, np.ndarray, np.ndarray]:
    """The UR5 (``tight``: limits of +-2.5 rad, so many candidates lie outside them) with
    ``n`` reachable targets and ``n`` random seeds, for the selection's tie rule."""
    from ikstack.robots import load

    chain = load("ur5")
    if tight:
        chain = chain.with_limits(np.full(6, -2.5), np.full(6, 2.5))
    rng = np.random.default_rng(11)
    T = chain.fk(chain.random_q(rng, n))
    return chain, T, chain.random_q(rng, n)


def assert_tie_rule(solver, T: np.ndarray, S: np.ndarray, W) -> tuple:
    """``solver.solve(T, S)`` selects per row what :func:`nearest_valid` picks from the
    solver's own candidates and certified mask (``return_all``), with at least 10 rows of
    exact ties; returns ``(want, ok, every)``: the rule's slot per row, where one is valid,
    and the ``return_all`` result."""
    every = solver.solve(T, S, return_all=True)
    want, ties = nearest_valid(every.q_all, every.valid_all, S, W)
    assert ties >= 10, ties  # the rule was exercised
    ok = want >= 0
    r = solver.solve(T, S)
    np.testing.assert_array_equal(r.success, ok)
    np.testing.assert_array_equal(r.q[ok], every.q_all[ok, want[ok]])
    return want, ok, every


def pinocchio_fk(text: str | None, path: str | None, tip: str, names):
    """Pinocchio's FK of the frame ``tip`` of a URDF (``text``, or the file ``path``) as a
    function of (n, dof) joint values in the order ``names`` (the others at neutral):
    (n, 4, 4) poses, the independent reference of the tests."""
    import pinocchio as pin

    model = pin.buildModelFromXML(text) if path is None else pin.buildModelFromUrdf(path)
    data = model.createData()
    fid = model.getFrameId(tip)
    idx = [model.joints[model.getJointId(n)].idx_q for n in names]

    def fk(q: np.ndarray) -> np.ndarray:
        out = np.empty((len(q), 4, 4))
        for i, x in enumerate(q):
            qp = pin.neutral(model)
            qp[idx] = x
            pin.framesForwardKinematics(model, data, qp)
            out[i] = data.oMf[fid].homogeneous
        return out

    return fk
