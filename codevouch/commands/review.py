"""`codevouch review`: a change cut into parts for an AI reviewer, optionally run through one."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from codevouch.commands.common import IndexOpt, JsonOpt, RepoOpt, fail, open_index, print_json
from codevouch.commands.exits import EXIT_EMPTY_SCOPE, EXIT_ERROR, EXIT_REVIEW_FAILED, EXIT_UNKNOWN_REVISION
from codevouch.commands.invocation import echo, invocation
from codevouch.errors import CodevouchError, EmptyScope, UnknownRevision
from codevouch.printable import plural, visible

if TYPE_CHECKING:
    from codevouch.review import Review

def review_cmd(
    revision: Annotated[Optional[str], typer.Argument(
        help="A..B (B against A) or A...B (B against its merge-base with A).", show_default=False)] = None,
    staged: Annotated[bool, typer.Option("--staged", help="Staged changes (index vs HEAD).")] = False,
    unstaged: Annotated[bool, typer.Option("--unstaged", help="Unstaged changes (working tree vs index).")] = False,
    untracked: Annotated[bool, typer.Option("--untracked", help="Untracked files (not ignored).")] = False,
    all_local: Annotated[bool, typer.Option("--all", help="Every local change (the default).")] = False,
    base: Annotated[Optional[str], typer.Option(
        "--base", help="The working tree against its merge-base with BRANCH.", metavar="BRANCH")] = None,
    budget: Annotated[Optional[int], typer.Option("--budget", metavar="TOKENS", help="Tokens per part.")] = None,
    model: Annotated[Optional[str], typer.Option("--model", metavar="NAME", help="Fit parts to this model's window.")] = None,
    no_related: Annotated[bool, typer.Option("--no-related", help="No related code from the index.")] = False,
    out: Annotated[Optional[Path], typer.Option(
        "--out", metavar="DIR", help="Write part-NNN.md files and manifest.json into this directory.")] = None,
    command: Annotated[Optional[str], typer.Option(
        "--exec", help="Run this reviewer once per part, the part on stdin (no shell).", metavar="CMD")] = None,
    timeout: Annotated[float, typer.Option("--timeout", metavar="SECONDS", help="Seconds per part for --exec.")] = 600.0,
    repo: RepoOpt = Path("."),
    index: IndexOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Cut a change into parts that fit a reviewer's budget; list everything it will not see."""
    try:
        from codevouch.review import review as review_change

        review = review_change(open_index(repo, index), revision, staged=staged, unstaged=unstaged,
                               untracked=untracked, all_local=all_local, base=base, budget=budget,
                               model=model, related=not no_related, command=command, timeout=timeout)
    except EmptyScope as exc:
        echo(f"codevouch: {exc}", err=True)
        raise typer.Exit(EXIT_EMPTY_SCOPE) from exc
    except UnknownRevision as exc:
        echo(f"codevouch: {exc}", err=True)
        raise typer.Exit(EXIT_UNKNOWN_REVISION) from exc
    except CodevouchError as exc:
        raise fail(exc) from exc
    names: list[str] = []
    if out is not None:
        names = _write(out, review)
    if as_json:
        print_json(review.manifest(with_markdown=out is None, files=names))
    elif command is not None:
        _print_results(review)
    elif out is None:
        for part in review.parts:
            echo(part.markdown)       # already printable (review/__init__.py)
            echo(f"<!-- codevouch: end of part {part.index} of {len(review.parts)} -->\n")
    echo(summary(review), err=not (out is not None and not as_json and command is None))
    if review.failed():
        raise typer.Exit(EXIT_REVIEW_FAILED)


def _write(out: Path, review: Review) -> list[str]:
    where = invocation().call.path(out)     # as the caller meant it; messages name it as given
    try:
        where.mkdir(parents=True, exist_ok=True)
        names = [f"part-{p.index:03d}.md" for p in review.parts]
        for name, part in zip(names, review.parts):
            (where / name).write_text(part.markdown, "utf-8")
        (where / "manifest.json").write_text(
            json.dumps(review.manifest(with_markdown=False, files=names), indent=2, ensure_ascii=False) + "\n",
            "utf-8")
    except OSError as exc:
        echo(f"codevouch: cannot write the review into {out}: {exc.strerror or exc}", err=True)
        raise typer.Exit(EXIT_ERROR) from exc
    return names


def _print_results(review: Review) -> None:
    for r in review.results:
        label = {"findings": "findings", "no_findings": "no findings", "failed": "FAILED",
                 "timed_out": "TIMED OUT"}[r.status]
        echo(f"## part {r.part} of {len(review.parts)}: {label} ({r.duration_s:.1f} s"
                   f"{'' if r.exit_code is None else f', exit {r.exit_code}'})")
        if r.error:
            echo(visible(f"error: {r.error}"))
        if r.output.strip():
            echo(visible(r.output.rstrip()))
        if not r.ok and r.stderr.strip():
            echo(visible("stderr: " + r.stderr.strip()[-2000:]))
        echo("")


def summary(review: Review) -> str:
    cov = review.plan.coverage()["totals"]
    largest = max((p.tokens for p in review.parts), default=0)
    text = (f"review: {plural(len(review.parts), 'part')}, largest {largest} of {review.budget.tokens} tokens; "
            f"files: {cov['files_included']} included, {cov['files_truncated']} truncated, "
            f"{cov['files_left_out']} left out; hunks: {cov['hunks_included']} included, "
            f"{cov['hunks_truncated']} truncated, {cov['hunks_left_out']} left out; "
            f"related code: {review.related['status']}")
    if review.related.get("reason"):
        text += f" ({review.related['reason']})"
    if review.results:
        failed = review.failed()
        text += (f"; reviewer: {plural(len(review.results) - len(failed), 'part')} ok, {len(failed)} failed"
                 + (f" (parts {', '.join(map(str, failed))})" if failed else ""))
    return text
