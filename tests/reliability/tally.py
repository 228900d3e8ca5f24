"""Count how the reliability corpora end: a named ikstack error, silent acceptance, or a raw
exception (a hang counts as raw). Not a test; prints the table of the reliability note.

    PYTHONPATH=src python tests/reliability/tally.py

Point PYTHONPATH at another checkout's ``src`` to tally that version (the corpora are built
here, in a temporary folder).
"""

from __future__ import annotations

import contextlib
import io
import signal
import sys
import tempfile
from collections import Counter
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import ikstack.cli.main as cli_main  # noqa: E402
from ikstack.errors import IKStackError  # noqa: E402

if not hasattr(cli_main, "EXIT_CODES"):  # an older version: the test module needs the name
    cli_main.EXIT_CODES = {}  # type: ignore[attr-defined]

from dataset_corpus import dataset_cases  # noqa: E402
from reliability_corpus import write_case  # noqa: E402
from test_cli_bad_input import BAD, _files  # noqa: E402
from urdf_corpus import URDF_ARG_CASES, good, urdf_cases  # noqa: E402

from ikstack.jobs import read_episode  # noqa: E402
from ikstack.model import load_urdf  # noqa: E402


class _Hang(Exception):
    pass


def _alarm(*_: object) -> None:
    raise _Hang()


def classify(call) -> str:  # type: ignore[no-untyped-def]
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(10)
    try:
        call()
    except _Hang:
        return "raw"
    except IKStackError:
        return "named"
    except Exception:  # noqa: BLE001
        return "raw"
    finally:
        signal.alarm(0)
    return "silent"


def cli(argv: list[str]) -> str:
    err, out = io.StringIO(), io.StringIO()
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(120)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            rc = cli_main.main(argv)
    except SystemExit as exc:
        rc = int(exc.code or 0)
    except BaseException:  # noqa: BLE001 - a traceback reaches the user
        return "raw"
    finally:
        signal.alarm(0)
    if "Traceback" in err.getvalue():
        return "raw"
    return "silent" if rc == 0 else "named"


def main() -> None:
    rows: dict[str, Counter[str]] = {}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        c = rows.setdefault("URDF", Counter())
        for cid, content, _err, _words in urdf_cases():
            path = write_case(tmp / "u", f"{cid}.urdf", content)
            c[classify(partial(load_urdf, path))] += 1
        for _cid, kwargs, _err, _words in URDF_ARG_CASES:
            c[classify(partial(load_urdf, good(), **kwargs))] += 1
        for cid, name, write, *_ in dataset_cases():
            kind = name.rsplit(".", 1)[1].upper()
            c = rows.setdefault(f"dataset {kind}", Counter())
            path = write_case(tmp / "d", f"{cid}_{name}", write())
            c[classify(partial(read_episode, path))] += 1
        (tmp / "cli").mkdir()
        files = _files(tmp / "cli")
        fmt = {k: str(v) for k, v in files.items()} | {"tmp": str(tmp / "cli")}
        c = rows.setdefault("CLI bad input", Counter())
        for _cid, argv, _code, _words in BAD:
            c[cli([a.format(**fmt) for a in argv])] += 1
    print("| group | cases | named error | silent | raw |")
    print("|---|---:|---:|---:|---:|")
    for group, c in rows.items():
        print(f"| {group} | {sum(c.values())} | {c['named']} | {c['silent']} | {c['raw']} |")


if __name__ == "__main__":
    main()
