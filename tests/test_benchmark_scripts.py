"""Every script in benchmarks/ at least starts: its imports resolve and ``--help`` exits 0.

The scripts are not run by the suite (speed lives there, not in tests), so a renamed library
name would otherwise surface only when someone next measures.
"""

from __future__ import annotations

import os
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
