"""`codevouch check-refs`: check the code references in an agent's answer against the working tree."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from codevouch.commands.common import JsonOpt, RepoOpt, fail, open_index, print_json, read_source
from codevouch.commands.exits import EXIT_MISSING
from codevouch.commands.invocation import echo
from codevouch.errors import CodevouchError
from codevouch.printable import one_line, plural


def check_refs_cmd(
    source: Annotated[str, typer.Argument(help="The answer (markdown or a patch); '-' for stdin.")] = "-",
    repo: RepoOpt = Path("."),
    strict: Annotated[bool, typer.Option(
        "--strict", help="Also fail (exit 3) on unknown names and refused paths.")] = False,
    show_all: Annotated[bool, typer.Option("--all", help="List the references that are fine too.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Check every path, line range, symbol and import an answer cites against the working tree.

    Exit code 0 when nothing is missing; 3 when a cited path, symbol, module or line range is
    missing (with --strict: also unknown names and paths outside the repository); 2 for
    unreadable input. Needs no index.
    """
    try:
        report = open_index(repo, None).check_refs(read_source(source, "text file"))
    except CodevouchError as exc:
        raise fail(exc) from exc
    if as_json:
        print_json({**report.to_json(), "passed": report.passed(strict)})
    else:
        for r in report.results:
            if r.status == "ok" and not show_all:
                continue
            # One line per reference, whatever the answer or the file names hold.
            echo(one_line(f"line {r.ref.line}: {r.status} ({r.reason}): {r.detail}"
                                + (f" -> {r.suggestion}" if r.suggestion else "")))
        for path, why in report.skipped:
            echo(one_line(f"skipped {path}: {why}"))
        counts = report.counts()
        echo(f"{plural(len(report.results), 'reference')}: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    if not report.passed(strict):
        raise typer.Exit(EXIT_MISSING)
