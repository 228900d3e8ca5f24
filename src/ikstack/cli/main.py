"""The ``ikstack`` command: one subcommand per module in :mod:`ikstack.cli`.

Every failure ends in one line on stderr, ``ikstack COMMAND: error: ...``, naming the file,
row, field, joint or argument, and one of the exit codes in :data:`EXIT_CODES`; a traceback
is printed only with ``--debug`` (or ``IKSTACK_DEBUG=1``).

Each command module imports the library inside its ``run`` only, so building the parser
(``--help``, a usage error) loads no kernel and takes a fraction of a second.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from ikstack.errors import IKStackError, MissingExtraError, StorageError, WorkerError

#: subcommand name -> module defining ``add_parser(subparsers)`` and ``run(args) -> int``
COMMANDS = {
    "solve": "ikstack.cli.solve_cmd",
    "ik": "ikstack.cli.ik_cmd",
    "fk": "ikstack.cli.fk_cmd",
    "robots": "ikstack.cli.robots_cmd",
    "validate": "ikstack.cli.validate_cmd",
    "servo-demo": "ikstack.cli.servo_demo_cmd",
    "decode": "ikstack.cli.decode_cmd",
    "view": "ikstack.cli.view_cmd",
    "warmup": "ikstack.cli.warmup_cmd",
    "export": "ikstack.cli.export_cmd",
}

#: exit codes of every command
EXIT_OK = 0
EXIT_FAILED = 1  # it ran, and the result is negative (see each command)
EXIT_INPUT = 2  # bad argument or input file (named); the model or data is malformed
EXIT_SKIPPED = 3  # validate: nothing to check (a gripper)
EXIT_STORAGE = 4  # a file cannot be read or written: disk full, read-only folder, permission
EXIT_WORKER = 5  # a worker process died
EXIT_UNAVAILABLE = 6  # an optional extra or a device is missing
EXIT_INTERNAL = 70  # a bug in ikstack: rerun with --debug and report the traceback
EXIT_INTERRUPTED = 130  # Ctrl-C

EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_FAILED: "ran, result negative: frames or episodes failed (solve), no certified "
    "solution (ik), check failed (validate), chunk rejected (decode)",
    EXIT_INPUT: "bad argument or input file; the message names the argument, file, row, "
    "field, joint or link",
    EXIT_SKIPPED: "validate only: skipped (a gripper has no end effector to check)",
    EXIT_STORAGE: "a file or folder cannot be read or written (disk full, read-only, "
    "permission); nothing half-written is left",
    EXIT_WORKER: "a worker process died or failed (the message names it and its error)",
    EXIT_UNAVAILABLE: "an optional extra or a device is not available here",
    EXIT_INTERNAL: "internal error (a bug): rerun with --debug and report the traceback",
    EXIT_INTERRUPTED: "interrupted",
}


def exit_codes_text() -> str:
    """The exit-code table for ``--help``."""
    return "exit codes:\n" + "\n".join(f"  {k:>3}  {v}" for k, v in EXIT_CODES.items())


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line (exit code 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INPUT, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every available subcommand registered."""
    parser = _Parser(
        prog="ikstack",
        description="Robot-arm kinematics: dataset conversion, IK, FK, model checks, "
        "servo, action-chunk decoding.",
        epilog=exit_codes_text(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from ikstack import __version__

    parser.add_argument("--version", action="version", version=f"ikstack {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="print the traceback of an error (also IKSTACK_DEBUG=1); may be "
        "given anywhere on the line",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for modname in COMMANDS.values():
        mod = importlib.import_module(modname)
        p = mod.add_parser(sub)
        if p.epilog is None:
            p.epilog = exit_codes_text()
            p.formatter_class = argparse.RawDescriptionHelpFormatter
        p.set_defaults(_run=mod.run)
    return parser


def exit_code_of(exc: BaseException) -> int:
    """The exit code an error ends a command with."""
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if isinstance(exc, StorageError | OSError):
        return EXIT_STORAGE
    if isinstance(exc, WorkerError):
        return EXIT_WORKER
    if isinstance(exc, MissingExtraError) or type(exc).__name__ == "DeviceUnavailableError":
        return EXIT_UNAVAILABLE
    if isinstance(exc, IKStackError):
        return EXIT_INPUT
    return EXIT_INTERNAL


def error_line(command: str, exc: BaseException) -> str:
    """The one line printed for ``exc``: what failed, naming the file or argument."""
    if isinstance(exc, KeyboardInterrupt):
        text = "interrupted"
    elif isinstance(exc, IKStackError):
        text = str(exc)
    elif isinstance(exc, OSError):
        where = exc.filename if exc.filename is not None else ""
        text = f"{where}: {exc.strerror or exc}" if where else (exc.strerror or str(exc))
    else:
        text = (
            f"internal error: {type(exc).__name__}: {exc} (rerun with --debug and report "
            "the traceback)"
        )
    text = " ".join(text.split())  # one line, whatever the message held
    return f"ikstack {command}: error: {text}"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    args_in = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args_in or os.environ.get("IKSTACK_DEBUG", "") not in ("", "0")
    args_in = [a for a in args_in if a != "--debug"]
    parser = build_parser()
    args, extra = parser.parse_known_args(args_in)
    if extra:
        prog = f"ikstack {args.command}" if getattr(args, "command", None) else "ikstack"
        print(
            f"{prog}: error: unrecognized arguments: {' '.join(extra)} (see {prog} --help)",
            file=sys.stderr,
        )
        return EXIT_INPUT
    if not getattr(args, "_run", None):
        parser.print_help()
        return EXIT_INPUT
    try:
        return int(args._run(args) or 0)
    except BrokenPipeError:  # output piped into head
        return EXIT_OK
    except (Exception, KeyboardInterrupt) as exc:
        if debug:
            traceback.print_exc()
        print(error_line(args.command, exc), file=sys.stderr)
        return exit_code_of(exc)


if __name__ == "__main__":
    sys.exit(main())
