"""The `codevouch` command: a read command goes to the resident engine when one may serve it
(codevouch/engine/client.py), everything else runs the typer app of codevouch/commands/ here.

The engine runs that same app for the call it is handed (codevouch/engine/execute.py), so the two
paths print the same bytes and exit with the same code. Importing this module loads neither
typer nor any command: the path to a running engine stays a few imports of the standard library.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer


def build_app() -> typer.Typer:
    """Every command, `serve` included."""
    from codevouch.commands.app import build_app as commands_app
    from codevouch.engine.command import serve_cmd

    app = commands_app()
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
    from codevouch.engine.client import forward

    code = forward(sys.argv[1:])
    if code is not None:
        raise SystemExit(code)
    for stream in (sys.stdout, sys.stderr):
        # A path git stores as non-UTF-8 bytes is text with surrogates: print it escaped, never crash.
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    from codevouch.commands.common import error_handler

    with error_handler():
        build_app()(prog_name="codevouch")
