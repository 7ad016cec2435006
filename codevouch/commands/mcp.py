"""`codevouch mcp`: serve the index's tools to an agent over MCP (stdio)."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from codevouch.commands.common import IndexOpt, fail
from codevouch.commands.many import AllReposOpt, ReposFileOpt, ReposOpt, one_repo, selection
from codevouch.errors import CodevouchError


def mcp_cmd(
    repo: ReposOpt = None,
    index: IndexOpt = None,
    allow_build: Annotated[bool, typer.Option(
        "--allow-build", help="Add a `build` tool (takes the index's writer lock like any build).")] = False,
    embedder: Annotated[Optional[str], typer.Option(
        "--embedder", metavar="NAME", hidden=True, help="Build model for --allow-build (tests use 'fake-bow-64'; default: the "
                                        "configured one).")
    ] = None,
    repos_file: ReposFileOpt = None,
    all_repos: AllReposOpt = False,
) -> None:
    """Run an MCP server on stdio: search, context, validate, status, health and check_refs tools for
    one repository (read-only unless --allow-build). Needs the `mcp` extra: pip install -e '.[mcp]' in a checkout.
    With --repo repeated, --repos FILE or --all-repos, search and context take `repos` and search
    those repositories as one; the other tools serve the first."""
    from codevouch.mcp_server import create_server, serve_guarded

    chosen = selection(repo, repos_file, all_repos)
    try:
        if chosen is not None:
            from codevouch.mcp_across import create_server_across

            server = create_server_across(chosen or None, index, allow_build=allow_build, embedder=embedder)
        else:
            server = create_server(one_repo(repo), index, allow_build=allow_build, embedder=embedder)
    except CodevouchError as exc:
        raise fail(exc) from exc
    # Every request gets an answer: lines the SDK would drop silently are answered with an error.
    serve_guarded(lambda: server.run("stdio"))
