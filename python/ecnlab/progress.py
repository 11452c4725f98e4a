"""A one-line progress bar for the terminal: simulated time, wall time, events per second."""

from __future__ import annotations

import sys
import threading
from typing import TextIO


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
        filled = int(frac * self.width)
        bar = "#" * filled + "." * (self.width - filled)
        rate = p["events"] / p["wall_s"] if p.get("wall_s") else 0.0
        text = (
            f"{label + ' ' if label else ''}[{bar}] {frac * 100:3.0f}%  "
            f"sim {p['sim_time_s']:.2f}/{p['duration_s']:.2f} s  wall {p['wall_s']:.1f} s  "
            f"{_si(rate)} events/s"
        )
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
