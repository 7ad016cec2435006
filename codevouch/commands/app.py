"""The typer app of every command in this package (`codevouch serve` joins it in codevouch/cli.py).

Built by `build_app()` rather than at import: the CLI's path to a running engine imports none of
typer, and the engine builds the same app once and runs each forwarded call through it, so a
call answers with the same bytes and exit code wherever it runs.

A call in-process that names one command (`codevouch search ...`, `codevouch index status ...`)
builds the app with that command alone (`build_app(argv)`): the other command modules are not
imported. Anything else (`--help`, a group without its command, a name no command has) builds
the whole app, so help, listings and errors come from the full app as before.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import typer

# Every command: (group or "" for the top level, name) -> (module in this package, function,
# typer's options for it), in the order the app lists them.
COMMANDS: dict[tuple[str, str], tuple[str, str, dict[str, Any]]] = {
    ("index", "build"): ("index_build", "index_build", {}),
    ("index", "status"): ("index_status", "index_status", {}),
    ("index", "health"): ("index_health", "index_health", {}),
    ("index", "forget"): ("index_forget", "index_forget", {}),
    ("hooks", "install"): ("hooks", "hooks_install", {}),
    ("hooks", "uninstall"): ("hooks", "hooks_uninstall", {}),
    ("hooks", "run"): ("hooks", "hooks_run", {"hidden": True}),
    ("", "search"): ("search", "search_cmd", {}),
    ("", "context"): ("context", "context_cmd", {}),
    ("", "validate"): ("validate", "validate_cmd", {}),
    ("", "drift"): ("drift", "drift_cmd", {}),
    ("", "check-refs"): ("check_refs", "check_refs_cmd", {}),
    ("", "show"): ("navigate", "show_cmd", {}),
    ("", "references"): ("navigate", "references_cmd", {}),
    ("", "outline"): ("navigate", "outline_cmd", {}),
    ("", "mcp"): ("mcp", "mcp_cmd", {}),
    ("", "review"): ("review", "review_cmd", {}),
}


def called(argv: Sequence[str], extra: Sequence[str] = ()) -> tuple[str, str] | None:
    """The (group, name) of the one command `argv` (the arguments after `codevouch`) runs, when
    its first words name one exactly; None otherwise. `extra`: top-level names defined elsewhere
    (`serve`). The app has no option of its own before the command but --help, so the first
    word is the command."""
    if not argv:
        return None
    if argv[0] in extra or ("", argv[0]) in COMMANDS:
        return ("", argv[0])
    if len(argv) > 1 and (argv[0], argv[1]) in COMMANDS:
        return (argv[0], argv[1])
    return None


def build_app(only: tuple[str, str] | None = None) -> typer.Typer:
    """Every command; with `only` (a key of COMMANDS, from `called`), that command alone in the
    same groups, so it parses, helps and fails as in the full app. The groups stay, so typer
    never runs a lone command as the app itself."""
    # Help is plain text (rich_markup_mode=None): Rich markup read `[health]` and `'.[mcp]'` in
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
    groups = {"": app, "index": index_app, "hooks": hooks_app}
    for key, (module, function, options) in COMMANDS.items():
        if only is None or key == only:
            groups[key[0]].command(key[1], **options)(_function(module, function))
    return app


def _function(module: str, name: str) -> Callable[..., Any]:
    # __import__, not importlib.import_module: the latter bypasses the import machinery's C entry
    # that `python -X importtime` reports from, and a test of what a call imports reads that.
    fn: Callable[..., Any] = getattr(__import__(f"codevouch.commands.{module}", fromlist=[name]), name)
    return fn
