"""A process's name as `ps`, top and /proc show it: `codevouch serve --index DIR` for the resident
engine, `codevouch serve: git watchdog` for the watchdog it forks, not the interpreter's
`python3 -c import sys; sys.path.insert(0, ...)` that started them (docs/ENGINE.md).

setproctitle rewrites the command line `ps` shows (`ps aux`, `ps -ef`, /proc/PID/cmdline) and the
kernel's short name (`ps -e`, top, /proc/PID/comm); it is imported here, when this module is, so
that a forked child (the watchdog) runs no import. Without it, the short name alone is set
(through /proc/self/comm, at most 15 bytes). Naming a process never fails the process.
"""
from __future__ import annotations

from collections.abc import Callable

_set: Callable[[str], None] | None
try:
    from setproctitle import setproctitle as _set
except ImportError:       # pragma: no cover - a dependency; the short name still says what runs
    _set = None

COMM_BYTES = 15           # the kernel's limit on /proc/PID/comm, less its terminating NUL


def set_title(title: str) -> None:
    """Name this process `title` in `ps` and top (best effort: never raises)."""
    try:
        if _set is not None:
            _set(title)
            return
        with open("/proc/self/comm", "w", encoding="utf-8") as handle:
            handle.write(title.encode("utf-8")[:COMM_BYTES].decode("utf-8", "ignore"))
    except (OSError, ValueError):
        pass
