"""Compiled candidate generator of 7R SRS arms (shoulder and wrist axes meet), by swivel angle.

Shoulder point ``S`` (axes 1-3 meet), wrist point ``W`` (axes 5-7 meet). The distance
``|W - S|`` depends on the elbow joint alone (subproblem 3, two branches; any elbow offset is
allowed). For a swivel angle ``psi`` the shoulder rotation is the one taking the elbow-local
shoulder-to-wrist vector onto the target's, turned by ``psi`` about the S-W line; the elbow
reference point (on axis 4) then lies at angle ``psi`` from the base ``z`` projected normal to
S-W (base ``x`` when S-W is within 8 degrees of ``z``). Shoulder and wrist angles come from
three-axis decompositions: 8 candidates per swivel sample.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ikstack._records import B, F, Record
from ikstack.ik.analytic._families6 import decompose3
from ikstack.ik.analytic._sp_kernels import sp3
from ikstack.spatial._tuple_math import (
    add,
    any_perp,
    cross,
    dot,
    m9,
    mm,
    mT,
    mv,
    neg,
    norm,
    rot,
    rotm,
    scale,
    sub,
    v3,
    wrap,
)

#: a 7R SRS arm as its kernels take it (:class:`ikstack.ik.analytic.families.SRS`)
SRS_DATA = Record(
    "SRSData",
    __name__,
    [
        ("H", F, (7, 3)),  # joint axes
        ("S", F, (3,)),  # shoulder centre
        ("pS3", F, (3,)),  # shoulder centre to the elbow axis's foot
        ("p3W", F, (3,)),  # the elbow axis's foot to the wrist centre
        ("p7T", F, (3,)),  # wrist centre to the TCP
        ("R7T", F, (3, 3)),  # the TCP's rotation at zero
        ("grid", F, ("ng",)),  # the uniform swivels
        ("lo", F, (7,)),  # the limits the swivel arcs keep to
        ("hi", F, (7,)),
        ("arcs", B, ()),  # one swivel inside every joint-limit arc
    ],
)
SRSData = SRS_DATA.type

#: [m] an elbow whose least-squares wrist distance misses the target's by at most this is a
#: tangent candidate (URDF rounding: the axis alignment tolerance's default)
TANGENT = 1e-5


@njit(cache=True)
def _frame(what):  # pragma: no cover - compiled
    if abs(what[2]) < 0.99:
        ref = (0.0, 0.0, 1.0)
    else:
        ref = (1.0, 0.0, 0.0)
    e1 = sub(ref, scale(what, dot(ref, what)))
    e1 = scale(e1, 1.0 / norm(e1))
    return e1, cross(what, e1)


@njit(cache=True)
def _wrist_dir(Rt, pt, Sp, p7T, R7T):  # pragma: no cover - compiled
    R07 = mm(Rt, mT(R7T))
    w = sub(sub(pt, mv(R07, p7T)), Sp)
    dw = norm(w)
    what = scale(w, 1.0 / dw) if dw > 1e-12 else (0.0, 0.0, 1.0)
    return R07, dw, what


@njit(cache=True, inline="always")
def _target_frame(Rt, pt, arm):  # pragma: no cover - compiled
    """``(R07, |W - S|, unit S-W, e1, e2)`` of target ``(Rt, pt)``: the wrist's rotation, the
    shoulder-wrist distance and direction, and the swivel's zero and quarter-turn directions
    normal to it (:func:`_frame`)."""
    R07, dw, what = _wrist_dir(Rt, pt, v3(arm.S), v3(arm.p7T), m9(arm.R7T))
    e1, e2 = _frame(what)
    return R07, dw, what, e1, e2


@njit(cache=True)
def seed_swivel(Rt, pt, arm, seed):  # pragma: no cover - compiled
    """The swivel angle of the seed's elbow reference point about the target's S-W line."""
    H, pS3 = arm.H, v3(arm.pS3)
    _, _, what, e1, e2 = _target_frame(Rt, pt, arm)
    R03 = mm(mm(rotm(v3(H[0]), seed[0]), rotm(v3(H[1]), seed[1])), rotm(v3(H[2]), seed[2]))
    e = mv(R03, pS3)
    return math.atan2(dot(e, e2), dot(e, e1))


@njit(cache=True)
def _elbow_frame(q3, h3, pS3, p3W, what, e1, e2):  # pragma: no cover - compiled
    """``(R0, psi0)``: the shoulder rotation at swivel ``psi0`` for elbow angle ``q3``."""
    v = add(pS3, rot(h3, q3, p3W))
    nv = norm(v)
    vhat = scale(v, 1.0 / nv) if nv > 1e-12 else what
    ax = cross(vhat, what)
    sn = norm(ax)
    cs = dot(vhat, what)
    if sn > 1e-12:
        R0 = rotm(scale(ax, 1.0 / sn), math.atan2(sn, cs))
    elif cs > 0:
        R0 = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    else:
        R0 = rotm(any_perp(vhat), math.pi)
    e0 = mv(R0, pS3)
    return R0, math.atan2(dot(e0, e2), dot(e0, e1))


@njit(cache=True)
def fill_slots(seed, Q, V, k0, k1):  # pragma: no cover - compiled
    """Slots ``k0 .. k1 - 1`` hold the seed (7,), masked."""
    for k in range(k0, k1):
        V[k] = False
        for j in range(7):
            Q[k, j] = seed[j]


@njit(cache=True)
def srs_slots(Rt, pt, arm, psis, s0, s1, seed, Q, V):  # pragma: no cover - compiled
    """The candidates of swivels ``psis[s0 .. s1 - 1]``: 8 slots each from slot ``8 s0`` of
    ``Q`` (.., 7) and masks ``V``; those of a missing branch keep the seed, masked."""
    fill_slots(seed, Q, V, 8 * s0, 8 * s1)
    H, pS3, p3W = arm.H, v3(arm.pS3), v3(arm.p3W)
    R07, dw, what, e1, e2 = _target_frame(Rt, pt, arm)
    h0, h1, h2, h3 = v3(H[0]), v3(H[1]), v3(H[2]), v3(H[3])
    h4, h5, h6 = v3(H[4]), v3(H[5]), v3(H[6])
    m, ls, el0, el1 = sp3(p3W, neg(pS3), h3, dw)
    # an elbow at the edge of reach (straight or folded) is a tangent solution: within
    # TANGENT of the wrist distance it is a candidate (the FK gate, and on a rounded chain
    # the polish, decide), not a least-squares point dropped before the gate
    exact = not ls or abs(norm(add(pS3, rot(h3, el0, p3W))) - dw) <= TANGENT
    for j in range(m):
        q3 = el0 if j == 0 else el1
        R0, psi0 = _elbow_frame(q3, h3, pS3, p3W, what, e1, e2)
        R3e = rotm(h3, q3)
        for s in range(s0, s1):
            R03 = mm(rotm(what, psis[s] - psi0), R0)
            na, X, Y, Z = decompose3(R03, h0, h1, h2, seed[0])
            R47 = mm(mT(mm(R03, R3e)), R07)
            nb, X2, Y2, Z2 = decompose3(R47, h4, h5, h6, seed[4])
            for a in range(na):
                for b in range(nb):
                    slot = s * 8 + j * 4 + a * 2 + b
                    Q[slot, 0] = X[a]
                    Q[slot, 1] = Y[a]
                    Q[slot, 2] = Z[a]
                    Q[slot, 3] = q3
                    Q[slot, 4] = X2[b]
                    Q[slot, 5] = Y2[b]
                    Q[slot, 6] = Z2[b]
                    V[slot] = exact


@njit(cache=True)
def _swivel_roots(what, R0, psi0, x, y, target, out, cnt):  # pragma: no cover - compiled
    """Append to ``out`` the swivels where ``x . R(what, psi - psi0) R0 y = target`` (<= 2)."""
    z = mv(R0, y)
    xw = dot(x, what)
    wz = dot(what, z)
    c0 = xw * wz
    sn = dot(x, cross(what, z))
    cs = dot(x, z) - xw * wz
    amp2 = sn * sn + cs * cs
    b = target - c0
    if amp2 < 1e-24 or b * b > amp2:
        return cnt
    r = math.sqrt(amp2 - b * b)
    # sn sin(phi) + cs cos(phi) = b
    for sign in (1.0, -1.0):
        phi = math.atan2(sn * b + sign * cs * r, cs * b - sign * sn * r)
        if cnt < out.shape[0]:
            out[cnt] = wrap(phi + psi0)
            cnt += 1
    return cnt


@njit(cache=True)
def arc_midpoints(Rt, pt, arm, bounds, out, at):  # pragma: no cover - compiled
    """Swivel angles inside every arc between consecutive joint-limit crossings.

    Along the swivel circle a joint reaches a limit value ``L`` where a linear equation in
    ``(sin psi, cos psi)`` holds (Shimizu et al. 2008: each joint is a closed-form function of
    the swivel): for joint 1 ``h2 . R(h1, -L) R03 h3 = h2 . h3``, for joint 2
    ``h1 . R03 h3 = h1 . R(h2, L) h3``, for joint 3 ``h1 . R03 R(h3, -L) h2 = h1 . h2``, and
    likewise for the wrist with ``R47 = R(h4, q4)^T R03^T R07``. Between consecutive crossings
    no joint of any branch enters or leaves its limits, so one swivel per arc (its midpoint)
    finds every in-limit branch that sampling could miss. Writes the midpoints into ``out``
    from index ``at`` and returns their count (``arm``'s ``lo`` and ``hi`` the limits;
    ``bounds`` (:data:`MAX_ARCS`,) scratch for the crossings).
    """
    H, pS3, p3W, lo, hi = arm.H, v3(arm.pS3), v3(arm.p3W), arm.lo, arm.hi
    R07, dw, what, e1, e2 = _target_frame(Rt, pt, arm)
    h3 = v3(H[3])
    m, ls, el0, el1 = sp3(p3W, neg(pS3), h3, dw)
    cnt = int(0)  # noqa: UP018 - int64, not the literal 0: a callee compiles once
    for j in range(m):
        q3 = el0 if j == 0 else el1
        R0, psi0 = _elbow_frame(q3, h3, pS3, p3W, what, e1, e2)
        R3e = rotm(h3, q3)
        for side in range(2):
            for jj in (0, 1, 2, 4, 5, 6):
                L = lo[jj] if side == 0 else hi[jj]
                if not math.isfinite(L):
                    continue
                g = 0 if jj < 3 else 4  # the shoulder's axes or the wrist's
                k = jj - g
                a, b, c = v3(H[g]), v3(H[g + 1]), v3(H[g + 2])
                if k == 0:
                    x, y, t = rot(a, L, b), c, dot(b, c)
                elif k == 1:
                    x, y, t = a, c, dot(a, rot(b, L, c))
                else:
                    x, y, t = a, rot(c, -L, b), dot(a, b)
                if jj > 3:
                    # x . R47 y = (R07 y) . R03 (R3e x)
                    x, y = mv(R07, y), mv(R3e, x)
                cnt = _swivel_roots(what, R0, psi0, x, y, t, bounds, cnt)
    # sorted (insertion: a few dozen crossings), then one swivel inside every arc
    for i in range(1, cnt):
        v = bounds[i]
        k = i - 1
        while k >= 0 and bounds[k] > v:
            bounds[k + 1] = bounds[k]
            k -= 1
        bounds[k + 1] = v
    for i in range(cnt):
        nxt = bounds[0] + 2.0 * math.pi
        if i + 1 < cnt:  # (not `x if c else y`: the device reads both, past the crossings)
            nxt = bounds[i + 1]
        out[at + i] = wrap(0.5 * (bounds[i] + nxt))
    return cnt


#: most arc midpoints per target: 2 elbow branches x 6 joints x 2 limits x 2 crossings
MAX_ARCS = 48


@njit(cache=True)
def slots(arm):  # pragma: no cover - compiled
    """Candidate slots per target: 8 per swivel (the seed's, the grid's, the arcs')."""
    return 8 * (arm.grid.shape[0] + 1 + (MAX_ARCS if arm.arcs else 0))


@njit(cache=True)
def srs_swivels(Rt, pt, arm, seed, bounds, psis):  # pragma: no cover - compiled
    """The swivels of target ``(Rt, pt)`` into ``psis``: the seed's, the grid's, and
    (``arm.arcs``) one inside every joint-limit arc (``bounds``: :func:`arc_midpoints`'
    scratch); returns how many."""
    grid = arm.grid
    ns = grid.shape[0] + 1
    psis[0] = seed_swivel(Rt, pt, arm, seed)
    for s in range(grid.shape[0]):
        psis[1 + s] = grid[s]
    if arm.arcs:
        return ns + arc_midpoints(Rt, pt, arm, bounds, psis, ns)
    return ns


@njit(cache=True)
def srs_target(T, seed, arm, Q, V):  # pragma: no cover - compiled
    """Candidates ``Q`` (:func:`slots`, 7) and masks ``V`` of target ``T`` (4, 4): at the
    seed's swivel, the grid's, and (``arm.arcs``) one inside every joint-limit arc; unused
    slots keep the seed, masked."""
    Rt = m9(T)
    pt = (T[0, 3], T[1, 3], T[2, 3])
    psis = np.empty(arm.grid.shape[0] + 1 + (MAX_ARCS if arm.arcs else 0))
    bounds = np.empty(MAX_ARCS)
    used = srs_swivels(Rt, pt, arm, seed, bounds, psis)
    srs_slots(Rt, pt, arm, psis, 0, used, seed, Q, V)
    fill_slots(seed, Q, V, 8 * used, Q.shape[0])


def batch_srs(T, S, arm, Q, V, parallel):
    """:func:`srs_target` of targets ``T`` (N, 4, 4) from seeds ``S`` (N, 7) into ``Q``
    (N, K, 7) and ``V`` (N, K); unused slots keep the seed, masked. On all cores when
    ``parallel`` (a serial call never touches numba's thread pool)."""
    kern = batch_srs_parallel if parallel else batch_srs_serial
    kern(T, S, arm, Q, V)


@njit(cache=True)
def batch_srs_serial(T, S, arm, Q, V):  # pragma: no cover - compiled
    """:func:`batch_srs` on the calling thread."""
    for i in range(T.shape[0]):
        srs_target(T[i], S[i], arm, Q[i], V[i])


@njit(cache=True, parallel=True)
def batch_srs_parallel(T, S, arm, Q, V):  # pragma: no cover - compiled
    """:func:`batch_srs` on all cores."""
    for i in prange(T.shape[0]):
        srs_target(T[i], S[i], arm, Q[i], V[i])
