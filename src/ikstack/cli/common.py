"""Helpers shared by CLI subcommands: choosing a chain, printing JSON.

The command modules import the library inside ``run`` only, so building the parser (and every
``--help``) imports neither numba nor any kernel.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING, Any

from ikstack.errors import InputError

if TYPE_CHECKING:
    from ikstack.model import Chain


def add_chain_arguments(p: argparse.ArgumentParser) -> None:
    """``--robot NAME`` or ``--urdf PATH --base B --tip T``."""
    g = p.add_argument_group("robot model")
    g.add_argument("--robot", help="bundled robot name (`ikstack robots` lists them)")
    g.add_argument("--urdf", help="URDF file (with --base and --tip)")
    g.add_argument("--base", help="base link name (URDF)")
    g.add_argument("--tip", help="tip link name (URDF)")


def chain_from_args(args: argparse.Namespace) -> Chain:
    """The chain chosen by :func:`add_chain_arguments`."""
    from ikstack import robots
    from ikstack.model import load_urdf

    if args.robot and args.urdf:
        raise InputError("give either --robot or --urdf, not both")
    if args.robot:
        return robots.load(args.robot)
    if args.urdf:
        return load_urdf(args.urdf, args.base, args.tip)
    raise InputError(f"choose a model: --robot NAME ({', '.join(robots.names())}) or --urdf PATH")


def check_numbers(args: argparse.Namespace, *, positive: tuple[str, ...] = (),
                  finite: tuple[str, ...] = (), at_least_one: tuple[str, ...] = ()) -> None:
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
