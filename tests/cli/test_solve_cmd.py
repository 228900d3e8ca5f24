"""The README's first command: ``ikstack solve --robot ur5 sample:ur5 -o out/``."""

from __future__ import annotations

import json

import numpy as np

from ikstack.cli.main import main


def test_readme_main_job_converts_the_bundled_ur5_sample(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["solve", "--robot", "ur5", "sample:ur5", "-o", str(out), "--workers", "1"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"] == 3 and summary["frames"] == 600
    assert summary["success_rate"] == 1.0
    files = sorted(p for p in out.iterdir() if p.name != "summary.json")
    assert len(files) == 3
    assert "600 frames" in capsys.readouterr().out
    # a rerun skips what is done (resumable)
    assert main(["solve", "--robot", "ur5", "sample:ur5", "-o", str(out), "--workers", "1"]) == 0
    assert "3 already done" in capsys.readouterr().out
    assert np.isfinite(summary["frames_per_second"])
