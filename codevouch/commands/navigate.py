"""`codevouch show`, `codevouch references`, `codevouch outline`: navigation as the working tree
has it now (codevouch/navigate/)."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from codevouch.commands.common import (
    BranchOpt,
    IndexOpt,
    JsonOpt,
    check_format,
    fail,
    open_index,
    print_json,
    render_results,
)
from codevouch.commands.exits import EXIT_MISSING
from codevouch.commands.invocation import echo
from codevouch.commands.many import AllReposOpt, ReposFileOpt, ReposOpt, one_repo, selection
from codevouch.errors import CodevouchError
from codevouch.printable import one_line, visible
from codevouch.results import HIT_CHARS
from codevouch.validator.render import capped_code

MaxCharsOpt = Annotated[int, typer.Option(
    "--max-chars", metavar="N", min=0, help=f"At most N characters of code per hit (default {HIT_CHARS:,}; 0: no cap).")]


def show_cmd(
    name: Annotated[str, typer.Argument(help="NAME (`cancel_order`, `OrderService.cancel_order`), PATH#NAME, "
                                             "or PATH:START-END (the definition that holds those lines).")],
    repo: ReposOpt = None,
    branch: BranchOpt = None,
    index: IndexOpt = None,
    fmt: Annotated[Optional[str], typer.Option(
        "--format", metavar="FORMAT", help="text (the default), json or context (markdown for agents).")] = None,
    as_json: JsonOpt = False,
    max_chars: MaxCharsOpt = HIT_CHARS,
    repos_file: ReposFileOpt = None,
    all_repos: AllReposOpt = False,
) -> None:
    """Show a definition's current code, with its citation and verdict.

    Read from the working tree now: found live when written since the last build, at its new place
    when moved or renamed. Exit 3 when it is defined nowhere now (gone: where the index last saw it).
    With several repositories, each hit names its repository."""
    fmt = check_format(fmt, as_json, ("text", "json", "context"))
    chosen = selection(repo, repos_file, all_repos)
    if chosen is not None:
        from codevouch.commands.many import show_many

        show_many(chosen, index, name, branch, fmt, max_chars)
        return
    try:
        idx = open_index(one_repo(repo), index, no_record=True)
        shown = idx.show(name, branch=branch)
    except CodevouchError as exc:
        raise fail(exc) from exc
    if fmt == "json":
        print_json(shown.to_json(max_chars or None))
    else:
        note = shown.note()
        if note:
            echo(one_line(f"note: {note}"), err=fmt == "context")     # the markdown stays whole
        for was in shown.was if fmt == "text" else ():
            if was.reference_text is not None:
                echo(one_line(f"{was.path}#L{was.start_line}-L{was.end_line} ({was.symbol}) at {was.branch}@{was.commit[:7]}, "
                              "reference only, do not implement against it:"))
                echo(visible(capped_code(was.reference_text, was.path, was.start_line, was.end_line, max_chars or None)))
        if shown.hits:
            render_results([h.check for h in shown.hits if h.check is not None], fmt, idx, False,
                           max_chars=max_chars or None)
    if not shown.hits:
        raise typer.Exit(EXIT_MISSING)


def references_cmd(
    name: Annotated[str, typer.Argument(help="The name whose uses to list (`cancel_order`, `OrderService.cancel_order`).")],
    repo: ReposOpt = None,
    limit: Annotated[int, typer.Option("--limit", "-k", metavar="N", min=1, max=10_000,
                                       help="At most N references (a note says when there were more).")] = 200,
    as_json: JsonOpt = False,
    repos_file: ReposFileOpt = None,
    all_repos: AllReposOpt = False,
    index: IndexOpt = None,
) -> None:
    """List where a name is used in the working tree now: calls, imports, inheritance, type uses.

    Each with path, line, the enclosing definition, one line of context, and `exact` or `by-name`
    (no type inference: a method call is matched by its name). With several repositories (at most
    N uses in each), each path is led by its repository's."""
    chosen = selection(repo, repos_file, all_repos)
    if chosen is not None:
        from codevouch.commands.many import references_many

        references_many(chosen, index, name, limit, as_json)
        return
    try:
        found = open_index(one_repo(repo), index, no_record=True).references(name, limit=limit)
    except CodevouchError as exc:
        raise fail(exc) from exc
    if as_json:
        print_json(found.to_json())
        return
    for r in found.references:
        where = f" in {r.enclosing}" if r.enclosing else ""
        echo(one_line(f"{r.path}:{r.line}: {r.kind} ({r.resolution}){where}: {r.context}"))
    if not found.references:
        echo(one_line(f"no uses of {name} in the working tree"))
    if found.note:
        echo(one_line(f"note: {found.note}"), err=True)


def outline_cmd(
    path: Annotated[str, typer.Argument(help="A file (every definition) or a directory (each file's top-level ones).")],
    repo: ReposOpt = None,
    as_json: JsonOpt = False,
    repos_file: ReposFileOpt = None,
    all_repos: AllReposOpt = False,
    index: IndexOpt = None,
) -> None:
    """List what a file defines now: kind, qualified name, signature and current lines.

    With several repositories, PATH from each one's top, each file led by its repository's path."""
    chosen = selection(repo, repos_file, all_repos)
    if chosen is not None:
        from codevouch.commands.many import outline_many

        outline_many(chosen, index, path, as_json)
        return
    try:
        got = open_index(one_repo(repo), index, no_record=True).outline(path)
    except CodevouchError as exc:
        raise fail(exc) from exc
    if as_json:
        print_json(got.to_json())
        return
    last = None
    for e in got.entries:
        if e.path != last and got.path != e.path:
            echo(one_line(e.path))
        last = e.path
        echo(e.line())
    for note in got.notes:
        echo(f"note: {note}", err=True)
