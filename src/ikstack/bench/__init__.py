"""Benchmark plumbing shared by the scripts in ``benchmarks/``."""

from ikstack.bench.report import (
    Timing,
    format_table,
    machine_info,
    time_per_call,
    versions,
    write_report,
)

__all__ = ["Timing", "format_table", "machine_info", "time_per_call", "versions", "write_report"]
