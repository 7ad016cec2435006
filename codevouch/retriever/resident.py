"""The warm state of a long-lived process, one implementation for both that codevouch runs: the
resident engine behind the CLI (engine/server.py) and the MCP server (mcp_server.py).

What such a process keeps between calls is in the process-wide caches (caches.py: the imported
stack, the embedding model, the open lexical copies, the overlay's vectors), each of which sees a
build by another process at the next call. What it does between calls is here: `Resident`.

- Calls run one at a time, through `serve(call, work)`, and never beside the work between
  calls: the process-wide caches are not written by two at once. Each runs inside its own
  `Call`; nothing of the process (environment, directory, streams) is changed for it. The
  engine serves them on its main thread, the MCP server on the SDK's worker threads.
- After a call, the rest of a big overlay is embedded (`embed_rest`): a search embeds what its
  time budget allows and ranks the other changed definitions with their indexed version's
  vector; the texts it left are embedded between calls, new definitions first, and the next
  search of the same change finds every vector in this process's memory. A call that arrives
  stops it between two texts. A failure there is logged, never a call's: every call still
  embeds what it needs itself.

The engine runs its calls and this work on its main thread (`embed_rest`, with a stop that asks
its queue); the MCP server answers from the SDK's worker threads, so it starts the work on a
thread of its own after each call (`embed_rest_in_background`).

A library user's process (an agent framework holding an `Index`) is a long-lived process too:
`between_calls` runs an Index method the same way, with one `Resident` for the process
(`library()`), except that its calls are not made one at a time (a library's calls never were,
and a caller may make them from several threads): each waits only for the background work to let
go (`alongside`). `Index(background=False)` turns it off; the CLI, the engine and the MCP server
open their Index so, the last two having a Resident of their own.
"""
from __future__ import annotations

import atexit
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from codevouch.call import Call

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class Resident:
    """One warm process's calls and its work between them. `log`: where a line about the
    background work goes (the engine's log, the MCP server's stderr)."""

    def __init__(self, log: Callable[[str], None]) -> None:
        self._log = log
        self._lock = threading.Lock()           # held by a call, or by the work between calls
        self._state = threading.Lock()          # guards _waiting
        self._waiting = 0                       # calls that want the lock now
        self.closing = threading.Event()        # set: background work stops, none starts
        self._thread: threading.Thread | None = None

    @contextmanager
    def call(self) -> Iterator[None]:
        """Run a call: one at a time, after the background work (if any) stops between two texts."""
        with self._state:
            self._waiting += 1
        try:
            self._lock.acquire()
        finally:
            with self._state:
                self._waiting -= 1
        try:
            yield
        finally:
            self._lock.release()

    @contextmanager
    def alongside(self) -> Iterator[None]:
        """Run a library call: once the background work (if any) has stopped between two texts,
        beside any other call (a library's calls may come from several threads at once). The
        background work starts again only after the last of them (`wanted()` says no)."""
        with self._state:
            self._waiting += 1
        try:
            with self._lock:    # taken once the background work lets go, and given back at once
                pass
            yield
        finally:
            with self._state:
                self._waiting -= 1

    def serve(self, call: Call, work: Callable[[], T]) -> T:
        """The one way a warm process runs a call, the engine's (a command with the caller's
        argv and streams) and the MCP server's (a tool on an `Index`) alike: one at a time
        (`call()`), inside the caller's `Call` (its environment, directory and cancel event
        for everything below, git's children included)."""
        with self.call(), call.entered():
            return work()

    def wanted(self) -> bool:
        """Whether a call waits (or the process closes): background work stops."""
        return self._waiting > 0 or self.closing.is_set()

    def embed_rest(self, stop: Callable[[], bool]) -> int | None:
        """Embed, on this thread, what the latest search's overlay left unembedded, until
        `stop()` says a call is waiting; the number of texts embedded (None: nothing was left, or
        it failed, which is logged). The caller holds the calls back meanwhile (the engine runs
        it between two calls on its one thread; `embed_rest_in_background` holds `call()`'s lock)."""
        from codevouch.retriever import overlay as live

        if stop():
            return None          # the unfinished overlay stays for the next pause
        work = live.take_unfinished()
        if work is None:
            return None
        from codevouch.store import Ledger  # heavy: the store
        started = time.monotonic()
        try:
            ledger = Ledger(work.index_dir, readonly=True)
            try:
                made = live.embed_rest(work.overlay, work.embedder, ledger, work.index_dir, work.state, stop=stop)
            finally:
                ledger.close()
        except Exception as exc:  # noqa: BLE001  (background work: the next call embeds what it needs)
            self._log(f"background embedding stopped: {type(exc).__name__}: {exc}")
            return None
        self._log(f"embedded {made} overlay text(s) in the background in {time.monotonic() - started:.1f} s")
        return made

    def embed_rest_in_background(self) -> threading.Thread | None:
        """After a call answered from another thread: `embed_rest` on a thread of its own, which
        holds the calls' lock while it works and lets go between two texts when one arrives.
        None when there is nothing to embed (nothing started)."""
        from codevouch.retriever import overlay as live

        if self.closing.is_set() or not live.has_unfinished():
            return None

        def work() -> None:
            with self._lock:
                self.embed_rest(self.wanted)

        thread = threading.Thread(target=work, name="embed-rest", daemon=True)
        thread.start()
        self._thread = thread
        return thread

    def close(self, timeout: float = 5.0) -> None:
        """Stop the background work (between two texts) and wait for it, at most `timeout`
        seconds: a process that exits lets it finish its write first."""
        self.closing.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)


_LIBRARY: list[Resident] = []
_LIBRARY_LOCK = threading.Lock()


def library() -> Resident:
    """The one Resident of a library user's process (`between_calls`): its lines go to the
    `codevouch` logger; at exit the background work stops between two texts and is waited for."""
    with _LIBRARY_LOCK:
        if not _LIBRARY:
            resident = Resident(logging.getLogger("codevouch").info)
            atexit.register(resident.close)
            _LIBRARY.append(resident)
        return _LIBRARY[0]


def between_calls(method: F) -> F:
    """An `Index` method whose search may leave a big overlay half embedded: run alongside the
    process's background work (`library().alongside()`), which then embeds the rest on a thread
    of its own until the next call, as the engine and the MCP server do; nothing of the kind when
    the Index says `background=False`."""
    @functools.wraps(method)
    def run(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not self.background:
            return method(self, *args, **kwargs)
        resident = library()
        try:
            with resident.alongside():
                return method(self, *args, **kwargs)
        finally:   # answered or failed: what its search left is embedded meanwhile
            resident.embed_rest_in_background()
    return run  # type: ignore[return-value]
