"""One forwarded call, run in the engine: the CLI's own typer app with the caller's argv, working
directory and environment, its stdout and stderr captured in write order, its stdin read from
the caller on demand. The command is the same code a `codevouch` process runs (so it resolves
the repository, refuses paths outside it, and reads the repository's settings exactly as
in-process), and the answer is the same bytes and exit code.

The command gets the caller's environment and working directory as a `Call` and writes to the
call's own streams: the process's environment, working directory and sys.std* are never changed.
Read calls still run one at a time, on the engine's main thread (server.py): the process-wide
caches are written by one call at a time. A build runs on a thread of its own beside them
(building.py), its writes sent as they come (`Live`), so that a read never waits for a build.
"""
from __future__ import annotations

import io
import os
import select
import socket
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codevouch.engine import protocol
from codevouch.engine.client import command_of
from codevouch.engine.handoff import build_of

if TYPE_CHECKING:
    from codevouch.call import Call


@dataclass(frozen=True)
class Request:
    """A `run` request, checked once (`of`): what the command sees of its caller."""
    argv: tuple[str, ...]
    cwd: str
    env: dict[str, str] = field(hash=False)
    tty: tuple[bool, bool, bool]
    encoding: tuple[str, str, str]
    pid: int

    @classmethod
    def of(cls, frame: dict[str, Any]) -> Request:
        argv, cwd, env = frame.get("argv"), frame.get("cwd"), frame.get("env")
        tty, encoding = frame.get("tty"), frame.get("encoding")
        argv = _checked_argv(argv)
        if not (isinstance(cwd, str) and os.path.isabs(cwd)):
            raise protocol.PeerError("cwd is not an absolute path")
        if not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())):
            raise protocol.PeerError("env is not a mapping of strings")
        if not (isinstance(tty, list) and len(tty) == 3 and isinstance(encoding, list) and len(encoding) == 3
                and all(isinstance(e, str) for e in encoding)):
            raise protocol.PeerError("tty or encoding is not three values")
        for name in encoding:
            import codecs

            try:
                codecs.lookup(name)
            except LookupError as exc:
                raise protocol.PeerError(f"unknown encoding {name!r}") from exc
        pid = frame.get("pid")
        return cls(tuple(argv), cwd, dict(env), (bool(tty[0]), bool(tty[1]), bool(tty[2])),
                   (encoding[0], encoding[1], encoding[2]), pid if isinstance(pid, int) else 0)


    def call(self, cancel: threading.Event | None = None) -> Call:
        """The caller as a `Call`: its environment (a copy) and working directory; `cancel` set
        when it goes away."""
        from codevouch.call import Call

        return Call.of(self.env, self.cwd, cancel)


def _checked_argv(argv: object) -> list[str]:
    """`argv` when it is a command line the engine runs; PeerError otherwise."""
    if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
        raise protocol.PeerError("argv is not a list of strings")
    if command_of(argv) is None and build_of(argv) is None:
        # The engine answers read commands and one repository's build (handoff.py), whoever
        # asks: `hooks install`, the MCP server or `review --exec` (which starts a program)
        # run in the caller's own process.
        raise protocol.PeerError("not a command the engine answers")
    return argv


class _Sink(io.RawIOBase):
    """stdout or stderr of the call: every write recorded with its stream, in order."""

    def __init__(self, fd: int, record: list[tuple[int, bytes]], tty: bool) -> None:
        self._fd, self._record, self._tty = fd, record, tty

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._tty       # the caller's stream: colour and progress decide as in-process

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        if chunk:
            if self._record and self._record[-1][0] == self._fd:
                self._record[-1] = (self._fd, self._record[-1][1] + chunk)
            else:
                self._record.append((self._fd, chunk))
        return len(chunk)


class _Stdin(io.RawIOBase):
    """stdin of the call: read from the caller when (and only as far as) the command reads it."""

    def __init__(self, conn: socket.socket, tty: bool) -> None:
        self._conn, self._tty, self._eof = conn, tty, False

    def readable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self._tty

    def readinto(self, buffer: Any) -> int:
        if self._eof:
            return 0
        protocol.send_json(self._conn, {"op": "stdin", "n": len(buffer)})
        kind, data = protocol.recv(self._conn)
        if kind != "B" or len(data) > len(buffer):
            raise protocol.PeerError("stdin answered with something else")
        if not data:
            self._eof = True
        buffer[:len(data)] = data
        return len(data)


def _text(raw: io.RawIOBase, encoding: str, write: bool) -> io.TextIOWrapper:
    if write:
        return io.TextIOWrapper(raw, encoding=encoding, errors="backslashreplace", write_through=True)  # type: ignore[arg-type]
    return io.TextIOWrapper(io.BufferedReader(raw), encoding=encoding)


def run(command: Any, request: Request, conn: socket.socket, call: Call) -> tuple[list[tuple[int, bytes]], int]:
    """Run `request` through `command` (the CLI's click command tree, built once, as the engine
    holds it) as `call` (the caller's: `Call.of(request.env, request.cwd, cancel)`) with streams
    that record what it writes; (the writes in order, the exit code). The same runner as
    in-process (commands/runner.py): nothing of this process (its environment, working
    directory, argv, sys.std*) is changed for the call."""
    from codevouch.commands import runner

    record: list[tuple[int, bytes]] = []
    streams = runner.Streams(_text(_Stdin(conn, request.tty[0]), request.encoding[0], write=False),
                             _text(_Sink(1, record, request.tty[1]), request.encoding[1], write=True),
                             _text(_Sink(2, record, request.tty[2]), request.encoding[2], write=True))
    try:
        code = runner.run(command, request.argv, call, streams)
    finally:
        for stream in (streams.stdout, streams.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    return record, code


def watch(conn: socket.socket, cancel: threading.Event, done: threading.Event, every: float = 0.1) -> None:
    """Until `done`: set `cancel` when the caller closes its end of a running call (it was
    interrupted, or gave up), so the call stops at its next git process or embedding batch
    (call.check) rather than run on for nobody. A caller sends nothing while its call runs but
    stdin the call asked for, so what is readable and empty is the end of the stream."""
    while not done.wait(every):
        try:
            # poll, not select: select() refuses a descriptor numbered 1024 or more.
            ready = readable(conn)
            # Never blocking: the call's own thread may take the stdin bytes first.
            left = bool(ready) and conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            continue
        except (OSError, ValueError):
            left = True
        if left:
            cancel.set()
            return


def answer(conn: socket.socket, record: list[tuple[int, bytes]], code: int) -> None:
    """Send the call's output and exit code."""
    for fd, data in record:
        protocol.send_json(conn, {"op": "write", "fd": fd})
        protocol.send_bytes(conn, data)
    protocol.send_json(conn, {"op": "exit", "code": code})


def readable(conn: socket.socket) -> bool:
    """Whether `conn` has something to read now (or its end was closed), without waiting."""
    poller = select.poll()
    poller.register(conn, select.POLLIN)
    return bool(poller.poll(0))
