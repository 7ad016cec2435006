"""What a running command reads and writes: its `Invocation` (arguments, `Call`, streams).

The runner (runner.py) hands one to click as the context's `obj`; a command and its helpers
find it with `invocation()` and write with `echo` / `stdout()` / `stderr()`, never `sys.std*`,
so the same command answers a caller in-process and through the engine.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

import typer

from codevouch.call import Call
from codevouch.printable import visible

try:    # typer 0.2x carries its own copy of click, with the same modules
    from typer._click import globals as click_globals
except ImportError:     # older typer runs on click itself
    from click import globals as click_globals  # type: ignore[no-redef]


@dataclass(frozen=True)
class Streams:
    """A call's standard streams, as text."""
    stdin: TextIO
    stdout: TextIO
    stderr: TextIO

    @classmethod
    def of_process(cls) -> Streams:
        return cls(sys.stdin, sys.stdout, sys.stderr)


@dataclass(frozen=True)
class Invocation:
    """What a command is run with: its arguments (after `codevouch`), its Call and its streams.
    The click context's `obj`, so every command and helper under it finds the same one."""
    argv: tuple[str, ...]
    call: Call
    streams: Streams


def invocation() -> Invocation:
    """The running command's Invocation; outside a runner (a test that calls click directly), this
    process as the caller."""
    ctx = click_globals.get_current_context(silent=True)
    found = ctx.find_object(Invocation) if ctx is not None else None
    return found if found is not None else Invocation(tuple(sys.argv[1:]), Call.of_process(), Streams.of_process())


def echo(message: str = "", err: bool = False, nl: bool = True) -> None:
    """click's echo (a flush after each line; escape sequences dropped where the stream is not a
    terminal) to the call's stdout, or stderr, with every control character a repository could
    put in it (a branch, a path, a symbol, a remote URL, a commit subject) shown as an escape
    (printable.visible: the one printable path; already escaped text is left as it is)."""
    streams = invocation().streams
    typer.echo(visible(message), file=streams.stderr if err else streams.stdout, nl=nl)


def stdout() -> TextIO:
    return invocation().streams.stdout


def stderr() -> TextIO:
    return invocation().streams.stderr


def stdin() -> TextIO:
    return invocation().streams.stdin
