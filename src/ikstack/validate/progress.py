"""A plain-text progress bar for long model checks (``progress=`` callbacks)."""

from __future__ import annotations

import sys
from typing import TextIO


def progress_bar(stream: TextIO | None = None, width: int = 30):
    """A ``progress(done, total, message)`` callback drawing ``[#####     ]  50% message``.

    Args:
        stream: where to draw (standard error by default).
        width: bar width in characters.
    """
    out = stream if stream is not None else sys.stderr

    def progress(done: int, total: int, message: str = "") -> None:
        frac = 0.0 if total <= 0 else min(max(done / total, 0.0), 1.0)
        fill = int(round(frac * width))
        out.write(f"\r[{'#' * fill}{' ' * (width - fill)}] {frac * 100:3.0f}% {message:<30}")
        if done >= total:
            out.write("\n")
        out.flush()

    return progress
