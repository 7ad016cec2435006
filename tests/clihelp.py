"""The CLI as a user runs it, in this process: `cv` runs one `codevouch ARGS` through the product's
own runner (codevouch/commands/runner.py), as the `codevouch` process and the resident engine do,
with a `Call` made of this process's environment (plus `index` and `env`) and a working directory,
and streams over in-memory buffers. It answers what `subprocess.run(..., capture_output=True)` of
`python -m codevouch ARGS` would: the exit code, stdout and stderr (text as `text=True` decodes
it, or bytes from `cv_bytes`).

Nothing of this process is changed for a call (no `os.environ` write, no `chdir`, no `sys.std*`),
and the process-wide caches are kept from call to call, as in the engine, which relies on them
keying themselves correctly. A test about the process itself (its exit, signals, start-up, import
time, `sys.path`, the crash log) starts a real one with `cv_process` and is marked
`@pytest.mark.process`.
"""
from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

import typer.main

from codevouch.call import Call
from codevouch.cli import build_app
from codevouch.commands import runner

FAKE = ["--embedder", "fake-bow-64"]
ENCODING = "utf-8"      # a child's, under the C.UTF-8 or any UTF-8 locale the suite runs in


def _environ(index: Path | None, env: Mapping[str, str | None] | None) -> dict[str, str]:
    """This process's environment, with `index` as CODEVOUCH_INDEX and `env` over it (a None
    value leaves that variable out)."""
    full = dict(os.environ)
    if index is not None:
        full["CODEVOUCH_INDEX"] = str(index)
    for name, value in (env or {}).items():
        if value is None:
            full.pop(name, None)
        else:
            full[name] = value
    return full


def cv_bytes(*args: str, cwd: Path | None = None, index: Path | None = None, stdin: str | bytes | None = None,
             env: Mapping[str, str | None] | None = None, timeout: float | None = None
             ) -> subprocess.CompletedProcess[bytes]:
    """`codevouch ARGS` in this process; its exit code and what it wrote, as bytes. With `timeout`
    (for a command that a regression could leave blocked, on a FIFO say), the command runs on a
    thread of its own and a call still running after `timeout` seconds raises
    `subprocess.TimeoutExpired`, as a process's would: the test fails instead of the suite hanging
    (the call is cancelled, and the thread is left to end on its own)."""
    data = stdin.encode(ENCODING) if isinstance(stdin, str) else (stdin or b"")
    out, err = io.BytesIO(), io.BytesIO()
    # As the process's own streams after cli.main: stdin decodes with surrogateescape (a UTF-8
    # locale's), stdout and stderr encode with backslashreplace; none is a terminal.
    streams = runner.Streams(
        io.TextIOWrapper(io.BufferedReader(io.BytesIO(data)), encoding=ENCODING, errors="surrogateescape"),
        io.TextIOWrapper(out, encoding=ENCODING, errors="backslashreplace", write_through=True),
        io.TextIOWrapper(err, encoding=ENCODING, errors="backslashreplace", write_through=True))
    argv = list(args)
    command = typer.main.get_command(build_app(argv))
    call = Call.of(_environ(index, env), cwd if cwd is not None else os.getcwd())
    done: list[int] = []

    def run() -> None:
        try:
            done.append(runner.run(command, argv, call, streams))
        finally:
            for stream in (streams.stdout, streams.stderr):
                stream.flush()

    if timeout is None:
        run()
    else:
        failed: list[BaseException] = []

        def guarded() -> None:
            try:
                run()
            except BaseException as exc:      # raised again on the test's thread, below
                failed.append(exc)

        worker = threading.Thread(target=guarded, name=f"cv {' '.join(argv[:2])}", daemon=True)
        worker.start()
        worker.join(timeout)
        if worker.is_alive():
            call.cancel.set()
            raise subprocess.TimeoutExpired(["codevouch", *argv], timeout, out.getvalue(), err.getvalue())
        if failed:
            raise failed[0]
    return subprocess.CompletedProcess(["codevouch", *argv], done[0], out.getvalue(), err.getvalue())


def _text(data: bytes) -> str:
    # What subprocess's text=True makes of a child's output: decoded, \r\n and \r read as \n.
    return data.decode(ENCODING).replace("\r\n", "\n").replace("\r", "\n")


def cv(*args: str, cwd: Path | None = None, index: Path | None = None, stdin: str | bytes | None = None,
       env: Mapping[str, str | None] | None = None, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """`codevouch ARGS` in this process; its exit code and what it wrote, as text."""
    done = cv_bytes(*args, cwd=cwd, index=index, stdin=stdin, env=env, timeout=timeout)
    return subprocess.CompletedProcess(done.args, done.returncode, _text(done.stdout), _text(done.stderr))


def cv_process(*args: str, cwd: Path | None = None, index: Path | None = None, stdin: str | None = None,
               env: Mapping[str, str | None] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """A real `python -m codevouch ARGS` process, for a test about the process itself."""
    return subprocess.run([sys.executable, "-m", "codevouch", *args], cwd=cwd, env=_environ(index, env),
                          input=stdin, capture_output=True, text=True, timeout=timeout)
