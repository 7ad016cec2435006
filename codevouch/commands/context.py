"""`codevouch context`: search, validate and print the markdown context pack for an agent."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from codevouch.commands.common import BranchOpt, IndexOpt, KindOpt, LimitOpt, RepoOpt, fail, open_index
from codevouch.errors import CodevouchError


def context_cmd(
    query: Annotated[str, typer.Argument(help="What the agent needs, in words or code.")],
    repo: RepoOpt = Path("."),
    branch: BranchOpt = None,
    limit: LimitOpt = 10,
    kind: KindOpt = None,
    index: IndexOpt = None,
) -> None:
    """Search, validate and print a markdown context pack for an agent (search --format context)."""
    try:
        pack = open_index(repo, index).context(query, k=limit, branch=branch, kinds=kind)
    except CodevouchError as exc:
        raise fail(exc) from exc
    sys.stdout.write(pack.markdown)
