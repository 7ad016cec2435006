"""`codevouch validate`: check snippets from any tool against the working tree."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from codevouch.commands.common import (
    JsonOpt,
    NoRecordOpt,
    RepoOpt,
    check_format,
    fail,
    message_line,
    open_index,
    read_source,
    render_results,
)
from codevouch.commands.exits import EXIT_HISTORICAL, EXIT_USAGE
from codevouch.commands.invocation import echo, invocation
from codevouch.errors import CodevouchError
from codevouch.validator.model import MALFORMED
from codevouch.vocabulary import Verdict


def validate_cmd(
    source: Annotated[str, typer.Argument(help="JSON list or JSON lines of snippets, LangChain Documents or "
                                                "LlamaIndex nodes; '-' for stdin.")] = "-",
    repo: RepoOpt = Path("."),
    index: Annotated[Optional[Path], typer.Option(
        "--index", metavar="DIR", help="Index directory: where this call's usage record goes (validation itself "
                        "needs only the snippets and the repository).")] = None,
    strict: Annotated[bool, typer.Option("--strict", help="Re-hash every file, even on the fast path.")] = False,
    fmt: Annotated[Optional[str], typer.Option(
        "--format", metavar="FORMAT", help="text (the default), json or context (markdown for agents).")] = None,
    input_format: Annotated[str, typer.Option(
        "--input-format", metavar="SHAPE", help="auto (the default: told apart per item), codevouch, langchain "
                                                "or llamaindex: read every item as that shape.")] = "auto",
    no_record: NoRecordOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Check snippets (from search --json or any tool) against the working tree.

    Exit code 0 when every snippet is usable, stale-but-ok or excluded; 3 when any is
    historical-only; 2 for malformed input (an item that cannot be read is reported as
    `malformed-input`, on stderr too, and the others are still judged).
    """
    from codevouch import validator

    fmt = check_format(fmt, as_json)
    try:
        call = invocation().call
        items = validator.parse_items(read_source(source, "JSON file"), lambda: call.env.max_snippets)
        idx = open_index(repo, index, no_record=no_record)
        results = idx.validate(items, strict=strict, input_format=input_format)
        # The snippets were handed in: a pack shows their history too (marked as such).
        render_results(results, fmt, idx, include_history=True)
    except CodevouchError as exc:
        raise fail(exc) from exc
    malformed = [r for r in results if r.reason == MALFORMED]
    for r in malformed:
        echo(f"codevouch: {message_line(r.detail)}", err=True)
    if malformed:
        raise typer.Exit(EXIT_USAGE)
    if any(r.verdict == Verdict.HISTORICAL_ONLY for r in results):
        raise typer.Exit(EXIT_HISTORICAL)

