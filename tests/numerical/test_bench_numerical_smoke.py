"""The numerical-IK benchmark runs end to end in its smallest form and writes its JSON."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_numerical.py"
#: the protocol's bar: TRAC-IK's published success on iiwa14 (10,000 targets, tolerance 1e-5)
TRAC_IK_IIWA14 = 0.9984


def test_benchmark_quick_run_writes_a_table_and_json(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("bench_numerical", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "bench.json"
    result = mod.main(
        ["--quick", "--n", "6", "--ikpy-n", "1", "--arms", "iiwa14", "--out", str(out)]
    )
    data = json.loads(out.read_text())
    assert data["arms"]["iiwa14"]["n"] == 6
    ik = data["arms"]["iiwa14"]["ikstack"]
    # every target of the run, checked by FK: at least the protocol's bar (with 6 targets that
    # is all of them), single calls and the batch alike
    for kind in ("single", "batched"):
        assert ik[kind]["success_checked"] >= TRAC_IK_IIWA14, (kind, ik[kind])
    assert ik["batched"]["per_target_us"] > 0
    assert "numpy" in data["versions"] and "cpu" in data["machine"]
    assert "ikstack LM single" in capsys.readouterr().out
    assert result["protocol"]["tolerance"] == 1e-5
