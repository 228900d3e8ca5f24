"""``ikstack decode`` on a bundled profile: accepted and rejected chunks, outputs written."""

from __future__ import annotations

import json

import numpy as np

from ikstack.cli.main import main
from ikstack.robots import load
from ikstack.spatial import make_transform


def write_chunk(path, step=0.002, horizon=16):
    arrays = {}
    q0 = np.radians([10, 20, -10, -60, 10, 20, 10])
    for arm in ("left", "right"):
        chain = load(f"marvin_{arm}_taccap")
        T0 = chain.fk(q0)
        arrays[f"T_base_tcp_{arm}"] = np.stack(
            [
                T0 @ make_transform(np.eye(3), [step * k, 0.5 * step * k, 0])
                for k in range(1, horizon + 1)
            ]
        )
        arrays[f"q_observed_{arm}"] = q0
    np.savez(path, **arrays)


def test_decode_accepts_a_reachable_chunk_and_writes_knots(tmp_path, capsys):
    write_chunk(tmp_path / "c.npz")
    assert (
        main(
            [
                "decode",
                str(tmp_path / "c.npz"),
                "--profile",
                "marvin_bimanual_diff",
                "-o",
                str(tmp_path / "out"),
                "--json",
            ]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["ok"] and summary["horizon"] == 16
    with np.load(tmp_path / "out.npz") as z:
        assert z["q_left"].shape == (16, 7) and z["q_right"].shape == (16, 7)
    assert json.loads((tmp_path / "out.json").read_text())["ok"] is True


PROFILE_ABORT = """
name: strict_lag
action_interval_s: 0.0333333333333333
ik_method: diff
ik_validation_dt_s: 0.004
arms:
  left: {robot: marvin_left_taccap}
  right: {robot: marvin_right_taccap}
diff_ik:
  w_pos: 1.0
  w_rot: 1.0
  lam: 0.001
  mu_nullspace: 1000.0
  nullspace_activation_deg: 25.0
  max_lag_mm: 5.0
  lag_policy: abort
"""


def test_decode_rejects_a_chunk_that_outruns_the_lag_guard_with_exit_code_1(tmp_path, capsys):
    write_chunk(tmp_path / "c.npz", step=0.2)
    (tmp_path / "p.yaml").write_text(PROFILE_ABORT)
    assert (
        main(
            [
                "decode",
                str(tmp_path / "c.npz"),
                "--profile",
                str(tmp_path / "p.yaml"),
                "-o",
                str(tmp_path / "out"),
            ]
        )
        == 1
    )
    out = capsys.readouterr().out
    assert "REJECTED" in out and "tracking_lag" in out
    with np.load(tmp_path / "out.npz") as z:
        assert "q_left" not in z.files  # a rejected chunk holds no knots


def test_unknown_profile_names_the_bundled_ones(tmp_path, capsys):
    write_chunk(tmp_path / "c.npz")
    assert main(["decode", str(tmp_path / "c.npz"), "--profile", "nope"]) == 2
    assert "bundled profiles" in capsys.readouterr().err


def test_human_output_shows_each_arms_worst_residual_and_exceedances(tmp_path, capsys):
    # the bundled profile reports lag (lag_policy: report): a fast chunk is accepted, and the
    # human output must say how far each arm lagged, not just "accepted"
    write_chunk(tmp_path / "c.npz", step=0.02)
    assert (
        main(
            [
                "decode",
                str(tmp_path / "c.npz"),
                "--profile",
                "marvin_bimanual_diff",
                "-o",
                str(tmp_path / "out"),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    meta = json.loads((tmp_path / "out.json").read_text())["metadata"]["diff_ik_lag"]
    assert "accepted" in out
    for arm in ("left", "right"):
        lag = meta[arm]
        assert lag["exceedances"] > 0  # the chunk outruns the 5 mm guard on both arms
        line = next(x for x in out.splitlines() if x.strip().startswith(f"arm {arm}:"))
        assert f"{lag['worst_position_mm']:.3f} mm" in line
        assert f"{lag['worst_euler_deg']:.3f} deg" in line
        assert f"{lag['exceedances']} of {lag['steps']} substeps over the lag guard" in line
        assert "LAG" in line
