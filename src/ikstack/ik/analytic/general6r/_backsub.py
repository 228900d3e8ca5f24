"""Back-substitution kernels (numba): from a pencil's eigenvalues to joint vectors.

:func:`backsub_rows` turns the nearly-real eigenvalues of :mod:`._pencil`'s companion matrices into
joint vectors: bounded determinant-Newton refinement of ``q_3`` on the original 12x12 matrix,
inverse iteration for its null vector (``q_4``, ``q_5``), the eliminated block's least-squares
solution (``q_1``, ``q_2``) and the last joint from the target's rotation.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ikstack.ik.analytic.general6r._dense import _lu, _lu_solve
from ikstack.ik.analytic.general6r._elimination import MAX_ROOTS, NQ, _mm, _rz_left
from ikstack.ik.analytic.general6r._pencil import (
    DIRECT,
    FAILED,
    N_EIG,
    Geometry,
    PencilItems,
    PencilSettings,
)

#: a second inverse-iteration vector with ``|Sigma z| <= TWIN_TOL |Sigma|_F`` is a null vector too
TWIN_TOL = 1e-7
#: candidates closer than this on every joint [rad] (mod 2 pi) are one solution (the FK gate's
#: scale: copies of one root from two eigenvalues differ by round-off)
DUP_TOL = 1e-6


# ----------------------------------------------------------------------------- back-substitution
@njit(cache=True)
def _sigma(S, th, out):  # pragma: no cover - compiled
    c = math.cos(th)
    s = math.sin(th)
    for a in range(12):
        for b in range(12):
            out[a, b] = S[0, a, b] + c * S[1, a, b] + s * S[2, a, b]


@njit(cache=True)
def _refine_q3(S, th, iters, max_step, LU, piv, work):  # pragma: no cover - compiled
    """Bounded Newton on ``det Sigma(q3)`` (secant slope over 1e-7 rad).

    A correction is kept only if it lowers ``|det|`` (otherwise the last safe value stays);
    steps are clamped to ``max_step`` [rad]. On return ``LU, piv`` factor ``Sigma`` at the
    returned angle.
    """
    Sg = work[0]
    LU2 = work[1]
    piv2 = np.empty(12, dtype=np.int64)
    h = 1e-7
    _sigma(S, th, Sg)
    ld, _, sg = _lu(Sg, LU, piv)
    for _it in range(iters):
        _sigma(S, th + h, Sg)
        ldh, _, sgh = _lu(Sg, LU2, piv2)
        ratio = sg * sgh * math.exp(min(ldh - ld, 700.0))  # det(th + h) / det(th)
        if ratio == 1.0 or not math.isfinite(ratio):
            break
        step = -h / (ratio - 1.0)
        if step > max_step:
            step = max_step
        elif step < -max_step:
            step = -max_step
        if abs(step) < 1e-14:
            break
        _sigma(S, th + step, Sg)
        ld2, _, sg2 = _lu(Sg, LU2, piv2)
        if ld2 < ld:
            th = th + step
            ld = ld2
            sg = sg2
            LU[:, :] = LU2
            piv[:] = piv2
        else:
            break
    return th


@njit(cache=True)
def _null_pair(LU, piv, y, z):  # pragma: no cover - compiled
    """Inverse iteration with Sigma(q3)'s factors on two vectors: y ~ x4^u x5^v (u < 4, v < 3)
    and ``z``, kept orthonormal to ``y`` (subspace iteration), which converges to the next
    direction Sigma shrinks most: a second null vector where the null space is two-dimensional.
    """
    for a in range(12):
        y[a] = 1.0 + 0.1 * a
        z[a] = math.cos(1.7 * a + 0.4)
    for _it in range(3):
        _lu_solve(LU, piv, y)
        _lu_solve(LU, piv, z)
        for v in (y, z):
            mx = 0.0
            for a in range(12):
                mx = max(mx, abs(v[a]))
            if not (mx > 0.0) or not math.isfinite(mx):
                return False
            for a in range(12):
                v[a] /= mx
        nrm = 0.0
        for a in range(12):
            nrm += y[a] * y[a]
        nrm = math.sqrt(nrm)
        dot = 0.0
        for a in range(12):
            y[a] /= nrm
            dot += y[a] * z[a]
        nrm = 0.0
        for a in range(12):
            z[a] -= dot * y[a]
            nrm += z[a] * z[a]
        nrm = math.sqrt(nrm)
        if not (nrm > 0.0):
            return False
        for a in range(12):
            z[a] /= nrm
    return True


@njit(cache=True)
def _null_ratio(S, th, v, Sg):  # pragma: no cover - compiled
    """``|Sigma(th) v| / |Sigma(th)|_F`` for a unit ``v``: how nearly ``v`` is a null vector."""
    _sigma(S, th, Sg)
    num = 0.0
    den = 0.0
    for a in range(12):
        acc = 0.0
        for b in range(12):
            acc += Sg[a, b] * v[b]
            den += Sg[a, b] * Sg[a, b]
        num += acc * acc
    return math.sqrt(num / den) if den > 0.0 else np.inf


@njit(cache=True, inline="always")
def _quad(y, z, p, q, r, s):  # pragma: no cover - compiled
    """``(a, b, c)`` with ``Y_p Y_q - Y_r Y_s = a al^2 + b al be + c be^2`` for
    ``Y = al y + be z``."""
    return (
        y[p] * y[q] - y[r] * y[s],
        y[p] * z[q] + z[p] * y[q] - y[r] * z[s] - z[r] * y[s],
        z[p] * z[q] - z[r] * z[s],
    )


@njit(cache=True)
def _split_pair(y, z, m1, m2):  # pragma: no cover - compiled
    """The two monomial vectors ``x4^u x5^v`` (u < 4, v < 3) in span{y, z}.

    Such a vector, arranged as ``Y[u, v]``, is rank one with geometric rows and columns: its 2x2
    minors and its Hankel relations ``Y[u, v] Y[u + 2, v] = Y[u + 1, v]^2``,
    ``Y[u, 0] Y[u, 2] = Y[u, 1]^2`` vanish. On ``al y + be z`` each is a binary quadratic in
    ``(al, be)`` vanishing on both members, so every one that is not zero is a multiple of the
    same quadratic (the minors alone vanish identically when the members share ``x4``); the one
    with the largest coefficients gives the members. False when it has no real root pair.
    """
    ca = cb = cc = 0.0
    best = -1.0
    for k in range(28):
        if k < 18:  # minor of rows (i, j) and columns (c, d)
            i, rest = k // 3, k % 3
            i, j = (0, 1, 2, 0, 1, 0)[i], (1, 2, 3, 2, 3, 3)[i]
            c, d = (0, 1, 0)[rest], (1, 2, 2)[rest]
            a, b, cq = _quad(y, z, i * 3 + c, j * 3 + d, i * 3 + d, j * 3 + c)
        elif k < 22:  # x5 geometric along row u
            u = k - 18
            a, b, cq = _quad(y, z, u * 3, u * 3 + 2, u * 3 + 1, u * 3 + 1)
        else:  # x4 geometric down column v
            u, v = (k - 22) // 3, (k - 22) % 3
            a, b, cq = _quad(y, z, u * 3 + v, (u + 2) * 3 + v, (u + 1) * 3 + v, (u + 1) * 3 + v)
        w = a * a + b * b + cq * cq
        if w > best:
            best, ca, cb, cc = w, a, b, cq
    disc = cb * cb - 4.0 * ca * cc
    if disc < -1e-6 * (cb * cb + abs(4.0 * ca * cc)) or not (best > 0.0):
        return False
    sq = math.sqrt(max(disc, 0.0))
    h = -0.5 * (cb + (sq if cb >= 0.0 else -sq))
    if h == 0.0:
        return False
    # roots al / be = h / ca and cc / h: members (h, ca) and (cc, h)
    for a in range(12):
        m1[a] = h * y[a] + ca * z[a]
        m2[a] = cc * y[a] + h * z[a]
    return True


@njit(cache=True, inline="always")
def _angle_from_triple(a, b, c):  # pragma: no cover - compiled
    """Angle whose half tangent x gives (a, b, c) ~ (1, x, x^2)."""
    sg = 1.0 if a + c >= 0.0 else -1.0
    return math.atan2(2.0 * b * sg, (a - c) * sg)


@njit(cache=True)
def _wrap_into(q, lo, hi):  # pragma: no cover - compiled
    best = q
    bestd = np.inf
    for k in range(-1, 2):
        v = q + 2.0 * math.pi * k
        if v < lo:
            d = lo - v
        elif v > hi:
            d = v - hi
        else:
            d = 0.0
        if d < bestd - 1e-15:
            bestd = d
            best = v
    return best


@njit(cache=True)
def _complete(th3, y, item, limits, shift, qrow, work):  # pragma: no cover - compiled
    """Joints from the hidden angle ``th3`` and a null vector ``y``: ``q4, q5`` from its
    monomials, ``q1, q2`` from the eliminated block, ``q6`` from the target rotation; ``qrow``
    receives them in chain order (wrapped into ``limits = (lower, upper)``). ``item``: one
    item's ``(left, pinv, q0, Wp, Pp)`` of :data:`._pencil.ITEMS`; ``work``: scratch
    ``(m27, rhs, mono, F, G, t)``. Returns the pose residual."""
    left, pinv, q0, W, P = item
    lower, upper = limits
    m27, rhs, mono, F, G, t = work
    # q4 from (1, x4, x4^2) triples at fixed v; q5 from (1, x5, x5^2) at fixed u
    bu, bv, bm = 0, 0, -1.0
    for u0 in range(2):
        for v in range(3):
            m = abs(y[u0 * 3 + v] + y[(u0 + 2) * 3 + v])
            if m > bm:
                bm, bu, bv = m, u0, v
    th4 = _angle_from_triple(y[bu * 3 + bv], y[(bu + 1) * 3 + bv], y[(bu + 2) * 3 + bv])
    bu, bm = 0, -1.0
    for u in range(4):
        m = abs(y[u * 3] + y[u * 3 + 2])
        if m > bm:
            bm, bu = m, u
    th5 = _angle_from_triple(y[bu * 3], y[bu * 3 + 1], y[bu * 3 + 2])
    b3 = (1.0, math.cos(th3), math.sin(th3))
    b4 = (1.0, math.cos(th4), math.sin(th4))
    b5 = (1.0, math.cos(th5), math.sin(th5))
    for i3 in range(3):
        for i4 in range(3):
            for i5 in range(3):
                m27[i3 * 9 + i4 * 3 + i5] = b3[i3] * b4[i4] * b5[i5]
    for r in range(NQ):
        acc = -q0[r]
        for m in range(27):
            acc += left[r, m] * m27[m]
        rhs[r] = acc
    for a in range(8):
        acc = 0.0
        for r in range(NQ):
            acc += pinv[a, r] * rhs[r]
        mono[a] = acc
    th1 = math.atan2(mono[5] + 0.0, mono[2])
    th2 = math.atan2(mono[1], mono[0])
    # forward through joints 1..5 and P6, then q6 from the target rotation
    ths = (th1, th2, th3, th4, th5)
    for i in range(4):
        for j in range(4):
            F[i, j] = P[0, i, j]
    for i in range(5):
        _rz_left(math.cos(ths[i]), math.sin(ths[i]), P[i + 1], t)  # Z_i P_{i+1}
        _mm(F, t, G)
        F[:, :] = G
    c0 = F[0, 0] * W[0, 0] + F[1, 0] * W[1, 0] + F[2, 0] * W[2, 0]
    c1 = F[0, 1] * W[0, 0] + F[1, 1] * W[1, 0] + F[2, 1] * W[2, 0]
    th6 = math.atan2(c1, c0)
    ths6 = (th1, th2, th3, th4, th5, th6)
    c6 = math.cos(th6)
    s6 = math.sin(th6)
    err = 0.0
    for i in range(3):
        x0 = c6 * F[i, 0] + s6 * F[i, 1]
        x1 = -s6 * F[i, 0] + c6 * F[i, 1]
        err += (x0 - W[i, 0]) ** 2 + (x1 - W[i, 1]) ** 2 + (F[i, 2] - W[i, 2]) ** 2
        err += (F[i, 3] - W[i, 3]) ** 2
    for i in range(6):
        j = (shift + i) % 6  # role i is joint r_i
        qrow[j] = _wrap_into(ths6[i], lower[j], upper[j])
    return math.sqrt(err) if math.isfinite(err) else np.inf


@njit(cache=True, inline="always")
def _backsub_one(shift, cfg, items, k):  # pragma: no cover - compiled
    """Item ``k`` of :data:`._pencil.ITEMS`: its joint vectors ``q[k]`` and residuals
    ``res[k]`` from its eigenvalues and pencil (roles by ``shift``, :data:`._pencil.SETTINGS`
    ``cfg``)."""
    w_re, w_im, chart, S = items.w_re[k], items.w_im[k], items.chart[k], items.S[k]
    qout, resid = items.q[k], items.res[k]
    # per eigenvalue: the null vector's solution, and the two members of a 2-D null space
    qs = np.empty((3 * N_EIG, 6))
    res = np.full(3 * N_EIG, np.inf)
    y = np.empty(12)
    z = np.empty(12)
    m1 = np.empty(12)
    m2 = np.empty(12)
    m27 = np.empty(27)
    F = np.empty((4, 4))
    G = np.empty((4, 4))
    t = np.empty((4, 4))
    LU = np.empty((12, 12))
    piv = np.empty(12, dtype=np.int64)
    work = np.empty((2, 12, 12))
    rhs = np.empty(NQ)
    mono = np.empty(8)
    scratch = (m27, rhs, mono, F, G, t)
    item = (items.left[k], items.pinv[k], items.q0[k], items.Wp[k], items.Pp[k])
    limits = (cfg.lower, cfg.upper)
    for r in range(MAX_ROOTS):
        resid[r] = np.inf
        for j in range(6):
            qout[r, j] = 0.0
    if chart == FAILED:
        return
    nc = 0
    for e in range(N_EIG):
        re = w_re[e]
        im = w_im[e]
        mag = math.sqrt(re * re + im * im)
        if not math.isfinite(mag) or abs(im) > cfg.imag_tol * (1.0 + mag):
            continue
        if chart == DIRECT:
            psi = 2.0 * math.atan(re)
        else:
            psi = 2.0 * math.atan2(1.0, re)
        th3 = cfg.phi + psi
        th3 = _refine_q3(S, th3, cfg.newton_iters, 0.05, LU, piv, work)
        if not _null_pair(LU, piv, y, z):
            continue
        res[nc] = _complete(th3, y, item, limits, shift, qs[nc], scratch)
        nc += 1
        # a hidden angle shared by two solutions (e.g. a wrist flip): a double eigenvalue whose
        # null space holds both; inverse iteration alone returns one mixture of the two
        if _null_ratio(S, th3, z, work[0]) < TWIN_TOL and _split_pair(y, z, m1, m2):
            res[nc] = _complete(th3, m1, item, limits, shift, qs[nc], scratch)
            res[nc + 1] = _complete(th3, m2, item, limits, shift, qs[nc + 1], scratch)
            nc += 2
    # best residual first; a candidate within DUP_TOL of a kept one (mod 2 pi) is the same root
    order = np.argsort(res[:nc])
    kept = 0
    for e in order:
        if not math.isfinite(res[e]) or kept == MAX_ROOTS:
            break
        dup = False
        for r in range(kept):
            d = 0.0
            for j in range(6):
                x = qs[e, j] - qout[r, j]
                d = max(d, abs(x - 2.0 * math.pi * round(x / (2.0 * math.pi))))
            if d < DUP_TOL:
                dup = True
                break
        if dup:
            continue
        resid[kept] = res[e]
        for j in range(6):
            qout[kept, j] = qs[e, j]
        kept += 1


@njit(cache=True)
def backsub_rows(geom, cfg, items, start, stop):  # pragma: no cover - compiled
    """Joint vectors ``items.q`` (K, 16, 6) in chain order and pose residuals ``items.res``
    (K, 16) (inf where empty) of items ``start .. stop`` of :data:`._pencil.ITEMS` (after
    :func:`._pencil.prepare_rows` and the eigenvalues), roles by :data:`._pencil.GEOMETRY`
    ``geom``'s shift, on the calling thread."""
    for k in range(start, stop):
        _backsub_one(geom.shift, cfg, items, k)


@njit(cache=True, parallel=True)
def backsub_parallel(geom, cfg, items):  # pragma: no cover - compiled
    """:func:`backsub_rows` of every item on all cores (numba shares the rows out)."""
    for k in prange(items.tidx.shape[0]):
        i = np.int64(k)  # prange's index is unsigned: one int64 signature for every caller
        backsub_rows(geom, cfg, items, i, i + 1)


@njit(cache=True)
def backsub_fields(geom, cfg, items):  # pragma: no cover - compiled
    """:func:`backsub_rows` of every item, the records passed as plain tuples of their fields
    (see :func:`._pencil.prepare_fields`), rebuilt here."""
    it = PencilItems(*items)
    backsub_rows(Geometry(*geom), PencilSettings(*cfg), it, np.int64(0), it.tidx.shape[0])
