# mypy: ignore-errors
"""Continuous paths on the device: one thread a path loops over its frames.

Per frame the family's candidate functions write the frame's slots seeded by the previous
selection (held in ``S[p]``), :func:`select_target` gates them lazily as
:meth:`AnalyticIK.solve` does, and :func:`finish_row` certifies the selection, writes it (or
holds the previous pose, with a status) and its errors. The selection then seeds the next
frame, without a host round trip: a whole path (or a batch of paths) is one launch.
"""

from __future__ import annotations

import warp as wp

from ikstack.backends.warp._families import _rt, _solve6, locked_slots
from ikstack.backends.warp._polish import Polish
from ikstack.backends.warp._selection import SUCCESS, UNDECIDED, finish_row, gate_row
from ikstack.backends.warp._srs import srs_slots, srs_swivels


@wp.func
def _frame_done(p: int, f: int, Tt: wp.mat44d, S: wp.array2d(dtype=wp.float64),
                Q: wp.array3d(dtype=wp.float64), Qf: wp.array2d(dtype=wp.float64),
                V: wp.array2d(dtype=wp.int32), lo: wp.array(dtype=wp.float64),
                hi: wp.array(dtype=wp.float64), clo: wp.array(dtype=wp.float64),
                chi: wp.array(dtype=wp.float64), revolute: wp.array(dtype=wp.int32),
                W: wp.array(dtype=wp.float64), Rs: wp.array(dtype=wp.mat33d),
                ps: wp.array(dtype=wp.vec3d), kinds: wp.array(dtype=wp.int32),
                R_end: wp.mat33d, p_end: wp.vec3d, zs: wp.array2d(dtype=wp.vec3d),
                os: wp.array2d(dtype=wp.vec3d), ptol: wp.float64, rtol: wp.float64,
                max_step: wp.float64, OK: wp.array2d(dtype=wp.int32),
                FK: wp.array2d(dtype=wp.int32), LIM: wp.array2d(dtype=wp.int32),
                D: wp.array2d(dtype=wp.float64), VALID: wp.array2d(dtype=wp.int32),
                CON: wp.array2d(dtype=wp.int32), qidx: wp.array2d(dtype=wp.int32),
                qcoef: wp.array4d(dtype=wp.float64), Ac: wp.array2d(dtype=wp.float64),
                bc: wp.array(dtype=wp.float64),
                q_out: wp.array2d(dtype=wp.float64), status: wp.array(dtype=wp.int32),
                perr: wp.array(dtype=wp.float64), rerr: wp.array(dtype=wp.float64),
                Tg: wp.mat44d, rtc: wp.float64, pol: Polish):
    """Select frame ``f`` of path ``p`` and move the seed ``S[p]`` to a certified selection."""
    r = p * (status.shape[0] // S.shape[0]) + f  # row of frame f in the (P F, dof) output
    if pol.iters > 0:
        for k in range(Q.shape[1]):
            pol.PL[p, k] = 0
    best, code = gate_row(p, Tt, S, Q, Qf, V, lo, hi, clo, chi, revolute, W, Rs, ps, kinds, R_end,
                          p_end, zs, os, ptol, rtol, max_step, 1, OK, FK, LIM, D, VALID, CON, qidx,
                          qcoef, Ac, bc, pol)
    # certified against the frame as given (``Tt`` is its nearest rotation), the rotation
    # tolerance ``rtc`` widened by the distance between them
    st, pe, re = finish_row(p, best, code, Tg, S, Qf, Q.shape[1], clo, chi, Rs, ps, kinds, R_end,
                            p_end, zs, os, ptol, rtc, q_out, r)
    status[r] = st
    perr[r] = pe
    rerr[r] = re
    if code == UNDECIDED:
        st = UNDECIDED  # the host solves the path again from this frame
    if st == SUCCESS:
        for j in range(S.shape[1]):
            S[p, j] = q_out[r, j]


@wp.kernel
def path6_kernel(fid: int, var: int, rev: int, T: wp.array2d(dtype=wp.mat44d),
                 H: wp.array(dtype=wp.vec3d), P: wp.array(dtype=wp.vec3d), R6T: wp.mat33d,
                 sgn: wp.array(dtype=wp.float64), S: wp.array2d(dtype=wp.float64),
                 Q: wp.array3d(dtype=wp.float64), Qf: wp.array2d(dtype=wp.float64),
                 V: wp.array2d(dtype=wp.int32), lo: wp.array(dtype=wp.float64),
                 hi: wp.array(dtype=wp.float64), clo: wp.array(dtype=wp.float64),
                 chi: wp.array(dtype=wp.float64), revolute: wp.array(dtype=wp.int32),
                 W: wp.array(dtype=wp.float64), Rs: wp.array(dtype=wp.mat33d),
                 ps: wp.array(dtype=wp.vec3d), kinds: wp.array(dtype=wp.int32),
                 R_end: wp.mat33d, p_end: wp.vec3d, zs: wp.array2d(dtype=wp.vec3d),
                 os: wp.array2d(dtype=wp.vec3d), ptol: wp.float64, rtol: wp.float64,
                 max_step: wp.float64, OK: wp.array2d(dtype=wp.int32),
                 FK: wp.array2d(dtype=wp.int32), LIM: wp.array2d(dtype=wp.int32),
                 D: wp.array2d(dtype=wp.float64), VALID: wp.array2d(dtype=wp.int32),
                 CON: wp.array2d(dtype=wp.int32), qidx: wp.array2d(dtype=wp.int32),
                 qcoef: wp.array4d(dtype=wp.float64), Ac: wp.array2d(dtype=wp.float64),
                 bc: wp.array(dtype=wp.float64),
                 q_out: wp.array2d(dtype=wp.float64), status: wp.array(dtype=wp.int32),
                 perr: wp.array(dtype=wp.float64), rerr: wp.array(dtype=wp.float64),
                 Tg: wp.array2d(dtype=wp.mat44d), rtc: wp.array2d(dtype=wp.float64),
                 pol: Polish):
    """A 6R family along the frames ``T[p]`` of path ``p``."""
    p = wp.tid()
    for f in range(T.shape[1]):
        Tt = T[p, f]
        Rt, pt = _rt(Tt)
        _solve6(p, 0, 0, fid, var, rev, Rt, pt, H, P, R6T, sgn, S, Q, V)
        _frame_done(p, f, Tt, S, Q, Qf, V, lo, hi, clo, chi, revolute, W, Rs, ps, kinds, R_end,
                    p_end, zs, os, ptol, rtol, max_step, OK, FK, LIM, D, VALID, CON, qidx,
                    qcoef, Ac, bc, q_out, status, perr, rerr, Tg[p, f], rtc[p, f], pol)


@wp.kernel
def path_locked_kernel(fid: int, var: int, rev: int, T: wp.array2d(dtype=wp.mat44d),
                       lock_first: int, lh: wp.vec3d, lr: wp.vec3d, M_R: wp.mat33d,
                       M_p: wp.vec3d, grid: wp.array(dtype=wp.float64),
                       H: wp.array(dtype=wp.vec3d), P: wp.array(dtype=wp.vec3d), R6T: wp.mat33d,
                       sgn: wp.array(dtype=wp.float64), S: wp.array2d(dtype=wp.float64),
                       Q: wp.array3d(dtype=wp.float64), Qf: wp.array2d(dtype=wp.float64),
                       V: wp.array2d(dtype=wp.int32), lo: wp.array(dtype=wp.float64),
                       hi: wp.array(dtype=wp.float64), clo: wp.array(dtype=wp.float64),
                       chi: wp.array(dtype=wp.float64), revolute: wp.array(dtype=wp.int32),
                       W: wp.array(dtype=wp.float64), Rs: wp.array(dtype=wp.mat33d),
                       ps: wp.array(dtype=wp.vec3d), kinds: wp.array(dtype=wp.int32),
                       R_end: wp.mat33d, p_end: wp.vec3d, zs: wp.array2d(dtype=wp.vec3d),
                       os: wp.array2d(dtype=wp.vec3d), ptol: wp.float64, rtol: wp.float64,
                       max_step: wp.float64, OK: wp.array2d(dtype=wp.int32),
                       FK: wp.array2d(dtype=wp.int32), LIM: wp.array2d(dtype=wp.int32),
                       D: wp.array2d(dtype=wp.float64), VALID: wp.array2d(dtype=wp.int32),
                       CON: wp.array2d(dtype=wp.int32), qidx: wp.array2d(dtype=wp.int32),
                       qcoef: wp.array4d(dtype=wp.float64),
                       Ac: wp.array2d(dtype=wp.float64), bc: wp.array(dtype=wp.float64),
                       q_out: wp.array2d(dtype=wp.float64), status: wp.array(dtype=wp.int32),
                       perr: wp.array(dtype=wp.float64), rerr: wp.array(dtype=wp.float64),
                       Tg: wp.array2d(dtype=wp.mat44d), rtc: wp.array2d(dtype=wp.float64),
                 pol: Polish):
    """A 7R arm with an end joint locked (the previous selection's value, then the grid)."""
    p = wp.tid()
    for f in range(T.shape[1]):
        Tt = T[p, f]
        for s in range(Q.shape[1] // 8):
            locked_slots(p, s, Tt, fid, var, rev, S, lock_first, lh, lr, M_R, M_p, grid, H, P,
                         R6T, sgn, Q, V)
        _frame_done(p, f, Tt, S, Q, Qf, V, lo, hi, clo, chi, revolute, W, Rs, ps, kinds, R_end,
                    p_end, zs, os, ptol, rtol, max_step, OK, FK, LIM, D, VALID, CON, qidx,
                    qcoef, Ac, bc, q_out, status, perr, rerr, Tg[p, f], rtc[p, f], pol)


@wp.kernel
def path_srs_kernel(T: wp.array2d(dtype=wp.mat44d), H: wp.array(dtype=wp.vec3d), Sp: wp.vec3d,
                    pS3: wp.vec3d, p3W: wp.vec3d, p7T: wp.vec3d, R7T: wp.mat33d,
                    grid: wp.array(dtype=wp.float64), slo: wp.array(dtype=wp.float64),
                    shi: wp.array(dtype=wp.float64), arcs: int,
                    bounds: wp.array2d(dtype=wp.float64), psis: wp.array2d(dtype=wp.float64),
                    used: wp.array(dtype=wp.int32), S: wp.array2d(dtype=wp.float64),
                    Q: wp.array3d(dtype=wp.float64), Qf: wp.array2d(dtype=wp.float64),
                    V: wp.array2d(dtype=wp.int32), lo: wp.array(dtype=wp.float64),
                    hi: wp.array(dtype=wp.float64), clo: wp.array(dtype=wp.float64),
                    chi: wp.array(dtype=wp.float64), revolute: wp.array(dtype=wp.int32),
                    W: wp.array(dtype=wp.float64), Rs: wp.array(dtype=wp.mat33d),
                    ps: wp.array(dtype=wp.vec3d), kinds: wp.array(dtype=wp.int32),
                    R_end: wp.mat33d, p_end: wp.vec3d, zs: wp.array2d(dtype=wp.vec3d),
                    os: wp.array2d(dtype=wp.vec3d), ptol: wp.float64, rtol: wp.float64,
                    max_step: wp.float64, OK: wp.array2d(dtype=wp.int32),
                    FK: wp.array2d(dtype=wp.int32), LIM: wp.array2d(dtype=wp.int32),
                    D: wp.array2d(dtype=wp.float64), VALID: wp.array2d(dtype=wp.int32),
                    CON: wp.array2d(dtype=wp.int32), qidx: wp.array2d(dtype=wp.int32),
                    qcoef: wp.array4d(dtype=wp.float64), Ac: wp.array2d(dtype=wp.float64),
                    bc: wp.array(dtype=wp.float64),
                    q_out: wp.array2d(dtype=wp.float64), status: wp.array(dtype=wp.int32),
                    perr: wp.array(dtype=wp.float64), rerr: wp.array(dtype=wp.float64),
                    Tg: wp.array2d(dtype=wp.mat44d), rtc: wp.array2d(dtype=wp.float64),
                 pol: Polish):
    """A 7R SRS arm (the previous selection's swivel first, then the grid and the arcs)."""
    p = wp.tid()
    for f in range(T.shape[1]):
        Tt = T[p, f]
        srs_swivels(p, Tt, S, H, Sp, pS3, p3W, p7T, R7T, grid, slo, shi, arcs, bounds, psis,
                    used)
        for s in range(Q.shape[1] // 8):
            srs_slots(p, s, Tt, S, H, Sp, pS3, p3W, p7T, R7T, psis, used, Q, V)
        _frame_done(p, f, Tt, S, Q, Qf, V, lo, hi, clo, chi, revolute, W, Rs, ps, kinds, R_end,
                    p_end, zs, os, ptol, rtol, max_step, OK, FK, LIM, D, VALID, CON, qidx,
                    qcoef, Ac, bc, q_out, status, perr, rerr, Tg[p, f], rtc[p, f], pol)
