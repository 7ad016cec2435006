"""Which repositories a read command searches (`--repo` repeated, `--repos FILE`, `--all-repos`),
and how search and context answer across several (codevouch/across.py fuses them).

One `--repo` (or none: the current directory) is the one-repository path, unchanged; the
commands call `selection` first and take that path when it answers None.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional, TypeVar

import typer

from codevouch.commands.common import print_json, usage
from codevouch.commands.exits import EXIT_ERROR, EXIT_MISSING, EXIT_NOT_INDEXED, EXIT_REPOS_FAILED
from codevouch.commands.invocation import echo, invocation, stdout
from codevouch.printable import json_text, one_line, visible

if TYPE_CHECKING:
    from codevouch.across import FoundHits, Indexes, Navigated

A = TypeVar("A")

ReposOpt = Annotated[Optional[list[Path]], typer.Option(
    "--repo", metavar="PATH", help="Repository path (default: the current directory). Repeat it to search several "
                                   "repositories as one.")]
ReposFileOpt = Annotated[Optional[Path], typer.Option(
    "--repos", metavar="FILE", help="Search the repositories a TOML file lists ([[repo]] tables, as `index build "
                                    "--repos`), as one.")]
AllReposOpt = Annotated[bool, typer.Option(
    "--all-repos", help="Search every repository the index holds, as one.")]


def selection(repo: list[Path] | None, repos_file: Path | None, all_repos: bool) -> list[Path] | None:
    """The repositories named, or None for the one-repository path (one --repo, or none); a usage
    error when the flags disagree. `--all-repos` answers [] (the index's own list, read later)."""
    from codevouch.errors import InputError

    given = sum((bool(repo), repos_file is not None, all_repos))
    if given > 1:
        raise usage("--repo, --repos FILE and --all-repos each choose the repositories: pass one of them.")
    if all_repos:
        return []
    if repos_file is not None:
        from codevouch.api import load_repos

        try:
            specs = load_repos(invocation().call.path(repos_file))
        except InputError as exc:
            raise usage(str(exc)) from exc
        return [s.path for s in specs]
    return list(repo) if repo and len(repo) > 1 else None


def one_repo(repo: list[Path] | None) -> Path:
    """The one repository of the one-repository path."""
    return repo[0] if repo else Path(".")


def open_indexes(chosen: list[Path], index: Path | None, no_record: bool = False,
                 overlay_limit: int | None = None) -> Indexes:
    """The library's Indexes for this call (`chosen` empty: every repository of the index)."""
    from codevouch.across import Indexes

    call = invocation().call
    record = False if no_record else None
    if not chosen:
        return Indexes.all(index, call=call, record=record, overlay_limit=overlay_limit)
    return Indexes([call.path(p) for p in chosen], index, record=record, overlay_limit=overlay_limit, call=call)


def render_search(found: FoundHits, fmt: str, keep: tuple[str, ...] | None, max_chars: int, show_all: bool) -> None:
    """The fused hits: --json a list of hits (each with `repository`) and one JSON object on stderr
    (fusion, repositories, skipped, overlays); text each hit's citation opened by its repository;
    brief one line a hit, its repository first."""
    from codevouch import validator
    from codevouch.foundhits import labelled
    from codevouch.results import Hits

    _notes(found, fmt == "json")
    if fmt == "json":
        print_json([f.to_json(keep, max_chars) for f in found])
        return
    weak = Hits(f.hit for f in found).note()
    if weak is not None and not show_all:
        echo(f"{weak} (--all shows the hits anyway)")
        return
    shown = [v for v in labelled(found) if v.verdict != "excluded"]
    if fmt == "brief":
        for f in found:
            if f.hit.check is not None and f.hit.verdict != "excluded":
                echo(one_line(f"{f.repository.path}  ") + validator.render_brief([f.hit.check]).rstrip("\n"))
    else:
        stdout().write(validator.render_text(shown, max_chars or None))
    if weak is not None:
        echo(weak)


def _notes(found: FoundHits, as_json: bool) -> None:
    """What stands beside the hits: the repositories skipped, and each index behind its working tree."""
    if as_json:
        summary = {k: v for k, v in found.to_json().items() if k != "hits"}
        invocation().streams.stderr.write(json_text(json.dumps({"across": summary}, ensure_ascii=False)) + "\n")
        return
    skipped_lines(found)
    for r, hits in found.answers:
        note = hits.overlay.note() if hits.overlay is not None else None
        if note:
            echo(one_line(f"note: {r.path}: {note}"), err=True)


def skipped_lines(found: FoundHits) -> None:
    """One line on stderr for each repository that could not be searched, and why."""
    for s in found.skipped:
        echo(one_line(f"codevouch: skipped {s.path}: {s.reason}"), err=True)


def exit_of(found: FoundHits) -> None:
    """Exit 23 when a repository was skipped and others searched; 5 when none was searched and each
    was not indexed, 1 when none was searched for another reason; else return."""
    if not found.skipped:
        return
    if found.answers:
        raise typer.Exit(EXIT_REPOS_FAILED)
    raise typer.Exit(EXIT_NOT_INDEXED if all(s.not_indexed for s in found.skipped) else EXIT_ERROR)


def show_many(chosen: list[Path], index: Path | None, name: str, branch: str | None, fmt: str, max_chars: int) -> None:
    """`show` in several repositories: json one answer (each hit and gone place with its
    `repository`); text each citation opened by its repository; context one pack. Exit 3 when no
    repository defines the name now, else 23 when one was skipped."""
    from codevouch import validator
    from codevouch.across import Found, FoundHits
    from codevouch.foundhits import labelled, pack_across
    from codevouch.request import ContextRequest

    shown = _navigated(lambda: open_indexes(chosen, index, no_record=True).show(name, branch=branch))
    found = FoundHits([Found(r, h) for r, s in shown.answers for h in s.hits], shown.skipped,
                      answers=[(r, s.searched) for r, s in shown.answers])
    if fmt == "json":
        print_json(shown.to_json(max_chars or None))
    else:
        _navigation_notes(shown, err=fmt == "context")
        for r, s in shown.answers if fmt == "text" else ():
            for was in s.was if s.gone else ():
                if was.reference_text is not None:
                    echo(one_line(f"{r.path}  {was.path}#L{was.start_line}-L{was.end_line} ({was.symbol}) at "
                                  f"{was.branch}@{was.commit[:7]}, reference only, do not implement against it:"))
                    echo(visible(was.reference_text[:max_chars] if max_chars else was.reference_text))
        if found and fmt == "context":
            stdout().write(pack_across(found, ContextRequest.of(name), invocation().call).markdown)
        elif found:
            stdout().write(validator.render_text(labelled(found), max_chars or None))
    if not found:
        raise typer.Exit(EXIT_MISSING if shown.answers else _none_answered(shown))
    _exit_skipped(shown)


def references_many(chosen: list[Path], index: Path | None, name: str, limit: int, as_json: bool) -> None:
    """`references` in several repositories: each use's path led by its repository's."""
    found = _navigated(lambda: open_indexes(chosen, index, no_record=True).references(name, limit=limit))
    if as_json:
        print_json(found.to_json())
    else:
        uses = [(repo, r) for repo, answer in found.answers for r in answer.references]
        for repo, r in uses:
            where = f" in {r.enclosing}" if r.enclosing else ""
            echo(one_line(f"{repo.path / r.path}:{r.line}: {r.kind} ({r.resolution}){where}: {r.context}"))
        if not uses:
            echo(one_line(f"no uses of {name} in the working trees of {len(found.answers)} repositories"))
        _navigation_notes(found)
    _exit_skipped(found)


def outline_many(chosen: list[Path], index: Path | None, path: str, as_json: bool) -> None:
    """`outline` in several repositories: each file led by its repository's path."""
    got = _navigated(lambda: open_indexes(chosen, index, no_record=True).outline(path))
    if as_json:
        print_json(got.to_json())
    else:
        for repo, answer in got.answers:
            last = None
            for e in answer.entries:
                if e.path != last:
                    echo(one_line(str(repo.path / e.path)))
                last = e.path
                echo(e.line())
        _navigation_notes(got)
    _exit_skipped(got)


def _navigated(run: Callable[[], A]) -> A:
    from codevouch.commands.common import fail
    from codevouch.errors import CodevouchError

    try:
        return run()
    except CodevouchError as exc:
        raise fail(exc) from exc


def _navigation_notes(got: Navigated[Any], err: bool = True) -> None:
    """Each repository's note, the repositories that refused the question, and those skipped."""
    for entry in got.to_json()["notes"]:
        echo(one_line(f"note: {entry['repository']['path']}: {entry['note']}"), err=err)
    for repo, why in got.refused:
        echo(one_line(f"note: {repo.path}: {why}"), err=True)
    for s in got.skipped:
        echo(one_line(f"codevouch: skipped {s.path}: {s.reason}"), err=True)


def _none_answered(got: Navigated[Any]) -> int:
    return EXIT_NOT_INDEXED if got.skipped and all(s.not_indexed for s in got.skipped) else EXIT_ERROR


def _exit_skipped(got: Navigated[Any]) -> None:
    """Exit 23 when a repository was skipped and others answered; as `exit_of` when none answered."""
    if got.skipped:
        raise typer.Exit(EXIT_REPOS_FAILED if got.answers else _none_answered(got))


__all__ = ["AllReposOpt", "ReposFileOpt", "ReposOpt", "exit_of", "one_repo", "open_indexes", "outline_many",
           "references_many", "render_search", "selection", "show_many", "skipped_lines"]
