"""Data derived from chains lives with whoever derives it: bounded, weak, thread-safe, and never
shared between a chain and the chains derived from it."""

from __future__ import annotations

import gc
import threading
import weakref

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from ikstack import robots
from ikstack.ik import solve_ik
from ikstack.ik.analytic import AnalyticIK
from ikstack.ik.analytic.geometry import chain_lines
from ikstack.kinematics import compile_chain, fk
from ikstack.model import Chain, JointType
from ikstack.model.chain_cache import ChainCache, all_caches

CACHES = all_caches()
COMPILED = next(c for c in CACHES if c.name == "compiled chains")


def plain_fk(chain: Chain, q: np.ndarray) -> np.ndarray:
    """T_base_tcp from the chain's fields alone (SciPy rotations; no ikstack kinematics)."""
    T = np.eye(4)
    for i in range(chain.dof):
        M = np.eye(4)
        if chain.joint_types[i] == JointType.PRISMATIC:
            M[:3, 3] = chain.axes[i] * q[i]
        else:
            M[:3, :3] = Rotation.from_rotvec(chain.axes[i] * q[i]).as_matrix()
        T = T @ chain.origins[i] @ M
    return T @ chain.T_last_tip @ chain.T_tip_tcp


def entries_of(key: int) -> list:
    return [k for c in CACHES for k in c if k == key or (isinstance(k, tuple) and k[0] == key)]


def test_a_chain_holds_no_derived_data():
    chain = robots.load("ur5")
    solve_ik(chain, fk(chain, chain.middle() + 0.1))
    assert not hasattr(chain, "_cache")
    assert set(vars(chain)) == set(Chain.__dataclass_fields__)
    assert compile_chain(chain) is compile_chain(chain)  # built once, then read


def test_the_cache_is_bounded():
    base = robots.load("ur5")
    q = base.middle() + 0.1
    keep = [base.replace(name=f"copy{i}") for i in range(COMPILED.maxsize + 40)]
    for c in keep:
        fk(c, q)
    assert len(COMPILED) == COMPILED.maxsize
    small: ChainCache[int] = ChainCache("test", 3)
    for i, c in enumerate(keep[:10]):
        assert small.add(c, i) == i
    assert len(small) == 3 and small.get(id(keep[9])) == 9  # the oldest went first
    assert small.get(id(keep[0])) is None


def test_a_dropped_chain_is_freed_with_its_entries():
    chain = robots.load("ur5").replace(name="dropped")
    T = fk(chain, chain.middle() + 0.1)
    assert solve_ik(chain, T).success.all()  # a route and an analytic solver
    assert solve_ik(chain, T, method="lm").success.all()  # a numerical solver
    chain_lines(chain)
    AnalyticIK(chain)  # its constraint tables (the solver itself is dropped)
    key = id(chain)
    assert len(entries_of(key)) == 6  # compiled, lines, tables, route, analytic, lm
    ref = weakref.ref(chain)
    del chain
    gc.collect()
    assert ref() is None  # no cache keeps the chain alive (solvers hold private copies)
    assert entries_of(key) == []  # and its entries went with it


def test_threads_on_one_chain_get_the_same_data_and_the_serial_answers():
    twin = robots.load("ur5")
    rng = np.random.default_rng(3)
    q = twin.random_q(rng, 24)
    T = np.stack([plain_fk(twin, qi) for qi in q])
    serial_fk = fk(twin, q)
    serial_ik = [solve_ik(twin, T[i], q0=q[i] + 0.05).q for i in range(len(q))]
    chain = robots.load("ur5")  # fresh: the threads race to derive its data
    n = 6
    start = threading.Barrier(n)
    seen: list = [None] * n
    errors: list = []

    def work(k: int) -> None:
        try:
            start.wait()
            got_fk = fk(chain, q)
            got_ik = [solve_ik(chain, T[i], q0=q[i] + 0.05).q for i in range(len(q))]
            seen[k] = (compile_chain(chain), got_fk, got_ik)
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(s[0] is seen[0][0] for s in seen)  # one compiled object for everyone
    for _, got_fk, got_ik in seen:
        np.testing.assert_array_equal(got_fk, serial_fk)
        for a, b in zip(got_ik, serial_ik, strict=True):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("method", ["auto", "lm"])
def test_derived_chains_never_use_their_parents_derived_data(method):
    parent = robots.load("ur5")
    rng = np.random.default_rng(5)
    q = parent.random_q(rng, 8) * 0.5
    for qi in q:  # the parent's data is derived and cached first
        assert solve_ik(parent, plain_fk(parent, qi), method=method).success.all()
    tool = np.eye(4)
    tool[:3, :3] = Rotation.from_rotvec([0.3, -0.2, 0.5]).as_matrix()
    tool[:3, 3] = [0.02, -0.05, 0.15]
    child = parent.with_tcp(tool)
    np.testing.assert_allclose(
        fk(child, q), np.stack([plain_fk(child, qi) for qi in q]), atol=1e-12
    )
    for qi in q:
        T = plain_fk(child, qi)
        r = solve_ik(child, T, method=method)
        assert r.success.all()
        np.testing.assert_allclose(plain_fk(child, r.q[0]), T, atol=1e-5)
    # limits that exclude the parent's answer: the child finds another or fails, never returns it
    T = plain_fk(parent, q[0])
    qp = solve_ik(parent, T, method=method).q[0]
    lower = parent.lower.copy()
    lower[0] = qp[0] + 0.05
    narrow = parent.with_limits(lower=lower)
    r = solve_ik(narrow, T, method=method)
    assert narrow.within_limits(r.q).all()
    if r.success[0]:
        np.testing.assert_allclose(plain_fk(narrow, r.q[0]), T, atol=1e-5)
