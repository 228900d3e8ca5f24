"""The selection's tie rule on the CPU: of the valid slots (``return_all``'s certified mask)
equally near the seed, the lowest slot is selected, by every route (the 6R family's
single-target and batch kernels, the general path), checked against the rule written out from
its definition (:func:`analytic_arms.nearest_valid`) with weights that make exact ties
common."""

from __future__ import annotations

import numpy as np
import pytest
from analytic_arms import TIE_WEIGHTS, assert_tie_rule, nearest_valid, tie_case

from ikstack.ik.analytic import AnalyticIK


@pytest.mark.parametrize("W", TIE_WEIGHTS)
@pytest.mark.parametrize("tight", [False, True])
def test_equally_near_valid_slots_select_the_lowest(tight, W):
    chain, T, S = tie_case(tight)
    ik = AnalyticIK(chain, weights=W)
    want, ok, every = assert_tie_rule(ik, T, S, W)  # the batch kernel
    for i in np.flatnonzero(ok)[:20]:  # the single-target kernel
        np.testing.assert_array_equal(ik.solve(T[i], S[i]).q[0], every.q_all[i, want[i]])
    # the general path (the full enumeration): float32 targets take it
    general = ik.solve(T.astype(np.float32), S)
    same = general.success & ok
    assert same.sum() >= ok.sum() // 2
    every32 = ik.solve(T.astype(np.float32), S, return_all=True)
    want32, _ = nearest_valid(every32.q_all, every32.valid_all, S, W)
    np.testing.assert_array_equal(general.q[same], every32.q_all[same, want32[same]])
