"""The ``ikstack`` command: one subcommand per module in :mod:`ikstack.cli`.

Each command module imports the library inside its ``run`` only, so building the parser
(``--help``, a usage error) loads no kernel and takes a fraction of a second.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ikstack.errors import IKStackError

#: subcommand name -> module defining ``add_parser(subparsers)`` and ``run(args) -> int``
COMMANDS = {
    "solve": "ikstack.cli.solve_cmd",
    "ik": "ikstack.cli.ik_cmd",
    "fk": "ikstack.cli.fk_cmd",
    "robots": "ikstack.cli.robots_cmd",
    "validate": "ikstack.cli.validate_cmd",
    "servo-demo": "ikstack.cli.servo_demo_cmd",
    "decode": "ikstack.cli.decode_cmd",
    "warmup": "ikstack.cli.warmup_cmd",
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="ikstack", description="Robot-arm kinematics: dataset conversion, IK, FK, model checks, "
                                   "servo, action-chunk decoding."
    )
    from ikstack import __version__

    parser.add_argument("--version", action="version", version=f"ikstack {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for modname in COMMANDS.values():
        mod = importlib.import_module(modname)
        p = mod.add_parser(sub)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except IKStackError as exc:
        print(f"ikstack {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into head
        return 0


if __name__ == "__main__":
    sys.exit(main())
