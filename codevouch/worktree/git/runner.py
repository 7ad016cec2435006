"""`run`, `git_command` and `Pending`: how every other module of the package starts git.

Each adds to `_process`'s hardened command the settings that turn off the filter drivers the
repository's configuration names (`filters`), so no git process codevouch starts runs a program
the repository configured, and starts none in a work tree that configuration moved (`confine`).
`Pending` starts git now and collects it later: git works on the other core while the caller
goes on.
"""
from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Protocol

from codevouch.worktree.git._process import (
    Limits,
    _anonymous_file,
    _checked,
    _command,
    _missing_git,
    _read_all,
    _run_raw,
    _spawn,
    _write_all,
    over_time,
    wait_exit,
)
from codevouch.worktree.git.confine import check
from codevouch.worktree.git.filters import filter_overrides


def git_command(repo: Path | str, args: Iterable[str]) -> tuple[str, ...]:
    """The argv of a git process in `repo` that runs no program the repository configured (and
    NotARepository, before any starts, for a work tree git's configuration moved: confine)."""
    check(repo)
    return _command(repo, tuple(args), filter_overrides(repo))


def run(repo: Path | str, *args: str, stdin: bytes | None = None, ok_codes: tuple[int, ...] = (0,),
        env: Mapping[str, str] | None = None) -> bytes:
    check(repo)
    return _run_raw(repo, args, filter_overrides(repo), stdin=stdin, ok_codes=ok_codes, env=env)


class Later(Protocol):
    """A git answer asked now and read later: a Pending process, or an answer known without one
    (Answered; status.py's one status shared by a call's askers)."""

    def done(self) -> bool:
        """Whether result() would not wait."""
        ...

    def result(self) -> bytes:
        """git's output, raising as `run` does."""
        ...


class Pending:
    """A git process started now and collected later (`result()`, which raises as `run` does):
    git works on the other core while the caller goes on with its own work.

    git reads its input from, and writes its output into, anonymous files, not pipes: it never
    waits for this process to drain a pipe, and no thread is needed to drain one. (A draining
    thread cost more than the process it served on two busy cores: starting one waits until
    the scheduler runs it, and it then competes for the interpreter lock.)"""

    def __init__(self, repo: Path | str, *args: str, stdin: bytes | None = None,
                 ok_codes: tuple[int, ...] = (0,), env: Mapping[str, str] | None = None) -> None:
        self._cmd = git_command(repo, args)
        self._ok = ok_codes
        self._error: OSError | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._bound = Limits(0, 0)
        self._deadline: float | None = None
        self._output: tuple[int, bytes, bytes] | None = None
        self._out = _anonymous_file()
        self._err = _anonymous_file()
        feed = None
        try:
            if stdin is not None:
                feed = _anonymous_file()
                _write_all(feed, stdin)
                os.lseek(feed, 0, os.SEEK_SET)
            self._proc, self._bound = _spawn(self._cmd, stdin=subprocess.DEVNULL if feed is None else feed,
                                             stdout=self._out, stderr=self._err, env=env)
            self._deadline = self._bound.deadline(time.monotonic())
        except OSError as exc:        # raised by result(), as `run` would raise it
            self._error = exc
        finally:
            if feed is not None:
                os.close(feed)

    def done(self) -> bool:
        """Whether git has finished (result() would not wait)."""
        return self._proc is None or self._proc.poll() is not None

    def result(self) -> bytes:
        if self._proc is None:
            assert self._error is not None
            if isinstance(self._error, FileNotFoundError):
                raise _missing_git(self._cmd) from self._error
            raise self._error
        if self._output is None:
            try:
                returncode = self._wait()
                self._output = (returncode, _read_all(self._out), _read_all(self._err))
            finally:
                self.close()
        return _checked(self._cmd, *self._output, self._ok, self._bound)

    def _wait(self) -> int:
        """git's exit code, once it ends; GitLimit when it is still running once its time limit has
        passed since it started (it is killed then)."""
        assert self._proc is not None
        try:
            return wait_exit(self._proc, self._deadline)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
            raise over_time(self._cmd, self._bound) from None

    def close(self) -> None:
        for fd in (getattr(self, "_out", -1), getattr(self, "_err", -1)):   # set unless __init__ failed
            if fd >= 0:
                os.close(fd)
        self._out = self._err = -1

    def __del__(self) -> None:
        self.close()


class Answered:
    """An answer known without a process (a Later): git's answer to the same question, kept while
    what decides it is unchanged (status.py, unchanged.py)."""

    def __init__(self, out: bytes) -> None:
        self._known = out

    def done(self) -> bool:
        return True

    def result(self) -> bytes:
        return self._known
