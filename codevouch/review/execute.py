"""`--exec CMD`: one reviewer run per part, the part on stdin (no shell; argv from shlex).

Each run records its exit code, duration and output. A run that exits non-zero, cannot
start or outlives its timeout is `failed` or `timed_out`, never "no findings": only a run
that exits 0 counts, with `findings` when it printed something and `no_findings` when not.
A run that times out is killed with its whole process group (it runs in its own session).
"""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codevouch.errors import InputError

_MAX_OUTPUT = 1_000_000      # characters of stdout/stderr kept per part
_OK_STATES = ("findings", "no_findings")


@dataclass(frozen=True)
class ExecResult:
    part: int
    status: str                 # findings | no_findings | failed | timed_out
    exit_code: int | None       # None when it never started or was killed on timeout
    duration_s: float
    output: str                 # stdout: the findings
    stderr: str
    error: str | None = None    # why it failed to start

    @property
    def ok(self) -> bool:
        return self.status in _OK_STATES

    def to_json(self) -> dict[str, Any]:
        return {"part": self.part, "status": self.status, "exit_code": self.exit_code,
                "duration_s": round(self.duration_s, 3), "output": self.output, "stderr": self.stderr,
                "error": self.error}


def split_command(command: str) -> list[str]:
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise InputError(f"--exec {command!r}: {exc}; quote it as a shell would.") from exc
    if not argv:
        raise InputError("--exec needs a command, e.g. --exec 'my-reviewer --strict'.")
    return argv


def run_part(argv: list[str], part: int, parts: int, markdown: str, timeout: float, cwd: Path,
             environ: Mapping[str, str]) -> ExecResult:
    """Run the reviewer on one part, with the caller's environment `environ` (its Call's, passed
    down) and the part's number and count added."""
    env = {**environ, "CODEVOUCH_PART": str(part), "CODEVOUCH_PARTS": str(parts)}
    start = time.monotonic()
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=cwd, env=env, start_new_session=True)
    except OSError as exc:
        return ExecResult(part, "failed", None, time.monotonic() - start, "", "",
                          f"could not start {argv[0]!r}: {exc.strerror or exc}")
    try:
        out, err = proc.communicate(markdown.encode("utf-8"), timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        return ExecResult(part, "timed_out", None, time.monotonic() - start, _text(out), _text(err),
                          f"no answer within {timeout:g} s; killed")
    duration = time.monotonic() - start
    output = _text(out)
    if proc.returncode != 0:
        return ExecResult(part, "failed", proc.returncode, duration, output, _text(err),
                          f"exit code {proc.returncode}")
    return ExecResult(part, "findings" if output.strip() else "no_findings", 0, duration, output, _text(err))


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)   # the reviewer and anything it started
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _text(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", "replace")[:_MAX_OUTPUT]
