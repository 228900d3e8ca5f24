"""Every script in benchmarks/ at least starts: its imports resolve and ``--help`` exits 0.

The scripts are not run by the suite (speed lives there, not in tests), so a renamed library
name would otherwise surface only when someone next measures.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py"))


def test_there_are_scripts():
    assert len(SCRIPTS) > 10


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_benchmark_script_starts(script):
    """... and ``--help`` only prints: it measures nothing and leaves the committed results be."""
    before = {p.name: p.stat().st_mtime_ns for p in (BENCH / "results").iterdir()}
    env = dict(os.environ, PYTHONWARNINGS="error::DeprecationWarning:__main__")
    r = subprocess.run(
        [sys.executable, str(BENCH / script), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=BENCH.parent,
    )
    assert r.returncode == 0, f"{script}: {r.stderr.strip().splitlines()[-1:]}"
    after = {p.name: p.stat().st_mtime_ns for p in (BENCH / "results").iterdir()}
    assert after == before, f"{script} --help wrote into benchmarks/results"


@pytest.mark.parametrize(
    "script", [s for s in SCRIPTS if '"--quick"' in (BENCH / s).read_text(encoding="utf-8")]
)
def test_a_quick_run_keeps_the_recorded_figures(script):
    """A ``--quick`` (smoke) run writes ``<name>-quick.json``, never the committed full-run file:
    the script either reports through ``write_report`` (which picks the name from the payload's
    ``quick`` flag) or names a ``-quick`` file itself. Read from the source, since running every
    benchmark is a measurement, not a test."""
    src = (BENCH / script).read_text(encoding="utf-8")
    names_quick_file = re.search(r"-quick\.json|['\"]-quick['\"]", src) is not None
    assert "write_report(" in src or names_quick_file, (
        f"{script}: its --quick run would overwrite benchmarks/results"
    )
