"""The typer app of every command in this package (`codevouch serve` joins it in codevouch/cli.py).

Built by `build_app()` rather than at import: the CLI's path to a running engine imports none of
typer, and the engine builds the same app once and runs each forwarded call through it, so a
call answers with the same bytes and exit code wherever it runs.
"""
from __future__ import annotations

import typer

from codevouch.commands import (
    check_refs,
    context,
    drift,
    hooks,
    index_build,
    index_health,
    index_status,
    mcp,
    review,
    search,
    validate,
)


def build_app() -> typer.Typer:
    # Help is plain text (rich_markup_mode=None): Rich markup read `[health]` and `codevouch[mcp]` in
    # the help strings as tags and dropped them, and labelled every flag `<bool>`.
    app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_show_locals=False,
                      rich_markup_mode=None,
                      help="Code retrieval index for git repositories that checks every hit against "
                           "the working tree before it is used.")
    index_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help="Build and inspect the index.")
    app.add_typer(index_app, name="index")
    hooks_app = typer.Typer(no_args_is_help=True, help="Git hooks that rebuild the current branch after commits "
                                                        "and checkouts (the one thing codevouch writes into a repository).")
    app.add_typer(hooks_app, name="hooks")

    index_app.command("build")(index_build.index_build)
    index_app.command("status")(index_status.index_status)
    index_app.command("health")(index_health.index_health)
    hooks_app.command("install")(hooks.hooks_install)
    hooks_app.command("uninstall")(hooks.hooks_uninstall)
    hooks_app.command("run", hidden=True)(hooks.hooks_run)
    app.command("search")(search.search_cmd)
    app.command("context")(context.context_cmd)
    app.command("validate")(validate.validate_cmd)
    app.command("drift")(drift.drift_cmd)
    app.command("check-refs")(check_refs.check_refs_cmd)
    app.command("mcp")(mcp.mcp_cmd)
    app.command("review")(review.review_cmd)
    return app
