"""Embodiment profiles in YAML: which arms, which IK method, and the solver tuning.

A profile names its arms (bundled robots, tool included) and the decode settings::

    name: marvin_bimanual_diff
    action_interval_s: 0.0333333333333
    ik_method: diff                # analytic (default) | diff
    ik_validation_dt_s: 0.004
    arms:
      left: {robot: marvin_left_taccap}
      right: {robot: marvin_right_taccap}
    diff_ik:
      config: arm/marvin_diff_ik.yaml   # expanded relative to this file

The ``diff_ik`` mapping takes the published port's keys as written (``w_pos``, ``w_rot``,
``lam``, ``limit_margin_deg``, ``j67_margin_deg``, ``mu_nullspace``, ``nullspace_activation_deg``,
``nullspace_weights``, ``max_lag_mm``, ``max_lag_deg``, ``lag_policy``; ``j67_margin_deg`` is
ikstack's ``coupled_margin_deg``) plus ikstack's own solver settings.

Any mapping may carry ``config: PATH``: the referenced YAML mapping is merged in, relative to
the referring file; a key given both inline and in the referenced file must agree (a conflict
is an error). Every field is validated strictly, and every error names the field and the file.
Velocity limits are never a profile field: they come from the arm's motion limits.

``ik_backend``, the former name of ``ik_method`` (and the published port's), is still read for
one release with an :class:`~ikstack.errors.IKStackDeprecationWarning`; a file giving both with
different values is a :class:`~ikstack.errors.ConfigError`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ikstack._deprecated import renamed_attribute, warn_deprecated
from ikstack.chunk.arm_decoder import DEFAULT_IK_VALIDATION_DT_S, AnalyticDecodeConfig
from ikstack.chunk.decode import ArmSpec, ChunkDecoder
from ikstack.diffik.qp_config import ALIASES as DIFF_ALIASES
from ikstack.diffik.qp_config import DiffQPConfig
from ikstack.errors import ConfigError, IKStackError
from ikstack.robots import data_path
from ikstack.robots import load as load_robot
from ikstack.vocabulary import ANALYTIC_MODES, DECODE_METHODS, DecodeMethod

_TOP = (
    "name",
    "action_interval_s",
    "ik_method",
    "ik_validation_dt_s",
    "arms",
    "diff_ik",
    "analytic_ik",
)
#: a top-level key's former name -> its name (read with a deprecation warning)
_OLD_TOP = {"ik_backend": "ik_method"}
_ARM = ("robot", "kinematic_margin_deg", "diff_ik")
_ANALYTIC = (
    "branch_check_deg",
    "position_tolerance_m",
    "rotation_tolerance_deg",
    "limit_margin_deg",
    "mode",
)
_VELOCITY_KEYS = (
    "max_velocity",
    "velocity_limits",
    "velocity_limit",
    "max_velocity_rad_s",
    "vmax",
    "joint_velocity_limits",
)


@dataclass(frozen=True)
class EmbodimentProfile:
    """A loaded, validated profile.

    Attributes:
        name: the profile's name.
        path: the file it was loaded from.
        action_interval_s: the fixed policy action interval [s].
        ik_method: :class:`DecodeMethod`, ``analytic`` or ``diff`` (the file's ``ik_method``
            key; ``ik_backend``, the attribute's and the key's former name, warns).
        arms: the arms' decoder recipes, in file order.
    """

    name: str
    path: Path
    action_interval_s: float
    ik_method: str
    arms: tuple[ArmSpec, ...]

    ik_backend = renamed_attribute("ik_backend", "ik_method")

    def decoder(self) -> ChunkDecoder:
        """An in-process decoder of this profile's arms."""
        return ChunkDecoder(self.arms, self.action_interval_s)

    def parallel_decoder(self) -> Any:
        """A :class:`~ikstack.chunk.parallel.ParallelChunkDecoder` (one worker per arm)."""
        from ikstack.chunk.parallel import ParallelChunkDecoder

        return ParallelChunkDecoder(self.arms, self.action_interval_s)


def bundled_profile_path(name: str) -> Path:
    """Path of a bundled profile (``"marvin_bimanual"``, ``"marvin_bimanual_diff"``)."""
    p = data_path(f"profiles/{name}.yaml")
    if not p.exists():
        avail = sorted(x.stem for x in data_path("profiles").glob("*.yaml"))
        raise ConfigError(f"no bundled profile {name!r}; bundled profiles: {', '.join(avail)}")
    return p


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read profile {path}: {exc.strerror or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a mapping; got {type(data).__name__}")
    return data


def _expand(
    node: dict[str, Any], file: Path, where: str, stack: tuple[Path, ...]
) -> tuple[dict[str, Any], dict[str, Path]]:
    """Merge ``config:`` references into ``node``; return values and the file of each key."""
    out: dict[str, Any] = {}
    src: dict[str, Path] = {}
    if "config" in node:
        ref = node["config"]
        if not isinstance(ref, str) or not ref:
            raise ConfigError(
                f"{where}.config in {file}: must be a relative or absolute path; got {ref!r}"
            )
        target = (file.parent / ref).resolve()
        if target in stack:
            raise ConfigError(f"{where}.config in {file}: circular reference to {target}")
        sub = _read(target)
        out, src = _expand(sub, target, where, stack + (target,))
    for key, val in node.items():
        if key == "config":
            continue
        if key in out and out[key] != val:
            raise ConfigError(
                f"{where}.{key}: {file} sets {val!r} but its referenced {src[key]} sets "
                f"{out[key]!r}; remove one of the two"
            )
        out[key] = val
        src[key] = file
    return out, src


def _number(value: Any, field: str, file: Path, *, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{field} in {file}: must be a finite number; got {value!r}")
    if positive and value <= 0:
        raise ConfigError(f"{field} in {file}: must be positive; got {value!r}")
    return float(value)


def _check_keys(
    node: Mapping[str, Any], allowed: tuple[str, ...], where: str, src: Mapping[str, Path] | Path
) -> None:
    for key in node:
        f = src if isinstance(src, Path) else src[key]
        if key in _VELOCITY_KEYS:
            raise ConfigError(
                f"{where}.{key} in {f}: velocity limits are not a profile setting; "
                "they come from the arm's motion limits (the robot model)"
            )
        if key not in allowed:
            raise ConfigError(
                f"{where}.{key} in {f}: unknown field; valid fields: {', '.join(allowed)}"
            )


def _diff_config(values: dict[str, Any], src: dict[str, Path], where: str) -> DiffQPConfig:
    _check_keys(values, DiffQPConfig.field_names() + tuple(DIFF_ALIASES), where, src)
    values, src = dict(values), dict(src)
    written: dict[str, str] = {}  # ikstack's name -> the name the file used
    for alias, name in DIFF_ALIASES.items():  # the published port's key names
        if alias not in values:
            continue
        if name in values:
            raise ConfigError(
                f"{where}.{alias} in {src[alias]}: the same setting as {name} "
                f"(in {src[name]}); give only one of the two"
            )
        values[name], src[name] = values.pop(alias), src.pop(alias)
        written[name] = alias
    for key, val in values.items():  # one field at a time, so the error names its own file
        probe = {key: val}
        if key in ("w_pos", "w_rot"):  # "both zero" is checked on the full set below
            probe["w_rot" if key == "w_pos" else "w_pos"] = 1.0
        name = written.get(key, key)
        try:
            DiffQPConfig(**probe)
        except ConfigError as exc:
            raise ConfigError(f"{where}.{name} in {src[key]}: {_why(exc)}") from None
        except TypeError:
            raise ConfigError(f"{where}.{name} in {src[key]}: invalid value {val!r}") from None
    try:
        return DiffQPConfig(**values, source=", ".join(sorted({str(p) for p in src.values()})))
    except ConfigError as exc:
        raise ConfigError(
            f"{where} in {', '.join(sorted({str(p) for p in src.values()}))}: {_why(exc)}"
        ) from None


def _why(exc: ConfigError) -> str:
    msg = str(exc)
    return msg.split(": ", 1)[1] if ": " in msg else msg


def load_profile(path: str | Path) -> EmbodimentProfile:
    """Load and validate an embodiment profile.

    Raises:
        ConfigError: unreadable or invalid YAML, an unknown or missing field, an invalid value,
            a conflict between a file and the file it references; the message names the field
            and the file.
    """
    file = Path(path).resolve()
    raw = _read(file)
    top, top_src = _expand(raw, file, "profile", (file,))
    _check_keys(top, _TOP + tuple(_OLD_TOP), "profile", top_src)
    top_key = _old_keys(top, top_src)

    def src_of(key: str) -> Path:
        return top_src.get(key, file)

    name = top.get("name", file.stem)
    if not isinstance(name, str):
        raise ConfigError(f"name in {src_of('name')}: must be a string; got {name!r}")
    if "action_interval_s" not in top:
        raise ConfigError(
            f"action_interval_s in {file}: required (the policy's fixed action interval in seconds)"
        )
    interval = _number(top["action_interval_s"], "action_interval_s", src_of("action_interval_s"))
    method = top.get("ik_method", DecodeMethod.ANALYTIC)
    if method not in DECODE_METHODS:
        raise ConfigError(
            f"{top_key.get('ik_method', 'ik_method')} in {src_of('ik_method')}: must be one of "
            f"{', '.join(DECODE_METHODS)}; got {method!r}"
        )
    sub_dt = _number(
        top.get("ik_validation_dt_s", DEFAULT_IK_VALIDATION_DT_S),
        "ik_validation_dt_s",
        src_of("ik_validation_dt_s"),
    )
    shared_diff: dict[str, Any] = {}
    shared_src: dict[str, Path] = {}
    if "diff_ik" in top:
        node = top["diff_ik"]
        if not isinstance(node, dict):
            raise ConfigError(f"diff_ik in {src_of('diff_ik')}: must be a mapping")
        shared_diff, shared_src = _expand(node, src_of("diff_ik"), "diff_ik", (src_of("diff_ik"),))
    analytic = AnalyticDecodeConfig()
    if "analytic_ik" in top:
        node = top["analytic_ik"]
        f = src_of("analytic_ik")
        if not isinstance(node, dict):
            raise ConfigError(f"analytic_ik in {f}: must be a mapping")
        vals, asrc = _expand(node, f, "analytic_ik", (f,))
        _check_keys(vals, _ANALYTIC, "analytic_ik", asrc)
        kw: dict[str, Any] = {}
        for key, val in vals.items():
            if key == "mode":
                if not isinstance(val, str) or val not in ANALYTIC_MODES:
                    raise ConfigError(
                        f"analytic_ik.mode in {asrc[key]}: must be one of "
                        f"{', '.join(ANALYTIC_MODES)}; got {val!r}"
                    )
                kw[key] = val
            elif key == "limit_margin_deg" and val is None:
                kw[key] = None
            else:
                kw[key] = _number(val, f"analytic_ik.{key}", asrc[key])
        analytic = AnalyticDecodeConfig(**kw)
    arms_node = top.get("arms")
    if not isinstance(arms_node, dict) or not arms_node:
        raise ConfigError(
            f"arms in {src_of('arms')}: required, a mapping of arm name to {{robot: NAME}}"
        )
    specs = []
    for arm, anode in arms_node.items():
        where = f"arms.{arm}"
        f = src_of("arms")
        if not isinstance(anode, dict):
            raise ConfigError(f"{where} in {f}: must be a mapping with a robot field")
        avals, asrc = _expand(anode, f, where, (f,))
        _check_keys(avals, _ARM, where, asrc)
        if "robot" not in avals:
            raise ConfigError(f"{where}.robot in {f}: required (a bundled robot name)")
        try:
            chain = load_robot(avals["robot"])
        except IKStackError as exc:
            raise ConfigError(f"{where}.robot in {asrc['robot']}: {exc}") from None
        if "kinematic_margin_deg" in avals:
            km = _number(
                avals["kinematic_margin_deg"],
                f"{where}.kinematic_margin_deg",
                asrc["kinematic_margin_deg"],
                positive=False,
            )
            if math.radians(km) < chain.kinematic_margin - 1e-12:
                raise ConfigError(
                    f"{where}.kinematic_margin_deg in {asrc['kinematic_margin_deg']}: {km} deg is "
                    f"below the arm's kinematic margin {math.degrees(chain.kinematic_margin):.6g}"
                    " deg (it may be raised, never lowered)"
                )
            chain = chain.replace(kinematic_margin=math.radians(km))
        dvals, dsrc = dict(shared_diff), dict(shared_src)
        if "diff_ik" in avals:
            if not isinstance(avals["diff_ik"], dict):
                raise ConfigError(f"{where}.diff_ik in {asrc['diff_ik']}: must be a mapping")
            over, osrc = _expand(
                avals["diff_ik"], asrc["diff_ik"], f"{where}.diff_ik", (asrc["diff_ik"],)
            )
            for key, val in over.items():
                if key in dvals and dvals[key] != val:
                    raise ConfigError(
                        f"{where}.diff_ik.{key}: {osrc[key]} sets {val!r} but the shared diff_ik "
                        f"in {dsrc[key]} sets {dvals[key]!r}; remove one of the two"
                    )
                dvals[key], dsrc[key] = val, osrc[key]
        cfg = _diff_config(dvals, dsrc, f"{where}.diff_ik" if "diff_ik" in avals else "diff_ik")
        _check_against_chain(cfg, chain, dsrc, where)
        specs.append(ArmSpec(str(arm), chain, method, cfg, analytic, sub_dt))
    return EmbodimentProfile(name, file, interval, DecodeMethod(method), tuple(specs))


def _old_keys(top: dict[str, Any], src: dict[str, Path]) -> dict[str, str]:
    """Rename the former top-level keys in place (each warns, naming its file); a file giving a
    key under both names with different values is a ConfigError. Returns new name -> the name
    the file used (for messages)."""
    used: dict[str, str] = {}
    for old, new in _OLD_TOP.items():
        if old not in top:
            continue
        if new in top and top[new] != top[old]:
            raise ConfigError(
                f"{old} in {src[old]}: the former name of {new}, which {src[new]} sets to "
                f"{top[new]!r} while {old} says {top[old]!r}; give {new} only"
            )
        warn_deprecated(
            f"profile key {old} in {src[old]} is deprecated; use {new} (the old key goes in the "
            "next release)"
        )
        if new not in top:
            top[new], src[new] = top[old], src[old]
            used[new] = old
        del top[old], src[old]
    return used


def _check_against_chain(cfg: DiffQPConfig, chain: Any, src: dict[str, Path], where: str) -> None:
    if cfg.nullspace_weights is not None and len(cfg.nullspace_weights) != chain.dof:
        raise ConfigError(
            f"diff_ik.nullspace_weights in {src['nullspace_weights']}: "
            f"{len(cfg.nullspace_weights)} weights for arm {where.split('.')[-1]!r} with "
            f"{chain.dof} joints; give exactly one finite non-negative weight per joint"
        )
    km = math.degrees(chain.kinematic_margin)
    if cfg.limit_margin_deg is not None and cfg.limit_margin_deg < km - 1e-9:
        raise ConfigError(
            f"diff_ik.limit_margin_deg in {src['limit_margin_deg']}: {cfg.limit_margin_deg} deg "
            f"is below arm {where.split('.')[-1]!r}'s kinematic margin {km:.6g} deg (it may be "
            "raised, never lowered)"
        )
