"""A one-line progress bar for the terminal: simulated time, wall time, events per second."""

from __future__ import annotations

import shutil
import sys
import threading
from typing import TextIO


def _clock(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def _si(x: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.1f}{unit}"
    return f"{x:.0f}"


class ProgressBar:
    """Callable progress callback that redraws one line of ``stream`` (stderr); use only
    when that stream is a terminal. Thread-safe: several runs may report into one bar,
    each under its own label."""

    def __init__(self, stream: TextIO | None = None, width: int = 28) -> None:
        self.stream = stream or sys.stderr
        self.width = width
        self._lock = threading.Lock()
        self._shown = False

    def for_run(self, label: str = ""):
        def cb(p: dict) -> None:
            self.draw(p, label)

        return cb

    def __call__(self, p: dict) -> None:
        self.draw(p, "")

    def draw(self, p: dict, label: str) -> None:
        frac = 0.0
        if p.get("duration_s"):
            frac = min(1.0, p["sim_time_s"] / p["duration_s"])
        rate = p["events"] / p["wall_s"] if p.get("wall_s") else 0.0
        wall = p.get("wall_s") or 0.0
        eta = f"  eta {_clock(wall * (1 - frac) / frac)}" if 0.0 < frac < 1.0 and wall > 0.5 else ""
        tail = (
            f" {frac * 100:3.0f}%  sim {p['sim_time_s']:.2f}/{p['duration_s']:.2f} s  "
            f"wall {_clock(wall)}{eta}  {_si(rate)} events/s"
        )
        head = f"{label} " if label else ""
        # The line must never wrap (a wrapped line scrolls instead of being redrawn): the bar
        # shrinks first, then the label loses its beginning, then the figures are cut.
        columns = shutil.get_terminal_size((80, 24)).columns - 1
        room = columns - len(tail)
        if len(head) > room:
            head = "…" + head[len(head) - room + 1 :] if room > 8 else ""
        width = max(0, min(self.width, columns - len(head) - len(tail) - 2))
        filled = int(frac * width)
        bar = f"[{'#' * filled}{'.' * (width - filled)}]" if width >= 5 else ""
        text = (head + bar + tail)[:columns]
        with self._lock:
            self.stream.write("\r\x1b[2K" + text)
            self.stream.flush()
            self._shown = True

    def close(self) -> None:
        with self._lock:
            if self._shown:
                self.stream.write("\r\x1b[2K")
                self.stream.flush()
                self._shown = False
