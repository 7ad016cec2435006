"""Build progress as plain lines on stderr, for a build whose stderr is not a terminal (cron, CI).

A first build embeds every chunk (~20-30 chunks/s on a laptop-class CPU: minutes for a few
thousand chunks), and a log that stays silent that long looks hung. Nothing is printed for the
first EVERY seconds, so a quick or incremental build stays quiet; after that, a line every
EVERY seconds or each STEP of the phase, whichever comes first (steps at most 5 lines per EVERY):

    codevouch: build: chunking 1200/2829 files (42%), 95 files/s, about 17 s left
    codevouch: build: 2829 files chunked; embedding 640/2829 chunks (23%), 19.3 chunks/s, about 1 min 53 s left
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

from codevouch import environment
from codevouch.commands.invocation import stderr

EVERY: float = environment.PROGRESS_SECONDS.default   # seconds between lines (CODEVOUCH_PROGRESS_SECONDS; 0: every step)
STEP = 0.05             # or each 5% of a phase
ENV_EVERY = environment.PROGRESS_SECONDS.name
_UNITS = {"chunking": "files", "embedding": "chunks"}


def every_from_env() -> float:
    return environment.current().progress_seconds


class ProgressLines:
    """A build's `progress(done, total, what)` callback that writes a line now and then."""

    def __init__(self, stream: TextIO | None = None, every: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream or stderr()
        self.every = every_from_env() if every is None else every
        self.clock = clock
        self.started = clock()
        self._last_line = self.started
        self._last_share = 0.0
        self._phase: str | None = None
        self._phase_start = self.started
        self._files: int | None = None     # files chunked, once chunking is over
        self._done = 0
        self._last_call = self.started
        self._base: tuple[int, float] | None = None   # the phase's first report: (done, when)

    def __call__(self, done: int, total: int, what: str) -> None:
        now = self.clock()
        if what != self._phase:
            self._files = self._done if self._phase == "chunking" else None
            # A phase's first callback comes after its first batch: time it from the previous call.
            self._phase, self._phase_start, self._last_share = what, self._last_call, 0.0
            self._base = (done, now)
        self._done, self._last_call = done, now
        share = done / total if total else 1.0
        if self.every > 0 and now - self.started < self.every:
            return      # quick builds stay quiet
        since = now - self._last_line
        # Every `every` seconds, or a 5% step (but not more than one line per fifth of `every`).
        due = (self.every > 0 and since >= self.every) or (share - self._last_share >= STEP
                                                            and since >= self.every / 5)
        if not due and done < total:
            return
        self._last_line, self._last_share = now, share
        self.stream.write(self.line(done, total, what, now) + "\n")
        self.stream.flush()

    def line(self, done: int, total: int, what: str, now: float) -> str:
        unit = _UNITS.get(what, "items")
        # A phase done in one report has only its whole time (its start included) for a rate.
        rate = self._rate(done, now) or (done / (now - self._phase_start) if done >= total > 0
                                         and now > self._phase_start else 0.0)
        pct = f"{done / total:.0%}" if total else "100%"
        parts = [f"{what} {done}/{total} {unit} ({pct})"]
        if rate > 0:
            parts.append(f"{rate:.1f} {unit}/s")
            if done < total:
                parts.append(f"about {_duration((total - done) / rate)} left")
        head = f"{self._files} files chunked; " if what == "embedding" and self._files is not None else ""
        return f"codevouch: build: {head}" + ", ".join(parts)


    def _rate(self, done: int, now: float) -> float:
        """Items per second since the phase's first report (0: none yet): the time before it holds
        a one-off start (loading the model took 4-8 s before the first batch), which made the
        first estimate of a long build its worst."""
        base_done, base_time = self._base or (0, self._phase_start)
        # At that first report there is no rate yet: its line says how far, not how fast.
        return (done - base_done) / (now - base_time) if done > base_done and now > base_time else 0.0


def _duration(seconds: float) -> str:
    s = max(1, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"
