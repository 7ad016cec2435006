"""`codevouch index status`: what the index holds per repository and branch."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from codevouch.commands.common import IndexOpt, JsonOpt, fail, open_index, print_json
from codevouch.errors import CodevouchError


def index_status(
    repo: Annotated[Optional[Path], typer.Option("--repo", help="Only this repository.")] = None,
    index: IndexOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Per repository and branch: indexed commit, branch head, commits behind, counts, rules."""
    from codevouch.api import index_status_all

    try:
        if repo is not None:
            idx = open_index(repo, index)
            index_dir, rows = idx.index_dir, idx.status()
        else:
            index_dir = open_index(Path("."), index).index_dir
            rows = index_status_all(index_dir)
    except CodevouchError as exc:
        raise fail(exc) from exc
    if as_json:
        print_json({"index": str(index_dir), "branches": rows})
        return
    if not rows:
        typer.echo(f"nothing indexed in {index_dir}; run `codevouch index build`.")
    for r in rows:
        behind = "?" if r["commits_behind"] is None else r["commits_behind"]
        typer.echo(f"{r['repo']} {r['branch']}: indexed {r['commit'][:7]} ({r['commit_date']}), "
                   f"head {(r['head'] or '?')[:7]}, {behind} commits behind, built {r['built_at']}")
        typer.echo("  files: " + ", ".join(f"{k} {v}" for k, v in sorted(r["files_by_kind"].items())))
        typer.echo("  chunks: " + ", ".join(f"{k} {v}" for k, v in sorted(r["chunks_by_kind"].items())))
        typer.echo(f"  rules: {r['rules']['source']}")
        if r.get("needs_rebuild"):
            typer.echo("  built by an older codevouch: run `codevouch index build` once (nothing is re-embedded)")
        if r.get("drift"):
            typer.echo(f"  drift: {r['drift']['summary']}")
