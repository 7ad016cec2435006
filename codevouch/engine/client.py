"""The CLI's side of the engine: forward one read command, or say that it runs in-process.

`codevouch.cli.main` calls `forward(argv)` before it imports typer or any command. It answers
with the exit code when the engine answered (its output already written, byte for byte and in
the order the engine's command wrote it), or None: run the command here, as always. None is
also the answer when no engine runs (the call runs in-process and `start_after_answer` starts
one once its answer is written: a first call costs what an in-process call costs) and every
fault's (a stale socket, an engine of another version, one killed mid-call or one that hangs
past CODEVOUCH_SERVER_TIMEOUT), so a fault costs time, never an answer: stdin the engine
already read is handed back to the in-process run.

Standard library only, plus codevouch.environment (the settings) and this package's paths and
protocol: no typer, chromadb, numpy, torch or tantivy (tests/engine/test_client.py holds it).
"""
from __future__ import annotations

import fcntl
import io
import os
import signal
import socket
import stat
import sys
import time
from pathlib import Path
from typing import Any

from codevouch import environment
from codevouch.engine import handoff, paths, protocol
from codevouch.errors import ConfigError

READ_COMMANDS = frozenset({"search", "context", "validate", "check-refs", "review", "drift", "show", "references",
                           "outline"})
INDEX_READS = frozenset({"status", "health"})
# Read commands an engine already running serves, but that start none: a look at the index now
# and then (one `index status` left an engine idling for its whole timeout).
STARTS_NONE = frozenset({"index status", "index health"})
STDIN_READERS = frozenset({"validate", "check-refs"})
_BUILD_CHECK = 1.0          # seconds between two looks at a building engine's state (SIGSTOP)
CONNECT_TIMEOUT = 5.0        # seconds for connect and the engine's first frame of a status or stop
LOG_BYTES = 1 << 20          # an engine log over this is emptied when the next engine starts
_CONFIG_BYTES = 1 << 20      # a repository config over this is not read for the off switch


def command_of(argv: list[str]) -> str | None:
    """The read command `argv` runs ("search", "index status", ...); None for anything else,
    `--help` (its width follows the terminal) and `review --exec` (the reviewer it starts gets
    the caller's whole environment and terminal)."""
    if not argv:
        return None
    words = argv[:argv.index("--")] if "--" in argv else argv
    if "--help" in words:
        return None
    if argv[0] in READ_COMMANDS:
        if argv[0] == "review" and any(w == "--exec" or w.startswith("--exec=") for w in words):
            return None
        return argv[0]
    if argv[0] == "index" and len(argv) > 1 and argv[1] in INDEX_READS:
        return f"index {argv[1]}"
    return None


def _option(argv: list[str], name: str) -> str | None:
    value = None
    for n, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == name and n + 1 < len(argv):
            value = argv[n + 1]
        elif arg.startswith(name + "="):
            value = arg[len(name) + 1:]
    return value


def repository_says_off(argv: list[str], cwd: str) -> bool:
    """`[server] auto = false` in the repository's `.codevouch.toml` (else in pyproject.toml's
    `[tool.codevouch.server]`), at the nearest directory above --repo (or the current one) that
    holds `.git`. A repository can only turn the engine off: any other value is ignored, and
    nothing else of its config is read here."""
    start = Path(os.path.realpath(os.path.join(cwd, _option(argv, "--repo") or ".")))
    for root in (start, *start.parents):
        if os.path.lexists(root / ".git"):
            break
    else:
        return False
    for name, table in ((".codevouch.toml", ()), ("pyproject.toml", ("tool", "codevouch"))):
        found = _toml(root, name)
        if found is None:
            continue
        for part in table:
            found = found.get(part) if isinstance(found, dict) else None
        server = found.get("server") if isinstance(found, dict) else None
        return isinstance(server, dict) and server.get("auto") is False
    return False


def _toml(root: Path, name: str) -> dict | None:
    """The file's table; None when absent, not a regular file inside the repository, too large
    or not TOML (the command itself then reads and reports it)."""
    path = root / name
    try:
        if not os.path.realpath(path).startswith(str(root) + os.sep):
            return None
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _CONFIG_BYTES:
            return None
        with open(path, "rb") as handle:
            data = handle.read(_CONFIG_BYTES + 1)
    except OSError:
        return None
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return {}      # the command, in-process, reads it again and says what is wrong


def wanted(argv: list[str]) -> tuple[str, str] | None:
    """(command, cwd) when this call may go to the engine; None: in-process. ConfigError for a
    bad CODEVOUCH_SERVER."""
    command = command_of(argv) or handoff.build_of(argv)
    if command is None:
        return None
    mode = environment.current().server
    if command in handoff.BUILDS and environment.current().server_builds == "off":
        return None
    ci = os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")
    if mode == "off" or (mode == "auto" and ci):
        return None
    try:
        cwd = os.getcwd()
    except OSError:
        return None          # a deleted directory: the in-process run says what it says
    if sys.stdin is None or sys.stdout is None or sys.stderr is None:
        return None
    if command in STDIN_READERS and _isatty(0):
        return None          # the caller types the input: an engine must not wait on a person
    if repository_says_off(argv, cwd):
        return None
    return command, cwd


def forward(argv: list[str]) -> int | None:
    """The engine's exit code for `argv` (its output written), or None: run it in-process."""
    try:
        call = wanted(argv)
    except ConfigError as exc:
        sys.stderr.write(f"codevouch: {exc}\n")
        return 1
    if call is None:
        return None
    command, cwd = call
    index_dir = paths.index_dir_of(argv, os.environ, environment.current().index)
    place = paths.find(index_dir, os.environ)
    if place is None:
        return None
    try:
        if command in handoff.BUILDS:      # to an engine that runs, never one started for it
            return Call(place, index_dir, argv, cwd, starts=False, live=True).run()
        return Call(place, index_dir, argv, cwd, starts=command not in STARTS_NONE).run()
    except KeyboardInterrupt:
        sys.stderr.write("codevouch: interrupted\n")
        return 130


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def connect(place: paths.Place) -> tuple[socket.socket, int] | None:
    """A connection to the engine at `place` and its pid; None when nothing listens there (no
    socket, a stale one) or the listener is not this user's."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(CONNECT_TIMEOUT)
    try:
        sock.connect(str(place.socket))
        return sock, protocol.check_peer(sock)
    except (OSError, protocol.PeerError):
        sock.close()
        return None


def listening(place: paths.Place) -> bool:
    """Whether an engine of this user listens at `place`."""
    found = connect(place)
    if found is not None:
        found[0].close()
    return found is not None


def start(place: paths.Place, index_dir: Path, env: dict[str, str] | None = None,
          warm: str | None = None, warm_all: bool = False) -> int | None:
    """Start an engine for `index_dir`, detached (its own session, stdin and stdout closed,
    stderr to its log in the private directory); its pid, None when it could not start. `warm`:
    the repository of the call that found none running, which the engine searches once as it
    starts (server.Engine.warm_up); `warm_all`: that call searched every repository of the index
    (`--all-repos`), and the engine does too."""
    import subprocess

    made = paths.find(index_dir, os.environ, create=True)
    if made != place:
        return None
    try:
        log = os.open(place.log, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        if os.fstat(log).st_size > LOG_BYTES:
            os.ftruncate(log, 0)         # the log of the engines before: only the last one's matters
    except OSError:
        return None
    try:
        # The engine imports this very package (the one the client was imported from: a checkout's
        # own `codevouch/` in the current directory, say), never another on its own sys.path. `-c`
        # puts '' first, the working directory at each import: here the private directory, and
        # main() drops it (importpath.secure) before it serves from inside callers' repositories.
        boot = f"import sys; sys.path.insert(0, {str(paths.PACKAGE.parent)!r}); from codevouch.cli import main; main()"
        proc = subprocess.Popen(
            [sys.executable, "-c", boot, "serve", "--index", str(index_dir), *(["--warm", warm] if warm else []),
             *(["--warm-all"] if warm_all else [])],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, cwd=place.directory,
            start_new_session=True, close_fds=True, env=env)
    except OSError:
        return None
    finally:
        os.close(log)
    return proc.pid


def _ask(place: paths.Place, op: str) -> tuple[bool, dict | None]:
    """Send the engine at `place` one control frame (`stop`, `status`): (whether one was there to
    ask, its JSON answer, None when it gave none)."""
    found = connect(place)
    if found is None:
        return False, None
    sock, _pid = found
    try:
        protocol.send_json(sock, {"op": op})
        kind, answer = protocol.recv(sock)
    except (OSError, protocol.PeerError):
        return True, None
    finally:
        sock.close()
    return True, answer if kind == "J" else None


def stop(place: paths.Place) -> bool:
    """Ask the engine at `place` to stop; whether one was there to ask."""
    return _ask(place, "stop")[0]


def status(place: paths.Place) -> dict | None:
    """The running engine's status, None when none answers."""
    return _ask(place, "status")[1]


def _booting(place: paths.Place) -> bool:
    """Whether an engine holds the lock of `place` without listening yet (one starting up)."""
    try:
        fd = os.open(place.lock, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)         # closing drops the lock when this took it
    return False


# (place, index directory, environment, repository, every repository) of an engine to start once
# this call's in-process answer is written: the environment as the call found it (the command may
# set a variable or two), and the repository the call named, or all of them (`--all-repos`), for
# the engine to warm up on.
_after: list[tuple[paths.Place, Path, dict[str, str], str, bool]] = []


def start_after_answer() -> None:
    """Start the engine that a forwarded call found not running (forward returned None), now that
    the call was answered in-process and its output flushed: its start-up (~0.7 s of CPU at 45k
    chunks) no longer stands between this call and its answer, nor competes with it for a core.
    The next call finds it listening, or starting up (then it runs in-process, and starts none)."""
    while _after:
        place, index_dir, env, repo, every = _after.pop()
        if not listening(place) and not _booting(place):
            start(place, index_dir, env, repo, every)


class _Replay(io.RawIOBase):
    """stdin for the in-process run after a fault: what the engine read first, then the rest."""

    def __init__(self, first: bytes) -> None:
        self._first = first

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:   # type: ignore[override]
        if self._first:
            n = min(len(buffer), len(self._first))
            buffer[:n] = self._first[:n]
            self._first = self._first[n:]
            return n
        data = os.read(0, len(buffer))
        buffer[:len(data)] = data
        return len(data)


class Call:
    """One forwarded call."""

    def __init__(self, place: paths.Place, index_dir: Path, argv: list[str], cwd: str, starts: bool = True,
                 live: bool = False) -> None:
        self.place, self.index_dir, self.argv, self.cwd = place, index_dir, argv, cwd
        self.starts = starts                 # whether an engine starts after this call when none runs
        # A build (handoff.py): its output written as it comes (progress, for minutes), and no
        # timeout once it started (a build takes what it takes, as in-process); a stopped engine
        # is still seen, every second.
        self.live = live
        self.timeout = environment.current().server_timeout
        self.read: list[bytes] = []          # stdin handed to the engine, kept for a fallback

    def run(self) -> int | None:
        found = connect(self.place)
        if found is None:
            # None running: this call runs in-process, and the engine starts after its answer
            # (start_after_answer), for the next call; not after a status call (STARTS_NONE).
            if self.starts:
                repo = os.path.realpath(os.path.join(self.cwd, _option(self.argv, "--repo") or "."))
                _after.append((self.place, self.index_dir, dict(os.environ), repo, "--all-repos" in self.argv))
            return None
        sock, pid = found
        if _stopped(pid):
            # SIGSTOPped: the kernel still accepts connections for it, but it will answer nobody
            # (a call it runs is frozen too). Replace it now rather than wait out the timeout.
            sock.close()
            _note(self.place, f"engine {pid} is stopped (SIGSTOP); killed by the call of pid {os.getpid()}, "
                              "which runs in-process, and replaced by the next call")
            _kill(pid)
            return None
        try:
            code = self._exchange(sock, pid)
        finally:
            sock.close()
        if code is None and self.read:
            self._hand_back_stdin()
        return code

    def _request(self) -> dict:
        env = protocol.request_env(os.environ)
        if "COLUMNS" not in env:
            for fd in (1, 2, 0):
                if _isatty(fd):
                    size = os.get_terminal_size(fd)
                    env["COLUMNS"], env["LINES"] = str(size.columns), str(size.lines)
                    break
        streams = (sys.stdin, sys.stdout, sys.stderr)
        return {"op": "run", "protocol": protocol.PROTOCOL, "identity": paths.identity(), "argv": self.argv,
                "cwd": self.cwd, "env": env, "tty": [_isatty(fd) for fd in (0, 1, 2)],
                "encoding": [getattr(s, "encoding", None) or "utf-8" for s in streams],
                "pid": os.getpid()}

    def _exchange(self, sock: socket.socket, pid: int) -> int | None:
        """The call through the engine. The timeout is counted twice: while the call queues
        behind other callers' (past it, this call runs in-process and the engine, busy but not
        hung, skips it), then from the engine's `started` frame (past it, the engine hangs on
        this very call: it is killed, which ends no other caller's call, since it runs one at a
        time; the next call starts a fresh one)."""
        deadline = time.monotonic() + self.timeout if self.timeout > 0 else None
        writes: list[tuple[int, bytes]] = []
        gone: set[int] = set()       # descriptors whose reader left (_emit)
        started = False
        try:
            protocol.send_json(sock, self._request())
            fd = 1
            while True:
                kind, frame = self._next(sock, pid, started, deadline)
                if kind == "B":
                    if self.live:
                        _emit([(fd, frame)], 0, gone)
                    else:
                        writes.append((fd, frame))
                    continue
                op = frame.get("op")
                if op == "started":
                    started = True
                    deadline = time.monotonic() + self.timeout if self.timeout > 0 else None
                elif op == "write":
                    fd = 2 if frame.get("fd") == 2 else 1
                elif op == "stdin":
                    protocol.send_bytes(sock, self._stdin(int(frame.get("n", 0))))
                elif op == "exit":
                    return _emit(writes, frame.get("code"), gone)
                elif op == "mismatch":
                    self._replace()
                    return None
                else:                        # "inprocess", or anything this client does not know
                    return None
        except TimeoutError:
            if started and self.live:        # _await_frame: the building engine was stopped
                _note(self.place, f"engine {pid} is stopped (SIGSTOP) during the build of pid {os.getpid()}; "
                                  "killed, and the build runs in-process; the next call starts a fresh engine")
                _kill(pid)
            elif started or _stopped(pid):   # it hangs on this call (or froze): told nothing more, ended
                _note(self.place, f"the call of pid {os.getpid()} ran past {self.timeout:g} s "
                                  f"(CODEVOUCH_SERVER_TIMEOUT); engine {pid} is killed, and replaced by the next call")
                _kill(pid)
            return None
        except (OSError, protocol.PeerError, ValueError, TypeError):
            return None                      # killed mid-call, or it broke the protocol

    def _next(self, sock: socket.socket, pid: int, started: bool, deadline: float | None) -> tuple[str, Any]:
        """The engine's next frame: by `deadline` (TimeoutError past it), or, for a build that
        started, whenever it comes (TimeoutError once the engine is stopped: _await_frame)."""
        if started and self.live:
            _await_frame(sock, pid)
            sock.settimeout(None)
        elif deadline is not None:
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
        else:
            sock.settimeout(None)
        return protocol.recv(sock)

    def _stdin(self, n: int) -> bytes:
        try:
            data = os.read(0, max(0, min(n, 1 << 20)))
        except OSError:
            data = b""
        self.read.append(data)
        return data

    def _replace(self) -> None:
        """An engine of another version: stop it, start this version's for the next call."""
        stop(self.place)
        start(self.place, self.index_dir)

    def _hand_back_stdin(self) -> None:
        sys.stdin = io.TextIOWrapper(io.BufferedReader(_Replay(b"".join(self.read))),
                                     encoding=sys.stdin.encoding, errors=sys.stdin.errors)


def _await_frame(sock: socket.socket, pid: int) -> None:
    """Wait for the building engine's next frame, however long the build takes; TimeoutError when
    the engine is stopped (SIGSTOP) meanwhile: it is then killed, and the build runs here. Polled
    before a frame, never inside one (a timeout there would lose half a frame)."""
    import select

    poller = select.poll()
    poller.register(sock, select.POLLIN)
    while not poller.poll(int(_BUILD_CHECK * 1000)):
        if _stopped(pid):
            raise TimeoutError("the engine is stopped")


def _stopped(pid: int) -> bool:
    """Whether process `pid` is stopped by a signal (state T in /proc; False where /proc cannot
    say). Not `t`: a traced process (strace -f) passes through that state at every system call."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return False
    return state == b"T"


def _note(place: paths.Place, message: str) -> None:
    """A line in the engine's log, written by a client (the engine cannot say it was killed)."""
    try:
        fd = os.open(place.log, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
    except OSError:
        return
    try:
        os.write(fd, f"{time.strftime('%Y-%m-%dT%H:%M:%S')} [client {os.getpid()}] {message}\n".encode())
    except OSError:
        pass
    finally:
        os.close(fd)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def _emit(writes: list[tuple[int, bytes]], code: object, gone: set[int]) -> int:
    """Write the engine's output; the exit code (1 when the reader of stdout left, as in-process).
    `gone`: the descriptors whose reader left, this call's (each then writes to /dev/null, so a
    stderr that closed early never costs the stdout its answer)."""
    for fd, data in writes:
        if fd in gone:
            continue
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except BrokenPipeError:
            gone.add(fd)
            sink = os.open(os.devnull, os.O_WRONLY)
            os.dup2(sink, fd)
            os.close(sink)
        except OSError:
            gone.add(fd)
    if 1 in gone:
        return 1
    return code if isinstance(code, int) and not isinstance(code, bool) else 1
