"""`codevouch serve`: run the resident engine, or report on it (--status) and end it (--stop)."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Annotated

import typer

from codevouch import environment
from codevouch.commands.invocation import echo
from codevouch.engine import client, paths
from codevouch.printable import plural


def _place(index: Path | None) -> tuple[Path, paths.Place | None]:
    index_dir = paths.index_dir_of(["--index", str(index)] if index else [], os.environ, environment.current().index)
    return index_dir, paths.find(index_dir, os.environ)


def serve_cmd(
    status: Annotated[bool, typer.Option(
        "--status", help="Say whether an engine runs for this index, and what it holds.")] = False,
    stop: Annotated[bool, typer.Option(
        "--stop", help="Stop the engine of this index (it finishes the call it runs).")] = False,
    index: Annotated[Path | None, typer.Option(
        "--index", metavar="DIR", help="Index directory (default: $CODEVOUCH_INDEX, else ~/.local/share/codevouch).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
    warm: Annotated[Path | None, typer.Option(
        "--warm", hidden=True, help="A repository to search once as the engine starts (given by the CLI that "
                                    "starts it: the one its call named).")] = None,
    warm_all: Annotated[bool, typer.Option(
        "--warm-all", hidden=True, help="Search every repository of the index once as the engine starts (the "
                                        "call that starts it searched them all: --all-repos).")] = False,
) -> None:
    """The resident engine that answers the read commands (search, context, validate, check-refs,
    review, drift, index status and health) warm, over a private Unix socket.

    The CLI starts it on first use and it exits after CODEVOUCH_SERVER_IDLE seconds (default 600)
    without a call; CODEVOUCH_SERVER=off runs every call in-process. See docs/ENGINE.md."""
    if status and stop:
        echo("codevouch: --status and --stop disagree; pass one of them.", err=True)
        raise typer.Exit(2)
    index_dir, place = _place(index)
    if status:
        _status(index_dir, place, as_json)
    elif stop:
        _stop(index_dir, place, as_json)
    else:
        from codevouch.engine.server import serve
        from codevouch.proctitle import set_title
        from codevouch.worktree import gitio

        # In `ps`, what a user would type, not `python3 -c import sys; ...` (docs/ENGINE.md).
        set_title(f"codevouch serve --index {index_dir}")
        gitio.name_watchdog_owner("codevouch serve")
        raise typer.Exit(serve(index_dir, environment.current().server_idle, warm, warm_all))


def _status(index_dir: Path, place: paths.Place | None, as_json: bool) -> None:
    found = client.status(place) if place is not None else None
    if as_json:
        echo(json.dumps(found or {"running": False, "index": str(index_dir),
                                        "socket": str(place.socket) if place else None}, indent=2))
        return
    if place is None:
        echo(f"no engine for {index_dir}: no private directory for its socket (docs/ENGINE.md)")
    elif found is None:
        echo(f"no engine runs for {index_dir} (its socket would be {place.socket})")
    else:
        echo(f"engine pid {found.get('pid')} serves {found.get('index')} on {found.get('socket')}: "
                   f"{plural(found.get('calls') or 0, 'call')} since {found.get('started')}, idle {found.get('idle_s')} s "
                   f"of {found.get('idle_limit_s')}{'; warming up' if found.get('warming') else ''}; "
                   f"log {found.get('log')}")


def _stop(index_dir: Path, place: paths.Place | None, as_json: bool) -> None:
    asked = place is not None and client.stop(place)
    if asked and place is not None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and client.listening(place):
            time.sleep(0.05)
    if as_json:
        echo(json.dumps({"stopped": asked, "index": str(index_dir)}))
    else:
        echo(f"stopped the engine of {index_dir}" if asked else f"no engine runs for {index_dir}")
