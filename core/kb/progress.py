"""What a long build has done, how fast and how long it has left, as one line for a progress bar.

The CLI's tqdm bar computes its own rate and time left; the Knowledge base page has only a text
line under ``st.progress``, and reads it from here."""
from __future__ import annotations

import time
from typing import Callable


class ProgressLine:
    """Callable as a build's progress report: ``line(done, total, stage)`` returns the text to show.

    The rate counts only what this stage did since its first report, so batches a resumed build
    reads back instead of embedding do not inflate it."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.started: dict[str, tuple[float, int]] = {}  # stage → (time, done) of its first report

    def __call__(self, done: int, total: int, stage: str) -> str:
        start, first = self.started.setdefault(stage, (self.clock(), done))
        text = f"{stage}: {done:,}/{total:,}"
        elapsed = self.clock() - start
        if done > first and elapsed > 0 and done < total:
            rate = (done - first) / elapsed
            text += f" · {rate:,.1f}/s, about {duration((total - done) / rate)} left"
        return text


def duration(seconds: float) -> str:
    """``seconds`` rounded for a reader: "45 s", "3 min 20 s", "2 h 05 min"."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
