"""Helpers shared by CLI subcommands: choosing a chain, printing JSON.

The command modules import the library inside ``run`` only, so building the parser (and every
``--help``) imports neither numba nor any kernel.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import TYPE_CHECKING, Any

from ikstack.errors import InputError

if TYPE_CHECKING:
    from ikstack.model import Chain


def add_chain_arguments(p: argparse.ArgumentParser, *, required_hint: str = "") -> None:
    """The model, the same on every command: ``--robot NAME | --urdf FILE | --mjcf FILE``,
    with ``--base B --tip T`` for a model file."""
    g = p.add_argument_group("robot model (one of --robot, --urdf, --mjcf)" + required_hint)
    one = g.add_mutually_exclusive_group()
    one.add_argument("--robot", help="bundled robot name (`ikstack robots` lists them)")
    one.add_argument("--urdf", help="URDF file (with --base and --tip)")
    one.add_argument("--mjcf", help="MJCF file (with --base and --tip)")
    g.add_argument("--base", help="base link or body of a model file (default: the root)")
    g.add_argument("--tip", help="tip link, body or site of a model file (default: the leaf)")


def add_json_flag(p: argparse.ArgumentParser, what: str = "the result") -> None:
    """``--json``: a flag on every command, machine output (SI units) on stdout."""
    p.add_argument(
        "--json",
        action="store_true",
        help=f"print {what} as JSON on stdout (SI units: m, rad, s; keys carry "
        "the unit, e.g. position_error_m)",
    )


def add_deg_flag(p: argparse.ArgumentParser, options: str) -> None:
    """``--deg``: the angles given in ``options`` are in degrees (revolute joints)."""
    p.add_argument(
        "--deg",
        action="store_true",
        help=f"{options} in degrees (revolute joints; prismatic stay in m)",
    )


def add_old_flag(p: argparse.ArgumentParser, old: str, new: str, **kwargs: Any) -> None:
    """``old``, the previous release's spelling of option ``new``: parsed as before, hidden from
    ``--help`` (``new``'s help names it); :func:`resolve_old_flag` maps it onto ``new``."""
    p.add_argument(old, default=None, help=argparse.SUPPRESS, **kwargs)


def resolve_old_flag(
    args: argparse.Namespace, command: str, old: str, new: str, default: Any = None
) -> str:
    """Map option ``old`` (added by :func:`add_old_flag`) onto ``new``, with a one-line note on
    stderr that ``old`` is deprecated; giving both is an :class:`InputError`. ``new`` not given
    gets ``default``. Returns the spelling the user gave (for messages naming the option)."""
    old_dest, new_dest = old.lstrip("-").replace("-", "_"), new.lstrip("-").replace("-", "_")
    old_value, new_value = getattr(args, old_dest), getattr(args, new_dest)
    if old_value is None:
        if new_value is None:
            setattr(args, new_dest, default)
        return new
    if new_value is not None:
        raise InputError(f"{old} is the former name of {new}; give {new} only")
    print(f"ikstack {command}: note: {old} is deprecated; use {new}", file=sys.stderr)
    setattr(args, new_dest, old_value)
    return old


def angles_in(values: Any, args: argparse.Namespace, chain: Chain, option: str) -> Any:
    """Joint values from the command line in SI: with ``--deg`` the revolute entries are
    degrees and converted to radians. One value per joint, checked first: the conversion would
    broadcast a single value to every joint."""
    import numpy as np

    from ikstack.errors import InputError

    q = np.asarray(values, dtype=float)
    if q.shape != (chain.dof,):
        raise InputError(
            f"{option} has {q.size} values; {chain.name or 'the chain'} has "
            f"{chain.dof} joints ({', '.join(chain.joint_names)})"
        )
    if getattr(args, "deg", False):
        q = np.where(chain.is_revolute, np.radians(q), q)
    return q


def joints_text(chain: Chain, q: Any) -> str:
    """Joint values for human output: revolute in deg, prismatic in mm, each with its unit."""
    import numpy as np

    return (
        "["
        + ", ".join(
            f"{np.degrees(v):+.3f} deg" if rev else f"{v * 1e3:+.3f} mm"
            for v, rev in zip(q, chain.is_revolute, strict=True)
        )
        + "]"
    )


def model_given(args: argparse.Namespace) -> list[str]:
    """The model options given (``robot``, ``urdf``, ``mjcf``)."""
    return [n for n in ("robot", "urdf", "mjcf") if getattr(args, n, None)]


def chain_from_args(args: argparse.Namespace) -> Chain:
    """The chain chosen by :func:`add_chain_arguments`."""
    from ikstack import robots
    from ikstack.model import load_mjcf, load_urdf

    given = model_given(args)
    if len(given) > 1:
        raise InputError(
            f"give one of --robot, --urdf or --mjcf; got {', '.join('--' + g for g in given)}"
        )
    if getattr(args, "robot", None):
        if getattr(args, "base", None) or getattr(args, "tip", None):
            raise InputError(
                "--base/--tip go with --urdf or --mjcf; a bundled robot has its own chain"
            )
        return robots.load(args.robot)
    if getattr(args, "urdf", None):
        return load_urdf(args.urdf, args.base, args.tip)
    if getattr(args, "mjcf", None):
        return load_mjcf(args.mjcf, args.base, args.tip)
    raise InputError(
        f"choose a model: --robot NAME ({', '.join(robots.names())}), --urdf FILE or --mjcf FILE"
    )


def check_numbers(
    args: argparse.Namespace,
    *,
    positive: tuple[str, ...] = (),
    finite: tuple[str, ...] = (),
    at_least_one: tuple[str, ...] = (),
) -> None:
    """Raise :class:`InputError` naming the first option (``--dt``) whose value is not finite,
    not > 0 (``positive``) or below 1 (``at_least_one``, counts). Lists are checked entry by
    entry; None (not given) passes."""

    def flag(dest: str) -> str:
        return "--" + dest.replace("_", "-")

    for dest in (*positive, *finite, *at_least_one):
        value = getattr(args, dest, None)
        if value is None:
            continue
        for v in value if isinstance(value, list) else [value]:
            if dest in at_least_one:
                if v < 1:
                    raise InputError(f"{flag(dest)} must be at least 1; got {v}")
            elif not math.isfinite(v):
                raise InputError(f"{flag(dest)} must be a finite number; got {v}")
            elif dest in positive and v <= 0:
                raise InputError(f"{flag(dest)} must be > 0; got {v}")


def to_jsonable(x: Any) -> Any:
    """Numpy arrays and scalars as plain lists/numbers (NaN/inf as None)."""
    import numpy as np

    if isinstance(x, dict):
        return {k: to_jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return to_jsonable(x.tolist())
    if isinstance(x, (np.floating, float)):
        v = float(x)
        return v if np.isfinite(v) else None
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def print_json(obj: Any) -> None:
    """Print ``obj`` as indented JSON."""
    print(json.dumps(to_jsonable(obj), indent=2))
