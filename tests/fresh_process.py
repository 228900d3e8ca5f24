"""Python code run in a new interpreter (a first run, process-wide state): the tests' helper."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: child code that defines ``make(src, module)``, a kernel compiled as if it were a function of
#: ``module`` (an ikstack area or a user's), two sources (``ok`` compiles, ``bad`` fails to
#: type), and ``three_compiles(show)``: an ikstack kernel, an ikstack kernel that fails to type
#: and a user's kernel, calling ``show(prefix)`` after each (the prefix names the error)
KERNEL_MAKER = (
    "from numba import njit\n"
    "def make(src, module):\n"
    "    ns = {'__name__': module}\n"
    "    exec(src, ns)\n"
    "    return njit(ns['f'])\n"
    "ok = 'def f(x):\\n    return 2.0 * x\\n'\n"
    "bad = 'def f(x):\\n    return x.nope\\n'\n"
    "def three_compiles(show):\n"
    "    make(ok, 'ikstack.servo.fake')(1.0)\n"
    "    show('')\n"
    "    try:\n"
    "        make(bad, 'ikstack.servo.fake2')(1.0)\n"
    "    except Exception as e:\n"
    "        show(type(e).__name__ + ' ')\n"
    "    make(ok, 'user_code')(1.0)\n"
    "    show('')\n"
)


def run_python(code: str, **env: str) -> subprocess.CompletedProcess:
    """``python -c code`` from the repository root, with ``env`` added to this environment."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=ROOT,
        timeout=300,
    )
