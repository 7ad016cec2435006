"""`codevouch index status`: what the index holds per repository and branch."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from codevouch.commands.common import IndexOpt, JsonOpt, fail, message_line, open_index, print_json
from codevouch.commands.invocation import echo, invocation
from codevouch.errors import CodevouchError, GitError
from codevouch.printable import plural


def _team_rows(here: Any) -> list[dict[str, Any]]:
    """A team reader's status in a clone with no --repo: the team snapshot of the clone here."""
    try:
        return list(here.status())
    except GitError:  # not in a repository: nothing to look up on the server
        return []


def size_text(n: int | float | None) -> str:
    """Bytes for people: `512 B`, `14.2 KiB`, `3.1 MiB`, `1.2 GiB`."""
    if n is None:
        return "?"
    size, unit = float(n), "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            break
        size /= 1024
    return f"{int(size)} B" if unit == "B" else f"{size:.1f} {unit}"


def _parts(sized: dict[str, Any], lexical: str) -> str:
    b = sized["bytes"]
    vectors = "on the server" if b["vectors"] is None else size_text(b["vectors"])
    return (f"{size_text(b['total'])} on disk (vectors {vectors}, ledger {size_text(b['ledger'])}, "
            f"{lexical} {size_text(b['lexical'])}, embedding cache {size_text(b['embedding_cache'])})")


def _with_sizes(rows: list[dict[str, Any]], usage: dict[str, Any]) -> list[dict[str, Any]]:
    """Each local row with its `size` (store/sizes.py): its chunks and what it holds alone on disk."""
    own = {(b["repo_id"], b["repo"], b["branch"]): b for b in usage.get("branches", [])}
    for r in rows:
        found = own.get((r["repo_id"], r["repo"], r["branch"])) if r.get("source") == "local" else None
        if found is not None:
            r["size"] = {"chunks": sum(r["chunks_by_kind"].values()) + r["history_chunks"],
                         **{k: v for k, v in found.items() if k not in ("repo", "repo_id", "branch")}}
    return rows


def _repositories(rows: list[dict[str, Any]], usage: dict[str, Any]) -> list[dict[str, Any]]:
    """The repositories of `rows`, with their sizes."""
    shown = {(r["repo_id"] or r["repo"]) for r in rows}
    return [repo for repo in usage.get("repositories", []) if (repo["repo_id"] or repo["repo"]) in shown]


def _echo_disk(usage: dict[str, Any], index_dir: Path) -> None:
    attributed = sum(r["bytes"]["total"] - r["bytes"]["embedding_cache"] for r in usage["repositories"])
    rest = max(usage["total"] - attributed - usage["embedding_cache"], 0)
    echo(f"{index_dir}: {size_text(usage['total'])} on disk; embedding cache {size_text(usage['embedding_cache'])} "
         f"(shared by content); {size_text(rest)} in no repository (usage records, team snapshots, free pages)")


def _echo_repository(sized: dict[str, Any]) -> None:
    echo(f"== {message_line(sized['repo'])}: {plural(len(sized['branches']), 'branch', 'branches')}, "
         f"{plural(sized['chunks'], 'chunk')}, {plural(sized['vectors'], 'vector')}, "
         + _parts(sized, "lexical copies"))


def _echo_row(r: dict[str, Any]) -> None:
    """One branch's lines."""
    behind = "? commits" if r["commits_behind"] is None else plural(r["commits_behind"], "commit")
    echo(f"{r['repo']} {r['branch']}: indexed {r['commit'][:7]} ({r['commit_date']}), "
               f"head {(r['head'] or '?')[:7]}, {behind} behind, built {r['built_at']}")
    echo("  files: " + ", ".join(f"{k} {v}" for k, v in sorted(r["files_by_kind"].items())))
    echo("  chunks: " + ", ".join(f"{k} {v}" for k, v in sorted(r["chunks_by_kind"].items())))
    if "size" in r:
        size = r["size"]
        echo(f"  size: {plural(size['chunks'], 'chunk')}; its own (no other branch shares them): "
             f"{plural(size['own_chunks'], 'chunk')}, {plural(size['own_vectors'], 'vector')}, "
             + _parts(size, "lexical copy"))
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
    from codevouch.store.sizes import disk_usage

    usage = disk_usage(index_dir, server=bool(invocation().call.env.chroma_url))
    rows = _with_sizes(rows, usage)
    repos = _repositories(rows, usage)
    if as_json:
        print_json({"index": str(index_dir), "branches": rows, "repositories": repos,
                    **({"disk": {"total": usage["total"], "embedding_cache": usage["embedding_cache"]}} if usage else {})})
        return
    if not rows and repo is not None and index_status_all(index_dir):
        # The directory holds other repositories: "nothing indexed" would say it is empty.
        echo(f"{repo} is not indexed in {index_dir} (it holds other repositories: `codevouch index status` "
             f"lists them); run `codevouch index build --repo {repo}`.")
    elif not rows:
        echo(f"nothing indexed in {index_dir}; run `codevouch index build`.")
    sizes = {(r["repo_id"] or r["repo"]): r for r in repos}
    seen: set[str] = set()
    for r in rows:
        key = r["repo_id"] or r["repo"]
        if key in sizes and key not in seen:
            seen.add(key)
            _echo_repository(sizes[key])
        _echo_row(r)
    if rows and usage:
        _echo_disk(usage, index_dir)
