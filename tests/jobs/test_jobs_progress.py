"""Progress: a redrawn bar with frames/s and ETA on a terminal, plain lines otherwise."""

from __future__ import annotations

import io

from ikstack.jobs.progress import Progress, format_duration


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_terminal_mode_redraws_one_line_with_rate_and_eta():
    clock, out = Clock(), io.StringIO()
    p = Progress(1000, 4, stream=out, tty=True, clock=clock)
    clock.t = 2.0
    p.update(250)
    clock.t = 4.0
    p.update(250)
    p.close()
    text = out.getvalue()
    assert text.count("\r") == 3 and text.endswith("\n") and text.count("\n") == 1
    last = text.split("\r")[-1]
    assert "[###############...............]" in last
    assert "2/4 episodes" in last and "500/1,000 frames (50%)" in last
    assert "125 frames/s" in last and "ETA 0:04" in last


def test_log_mode_writes_plain_lines_at_most_every_interval():
    clock, out = Clock(), io.StringIO()
    p = Progress(100, 10, stream=out, tty=False, log_interval=10.0, clock=clock)
    for k in range(10):
        clock.t = 3.0 * (k + 1)
        p.update(10)
    p.close()
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    assert len(lines) == 4  # at t = 3 (first update), 15, 27, then the final line
    assert all(line.startswith("solve: ") for line in lines)
    assert lines[-1].startswith("solve: 10/10 episodes, 100/100 frames (100%)")
    assert "ETA 0:00" in lines[-1]


def test_non_terminal_streams_default_to_log_mode():
    assert Progress(1, 1, stream=io.StringIO()).tty is False


def test_durations_format_as_clock_text():
    assert format_duration(5) == "0:05"
    assert format_duration(3725) == "1:02:05"
    assert format_duration(float("inf")) == "--:--"
    assert format_duration(float("nan")) == "--:--"
