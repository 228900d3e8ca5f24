"""Benchmark plumbing: timing with percentiles, machine/version info, tables and JSON.

Benchmark scripts in ``benchmarks/`` use these so every report has the same shape: a printed
table, and a JSON file with the machine, the versions, and every figure.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ikstack._deprecated import warn_deprecated


@dataclass(frozen=True)
class Timing:
    """Per-call times [s] of repeated runs of one operation."""

    median: float
    p95: float
    p99: float
    mean: float
    samples: int

    def as_us(self) -> dict[str, float]:
        """The statistics in microseconds.

        Deprecated: no benchmark uses it; it goes in the next release.
        """
        warn_deprecated("Timing.as_us is deprecated and goes in the next release")
        return {k: v * 1e6 for k, v in asdict(self).items() if k != "samples"}


def time_per_call(
    fn: Callable[[], Any], *, samples: int = 2000, inner: int = 1, warmup: int = 50, per: int = 1
) -> Timing:
    """Time ``fn`` ``samples`` times (each sample runs it ``inner`` times).

    ``per`` divides each time further (e.g. the batch size, for time per item).
    """
    for _ in range(warmup):
        fn()
    out = np.empty(samples)
    clock = time.perf_counter
    for i in range(samples):
        t0 = clock()
        for _ in range(inner):
            fn()
        out[i] = (clock() - t0) / (inner * per)
    return Timing(
        float(np.median(out)),
        float(np.percentile(out, 95)),
        float(np.percentile(out, 99)),
        float(out.mean()),
        samples,
    )


def versions(packages: Sequence[str]) -> dict[str, str | None]:
    """Installed versions of ``packages`` (None where missing)."""
    out: dict[str, str | None] = {}
    for p in packages:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = None
    return out


def machine_info() -> dict[str, Any]:
    """CPU, core count, OS and Python of this machine."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }


def format_table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A plain-text table of ``rows`` restricted to ``columns`` (floats to 4 significant)."""

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.4g}"
        return "-" if v is None else str(v)

    cells = [[fmt(r.get(c)) for c in columns] for r in rows]
    widths = [
        max(len(c), *(len(row[i]) for row in cells)) if cells else len(c)
        for i, c in enumerate(columns)
    ]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(lines)


def write_report(
    name: str,
    payload: dict[str, Any],
    folder: str | Path | None = None,
    packages: Sequence[str] = ("ikstack", "numpy", "numba"),
) -> Path:
    """Write ``payload`` with machine and version info to ``<folder>/<name>.json``.

    A smoke run (``payload["quick"]`` true) goes to ``<name>-quick.json`` instead, so it never
    overwrites a full run's recorded figures.
    """
    folder = Path(folder) if folder is not None else Path("benchmarks") / "results"
    folder.mkdir(parents=True, exist_ok=True)
    if payload.get("quick"):
        name = f"{name}-quick"
    doc = {
        "benchmark": name,
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine_info(),
        "versions": versions(packages),
        **payload,
    }
    path = folder / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=2, default=_default))
    tmp.replace(path)
    return path


def _default(o: Any) -> Any:
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")
