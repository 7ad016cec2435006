"""The builds an engine runs for its callers (`index build`, a hook's build: handoff.py), each on a
thread of its own, so that a read never waits for a build and a build never waits for a read.

A build here is the command a `codevouch` process would run, with the caller's argv, directory
and environment as its `Call` (its settings: the index, the store's timeouts, the NumPy encoder's
limit), through the commands' runner: the same writer lock (a second build waits `--wait`
seconds for it, then exits 4, as in-process), the same plan-then-apply (a build killed with the
engine leaves the previous state readable) and the same summary and exit code. What it writes is
sent to the caller at once (`_Live`), not at the end as a read's answer is: a build's progress
lines come as it goes, for minutes. It shares the engine's warm state: the imported stack, the
store's client (one per index in a process: a read sees the build's vectors as its ledger says
they are committed) and the NumPy encoder, with the reads on the main thread, whose caches take
one entry at a time (dicts, as a library user's `Index` called from several threads has them).

Its caller going away (Ctrl-C) stops it at its next git process or embedding batch, as a read's
does (execute.watch); the engine stopping stops it there too, and its caller then builds
in-process: a fault costs time, never the build.
"""
from __future__ import annotations

import io
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from codevouch.engine import execute, protocol

STOP_WAIT = 30.0          # seconds a stopping engine waits for its builds to stop between two batches


class _Live(io.RawIOBase):
    """stdout or stderr of a build: each write sent to the caller as it is made (a write frame,
    then its bytes, under the connection's one lock: the build's thread and a progress bar's
    may both write). A caller gone cancels the build; what it wrote after is dropped."""

    def __init__(self, fd: int, conn: socket.socket, lock: threading.Lock, tty: bool,
                 cancel: threading.Event) -> None:
        self._fd, self._conn, self._lock, self._tty, self._cancel = fd, conn, lock, tty, cancel

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._tty

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        if chunk:
            with self._lock:
                try:
                    protocol.send_json(self._conn, {"op": "write", "fd": self._fd})
                    protocol.send_bytes(self._conn, chunk)
                except OSError:
                    self._cancel.set()
        return len(chunk)


class Builds:
    """The builds running in an engine, one thread each. `log`: the engine's log."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self._log = log
        self._lock = threading.Lock()
        self._running: dict[int, tuple[threading.Thread, threading.Event]] = {}
        self.stopping = threading.Event()
        self.started = 0                    # builds started since the engine started
        self.last = time.monotonic()        # when the last build ended (the engine's idle clock)

    def running(self) -> int:
        with self._lock:
            return len(self._running)

    def start(self, app: Any, conn: socket.socket, request: execute.Request) -> None:
        """Run `request` (a build) through `app`, the engine's click command tree, on a thread of
        its own; the thread answers the caller on `conn` and closes it. Once `stop` began (the
        engine stopping), the caller is told to build in-process instead: `stop` waits only for
        the builds it saw, and a build started after it would die with the process mid-write."""
        cancel = threading.Event()
        thread = None
        with self._lock:
            if not self.stopping.is_set():
                self.started += 1
                n = self.started
                thread = threading.Thread(target=self._run, args=(n, app, conn, request, cancel), name=f"build-{n}",
                                          daemon=True)
                self._running[n] = (thread, cancel)
        if thread is not None:
            thread.start()
            return
        try:                 # outside the lock: a send may block
            protocol.send_json(conn, {"op": "inprocess", "reason": "stopping"})
        except OSError:
            pass
        conn.close()

    def _run(self, n: int, app: Any, conn: socket.socket, request: execute.Request, cancel: threading.Event) -> None:
        self._log(f"build {n} from pid {request.pid}: {' '.join(request.argv[:2])}")
        started = time.monotonic()
        try:
            protocol.send_json(conn, {"op": "started"})
            code = self._command(app, conn, request, cancel)
            if cancel.is_set():
                if self.stopping.is_set():
                    self._log(f"build {n}: stopped with the engine, between two batches; its caller builds in-process")
                    protocol.send_json(conn, {"op": "inprocess", "reason": "stopping"})
                else:
                    self._log(f"build {n}: its caller went away (interrupted); the build stopped at its next git "
                              "process or embedding batch, leaving the index as the last finished build left it")
                return
            # Logged before its caller hears it: a caller that reads the log after its call (the
            # tests do) found the line missing now and then when it was written after the send.
            self._log(f"build {n}: exit {code} in {time.monotonic() - started:.1f} s")
            protocol.send_json(conn, {"op": "exit", "code": code})
        except OSError as exc:
            self._log(f"build {n}: the caller went away ({exc})")
        except Exception as exc:    # noqa: BLE001  (the caller builds in-process and reports it)
            self._log(f"build {n}: {type(exc).__name__}: {exc}; the caller builds in-process")
            try:
                protocol.send_json(conn, {"op": "inprocess", "reason": type(exc).__name__})
            except OSError:
                pass
        finally:
            conn.close()
            with self._lock:
                self._running.pop(n, None)
                self.last = time.monotonic()

    def _command(self, app: Any, conn: socket.socket, request: execute.Request, cancel: threading.Event) -> int:
        """The build command, as the caller's `Call`, its writes sent as they come; its exit code."""
        from codevouch.commands import runner

        done = threading.Event()
        threading.Thread(target=execute.watch, args=(conn, cancel, done), name="watch-build", daemon=True).start()
        lock = threading.Lock()
        streams = runner.Streams(
            execute._text(execute._Stdin(conn, request.tty[0]), request.encoding[0], write=False),
            execute._text(_Live(1, conn, lock, request.tty[1], cancel), request.encoding[1], write=True),
            execute._text(_Live(2, conn, lock, request.tty[2], cancel), request.encoding[2], write=True))
        try:
            return runner.run(app, request.argv, request.call(cancel), streams)
        finally:
            done.set()
            for stream in (streams.stdout, streams.stderr):
                try:
                    stream.flush()
                except (OSError, ValueError):
                    pass

    def stop(self, timeout: float = STOP_WAIT) -> None:
        """Stop every build at its next git process or embedding batch, and wait for them (at
        most `timeout` seconds in all): their callers then build in-process."""
        with self._lock:    # under the lock: a build starts before this (and is waited for) or is refused
            self.stopping.set()
            running = list(self._running.values())
        for _thread, cancel in running:
            cancel.set()
        deadline = time.monotonic() + timeout
        for thread, _cancel in running:
            thread.join(max(deadline - time.monotonic(), 0.0))
