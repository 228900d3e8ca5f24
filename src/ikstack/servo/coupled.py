r"""Coupled-joint constraints in the servo: every reference, and the stop after it, inside.

A chain's :class:`~ikstack.model.JointConstraint` rows ``g(q) <= 0`` (linear rows
``A q <= b`` and quadrant-polynomial rows such as the Marvin J6/J7 diamond) are packed into
one float vector (:func:`pack_constraints`) that the compiled cycle reads.

The guarantee is the one the position limits give: after this cycle's velocity ``v'`` the arm
can still stop without crossing. The stop assumed is the one the servo itself performs on a
halt: every joint brakes at its acceleration limit (``c = a dt`` per cycle) until it rests.
Each joint then moves monotonically, so the whole stop lies in the axis-aligned box between
``q + v' dt`` and the per-joint stopping points. A row whose maximum over that box is within
its level passes at once; otherwise the sampled stop is simulated cycle by cycle.

Levels: a row must stay at or below ``-margin`` (the chain's kinematic margin); a state already
inside that band may stay where it is or move out, never deeper (the level is ``g(q)``); the
hard level 0 applies when the measured state leaves no other choice.

:func:`coupled_project` takes the candidate velocity (already inside the per-joint box) and,
when a row would be crossed, moves it toward the braking velocity (the point of the box
nearest zero) along the segment between the two, by bisection: the direction of motion is
kept and every per-joint limit still holds, since both ends lie in the box.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from ikstack.errors import ModelError
from ikstack.model.constraints import (
    JointConstraint,
    LinearJointConstraint,
    QuadrantPolynomialConstraint,
)

#: values a quadrant row takes in the packed vector: i, j, then the 2x2x4 table
QUAD_SIZE = 18
#: simulated braking cycles past which only the (conservative) box bound is used
MAX_SIM = 4096
#: bisection steps toward the braking velocity
BISECT = 30

# outcome codes of coupled_project
C_FREE = 0  #: no row binds
C_BOUND = 1  #: a row binds; the velocity was moved toward braking
C_CONFLICT = 2  #: the measured state cannot stop inside: the reference alone is kept inside


def pack_constraints(constraints: Sequence[JointConstraint], dof: int) -> np.ndarray:
    """``[n_linear_rows, n_quadrant_rows, linear rows (a_0..a_{n-1}, b), quadrant rows]``.

    Quadrant rows are ``(i, j, table)`` with the ``(q_i >= 0, q_j >= 0)`` table of
    ``(a0, a1, a2, sense)`` flattened (see :class:`QuadrantPolynomialConstraint`).
    """
    lin: list[np.ndarray] = []
    quad: list[np.ndarray] = []
    for c in constraints:
        if isinstance(c, LinearJointConstraint):
            c.check_indices(dof)
            for r in range(c.num_rows):
                lin.append(np.concatenate([c.A[r], [c.b[r]]]))
        elif isinstance(c, QuadrantPolynomialConstraint):
            c.check_indices(dof)
            quad.append(np.concatenate([[c.joint_i, c.joint_j], np.ravel(c._coeffs)]))
        else:
            raise ModelError(f"the servo cannot enforce constraint {getattr(c, 'name', c)!r} of "
                             f"type {type(c).__name__}: only linear and quadrant-polynomial rows")
    parts = [np.array([len(lin), len(quad)], dtype=np.float64)] + lin + quad
    return np.concatenate(parts).astype(np.float64)


def row_names(constraints: Sequence[JointConstraint]) -> list[str]:
    """The constraint's name (and description) for each packed row, in packed order."""
    lin: list[str] = []
    quad: list[str] = []
    for c in constraints:
        desc = getattr(c, "description", "")
        label = c.name + (f" ({desc})" if desc else "")
        if isinstance(c, LinearJointConstraint):
            lin.extend([label] * c.num_rows)
        else:
            quad.append(label)
    return lin + quad


@njit(cache=True, inline="always")
def packed_size(cons, n):  # pragma: no cover - compiled
    """Length of the packed vector whose header starts ``cons``."""
    return 2 + int(cons[0]) * (n + 1) + int(cons[1]) * QUAD_SIZE


@njit(cache=True, inline="always")
def num_rows(cons):  # pragma: no cover - compiled
    return int(cons[0]) + int(cons[1])


@njit(cache=True)
def row_value(q, cons, r):  # pragma: no cover - compiled
    """``g_r(q)`` of packed row ``r``."""
    n = q.shape[0]
    nl = int(cons[0])
    if r < nl:
        o = 2 + r * (n + 1)
        s = -cons[o + n]
        for i in range(n):
            s += cons[o + i] * q[i]
        return s
    o = 2 + nl * (n + 1) + (r - nl) * QUAD_SIZE
    i = int(cons[o])
    j = int(cons[o + 1])
    qi = q[i]
    qj = q[j]
    t = o + 2 + ((1 if qi >= 0.0 else 0) * 2 + (1 if qj >= 0.0 else 0)) * 4
    b = cons[t] * qi * qi + cons[t + 1] * qi + cons[t + 2]
    return qj - b if cons[t + 3] > 0.0 else b - qj


@njit(cache=True)
def worst_row(q, cons):  # pragma: no cover - compiled
    """``(max_r g_r(q), r)``; ``(-inf, -1)`` without rows."""
    worst = -np.inf
    idx = -1
    for r in range(num_rows(cons)):
        g = row_value(q, cons, r)
        if not g <= worst:
            worst = g
            idx = r
    return worst, idx


@njit(cache=True)
def _poly_range(a0, a1, a2, lo, hi):  # pragma: no cover - compiled
    """min and max of ``a0 x^2 + a1 x + a2`` over ``[lo, hi]``."""
    f1 = a0 * lo * lo + a1 * lo + a2
    f2 = a0 * hi * hi + a1 * hi + a2
    bmin = min(f1, f2)
    bmax = max(f1, f2)
    if a0 != 0.0:
        x = -a1 / (2.0 * a0)
        if lo < x < hi:
            f = a0 * x * x + a1 * x + a2
            bmin = min(bmin, f)
            bmax = max(bmax, f)
    return bmin, bmax


@njit(cache=True)
def box_bound(lo, hi, cons, r):  # pragma: no cover - compiled
    """An upper bound of ``g_r`` over the box ``lo <= q <= hi``."""
    n = lo.shape[0]
    nl = int(cons[0])
    if r < nl:
        o = 2 + r * (n + 1)
        s = -cons[o + n]
        for i in range(n):
            a = cons[o + i]
            s += a * hi[i] if a > 0.0 else a * lo[i]
        return s
    o = 2 + nl * (n + 1) + (r - nl) * QUAD_SIZE
    i = int(cons[o])
    j = int(cons[o + 1])
    worst = -np.inf
    for si in range(2):
        # the part of joint i's interval with this sign (zero counts as non-negative)
        ilo = lo[i] if si == 0 else max(lo[i], 0.0)
        ihi = min(hi[i], 0.0) if si == 0 else hi[i]
        if ilo > ihi or (si == 0 and ilo >= 0.0):
            continue
        for sj in range(2):
            jlo = lo[j] if sj == 0 else max(lo[j], 0.0)
            jhi = min(hi[j], 0.0) if sj == 0 else hi[j]
            if jlo > jhi or (sj == 0 and jlo >= 0.0):
                continue
            t = o + 2 + (si * 2 + sj) * 4
            bmin, bmax = _poly_range(cons[t], cons[t + 1], cons[t + 2], ilo, ihi)
            g = jhi - bmin if cons[t + 3] > 0.0 else bmax - jlo
            if g > worst:
                worst = g
    return worst


@njit(cache=True)
def stop_excess(q, v, c, dt, cons, levels, one_step, w):  # pragma: no cover - compiled
    """``max_r (max over the stop of g_r) - levels[r]`` and the row attaining it.

    The stop starts with ``q + v dt`` and then brakes each joint by ``c[i]`` per cycle. With
    ``one_step`` only the first sample (the reference itself) counts. ``w`` is scratch (4 n).
    """
    n = q.shape[0]
    R = num_rows(cons)
    lo = w[0:n]
    hi = w[n:2 * n]
    qk = w[2 * n:3 * n]
    vk = w[3 * n:4 * n]
    steps = 1
    for i in range(n):
        q1 = q[i] + v[i] * dt
        qs = q1
        if not one_step and v[i] != 0.0:
            s = abs(v[i])
            if np.isfinite(c[i]) and c[i] > 0.0:
                m = np.ceil(s / c[i]) - 1.0
                if m < 0.0:
                    m = 0.0
                path = dt * ((m + 1.0) * s - c[i] * m * (m + 1.0) * 0.5)
                if m + 1.0 > steps:
                    steps = int(min(m + 1.0, MAX_SIM + 1.0))
            else:
                path = s * dt
            qs = q[i] + (path if v[i] > 0.0 else -path)
        lo[i] = min(q1, qs)
        hi[i] = max(q1, qs)
    worst = -np.inf
    row = -1
    need_sim = False
    for r in range(R):
        e = box_bound(lo, hi, cons, r) - levels[r]
        if e > 0.0:
            need_sim = True
        if e > worst:
            worst = e
            row = r
    if not need_sim or steps <= 1 or steps > MAX_SIM:
        return worst, row
    # exact sampled stop
    worst = -np.inf
    row = -1
    for i in range(n):
        qk[i] = q[i]
        vk[i] = v[i]
    for k in range(steps):
        for i in range(n):
            if k > 0:
                s = abs(vk[i]) - c[i]
                if s < 0.0 or not np.isfinite(s):
                    s = 0.0
                vk[i] = s if vk[i] > 0.0 else -s
            qk[i] += vk[i] * dt
        for r in range(R):
            e = row_value(qk, cons, r) - levels[r]
            if e > worst:
                worst = e
                row = r
    return worst, row


@njit(cache=True)
def coupled_project(q, v, lower, upper, amax, dt, cons, margin):  # pragma: no cover - compiled
    """Keep ``v`` (inside ``[lower, upper]``) such that every row holds along the stop.

    ``amax`` are the acceleration limits [per s^2]. Returns ``(code, row)``: ``C_FREE``,
    ``C_BOUND`` (moved toward the braking velocity) or ``C_CONFLICT`` (no stop within the
    acceleration limits stays inside: the reference alone is kept inside, position wins).
    """
    R = num_rows(cons)
    if R == 0:
        return C_FREE, -1
    n = q.shape[0]
    w = np.empty(7 * n + 2 * R)
    sw = w[0:4 * n]
    vb = w[4 * n:5 * n]
    vt = w[5 * n:6 * n]
    c = w[6 * n:7 * n]
    soft = w[7 * n:7 * n + R]
    hard = w[7 * n + R:7 * n + 2 * R]
    for i in range(n):
        c[i] = amax[i] * dt
    for r in range(R):
        g = row_value(q, cons, r)
        soft[r] = max(-margin, g)
        hard[r] = 0.0
    e, row = stop_excess(q, v, c, dt, cons, soft, False, sw)
    if e <= 0.0:
        return C_FREE, -1
    for i in range(n):
        x = 0.0
        if x < lower[i]:
            x = lower[i]
        elif x > upper[i]:
            x = upper[i]
        vb[i] = x
    eb, _ = stop_excess(q, vb, c, dt, cons, soft, False, sw)
    if eb > 0.0:
        # the measured state is already past what a stop from here allows (it was not this
        # servo's own reference): brake as hard as the limits allow, and where even that
        # crosses, keep the reference itself inside (position wins over acceleration)
        code = C_BOUND
        eb, _ = stop_excess(q, vb, c, dt, cons, hard, False, sw)
        if eb > 0.0:
            code = C_CONFLICT
        lo_a = 1.0
        eb, _ = stop_excess(q, vb, c, dt, cons, hard, True, sw)
        if eb > 0.0:
            code = C_CONFLICT
            lo_a = 0.0
            hi_a = 1.0
            for _ in range(BISECT):
                a = 0.5 * (lo_a + hi_a)
                for i in range(n):
                    vt[i] = a * vb[i]
                ea, _ = stop_excess(q, vt, c, dt, cons, hard, True, sw)
                if ea <= 0.0:
                    lo_a = a
                else:
                    hi_a = a
        for i in range(n):
            v[i] = lo_a * vb[i]
        return code, row
    # vb passes: the largest step from vb toward v that still passes
    lo_a = 0.0
    hi_a = 1.0
    for _ in range(BISECT):
        a = 0.5 * (lo_a + hi_a)
        for i in range(n):
            vt[i] = vb[i] + a * (v[i] - vb[i])
        ea, _ = stop_excess(q, vt, c, dt, cons, soft, False, sw)
        if ea <= 0.0:
            lo_a = a
        else:
            hi_a = a
    for i in range(n):
        x = vb[i] + lo_a * (v[i] - vb[i])
        # rounding must not leave the box
        if x < lower[i]:
            x = lower[i]
        elif x > upper[i]:
            x = upper[i]
        v[i] = x
    return C_BOUND, row


@njit(cache=True)
def project_state(q, cons, tol):  # pragma: no cover - compiled
    """Pull a state that crosses a row by at most ``tol`` back onto it (in place).

    Returns the first row crossed by more than ``tol`` (the state is then refused), else -1.
    """
    R = num_rows(cons)
    n = q.shape[0]
    for r in range(R):
        if row_value(q, cons, r) > tol:
            return r
    for _ in range(8):
        g, r = worst_row(q, cons)
        if g <= 0.0:
            return -1
        # gradient by central differences (rows are piecewise polynomials of degree <= 2)
        grad = np.zeros(n)
        nrm = 0.0
        h = 1e-7
        for i in range(n):
            x = q[i]
            q[i] = x + h
            gp = row_value(q, cons, r)
            q[i] = x - h
            gm = row_value(q, cons, r)
            q[i] = x
            grad[i] = (gp - gm) / (2.0 * h)
            nrm += grad[i] * grad[i]
        if nrm <= 0.0:
            return r
        step = (g + 1e-12 + 1e-9 * abs(g)) / nrm
        for i in range(n):
            q[i] -= step * grad[i]
    g, r = worst_row(q, cons)
    return -1 if g <= 0.0 else r
