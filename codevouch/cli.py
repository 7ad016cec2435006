"""The `codevouch` command: a read command goes to the resident engine when one may serve it
(codevouch/engine/client.py), everything else runs the typer app of codevouch/commands/ here.

The engine runs that same app for the call it is handed (codevouch/engine/execute.py), so the two
paths print the same bytes and exit with the same code. Importing this module loads neither
typer nor any command: the path to a running engine stays a few imports of the standard library.
"""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer


def build_app(argv: list[str] | None = None) -> typer.Typer:
    """Every command, `serve` included; with `argv` (the arguments after `codevouch`) naming one
    command, that command alone, so a call imports only its own module (commands/app.py)."""
    from codevouch.commands.app import build_app as commands_app
    from codevouch.commands.app import called

    only = called(argv, extra=("serve",)) if argv is not None else None
    app = commands_app(only)
    if only is None or only == ("", "serve"):
        from codevouch.engine.command import serve_cmd

        app.command("serve")(serve_cmd)
    return app


def __getattr__(name: str) -> Any:
    # `from codevouch.cli import app` (tests, CliRunner): the full app, built on first use.
    if name == "app":
        app = build_app()
        globals()["app"] = app
        return app
    raise AttributeError(f"module 'codevouch.cli' has no attribute {name!r}")


def main() -> None:
    """The `codevouch` executable: the engine's answer when it gives one, else the app inside the
    error handler (no tracebacks for users)."""
    from codevouch import importpath

    importpath.secure()             # before any lazy import: nothing from the working directory
    from codevouch.engine.client import command_of, forward, start_after_answer
    from codevouch.engine.handoff import detach

    detach(sys.argv[1:])            # a hook's build: out of the terminal's session, here or in the engine
    code = forward(sys.argv[1:])
    if code is not None:
        raise SystemExit(code)
    for stream in (sys.stdout, sys.stderr):
        # A path git stores as non-UTF-8 bytes is text with surrogates: print it escaped, never crash.
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    import typer.main

    from codevouch.call import Call
    from codevouch.commands import runner

    argv = sys.argv[1:]
    # This process is the caller: its environment, working directory and streams make the Call.
    command: Any = typer.main.get_command(build_app(argv))
    code = runner.run(command, argv, Call.of_process(), runner.Streams.of_process())
    if command_of(argv) is not None:
        _flush()                    # the answer is out before an engine starts beside us
        start_after_answer()
        exit_now(code)              # returns when it cannot: the interpreter's own exit then
    raise SystemExit(code)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def exit_now(code: object) -> None:
    """End a read command that ran in-process as the interpreter would, less its teardown.

    After the answer, a process that imported chromadb spends 0.15-0.25 s of CPU freeing its
    modules and objects (measured on a 45k-chunk search; a bare `import chromadb` spends ~0.1 s),
    time the caller waits for and the engine never spends. So what an exit does that anyone can
    see is done here, in the interpreter's order: threads that are not daemons joined (none: if
    one runs, this returns), the atexit handlers (the private index copies removed, the usage
    writers closed), the standard streams flushed (when a flush fails, this returns and the
    interpreter reports it as it always does); then os._exit with the same code. A read command
    writes with committed transactions only, so nothing the freeing would still do is on disk.
    Returns, doing nothing, for a code that is not an int (the interpreter prints it)."""
    if code is None:
        code = 0
    if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code <= 255:
        return
    import threading

    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return
    import atexit

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        code = 120           # what the interpreter exits with when its last flush fails
    os._exit(code)
