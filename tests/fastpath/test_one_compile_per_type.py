"""A kernel compiles once per real argument type: read-only and strided targets, a chain's own
read-only limits, literal row bounds and ``prange``'s unsigned index all reach the block
kernels as the writable C-contiguous arrays and int64 bounds a plain call passes (numba would
compile each of them again, whole, for every other variant it sees)."""

from __future__ import annotations

import re

import numpy as np
from numba.extending import is_jitted

from ikstack import robots
from ikstack.ik import _gate
from ikstack.ik.analytic import AnalyticIK, _all6, _single_target
from ikstack.ik.analytic.general6r import General6R, _backsub, _pencil
from ikstack.ik.numerical import _kernels
from ikstack.ik.numerical import _single_target as _one_lm
from ikstack.ik.numerical.lm import LevenbergMarquardt
from ikstack.ik.result import fk_errors
from random_chains import random_6r

#: every compiled function defined in these modules: the ones Python calls show their signatures
#: whether compiled or loaded from the cache; the ones they call when they compile
MODULES = (_pencil, _backsub, _single_target, _all6, _kernels, _one_lm)

#: a literal or unsigned scalar; a read-only or non-C array (top level or in a record)
ODD = re.compile(
    r"Literal\[|uint64|readonly|Array\(\w+, \d, '[AF]'|Array\(\w+, \d, 'C', True"
    r"|array\(\w+, \dd, [AF]\)"
)


def _variants(T: np.ndarray) -> list[np.ndarray]:
    ro = T.copy()
    ro.flags.writeable = False
    return [T, ro, np.asfortranarray(T)]


def test_odd_arrays_and_literal_bounds_add_no_signature():
    rng = np.random.default_rng(9)
    ur5 = robots.load("ur5")
    many = ur5.fk(ur5.random_q(rng, 300))  # a parallel batch
    for ik in (AnalyticIK(ur5), AnalyticIK(ur5, mode="near")):
        for T in _variants(many[0]) + _variants(many[:3]):
            ik.solve(T)
            ik.solve(T, return_all=True)
        ik.solve(many)
        ik.solve(many, return_all=True)
    lm = LevenbergMarquardt(ur5)
    for T in _variants(many[0]) + _variants(many[:2]):
        lm.solve(T)
    chain = random_6r(5)
    g6 = General6R(chain)  # picks its roles from the chain's own (read-only) limits
    Tg = chain.fk(chain.random_q(rng, 70))  # 70 items: the parallel pencil kernels
    for T in _variants(Tg[:2]) + [Tg]:
        g6.solve(T)
    kernels = [
        k
        for m in MODULES
        for k in vars(m).values()
        if is_jitted(k) and k.py_func.__module__ == m.__name__
    ]
    odd = {
        f"{k.py_func.__module__}.{k.py_func.__qualname__}": s
        for k in kernels
        for s in map(str, k.nopython_signatures)
        if ODD.search(s)
    }
    assert not odd, odd
    assert sum(len(k.nopython_signatures) for k in kernels) >= 6  # the entry points ran


def test_fk_errors_passes_read_only_and_broadcast_poses_as_writable_rows():
    rng = np.random.default_rng(4)
    ur5 = robots.load("ur5")
    q = ur5.random_q(rng, 3)
    T = ur5.fk(q)
    ro = T.copy()
    ro.flags.writeable = False
    qro = q.copy()
    qro.flags.writeable = False
    want = fk_errors(ur5, q, T)
    for qq, Tt in ((q, ro), (qro, ro), (q, ro[0]), (q[0], ro), (q, np.asfortranarray(T[1]))):
        pe, re = fk_errors(ur5, qq, Tt)
        assert pe.shape == re.shape == (3,)
    np.testing.assert_array_equal(fk_errors(ur5, q, ro)[0], want[0])
    sigs = [str(s) for s in _gate.fk_errors_rows.nopython_signatures]
    assert sigs and not [s for s in sigs if ODD.search(s)], sigs
    assert ro.flags.writeable is False  # the caller's array is left as it was
