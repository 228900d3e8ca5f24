"""Progress reporting for long jobs: a one-line bar on a terminal, plain log lines otherwise."""

from __future__ import annotations

import io
import sys
import time
from collections.abc import Callable
from typing import TextIO


def _clock() -> float:
    return time.perf_counter()


def format_duration(seconds: float) -> str:
    """``h:mm:ss`` (or ``m:ss``) of a duration [s]; ``--:--`` when unknown."""
    if not seconds == seconds or seconds == float("inf") or seconds < 0:
        return "--:--"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class Progress:
    """Frames solved so far, with frames per second and an ETA.

    On a terminal (``stream.isatty()``) it redraws one line (at most ``tty_interval`` apart);
    otherwise it writes a plain line every ``log_interval`` seconds and one at the end.

    Args:
        total_frames: frames the job will solve.
        total_episodes: episodes the job will solve.
        stream: where to write (default ``sys.stderr``); None silences it.
        tty: force terminal or log mode (default: ``stream.isatty()``).
        clock: a monotonic clock [s] (tests pass their own).
    """

    def __init__(
        self,
        total_frames: int,
        total_episodes: int,
        stream: TextIO | None = None,
        tty: bool | None = None,
        log_interval: float = 10.0,
        tty_interval: float = 0.1,
        width: int = 30,
        clock: Callable[[], float] = _clock,
    ):
        self.total_frames = int(total_frames)
        self.total_episodes = int(total_episodes)
        self.stream = sys.stderr if stream is None else stream
        self.tty = bool(tty) if tty is not None else _isatty(self.stream)
        self.log_interval = log_interval
        self.tty_interval = tty_interval
        self.width = width
        self.clock = clock
        self.frames = 0
        self.episodes = 0
        self.start = clock()
        self._last = -float("inf")

    @classmethod
    def silent(cls, total_frames: int = 0, total_episodes: int = 0) -> Progress:
        """A progress object that writes nothing."""
        return cls(total_frames, total_episodes, stream=io.StringIO(), tty=False)

    def rate(self) -> float:
        """Frames per second so far (0 before the first update)."""
        dt = self.clock() - self.start
        return self.frames / dt if dt > 0 else 0.0

    def eta(self) -> float:
        """Seconds left at the current rate (inf when unknown)."""
        r = self.rate()
        return (self.total_frames - self.frames) / r if r > 0 else float("inf")

    def line(self) -> str:
        """The current status text (without a bar)."""
        pct = 100.0 * self.frames / self.total_frames if self.total_frames else 100.0
        return (
            f"{self.episodes}/{self.total_episodes} episodes, {self.frames:,}/"
            f"{self.total_frames:,} frames ({pct:.0f}%), {self.rate():,.0f} frames/s, "
            f"ETA {format_duration(self.eta())}"
        )

    def update(self, frames: int, episodes: int = 1) -> None:
        """Record ``frames`` more frames and ``episodes`` more episodes done."""
        self.frames += int(frames)
        self.episodes += int(episodes)
        now = self.clock()
        interval = self.tty_interval if self.tty else self.log_interval
        if now - self._last >= interval:
            self._last = now
            self._emit()

    def close(self) -> None:
        """Write the final state (and end the terminal line)."""
        self._emit()
        if self.tty:
            self.stream.write("\n")
        self.stream.flush()

    def _emit(self) -> None:
        if self.tty:
            frac = self.frames / self.total_frames if self.total_frames else 1.0
            fill = int(round(self.width * min(1.0, frac)))
            bar = "#" * fill + "." * (self.width - fill)
            self.stream.write(f"\r[{bar}] {self.line()}\033[K")
        else:
            self.stream.write(f"solve: {self.line()}\n")
        self.stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
