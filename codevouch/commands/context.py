"""`codevouch context`: search, validate and print a context pack for an agent, within a token budget."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from codevouch.commands.common import (
    BranchOpt,
    BudgetOpt,
    IndexOpt,
    JsonOpt,
    KindOpt,
    LimitOpt,
    ModelOpt,
    NoOverlayOpt,
    NoRecordOpt,
    OverlayLimitOpt,
    PathOpt,
    fail,
    open_index,
    print_json,
)
from codevouch.commands.invocation import stdout
from codevouch.commands.many import AllReposOpt, ReposFileOpt, ReposOpt, one_repo, selection
from codevouch.errors import CodevouchError
from codevouch.request import ContextRequest


def context_cmd(
    query: Annotated[str, typer.Argument(help="What the agent needs, in words or code.")],
    repo: ReposOpt = None,
    branch: BranchOpt = None,
    limit: LimitOpt = 10,
    kind: KindOpt = None,
    path: PathOpt = None,
    budget: BudgetOpt = None,
    model: ModelOpt = None,
    reserve: Annotated[Optional[float], typer.Option(
        "--reserve", metavar="FRACTION", min=0.0, max=0.99,
        help="Fraction of the model's window kept free (default: $CODEVOUCH_RESERVE, [budget] reserve, "
             "else 0.10).")] = None,
    include_history: Annotated[bool, typer.Option(
        "--include-history", help="Also search deleted files, and pack historical text after the "
                                  "current code while room remains.")] = False,
    index: IndexOpt = None,
    no_record: NoRecordOpt = False,
    as_json: JsonOpt = False,
    no_overlay: NoOverlayOpt = False,
    overlay_limit: OverlayLimitOpt = None,
    repos_file: ReposFileOpt = None,
    all_repos: AllReposOpt = False,
) -> None:
    """Search, validate and print a context pack that fits a token budget (--budget or --model).

    Current code first in rank order; the report at the end says what was left out and why.
    --json prints the manifest (budget, index commit, included and left-out items) with the
    markdown. Files changed since the last build are searched live (the pack opens with a line
    saying how far the index is behind); --no-overlay searches the index only. --repo repeated,
    --repos FILE or --all-repos pack the hits of several repositories, fused in one ranking.
    """
    chosen = selection(repo, repos_file, all_repos)
    found = None
    try:
        # Every option checked once, by the request (the MCP server builds the same one).
        request = ContextRequest.of(query, k=limit, branch=branch, kinds=kind, include_history=include_history,
                                    budget=budget, model=model, reserve=reserve, overlay=not no_overlay, paths=path)
        if chosen is not None:
            from codevouch.commands.many import open_indexes
            from codevouch.foundhits import pack_across

            many = open_indexes(chosen, index, no_record, overlay_limit)
            found = many.search(request.search())
            pack = pack_across(found, request, many.call)
        else:
            pack = open_index(one_repo(repo), index, no_record=no_record, overlay_limit=overlay_limit).context(request)
    except CodevouchError as exc:
        raise fail(exc) from exc
    if as_json:
        print_json({**pack.manifest(), "markdown": pack.markdown})
    else:
        stdout().write(pack.markdown)
    if found is not None:
        from codevouch.commands.many import exit_of, skipped_lines

        skipped_lines(found)
        exit_of(found)
