"""`codevouch index status`: what the index holds per repository and branch."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from codevouch.commands.common import IndexOpt, JsonOpt, fail, open_index, print_json
from codevouch.commands.invocation import echo
from codevouch.errors import CodevouchError, GitError
from codevouch.printable import plural


def _team_rows(here: Any) -> list[dict[str, Any]]:
    """A team reader's status in a clone with no --repo: the team snapshot of the clone here."""
    try:
        return list(here.status())
    except GitError:  # not in a repository: nothing to look up on the server
        return []


def index_status(
    repo: Annotated[Optional[Path], typer.Option("--repo", metavar="PATH", help="Only this repository.")] = None,
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
            here = open_index(Path("."), index)
            index_dir, rows = here.index_dir, index_status_all(here.index_dir)
            if not rows and here.call.env.chroma_url:
                rows = _team_rows(here)
    except CodevouchError as exc:
        raise fail(exc) from exc
    if as_json:
        print_json({"index": str(index_dir), "branches": rows})
        return
    if not rows and repo is not None and index_status_all(index_dir):
        # The directory holds other repositories: "nothing indexed" would say it is empty.
        echo(f"{repo} is not indexed in {index_dir} (it holds other repositories: `codevouch index status` "
             f"lists them); run `codevouch index build --repo {repo}`.")
    elif not rows:
        echo(f"nothing indexed in {index_dir}; run `codevouch index build`.")
    for r in rows:
        _echo_row(r)


def _echo_row(r: dict[str, Any]) -> None:
    """One repository and branch of the status, as text."""
    behind = "? commits" if r["commits_behind"] is None else plural(r["commits_behind"], "commit")
    echo(f"{r['repo']} {r['branch']}: indexed {r['commit'][:7]} ({r['commit_date']}), "
         f"head {(r['head'] or '?')[:7]}, {behind} behind, built {r['built_at']}")
    echo("  files: " + ", ".join(f"{k} {v}" for k, v in sorted(r["files_by_kind"].items())))
    echo("  chunks: " + ", ".join(f"{k} {v}" for k, v in sorted(r["chunks_by_kind"].items())))
    echo(f"  model: {r['embedder']}")
    echo(f"  rules: {r['rules']['source']}")
    if r.get("source") == "team snapshot":
        echo(f"  from the team snapshot {r['snapshot']} on {r['server']} (built elsewhere)")
    if r.get("needs_rebuild"):
        echo("  built by an older codevouch: run `codevouch index build` once "
             "(it embeds each chunk once more)")
    if r.get("drift"):
        echo(f"  drift: {r['drift']['summary']}")
    ov = r.get("overlay")
    if ov and ov["changed_files"]:
        over = ov["changed_files"] - ov["searched_live"]
        echo(f"  overlay: searches {plural(ov['searched_live'], 'changed file')} live beside the index"
             + (f" ({over} over its limit of {ov['file_limit']}: not searched)" if over else "")
             + f"; embeds at most {plural(ov['embed_limit'], 'new chunk')} per search"
             + (" (`codevouch index build` catches up)" if over else ""))
