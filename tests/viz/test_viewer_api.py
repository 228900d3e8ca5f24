"""The viewer's API without a browser: every bundled arm draws, the gizmo solves (analytic or
numerical), and what is drawn is the chain's FK computed independently by Pinocchio."""

from __future__ import annotations

import numpy as np
import pytest

from ikstack.errors import InputError
from ikstack.robots import load
from ikstack.robots.catalog import data_path

pytest.importorskip("viser")
from ikstack.viz import Viewer  # noqa: E402


@pytest.mark.parametrize("name", ["panda", "rizon4", "scara", "marvin_left"])
def test_gizmo_solves_every_kind_of_arm(name: str) -> None:
    chain = load(name)
    rng = np.random.default_rng(1)
    with Viewer(chain) as v:
        q_goal = chain.clip(chain.middle() + rng.uniform(-0.3, 0.3, chain.dof))
        sols = v.set_target(chain.fk(q_goal))
        assert sols and any(s.selected for s in sols), v.status
        assert v.status.startswith("solved")
        pe, re = v.fk_error()
        assert pe < 1e-6 and re < 1e-5
        assert chain.within_limits(v.q, tol=1e-9)
        # an unreachable target keeps the last valid pose and says so
        q_before = v.q.copy()
        far = np.eye(4)
        far[:3, 3] = [10.0, 0.0, 0.0]
        assert v.set_target(far) == [] or not any(s.selected for s in v.solutions)
        assert v.status.startswith("no certified solution")
        np.testing.assert_array_equal(v.q, q_before)


def test_drawn_frames_match_pinocchio() -> None:
    pin = pytest.importorskip("pinocchio")
    chain = load("ur5")
    model = pin.buildModelFromUrdf(str(data_path("ur5.urdf")))
    data = model.createData()
    q = np.array([0.3, -1.0, 1.2, -0.4, 0.8, 0.1])
    with Viewer(chain) as v:
        v.set_q(q)
        drawn = v.drawn_frames()
    pin.framesForwardKinematics(model, data, q)
    for i, link in enumerate(chain.link_names, start=1):
        ref = data.oMf[model.getFrameId(link)].homogeneous
        assert np.abs(drawn[i] - ref).max() < 1e-6  # the scene stores float32-ish poses


def test_bad_arguments() -> None:
    chain = load("ur5")
    with pytest.raises(InputError, match="loopback"):
        Viewer(chain, host="0.0.0.0")
    with pytest.raises(InputError, match="method"):
        Viewer(chain, method="magic")
    with Viewer(chain) as v:
        with pytest.raises(InputError, match="no trajectory"):
            v.show_frame(0)
        with pytest.raises(InputError, match="rows must match"):
            v.play(np.arange(3), np.zeros((2, 6)), start=False)


def test_ghosts_are_capped_for_sampled_redundancy() -> None:
    from ikstack.viz.viewer import MAX_GHOSTS

    chain = load("panda")
    with Viewer(chain) as v:
        sols = v.set_target(chain.fk(np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.8, 0.6])))
        shown = v.visible_ghosts()
        assert len(sols) - 1 > MAX_GHOSTS and len(shown) == MAX_GHOSTS
        n_valid = sum(s.valid and not s.selected for s in sols)
        assert sum(shown) == min(n_valid, MAX_GHOSTS)  # valid ones are shown first
        assert f"{MAX_GHOSTS} ghosts shown" in v.status
