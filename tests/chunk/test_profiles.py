"""YAML embodiment profiles: bundled defaults, relative references, strict validation."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ikstack.chunk import bundled_profile_path, load_profile
from ikstack.errors import ConfigError, IKStackDeprecationWarning


def test_bundled_marvin_profiles_reproduce_the_seed_defaults():
    diff = load_profile(bundled_profile_path("marvin_bimanual_diff"))
    assert diff.ik_method == "diff" and [a.name for a in diff.arms] == ["left", "right"]
    assert diff.action_interval_s == pytest.approx(1 / 30)
    for arm in diff.arms:
        c = arm.diff_config
        assert (c.w_pos, c.w_rot, c.lam, c.mu_nullspace) == (1.0, 1.0, 1e-3, 1000.0)
        assert c.nullspace_activation_deg == 25.0 and c.nullspace_weights is None
        assert c.limit_margin_deg is None and c.max_lag_mm == 5.0 and c.max_lag_deg is None
        assert c.lag_policy.value == "report" and c.internal_units.value == "mm_deg"
        assert arm.ik_validation_dt_s == 0.004
        assert math.degrees(arm.chain.kinematic_margin) == pytest.approx(5.0)
        assert arm.chain.velocity_limits == pytest.approx([0.904779] * 7)
        assert arm.chain.tcp_name == "taccap"
        assert c.source.endswith("arm/marvin_diff_ik.yaml")
    right = diff.arms[1].chain
    assert math.degrees(right.upper[5]) == pytest.approx(58.0)
    assert diff.decoder().decoders["left"].substeps(diff.action_interval_s) == 9
    analytic = load_profile(bundled_profile_path("marvin_bimanual"))
    assert analytic.ik_method == "analytic"
    assert analytic.arms[0].analytic.branch_check_deg == 1.8
    with pytest.raises(ConfigError, match="marvin_bimanual"):
        bundled_profile_path("nope")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


EXPERIMENT = """
name: exp
action_interval_s: 0.05
ik_method: diff
arms:
  left: {{robot: marvin_left_taccap}}
diff_ik:
  config: ../embodiment/arm/shared.yaml
{extra}
"""


def make(tmp_path: Path, shared: str, extra: str = "") -> Path:
    write(tmp_path / "embodiment/arm/shared.yaml", shared)
    return write(tmp_path / "experiments/exp.yaml", EXPERIMENT.format(extra=extra))


def test_config_reference_is_expanded_relative_to_the_referring_file(tmp_path):
    p = make(tmp_path, "w_pos: 2.0\nlag_policy: abort\nmax_lag_mm: 3.0\n")
    prof = load_profile(p)
    c = prof.arms[0].diff_config
    assert (c.w_pos, c.lag_policy.value, c.max_lag_mm) == (2.0, "abort", 3.0)
    assert c.source == str((tmp_path / "embodiment/arm/shared.yaml").resolve())


@pytest.mark.parametrize(
    "shared,field",
    [
        ("w_pos: 1.0\nbogus: 3\n", "bogus"),
        ("w_rot: .nan\n", "w_rot"),
        ("lam: -1.0\n", "lam"),
        ("nullspace_weights: [1, 1, 1, 1, 1, 1]\n", "nullspace_weights"),
        ("nullspace_weights: [1, 1, 1, 1, 1, 1, -2]\n", "nullspace_weights"),
        ("limit_margin_deg: 3.0\n", "limit_margin_deg"),
        ("max_lag_mm: 0\n", "max_lag_mm"),
        ("max_lag_mm: -5\n", "max_lag_mm"),
        ("lag_policy: ignore\n", "lag_policy"),
        ("max_velocity: 1.0\n", "max_velocity"),
        ("coupled_margin_deg: -1\n", "coupled_margin_deg"),
        ("j67_margin_deg: 0\n", "j67_margin_deg"),
        ("j67_margin_deg: 2.0\ncoupled_margin_deg: 2.0\n", "j67_margin_deg"),
        ("j67_margin: 2.0\n", "j67_margin"),
    ],
)
def test_every_invalid_field_is_an_error_naming_the_field_and_the_file(tmp_path, shared, field):
    p = make(tmp_path, shared)
    with pytest.raises(ConfigError) as exc:
        load_profile(p)
    msg = str(exc.value)
    assert field in msg and "shared.yaml" in msg, msg


def test_velocity_limits_come_only_from_the_arm_model(tmp_path):
    p = make(tmp_path, "w_pos: 1.0\n")
    text = p.read_text().replace(
        "left: {robot: marvin_left_taccap}",
        "left: {robot: marvin_left_taccap, velocity_limits: 2.0}",
    )
    p.write_text(text)
    with pytest.raises(ConfigError, match="motion limits"):
        load_profile(p)


def test_a_conflict_between_a_file_and_its_reference_is_an_error(tmp_path):
    write(tmp_path / "embodiment/arm/shared.yaml", "max_lag_mm: 5.0\n")
    p = write(
        tmp_path / "experiments/exp.yaml",
        EXPERIMENT.format(extra="").replace(
            "config: ../embodiment/arm/shared.yaml",
            "config: ../embodiment/arm/shared.yaml\n  max_lag_mm: 4.0",
        ),
    )
    with pytest.raises(ConfigError) as exc:
        load_profile(p)
    assert (
        "max_lag_mm" in str(exc.value)
        and "exp.yaml" in str(exc.value)
        and "shared.yaml" in str(exc.value)
    )
    # the same value in both places is not a conflict
    p.write_text(p.read_text().replace("max_lag_mm: 4.0", "max_lag_mm: 5.0"))
    assert load_profile(p).arms[0].diff_config.max_lag_mm == 5.0


def test_a_per_arm_override_that_contradicts_the_shared_tuning_is_an_error(tmp_path):
    p = make(tmp_path, "lam: 0.001\n")
    p.write_text(
        p.read_text().replace(
            "left: {robot: marvin_left_taccap}",
            "left: {robot: marvin_left_taccap, diff_ik: {lam: 0.01}}",
        )
    )
    with pytest.raises(ConfigError, match="lam"):
        load_profile(p)


@pytest.mark.parametrize(
    "edit,field",
    [
        (("action_interval_s: 0.05", "action_interval_s: -0.05"), "action_interval_s"),
        (("ik_method: diff", "ik_method: numeric"), "ik_method"),
        (("name: exp", "name: exp\nspeed: 3"), "speed"),
        (("marvin_left_taccap", "marvin_leftt"), "robot"),
        (("name: exp", "name: exp\nik_validation_dt_s: 0"), "ik_validation_dt_s"),
        (("name: exp", "name: exp\nanalytic_ik: {mode: banana}"), "analytic_ik.mode"),
    ],
)
def test_top_level_fields_are_validated_strictly(tmp_path, edit, field):
    p = make(tmp_path, "w_pos: 1.0\n")
    p.write_text(p.read_text().replace(*edit))
    with pytest.raises(ConfigError) as exc:
        load_profile(p)
    assert field in str(exc.value) and "exp.yaml" in str(exc.value)


def test_missing_and_circular_references_are_errors(tmp_path):
    p = write(tmp_path / "a.yaml", "config: b.yaml\n")
    write(tmp_path / "b.yaml", "config: a.yaml\n")
    with pytest.raises(ConfigError, match="circular"):
        load_profile(p)
    q = make(tmp_path, "w_pos: 1.0\n")
    q.write_text(q.read_text().replace("shared.yaml", "missing.yaml"))
    with pytest.raises(ConfigError, match="missing.yaml"):
        load_profile(q)


#: the published port's adapter block, exactly as its documentation writes it
PORT_BLOCK = """\
policy:
  adapter:
    ik_backend: diff
    ik_validation_dt_s: 0.004
    diff_ik:
      w_pos: 1.0
      w_rot: 1.0
      lam: 0.001
      limit_margin_deg: null
      j67_margin_deg: null
      mu_nullspace: 1000.0
      nullspace_activation_deg: 25.0
      nullspace_weights: null
      max_lag_mm: 5.0
      max_lag_deg: null
      lag_policy: report
"""


def _port_diff_ik_text() -> str:
    lines = PORT_BLOCK.splitlines()
    start = lines.index("    diff_ik:") + 1
    return "\n".join(line[6:] for line in lines[start:]) + "\n"


def test_the_published_ports_diff_ik_block_loads_as_written(tmp_path):
    import yaml

    block = yaml.safe_load(PORT_BLOCK)["policy"]["adapter"]
    assert set(block["diff_ik"]) == {
        "w_pos",
        "w_rot",
        "lam",
        "limit_margin_deg",
        "j67_margin_deg",
        "mu_nullspace",
        "nullspace_activation_deg",
        "nullspace_weights",
        "max_lag_mm",
        "max_lag_deg",
        "lag_policy",
    }
    # as a referenced file (the block's text, dedented) ...
    p = make(tmp_path, _port_diff_ik_text())
    # ... and inline in a profile, next to the port's ik_backend (ikstack's ik_method: it
    # warns) and ik_validation_dt_s
    inline = write(
        tmp_path / "inline.yaml",
        "name: inline\naction_interval_s: 0.0333333333333\n"
        "arms:\n  left: {robot: marvin_left_taccap}\n"
        + "\n".join(line[4:] for line in PORT_BLOCK.splitlines()[2:])
        + "\n",
    )
    for path in (p, inline):
        if path == inline:
            with pytest.warns(IKStackDeprecationWarning, match="ik_backend"):
                prof = load_profile(path)
        else:
            prof = load_profile(path)
        c = prof.arms[0].diff_config
        assert (c.w_pos, c.w_rot, c.lam, c.mu_nullspace, c.max_lag_mm) == (
            1.0,
            1.0,
            1e-3,
            1000.0,
            5.0,
        )
        assert c.limit_margin_deg is None and c.coupled_margin_deg is None
        assert c.nullspace_activation_deg == 25.0 and c.nullspace_weights is None
        assert c.max_lag_deg is None and c.lag_policy.value == "report"
        # null j67_margin_deg: the J6/J7 buffer is the arm's 5 deg kinematic margin
        qp = prof.decoder().decoders["left"].qp
        assert math.degrees(qp.coupled_margin) == pytest.approx(5.0)
    assert prof.ik_method == "diff"
    assert prof.arms[0].ik_validation_dt_s == 0.004


def test_a_positive_j67_margin_overrides_the_inherited_buffer(tmp_path):
    prof = load_profile(make(tmp_path, "j67_margin_deg: 2.5\n"))
    assert prof.arms[0].diff_config.coupled_margin_deg == 2.5
    qp = prof.decoder().decoders["left"].qp
    assert math.degrees(qp.coupled_margin) == pytest.approx(2.5)
    # a raised joint margin is what a null buffer inherits
    prof = load_profile(make(tmp_path, "limit_margin_deg: 7.0\n"))
    qp = prof.decoder().decoders["left"].qp
    assert math.degrees(qp.coupled_margin) == pytest.approx(7.0)


def test_the_method_key_is_ik_method_and_ik_backend_warns(tmp_path):
    new = make(tmp_path, "w_pos: 1.0\n")
    assert load_profile(new).ik_method == "diff"
    old = write(
        tmp_path / "experiments/old.yaml", new.read_text().replace("ik_method", "ik_backend")
    )
    with pytest.warns(IKStackDeprecationWarning, match=r"ik_backend in .*old\.yaml.*ik_method"):
        prof = load_profile(old)
    assert prof.ik_method == "diff" and prof.arms[0].method == "diff"
    # both keys agreeing: the old one still warns; disagreeing: an error naming file and key
    both = write(
        tmp_path / "experiments/both.yaml",
        new.read_text().replace("ik_method: diff", "ik_method: diff\nik_backend: diff"),
    )
    with pytest.warns(IKStackDeprecationWarning):
        assert load_profile(both).ik_method == "diff"
    clash = write(
        tmp_path / "experiments/clash.yaml",
        new.read_text().replace("ik_method: diff", "ik_method: diff\nik_backend: analytic"),
    )
    with pytest.raises(ConfigError) as exc:
        load_profile(clash)
    assert "clash.yaml" in str(exc.value) and "ik_backend" in str(exc.value)
    assert "ik_method" in str(exc.value)
    # a bad value under the old key names the key the file used
    bad = write(tmp_path / "experiments/bad.yaml", old.read_text().replace("diff\n", "qp\n", 1))
    with pytest.warns(IKStackDeprecationWarning), pytest.raises(ConfigError) as exc:
        load_profile(bad)
    assert "ik_backend in" in str(exc.value) and "bad.yaml" in str(exc.value)


def test_bundled_profiles_use_the_new_key():
    for name in ("marvin_bimanual", "marvin_bimanual_diff"):
        text = bundled_profile_path(name).read_text()
        assert "ik_method:" in text and "ik_backend" not in text
