"""The A/B benchmark tool's judgement: one row per figure with each side's rounds, the
verdict rule (``ok``, ``faster``, ``slower, noisy``, ``REGRESSED``; see ``tools/bench_ab.py``)
and the markdown table of a benchmark.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bench_ab_table import Bench, figures

BOUND = 0.05


@dataclass
class Row:
    name: str
    lower_is_better: bool
    base: list[float] = field(default_factory=list)
    head: list[float] = field(default_factory=list)
    committed: float | None = None
    renamed_from: str | None = None  # the base's name of the figure (``Bench.renamed``)


def summary(values: Sequence[float], lower_is_better: bool, stat: str = "best") -> float:
    if stat == "median":
        return statistics.median(values)
    return min(values) if lower_is_better else max(values)


def verdict(row: Row, bound: float = BOUND, stat: str = "best") -> str:
    """``ok``, ``faster``, ``slower, noisy``, ``REGRESSED`` (see the module notes), or ``-``
    when a side has no figure."""
    if not row.base or not row.head:
        return "-"
    lo = row.lower_is_better
    b, h = summary(row.base, lo, stat), summary(row.head, lo, stat)
    if b <= 0 or h <= 0:
        return "-"
    w = h / b if lo else b / h  # how many times worse head is (> 1: slower)
    if w < 1 - bound:
        return "faster"
    if w <= 1 + bound:
        return "ok"
    # every head round worse than every base round: the ranges do not overlap
    apart = min(row.head) > max(row.base) if lo else max(row.head) < min(row.base)
    return "REGRESSED" if apart else "slower, noisy"


def _num(x: float | None) -> str:
    if x is None or math.isnan(x):
        return "-"
    return f"{x:.4g}"


def table(rows: Iterable[Row], bound: float = BOUND, stat: str = "best") -> str:
    """One markdown table: figure, base, head, head/base, verdict, committed, head/committed;
    a figure judged against a renamed base figure is marked, the base's name below the table."""
    renames: list[str] = []
    lines = [
        "| figure | base | head | head/base | verdict | committed | head/committed |",
        "|---|---:|---:|---:|---|---:|---:|",
    ]
    for r in rows:
        lo = r.lower_is_better
        b = summary(r.base, lo, stat) if r.base else None
        h = summary(r.head, lo, stat) if r.head else None
        ratio = h / b if b and h is not None else None
        vs = h / r.committed if h is not None and r.committed else None
        name = r.name + ("" if lo else " (higher is better)")
        if r.renamed_from is not None:
            renames.append(r.renamed_from)
            name += f" [r{len(renames)}]"
        v = verdict(r, bound, stat)
        if v in ("REGRESSED", "slower, noisy"):  # the spreads the rule looked at
            v += f" (base {_num(min(r.base))}-{_num(max(r.base))}, "
            v += f"head {_num(min(r.head))}-{_num(max(r.head))})"
        lines.append(
            f"| {name.replace('|', '/')} | {_num(b)} | {_num(h)} | {_num(ratio)} | {v} | "
            f"{_num(r.committed)} | {_num(vs)} |"
        )
    if renames:
        lines.append("")
    for i, old in enumerate(renames, 1):
        lines.append(f"[r{i}] judged against the renamed base figure: {old.replace('|', '/')}")
    return "\n".join(lines)


def collect(
    bench: Bench,
    base_docs: Sequence[object],
    head_docs: Sequence[object],
    committed: object | None,
) -> list[Row]:
    """Rows of one benchmark from each side's results documents (one per round).

    A renamed figure (``Bench.renamed``: base name -> head name) is one row under the head's
    name, holding the base's figures of the old name, when the base has no figure of the
    head's name and the head none of the old name; its committed figure is the head's name's,
    else the old name's."""
    rows: dict[str, Row] = {}
    for side, docs in (("base", base_docs), ("head", head_docs)):
        for doc in docs:
            for name, (value, lo) in figures(doc, bench).items():
                row = rows.setdefault(name, Row(name, lo))
                getattr(row, side).append(value)
    for old, new in bench.renamed:
        now, was = rows.get(new), rows.get(old)
        if now is None or was is None or now.base or was.head:
            continue
        now.base, now.renamed_from = was.base, old
        del rows[old]
    if committed is not None:
        done = figures(committed, bench)
        for row in rows.values():
            got = done.get(row.name)
            if got is None and row.renamed_from is not None:
                got = done.get(row.renamed_from)
            if got is not None:
                row.committed = got[0]
    return list(rows.values())
