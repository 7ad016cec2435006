"""`codevouch search`: search a branch and check every hit against the working tree."""
from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from codevouch.commands.common import (
    BranchOpt,
    IndexOpt,
    JsonOpt,
    KindOpt,
    LimitOpt,
    NoOverlayOpt,
    NoRecordOpt,
    OverlayLimitOpt,
    PathOpt,
    check_format,
    fail,
    open_index,
    overlay_note,
    print_json,
    render_results,
)
from codevouch.commands.invocation import echo, invocation, stdout
from codevouch.commands.many import AllReposOpt, ReposFileOpt, ReposOpt, one_repo, selection
from codevouch.errors import CodevouchError, InputError
from codevouch.printable import json_text, one_line, plural
from codevouch.request import SearchRequest
from codevouch.results import HIT_CHARS, check_fields
from codevouch.vocabulary import Verdict

if TYPE_CHECKING:
    from codevouch.api import Index
    from codevouch.results import Hit, Hits


def search_cmd(
    query: Annotated[str, typer.Argument(help="What you are looking for, in words or code.")],
    repo: ReposOpt = None,
    branch: BranchOpt = None,
    limit: LimitOpt = 10,
    kind: KindOpt = None,
    path: PathOpt = None,
    include_history: Annotated[bool, typer.Option(
        "--include-history", help="Also return chunks of files deleted from the branch.")] = False,
    no_validate: Annotated[bool, typer.Option(
        "--no-validate", help="Skip the working-tree check (hits carry no verdict).")] = False,
    fmt: Annotated[Optional[str], typer.Option(
        "--format", metavar="FORMAT", help="text (the default), brief (one line per hit: verdict, path:start-end, symbol, "
                         "similarity), json or context (markdown for agents).")] = None,
    show_all: Annotated[bool, typer.Option(
        "--all", help="Show the hits even when none is a good match (otherwise one line says so).")] = False,
    mode: Annotated[str, typer.Option(
        "--mode", metavar="MODE", help="hybrid (dense + lexical, fused by rank), dense or lexical.")] = "hybrid",
    index: IndexOpt = None,
    no_record: NoRecordOpt = False,
    as_json: JsonOpt = False,
    no_overlay: NoOverlayOpt = False,
    overlay_limit: OverlayLimitOpt = None,
    fields: Annotated[Optional[list[str]], typer.Option(
        "--fields", metavar="FIELDS", help="With --json: only these fields of each hit, comma-separated or repeated "
                                           "(path,start_line,end_line,symbol,verdict,citation,code for an agent).")] = None,
    max_chars: Annotated[int, typer.Option(
        "--max-chars", metavar="N", help=f"At most N characters of code per hit (default {HIT_CHARS:,}; 0: no cap); a "
                                         "cut hit says which lines it leaves out.")] = HIT_CHARS,
    repos_file: ReposFileOpt = None,
    all_repos: AllReposOpt = False,
) -> None:
    """Search a branch and check every hit against the working tree.

    Files that changed since the last build (commits, edits, untracked files) are searched live
    beside the index, and a line says how far the index is behind; --no-overlay turns that off.

    --repo repeated, --repos FILE or --all-repos search several repositories as one ranking, each
    hit checked in its own working tree (docs/SEARCH.md, "Across repositories")."""
    fmt = check_format(fmt, as_json, SEARCH_FORMATS)
    chosen = selection(repo, repos_file, all_repos)
    try:
        keep = _shape(fields, max_chars, fmt)
        # Every option checked once, by the request (the MCP server builds the same one).
        request = SearchRequest.of(query, k=limit, branch=branch, kinds=kind, include_history=include_history,
                                   validate=not no_validate, mode=mode, overlay=not no_overlay, paths=path)
        if chosen is not None:
            _search_many(request, chosen, index, (no_record, overlay_limit), (fmt, keep, max_chars, show_all))
            return
        idx = open_index(one_repo(repo), index, no_record=no_record, overlay_limit=overlay_limit)
        hits = idx.search(request)
    except CodevouchError as exc:
        raise fail(exc) from exc
    _overlay_line(hits, fmt)
    _gone_line(hits, fmt)
    weak = hits.note()
    if weak is not None and not show_all and fmt in ("text", "brief"):
        # Ten poor hits read as ten answers: one line instead (--json keeps them, each with
        # good_match false; --all shows them).
        echo(f"{weak} (--all shows the hits anyway)")
        return
    if no_validate:
        _render_unvalidated([h.to_json(keep, max_chars) for h in hits], fmt)
        return
    if path and not len(hits) and fmt in ("text", "brief"):
        # Empty because of the filter, not the query: say so rather than print nothing.
        echo("no indexed file matches " + " ".join(f"--path {shlex.quote(p)}" for p in path))
        return
    if fmt == "json":
        print_json([h.to_json(keep, max_chars) for h in hits])     # the one hit form, as the MCP server's
        return
    _render_checked(hits, fmt, idx, include_history, weak, max_chars)


SEARCH_FORMATS = ("text", "brief", "json", "context")


def _search_many(request: SearchRequest, chosen: list[Path], index: Path | None, opened: tuple[bool, int | None],
                 shown: tuple[str, tuple[str, ...] | None, int, bool]) -> None:
    """The search across several repositories, fused (commands/many.py renders it and sets the exit)."""
    from codevouch.commands.many import exit_of, open_indexes, render_search

    fmt, keep, max_chars, show_all = shown
    if not request.validate:
        raise InputError("--no-validate searches one repository: across several, each hit is checked in its own "
                         "working tree.")
    if fmt == "context":
        raise InputError("--format context reads one repository; across several, run `codevouch context` with the "
                         "same repository flags.")
    found = open_indexes(chosen, index, *opened).search(request)
    render_search(found, fmt, keep, max_chars, show_all)
    exit_of(found)


def _shape(fields: list[str] | None, max_chars: int, fmt: str) -> tuple[str, ...] | None:
    """The fields --json keeps (None: all), checked with the size cap; InputError says what to give."""
    if max_chars < 0:
        raise InputError(f"--max-chars must be 0 (no cap) or a number of characters, got {max_chars}.")
    if fields and fmt != "json":
        raise InputError("--fields chooses the fields of each hit in JSON output: add --json.")
    return check_fields(fields)


def _render_checked(hits: Hits, fmt: str, idx: Index, include_history: bool, weak: str | None,
                    max_chars: int = 0) -> None:
    """The validated hits in a format other than json: excluded ones hidden from text and brief
    (a line counts them), then the weak-match line when there is one. Text: each hit's code
    within `max_chars` (0: whole), a class's outline after its header."""
    checked = [h for h in hits if h.check is not None]
    kept = [h for h in checked if h.verdict != Verdict.EXCLUDED] if fmt in ("text", "brief") else checked
    results = [h.check for h in checked if h.check is not None]
    shown = [h.check for h in kept if h.check is not None]
    try:
        note = (hits.overlay.note() or "") if hits.overlay is not None else ""
        render_results(shown, fmt, idx, include_history, live_note=note, max_chars=max_chars or None,
                       extras=[_outline_lines(h) for h in kept])
    except CodevouchError as exc:
        raise fail(exc) from exc
    if weak is not None and fmt in ("text", "brief"):
        echo(weak)
    if len(shown) < len(results):
        echo(f"({plural(len(results) - len(shown), 'excluded hit')} hidden; --json lists them)")


def _outline_lines(hit: Hit) -> str | None:
    """A hit's outline for people: the container's header and its members' signatures."""
    o = hit.outline
    if o is None or hit.current is None:
        return None
    body = "\n".join("    " + line for line in o.text.split("\n"))
    return f"outline of {o.name} ({hit.current.path}#L{o.start}-L{o.end}), from the working tree:\n{body}"


def _gone_line(hits: Hits, fmt: str) -> None:
    """Say that the name the query spells was defined when indexed and is gone now: a line before
    text; on stderr for brief, and as one JSON object there for --json (stdout stays the hits)."""
    gone = hits.gone_summary()
    if gone is None or fmt == "context":
        return
    if fmt == "json":
        invocation().streams.stderr.write(json_text(json.dumps({"gone": gone}, ensure_ascii=False)) + "\n")
        return
    echo(one_line(f"note: {gone['note']}"), err=fmt == "brief")


def _overlay_line(hits: Hits, fmt: str) -> None:
    """How far the index is behind, where the format has room for it."""
    if fmt == "brief":
        # One line per hit on stdout, nothing else, for pipes (the note goes to stderr).
        note = hits.overlay.note() if hits.overlay is not None else None
        if note:
            echo(f"note: {note}", err=True)
    elif fmt != "context":
        overlay_note(hits.overlay, fmt == "json")


def _render_unvalidated(snippets: list[dict], fmt: str) -> None:
    from codevouch.printable import one_line, visible
    from codevouch.validator import brief_line

    if fmt == "json":
        print_json(snippets)
        return
    for s in snippets:
        if fmt == "brief":
            echo(brief_line(None, s["path"], s["start_line"], s["end_line"], s["symbol"], s))
            continue
        sim = s.get("similarity")
        shown = f"similarity {sim:.2f}" if isinstance(sim, (int, float)) else f"rank score {s['score']:.3f}"
        echo(one_line(f"{s['path']}#L{s['start_line']}-L{s['end_line']} ({s['symbol']}) "
                            f"{s['branch']}@{s['commit'][:7]} {shown} [{s['status']}, not validated]"))
        echo(visible(s["text"]))
        echo("")
    stdout().flush()
