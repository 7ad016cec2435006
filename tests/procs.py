"""Watching real processes in tests: which files a process holds open (read from /proc/PID/fd)."""
from __future__ import annotations

import os
import signal
import subprocess
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


def stop_when(proc: subprocess.Popen, cond: Callable[[], bool]) -> Callable[[], bool]:
    """A wait_until condition that stops `proc` (SIGSTOP) at a moment when `cond` holds.

    `cond` is checked again once the process is stopped, because it may have moved on between
    the check and the signal; if it did, the process runs on and the next poll tries again.
    """
    def attempt() -> bool:
        if not cond():
            return False
        proc.send_signal(signal.SIGSTOP)
        if cond():
            return True
        proc.send_signal(signal.SIGCONT)
        return False
    return attempt
