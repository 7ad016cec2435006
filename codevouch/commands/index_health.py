"""`codevouch index health`: how stale recent calls' hits were, where, and whether to rebuild."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from codevouch.commands.common import BranchOpt, IndexOpt, JsonOpt, RepoOpt, fail, open_index, print_json
from codevouch.commands.invocation import stdout
from codevouch.errors import CodevouchError
from codevouch.printable import visible


def index_health(
    repo: RepoOpt = Path("."),
    branch: BranchOpt = None,
    recent: Annotated[Optional[int], typer.Option(
        "--recent", metavar="N", min=1, help="How many recent calls to look at (default: [health] recent, else 200).")] = None,
    index: IndexOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Stale ratio over recent search and context calls and its trend, split by cause (the index
    behind HEAD, or the working tree differing from HEAD), the paths most often stale, commits
    behind, and a rebuild recommendation only when a rebuild would help (thresholds: [health] config)."""
    from codevouch.health.render import render

    try:
        report = open_index(repo, index).health(branch=branch, recent=recent)
    except CodevouchError as exc:
        raise fail(exc) from exc
    if as_json:
        print_json(report.to_json())
    else:
        stdout().write(visible(render(report)))
