"""One call's facts, made once at the door: `Call`.

Whoever takes a call makes one: the CLI for its own process (`Call.of_process()`), the resident
engine for each forwarded request (the caller's environment and working directory, sent with
it), the MCP server for each tool call. It is passed down: the commands take it (with their
streams: commands/runner.py), the api's `Index` takes it, and what the api hands below is values
read from it, not the environment again.

What a call ran with is therefore one object, and the process itself is never rewritten for a
call: no `os.environ` write, no `chdir`. The environment is a snapshot (an `Environment` over a
mapping of the caller's variables); `entered()` makes it what `environment.current()` answers
in this context, for the one door below the api that must see the caller's variables at every
use: git's children, which are started with them, and the git facts that follow them (global
config and attributes files under the caller's HOME), all through one function,
worktree/git/_process.py `caller_env()`. Every other setting goes down as a value.

A leaf above `environment`: it imports nothing else of codevouch.
"""
from __future__ import annotations

import contextvars
import functools
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from codevouch import environment
from codevouch.environment import Environment

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class Cancelled(BaseException):
    """The call's caller gave up (it closed its connection to the engine): the call stops at its
    next git process or embedding batch. A BaseException, as KeyboardInterrupt is: no `except
    Exception` on the way up mistakes it for a failure to report, and every `finally` runs."""


@dataclass(frozen=True)
class Call:
    """What one call runs with: the caller's environment (a snapshot) and working directory, and
    the event its door sets when the caller gives up (`cancel`: checked by `check()`)."""
    env: Environment
    cwd: Path
    cancel: threading.Event = field(default_factory=threading.Event, compare=False, repr=False)

    @classmethod
    def of(cls, environ: Mapping[str, str], cwd: str | Path, cancel: threading.Event | None = None) -> Call:
        """A call for a caller elsewhere (the engine's request): its variables copied, its
        working directory (absolute) as given."""
        return cls(Environment(dict(environ)), Path(cwd), cancel if cancel is not None else threading.Event())

    @classmethod
    def of_process(cls) -> Call:
        """This process as the caller: its own environment, read at each use (os.environ, as the
        library always has), and its working directory now."""
        return cls(environment.current(), Path(os.getcwd()))

    def path(self, given: Path | str) -> Path:
        """A path the caller named, as the caller meant it: relative to its working directory.
        Kept as written (no `..` or links resolved) so messages name it as the caller would."""
        named = Path(given)
        return named if named.is_absolute() else self.cwd / named

    @contextmanager
    def entered(self) -> Iterator[Call]:
        """This call's environment as `environment.current()`, and this call as the one `check()`
        asks, for the code run inside."""
        token = _RUNNING.set(self)
        try:
            with environment.applied(self.env):
                yield self
        finally:
            _RUNNING.reset(token)


_RUNNING: contextvars.ContextVar[Call | None] = contextvars.ContextVar("codevouch_call", default=None)


def check() -> None:
    """Raise Cancelled when the running call's caller gave up. Asked where a call spends its time
    and may stop cleanly: before each git process, between embedding batches."""
    running = _RUNNING.get()
    if running is not None and running.cancel.is_set():
        raise Cancelled()


def carried(fn: Callable[..., T]) -> Callable[..., T]:
    """`fn` bound to the context it is made in (the running call's environment), for a thread
    that runs it: a new thread or a pool's worker starts with an empty context."""
    context = contextvars.copy_context()
    return lambda *args, **kwargs: context.run(fn, *args, **kwargs)


def in_call(method: F) -> F:
    """A method of an object that holds its `call` (api.Index), run inside `call.entered()`."""
    @functools.wraps(method)
    def entered(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self.call.entered():
            return method(self, *args, **kwargs)
    return entered  # type: ignore[return-value]
