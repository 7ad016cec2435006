"""`codevouch hooks install|uninstall`: git hooks that rebuild the current branch in the background.

The one place codevouch writes into a repository, and only when asked; see codevouch/indexer/hooks.py.
"""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from codevouch.api import DEFAULT_EMBEDDER
from codevouch.commands.common import IndexOpt, JsonOpt, RepoOpt, fail, message_line, open_index, print_json
from codevouch.commands.invocation import echo, invocation
from codevouch.errors import CodevouchError

WaitOpt = Annotated[float, typer.Option(
    "--wait", metavar="SECONDS", help="Seconds a hook's build waits for another build on the index (default: an hour).")]


def hooks_install(
    repo: RepoOpt = Path("."),
    index: IndexOpt = None,
    wait: WaitOpt = 3600.0,
    embedder: Annotated[Optional[str], typer.Option(
        "--embedder", metavar="NAME", hidden=True, help="Embedding model (tests use 'fake-bow-64'; default: the configured one).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Add post-commit, post-merge and post-checkout hooks that build the current branch in the
    background after each commit, merge and branch checkout (existing hooks still run)."""
    try:
        report = open_index(repo, index, embedder).install_hooks(wait)
    except CodevouchError as exc:
        raise fail(exc) from exc
    if as_json:
        print_json(report.to_json())
        return
    echo(f"hooks in {message_line(str(report.hooks_dir))} ({report.source}); builds log to "
               f"{message_line(str(report.log))}")
    for h in report.hooks:
        extra = f" (the hook that was there runs after it: {message_line(h.chained.name)})" if h.chained else ""
        echo(f"  {h.name}: {h.action}{extra}")


def hooks_uninstall(repo: RepoOpt = Path("."), as_json: JsonOpt = False) -> None:
    """Remove codevouch's hooks and put back exactly the hooks that were there before (lines you
    added to codevouch's hooks are kept; it refuses, changing nothing, when it cannot tell them apart)."""
    try:
        report = open_index(repo, None).uninstall_hooks()
    except CodevouchError as exc:
        raise fail(exc) from exc
    if as_json:
        print_json(report.to_json())
        return
    echo(f"hooks in {message_line(str(report.hooks_dir))}:")
    for h in report.hooks:
        echo(f"  {h.name}: {h.action}" + (f" ({message_line(h.note)})" if h.note else ""))


def hooks_run(
    hook: Annotated[str, typer.Argument(help="The hook git ran.")],
    args: Annotated[Optional[list[str]], typer.Argument(help="git's arguments to the hook.")] = None,
    installed_for: Annotated[Path, typer.Option(
        "--for", metavar="GITDIR", help="The git directory the hooks were installed for.")]
    = Path("."),
    index: IndexOpt = None,
    wait: WaitOpt = 3600.0,
    embedder: Annotated[str, typer.Option("--embedder", metavar="NAME")] = DEFAULT_EMBEDDER,
    branch: Annotated[Optional[str], typer.Option(
        "--branch", metavar="BRANCH", help="The branch git was on when the hook fired (default: HEAD's branch now).")] = None,
    commit: Annotated[Optional[str], typer.Option(
        "--commit", metavar="COMMIT", help="The commit git was on when the hook fired.")]
    = None,
) -> None:
    """What an installed hook starts in the background (not for people): build, log, exit 0."""
    # Out of the terminal's session already (engine/handoff.detach, before the engine was asked):
    # the build may run in the engine, on a thread of its own, which must not touch the process.
    from codevouch.api import index_dir_of
    from codevouch.callreads import store_settings
    from codevouch.indexer import hooks

    call = invocation().call
    index_dir = index_dir_of(index, call)
    fired = hooks.Fired(branch or None, commit or None)
    hooks.run_hook(hook, list(args or ()), hooks.Installed(call.path(installed_for), index_dir, embedder, wait),
                   repo=call.path("."), fired=fired, store=store_settings(call), numpy_texts=call.env.build_numpy_texts)
    raise typer.Exit(0)
