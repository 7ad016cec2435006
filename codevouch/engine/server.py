"""The resident engine: `codevouch serve` for one user, index directory and install.

It listens on a Unix socket (mode 0600, in a private 0700 directory: paths.py) and nothing else,
refuses a peer of another uid (SO_PEERCRED), answers "not served" to a caller of its uid whose
view of the files differs from its own (peerview.py: the caller runs the call in-process), and
runs the read calls one at a time on its main thread (execute.py says why) and each build on a
thread of its own beside them (building.py); status and stop are answered by the connection's
own thread, so they come back while a call runs. It keeps what a
warm process keeps: the imported stack, the embedding model, the open lexical copies and caches
(each designed for a long-lived process: a build by another process is seen by the next call,
which reopens what changed); the working-tree overlay is derived from git for every call, as
in-process. It exits after CODEVOUCH_SERVER_IDLE seconds without a call, on `codevouch serve
--stop`, or on SIGTERM.
"""
from __future__ import annotations

import fcntl
import os
import queue
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codevouch.engine import execute, paths, peerview, protocol
from codevouch.engine.building import Builds
from codevouch.engine.handoff import build_of

LOCK_WAIT = 10.0          # seconds a new engine waits for the one it replaces to let go


def log(message: str) -> None:
    sys.__stderr__.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} [{os.getpid()}] {message}\n")  # type: ignore[union-attr]
    sys.__stderr__.flush()  # type: ignore[union-attr]


@dataclass(frozen=True)
class _Peer:
    pid: int                 # SO_PEERCRED's
    pidfd: int | None        # taken when it connected (peerview.peer_pidfd), None where none can be


@dataclass
class _Job:
    conn: socket.socket
    request: execute.Request


class Engine:
    def __init__(self, index_dir: Path, place: paths.Place, idle: float, warm: Path | None = None,
                 warm_all: bool = False) -> None:
        self.index_dir, self.place, self.idle, self.warm, self.warm_all = index_dir, place, idle, warm, warm_all
        self.warming = False
        self.warm_up_s: float | None = None
        self.identity = paths.identity()
        # What this engine sees (peerview.py): a caller whose view differs is not served.
        self.view = peerview.read("self") if peerview.own_proc_is_ours() else None
        self.started = time.time()
        self.last = time.monotonic()
        self.requests = 0
        self.busy: str | None = None
        self.stopping = threading.Event()
        self.jobs: queue.Queue[_Job] = queue.Queue()
        self._listener: socket.socket | None = None
        self._inode: int | None = None
        from codevouch.retriever.resident import Resident

        self.resident = Resident(log)     # calls run one at a time on the main thread (_loop)
        self.builds = Builds(log)         # builds, each on a thread of its own (building.py)
        self._app: Any = None

    # --- starting and stopping ------------------------------------------------------------------

    def _lock(self) -> int | None:
        fd = os.open(self.place.lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    return None
                time.sleep(0.05)

    def _listen(self) -> socket.socket:
        path = str(self.place.socket)
        try:
            os.unlink(path)           # a stale socket: we hold the lock, so nobody listens on it
        except FileNotFoundError:
            pass
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)         # born 0600: no moment at which another user could connect
        try:
            sock.bind(path)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        self._inode = os.lstat(path).st_ino
        sock.listen(64)
        sock.settimeout(1.0)
        return sock

    def _close(self) -> None:
        if self._listener is not None:
            self._listener.close()
        try:
            if self._inode is not None and os.lstat(self.place.socket).st_ino == self._inode:
                os.unlink(self.place.socket)
        except OSError:
            pass

    def serve(self) -> int:
        problem = paths.private_problem(self.place.directory)
        if problem is not None:
            log(f"refusing to serve: {problem}")
            return 1
        lock = self._lock()
        if lock is None:
            log("another engine serves this index; exiting")
            return 0
        problem = _socket_problem(self.place.socket)
        if problem is not None:
            log(f"refusing to serve: {problem}")
            return 1
        if not (sys.stdin is not None and sys.stdin.isatty()):
            # Started by a CLI (detached, stdin closed): a Ctrl-C meant for some terminal is not for
            # us. Run by hand in a terminal, Ctrl-C stops it (a call it runs then falls back).
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, lambda *_: self.stopping.set())
        preload()                  # main() dropped the working directory from sys.path (importpath)
        import typer.main

        from codevouch.commands.app import build_app

        # The click command tree, built once: typer's Typer.__call__ rebuilds it from every
        # command's signature on each call (16 ms of a warm call's ~60, measured). The tree is
        # stateless between calls (click makes a new context per call), so a call sees what a
        # fresh `codevouch` process sees.
        app = self._app = typer.main.get_command(build_app())
        self._listener = self._listen()
        log(f"serving {self.index_dir} on {self.place.socket} ({self.identity})")
        threading.Thread(target=self._accept, name="accept", daemon=True).start()
        try:
            self.warm_up()
            self._loop(app)
        finally:
            self.stopping.set()
            self.builds.stop()
            self._close()
            log(f"stopped after {self.requests} call(s)")
        return 0

    # --- the main thread: one call at a time ---------------------------------------------------

    def _loop(self, app: Any) -> None:
        while not self.stopping.is_set():
            try:
                job = self.jobs.get(timeout=0.5)
            except queue.Empty:
                if self._idle():
                    log(f"idle for {self.idle:g} s; exiting")
                    return
                continue
            self._run(app, job)
            self.last = time.monotonic()
            self._after_answer()

    def _idle(self) -> bool:
        """Whether the engine has been idle for its limit: no call queued, no build running, none
        for `idle` seconds."""
        if self.idle <= 0 or not self.jobs.empty() or self.builds.running():
            return False
        return time.monotonic() - max(self.last, self.builds.last) > self.idle

    def warm_up(self) -> None:
        """Search the repository of the call that started this engine once, output dropped, so
        that the next call finds what a warm process holds: the store open and its HNSW graph
        read (~4.5 s at 1M chunks, all of a second call's cost without this), the lexical copy,
        the encoder, the overlay's vectors. It runs on the main thread, as a call would, after
        the socket listens: a call that arrives meanwhile waits for it (it would load the same
        things itself), and one already queued skips it. The very code of a search, through
        the library (no record written): it reads nothing a call there would not read. A
        failure (no such index, a repository since moved) is logged, never a call's. Started by a
        call across every repository (`warm_all`), it searches them all once, as that call did:
        each one's bound, its looks, its lexical copy (~2 s at 100 repositories, all of a second
        call's cost without this)."""
        if (self.warm is None and not self.warm_all) or not self.jobs.empty():
            return
        self.warming = True
        start = time.monotonic()
        what = "every repository of the index" if self.warm_all else str(self.warm)
        try:
            if self.warm_all:
                from codevouch.across import Indexes

                Indexes.all(self.index_dir, record=False, background=False).search("warm up", k=1, validate=False)
            elif self.warm is not None:
                from codevouch.api import Index

                Index(self.warm, index_dir=self.index_dir, record=False, background=False).search(
                    "warm up", k=1, validate=False)
            log(f"warmed up on {what} in {time.monotonic() - start:.1f} s")
        except Exception as exc:    # noqa: BLE001  (a warm-up that fails leaves the calls to load what they need)
            log(f"warm-up on {what} failed ({type(exc).__name__}: {exc}); calls load what they need")
        finally:
            self.warm_up_s = round(time.monotonic() - start, 2)
            self.warming = False
            self.last = time.monotonic()

    def _run(self, app: Any, job: _Job) -> None:
        if _left(job.conn):
            # Its client waited past its timeout in the queue and answered in-process.
            log(f"a call from pid {job.request.pid} was given up while it queued; skipped")
            job.conn.close()
            return
        self.busy = " ".join(job.request.argv[:2])
        self.requests += 1
        log(f"call {self.requests} from pid {job.request.pid}: {job.request.argv[:1]}")
        try:
            try:
                # The client's timeout counts from here, not from when the call queued.
                protocol.send_json(job.conn, {"op": "started"})
                cancel, done = threading.Event(), threading.Event()
                threading.Thread(target=execute.watch, args=(job.conn, cancel, done), name="watch", daemon=True).start()
                call = job.request.call(cancel)
                try:        # one warm state, one call at a time: the MCP server's way too
                    record, code = self.resident.serve(call, lambda: execute.run(app, job.request, job.conn, call))
                finally:
                    done.set()
                if cancel.is_set():
                    log(f"call {self.requests}: its caller went away (interrupted or gave up); the call was "
                        "stopped at its next git process or embedding batch, and nothing was sent")
                    return
            except (OSError, protocol.PeerError) as exc:
                log(f"call {self.requests}: the caller went away ({exc})")
                return
            except Exception as exc:    # noqa: BLE001  (the caller runs it in-process and reports it)
                log(f"call {self.requests}: {type(exc).__name__}: {exc}; the caller runs it in-process")
                protocol.send_json(job.conn, {"op": "inprocess", "reason": type(exc).__name__})
                return
            execute.answer(job.conn, record, code)
        except OSError as exc:
            log(f"call {self.requests}: the caller went away ({exc})")
        finally:
            self.busy = None
            job.conn.close()

    def _after_answer(self) -> None:
        """After a call, between calls: the rest of a big overlay embedded (retriever.resident,
        the same work the MCP server does); a call that arrives stops it between two texts."""
        self.resident.embed_rest(stop=lambda: self.stopping.is_set() or not self.jobs.empty())

    # --- the accepting thread and a thread per connection -----------------------------------------

    def _accept(self) -> None:
        assert self._listener is not None
        while not self.stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._greet, args=(conn,), name="connection", daemon=True).start()

    def _greet(self, conn: socket.socket) -> None:
        try:
            pid = protocol.check_peer(conn)
        except (OSError, protocol.PeerError) as exc:
            log(f"refused a connection: {exc}")
            conn.close()
            return
        keep = False
        pidfd = peerview.peer_pidfd(conn, pid)     # now: the pid names the process that connected
        try:
            conn.settimeout(10.0)
            kind, frame = protocol.recv(conn)
            conn.settimeout(None)
            if kind != "J":
                raise protocol.PeerError("the first frame is not a request")
            keep = self._handle(conn, frame, _Peer(pid, pidfd))
        except (OSError, protocol.PeerError) as exc:
            log(f"dropped a connection from pid {pid}: {exc}")
        finally:
            if pidfd is not None:
                os.close(pidfd)
            if not keep:
                conn.close()

    def _handle(self, conn: socket.socket, frame: dict[str, Any], peer: _Peer) -> bool:
        """Answer status and stop here; queue a call. Whether the connection is kept (queued)."""
        pid = peer.pid
        op = frame.get("op")
        if op == "status":
            protocol.send_json(conn, self.status())
            return False
        if op == "stop":
            protocol.send_json(conn, {"op": "stopping", "pid": os.getpid()})
            log(f"asked to stop by pid {pid}")
            self.stopping.set()
            return False
        if op != "run":
            raise protocol.PeerError(f"unknown op {op!r}")
        if frame.get("protocol") != protocol.PROTOCOL or frame.get("identity") != self.identity:
            protocol.send_json(conn, {"op": "mismatch", "identity": self.identity})
            return False
        if self.stopping.is_set():
            protocol.send_json(conn, {"op": "inprocess", "reason": "stopping"})
            return False
        refused = peerview.check(self.view, pid, peer.pidfd)
        if refused is not None:
            # Same uid, not the same view: served here, the call would read what its caller cannot.
            log(f"not serving pid {pid}: {refused}; it runs the call in-process, with its own view")
            protocol.send_json(conn, {"op": "inprocess", "reason": "not served: " + refused})
            return False
        from codevouch.engine.client import command_of

        request = execute.Request.of(frame)
        if build_of(list(request.argv)) is not None:
            # A build: on a thread of its own at once, beside the reads (building.py).
            self.last = time.monotonic()
            self.builds.start(self._app, conn, request)
            return True
        if command_of(list(request.argv)) is None:
            protocol.send_json(conn, {"op": "inprocess", "reason": "not a read command"})
            return False
        self.last = time.monotonic()
        self.jobs.put(_Job(conn, request))
        return True

    def status(self) -> dict[str, Any]:
        return {"op": "status", "running": True, "pid": os.getpid(), "index": str(self.index_dir),
                "socket": str(self.place.socket), "log": str(self.place.log), "identity": self.identity,
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.started)),
                "calls": self.requests, "busy": self.busy, "queued": self.jobs.qsize(),
                "idle_s": round(time.monotonic() - self.last, 1), "idle_limit_s": self.idle,
                "warming": self.warming, "warm_up_s": self.warm_up_s, "builds": self.builds.running()}


def _left(conn: socket.socket) -> bool:
    """Whether the caller closed its end of a queued call: a queued client sends nothing until
    its call starts, so anything readable is the end of the stream (or a fault)."""
    try:
        return execute.readable(conn) and conn.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


# Imported lazily by some call, by name (the grammars and the token counter load through functions).
_PRELOAD = ("pathspec", "tantivy", "numpy", "safetensors", "tokenizers", "threadpoolctl")


def preload() -> None:
    """Import, before serving, what a call may import lazily: every grammar, the token counter's
    encoding, the stores and the query encoder's parts. Nothing from a working directory is on
    sys.path (importpath), so this is the second guard of issue 45's item 1: a module already
    loaded is never looked up again, wherever a call runs. What fails is logged; a call that needs
    it meets the same failure itself, with its own error."""
    import importlib

    from codevouch.context.windows import count_tokens
    from codevouch.store import chromaload
    from codevouch.syntax import registry
    from codevouch.syntax.languages import get_language

    start = time.monotonic()
    loads: list[tuple[str, Any]] = [(name, lambda name=name: importlib.import_module(name)) for name in _PRELOAD]
    loads.append(("chromadb", chromaload.chromadb))     # as every store opens it: no `.env` read
    loads += [(f"the {name} grammar", lambda name=name: get_language(name)) for name in sorted(registry.names())]
    loads.append(("the token counter", lambda: count_tokens("")))
    for what, load in loads:
        try:
            load()
        except Exception as exc:    # noqa: BLE001  (logged; the call that needs it reports it)
            log(f"preloading {what} failed ({type(exc).__name__}: {exc})")
    log(f"preloaded the lazy imports in {time.monotonic() - start:.1f} s")


def _socket_problem(path: Path) -> str | None:
    """Why the engine cannot put its socket at `path` (None: nothing there, or a stale socket it
    replaces): something else of that name, which it never removes. Calls run in-process."""
    import stat

    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot look at {path} ({exc.strerror})"
    if stat.S_ISSOCK(mode):
        return None
    kind = "a directory" if stat.S_ISDIR(mode) else "a link" if stat.S_ISLNK(mode) else "a file"
    return (f"{path} is {kind}, not the engine's socket; remove it (when no engine runs) to let the engine "
            "start. Until then every call runs in-process.")


def serve(index_dir: Path, idle: float, warm: Path | None = None, warm_all: bool = False) -> int:
    """Run the engine for `index_dir` in this process until it stops; the exit code."""
    place = paths.find(index_dir, os.environ, create=True)
    if place is None:
        log(f"no private directory for an engine of {index_dir} (XDG_RUNTIME_DIR, beside the index, "
            "the temporary directory: none is private or short enough)")
        return 1
    return Engine(index_dir, place, idle, warm, warm_all).serve()
