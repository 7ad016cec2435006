"""Watching real processes in tests: which files a process holds open (read from /proc/PID/fd)."""
from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path


def holds_open(pid: int, path: Path) -> bool:
    """True while process `pid` has `path` open."""
    target = str(path.resolve())
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except FileNotFoundError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                return True
        except OSError:
            continue
    return False


def wait_until(cond: Callable[[], bool], timeout: float = 60, step: float = 0.01) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(step)
    return False


def wait_for_open(pid: int, path: Path, timeout: float = 60) -> bool:
    """Wait until process `pid` holds `path` open; False at once when the process is gone."""
    def gone() -> bool:
        return not os.path.isdir(f"/proc/{pid}")
    return wait_until(lambda: holds_open(pid, path) or gone(), timeout) and not gone()
