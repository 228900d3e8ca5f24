"""What a first call compiles: each arm compiles its own family's code only, and a path that
never polishes does not compile the polish.

numba compiles every branch of a function unless it can decide the branch from the argument
types. The family kernels take the family as arguments that are None for the other family
(:attr:`SixR.kfid`, :attr:`SixR.ksgn`); the gate takes ``piters`` None for no polish. These
tests run numba's own branch pruning on the kernels' bytecode with those argument types (no
compilation: milliseconds) and list the compiled functions each kernel can still reach.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from analytic_arms import random_arm
from numba import typeof, types
from numba.core import ir
from numba.core.analysis import dead_branch_prune
from numba.core.compiler import run_frontend

from ikstack.ik.analytic import AnalyticIK, _select, _selection
from ikstack.ik.analytic import _families6 as F6
from ikstack.robots import load

ARR = typeof(np.ones(6))
#: (the selection loop's branch-and-bound steps count as start_sph, expand_tp, ...)
SPHERICAL_ONLY = {"spherical_wrist", "_position3", "_free_joint1", "decompose3", "start_sph"}
THREE_PARALLEL_ONLY = {"three_parallel", "tp_start", "tp_elbow", "tp_pair", "tp_joint1", "start_tp"}


def reachable(kernel, **arg_types) -> set[str]:
    """Names of the globals ``kernel`` refers to after numba's branch pruning for the given
    argument types (other arguments float64: only the pruned arguments matter)."""
    fir = run_frontend(kernel.py_func)
    params = inspect.signature(kernel.py_func).parameters
    dead_branch_prune(fir, tuple(arg_types.get(p, types.float64) for p in params))
    return {
        st.value.name
        for blk in fir.blocks.values()
        for st in blk.body
        if isinstance(st, ir.Assign) and isinstance(st.value, (ir.Global, ir.FreeVar))
    }


def strategy_types(family) -> dict:
    """The selection loop's strategy arguments for ``family``: the other family's is None."""
    spherical = family.ksgn is None
    tup = types.Tuple((types.int64,))
    return {"sph": tup if spherical else types.none, "tp": types.none if spherical else tup}


def kernel_types(family) -> dict:
    return {
        "fid": types.none if family.kfid is None else typeof(family.kfid),
        "sgn": types.none if family.ksgn is None else typeof(family.ksgn),
    }


@pytest.mark.parametrize(
    "arm", ["ur5", "spherical_wrist", "spherical_shoulder", "three_parallel_reversed"]
)
def test_an_arm_reaches_only_its_own_family(arm):
    chain = load(arm) if arm == "ur5" else random_arm(arm, np.random.default_rng(0))
    fam = AnalyticIK(chain).family
    spherical = fam.fid == F6.SPHERICAL
    own, other = (
        (SPHERICAL_ONLY, THREE_PARALLEL_ONLY)
        if spherical
        else (THREE_PARALLEL_ONLY, SPHERICAL_ONLY)
    )
    for kernel in (F6.solve6, _selection.select_nearest):
        names = reachable(kernel, **kernel_types(fam), **strategy_types(fam))
        names |= {n.replace("_spherical", "_sph").replace("_parallel", "_tp") for n in names}
        assert names & own, (kernel.__name__, sorted(names))
        assert not names & other, (kernel.__name__, sorted(names & other))


def test_the_gate_compiles_the_polish_only_when_asked():
    # the selection polishes a slot through polish_slot (the step both devices name)
    assert "polish_slot" not in reachable(_selection._finalize_pl, piters=types.none)
    assert "polish_slot" in reachable(_selection._finalize_pl, piters=types.int64)
    assert "polish_slot" not in reachable(_selection.select_nearest, polish=types.none)
    assert "polish_one" in reachable(_selection.polish_slot)
    assert _select.no_polish(0) is None and _select.no_polish(3) == 3


def test_the_kernel_arguments_name_one_family():
    for arm in ("ur5", "panda"):
        fam = AnalyticIK(load(arm)).family
        fam = getattr(fam, "sub", fam)
        assert (fam.kfid is None) != (fam.ksgn is None)
        assert (fam.ksgn is None) == (fam.fid == F6.SPHERICAL)
        if fam.ksgn is not None:
            assert fam.ksgn is fam.sgn and typeof(fam.ksgn) == ARR


def test_a_three_parallel_arm_with_meeting_last_axes_skips_subproblem_6():
    fam = AnalyticIK(load("ur5")).family
    assert fam.var == F6.LAST_MEET and fam.kvar is None
    assert "sp6" not in reachable(F6.tp_start, var=types.none)
    assert "sp6" in reachable(F6.tp_start, var=types.int64)  # any other three-parallel arm
    general = AnalyticIK(random_arm("three_parallel", np.random.default_rng(0))).family
    assert general.var == F6.GENERAL and general.kvar == F6.GENERAL
