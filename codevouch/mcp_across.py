"""The MCP server on several repositories: `codevouch mcp --repo A --repo B` or `--all-repos`.

The one-repository server (mcp_server.py) with its `search`, `context`, `show`, `references` and
`outline` tools replaced by ones that take `repos`: a list of the server's repositories (each by
its path or its directory's name), or "all" (the default). Only repositories the server was
started on are searched: a name outside them is refused, never opened. The other tools
(validate, status, health, check_refs) serve the first repository, as on a one-repository server. Calls run one at a time on the
server's own warm state (its Resident), as every other tool's.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from pydantic import Field

from codevouch.across import FoundHits, Indexes, indexed_repositories
from codevouch.call import Call
from codevouch.errors import InputError, NotIndexed
from codevouch.foundhits import pack_across
from codevouch.mcp_calls import serve_tool
from codevouch.mcp_server import Branch, Fields, History, K, Kinds, MaxChars, Mode, Overlay, Paths, Query, Tools
from codevouch.navigate.tools import Name
from codevouch.request import MOST_BUDGET, ContextRequest, SearchRequest
from codevouch.results import HIT_CHARS, check_fields, hits_text
from codevouch.vocabulary import Verdict

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

T = TypeVar("T")

Repos = Annotated[list[Annotated[str, Field(min_length=1, max_length=4096)]] | Literal["all"], Field(
    description="The repositories to search: \"all\" (the server's every repository) or a list of them, each "
                "by its path or its directory's name.")]
NavMaxChars = Annotated[int, Field(ge=0, le=10_000_000, description="Most characters of code per hit (0: no cap).")]
Budget = Annotated[int | None, Field(ge=1, le=MOST_BUDGET, description="Token budget for the pack.")]


class AcrossTools:
    """`search` and `context` over the server's repositories (None: every one the index holds)."""

    def __init__(self, tools: Tools, repos: Sequence[Path] | None) -> None:
        self.tools = tools
        self.repos = list(repos) if repos is not None else None

    def _serve(self, fn: Callable[[Call], T]) -> T:
        return serve_tool(self.tools.resident, fn)

    def _chosen(self, repos: list[str] | Literal["all"], call: Call) -> Indexes:
        """The Indexes of the repositories asked for, each one of the server's (InputError otherwise)."""
        from codevouch.api import index_dir_of

        index_dir = index_dir_of(self.tools.index_dir, call)
        known = self.repos if self.repos is not None else indexed_repositories(index_dir)
        if repos == "all":
            return Indexes(known, index_dir, embedder=self.tools.embedder, call=call, background=False)
        by_name = {str(p): p for p in known} | {p.name: p for p in known}
        unknown = [r for r in repos if r not in by_name]
        if unknown:
            raise InputError(f"not a repository of this server: {', '.join(unknown)}; pass \"all\" or some of: "
                             f"{', '.join(str(p) for p in known)}.")
        return Indexes([by_name[r] for r in repos], index_dir, embedder=self.tools.embedder, call=call,
                       background=False)

    def search(self, query: Query, repos: Repos = "all", k: K = 10, branch: Branch = None, kinds: Kinds = None,
               include_history: History = False, mode: Mode = "hybrid", overlay: Overlay = True,
               paths: Paths = None, fields: Fields = None, max_chars: MaxChars = HIT_CHARS) -> dict[str, Any]:
        """Search several repositories as one ranking, every hit checked against its own repository's
        working tree: each hit names its `repository` (path, remote). `code` is current code to use
        (null for historical-only). `skipped`: repositories that could not be searched, and why."""
        keep = check_fields(fields)
        request = SearchRequest.of(query, k=k, branch=branch, kinds=kinds, include_history=include_history,
                                   mode=mode, overlay=overlay, paths=paths)
        found = self._serve(lambda call: self._chosen(repos, call).search(request))
        return _answer(found, keep, max_chars)

    def context(self, query: Query, repos: Repos = "all", k: K = 10, branch: Branch = None, kinds: Kinds = None,
                include_history: History = False, budget: Budget = None,
                model: Annotated[str | None, Field(max_length=200, description="Model name from the registry.")] = None,
                overlay: Overlay = True, paths: Paths = None) -> str:
        """A markdown context pack of several repositories' hits, fused in one ranking, within a token
        budget; each piece names its repository. Repositories that could not be searched are listed."""
        request = ContextRequest.of(query, k=k, branch=branch, kinds=kinds, include_history=include_history,
                                    budget=budget, model=model, overlay=overlay, paths=paths)

        def run(call: Call) -> str:
            found = self._chosen(repos, call).search(request.search())
            skipped = "".join(f"\nskipped {s.path}: {s.reason}" for s in found.skipped)
            return pack_across(found, request, call).markdown + skipped
        return self._serve(run)

    def show(self, name: Name, repos: Repos = "all", branch: Annotated[str | None, Field(
                 max_length=250, description="Branch whose index proposes the files (default: the current one).")] = None,
             max_chars: NavMaxChars = HIT_CHARS) -> dict[str, Any]:
        """The current code of a definition you can name, in each of the repositories (`repos`), each
        hit naming its `repository`: use it instead of search when you know the name. `code` is read
        from each working tree now. Where the name is defined nowhere now, `gone` lists where the
        index last saw it (reference only). `refused`/`skipped`: repositories that could not answer."""
        return self._serve(lambda call: self._chosen(repos, call).show(name, branch=branch)).to_json(max_chars or None)

    def references(self, name: Annotated[str, Field(min_length=1, max_length=500, description=(
                       "The name whose uses to find (`cancel_order`, `OrderService.cancel_order`)."))],
                   repos: Repos = "all",
                   limit: Annotated[int, Field(ge=1, le=10_000, description="Most references in each repository (a "
                                                                              "note says when there were more).")] = 200,
                   ) -> dict[str, Any]:
        """Where a name is used in the working trees of the repositories (`repos`) now, each use with
        its `repository`, path, line, enclosing definition and one line of context; `resolution`
        `exact` or `by-name` (no type inference)."""
        return self._serve(lambda call: self._chosen(repos, call).references(name, limit=limit)).to_json()

    def outline(self, path: Annotated[str, Field(min_length=1, max_length=1000, description=(
                    "A file, or a directory for its files' top-level definitions, from each repository's top."))],
                repos: Repos = "all") -> dict[str, Any]:
        """What a file defines now in each of the repositories (`repos`) that has it: each entry's
        `repository`, kind, qualified name, signature and current lines. `refused`: repositories
        without that path. Use the names with show."""
        return self._serve(lambda call: self._chosen(repos, call).outline(path)).to_json()


def _answer(found: FoundHits, keep: tuple[str, ...] | None, max_chars: int) -> dict[str, Any]:
    shown = [f for f in found if f.hit.verdict != Verdict.EXCLUDED]
    return {"hits": [f.to_json(keep, max_chars) for f in shown],
            "excluded": [{"path": f.hit.path, "reason": f.hit.reason, "repository": f.repository.to_json()}
                         for f in found if f.hit.verdict == Verdict.EXCLUDED],
            **{k: v for k, v in found.to_json().items() if k != "hits"}}


def _written(answer: dict[str, Any]) -> str:
    """The answer as a model reads it: hits_text, each citation opened by its repository."""
    hits = [{**h, "citation": f"repository: {(h.get('repository') or {}).get('path')}\n{h.get('citation') or ''}"}
            for h in answer.get("hits") or []]
    skipped = "".join(f"\nskipped {s['path']}: {s['reason']}" for s in answer.get("skipped") or [])
    return hits_text({**answer, "hits": hits}) + skipped


def _shown_written(answer: dict[str, Any]) -> str:
    """A show answer across repositories as a model reads it: `shown_text`, each citation opened by
    its repository, each gone place led by its repository's path, then the notes and skipped."""
    from codevouch.navigate.show import shown_text

    def where(item: dict[str, Any]) -> Any:
        return (item.get("repository") or {}).get("path")
    hits = [{**h, "citation": f"repository: {where(h)}\n{h.get('citation') or ''}"} for h in answer.get("hits") or []]
    gone = [{**w, "path": f"{where(w)}/{w.get('path') or ''}"} for w in answer.get("gone") or []]
    notes = "".join(f"\nnote: {where(n)}: {n.get('note')}" for n in answer.get("notes") or [])
    skipped = "".join(f"\nskipped {s['path']}: {s['reason']}" for s in answer.get("skipped") or [])
    return shown_text({**answer, "hits": hits, "gone": gone, "note": None}) + notes + skipped


def create_server_across(repos: Sequence[Path] | None, index_dir: Path | str | None = None,
                         allow_build: bool = False, embedder: str | None = None) -> MCPServer:
    """An MCP server whose search and context take `repos` (see the module's docstring); `repos`
    None: every repository the index holds (at each call), the first on this machine serving the
    other tools. NotIndexed when there is none."""
    from mcp.types import ToolAnnotations

    from codevouch.api import index_dir_of
    from codevouch.mcp_server import _encoding, create_server

    call = Call.of_process()
    listed = list(repos) if repos is not None else indexed_repositories(index_dir_of(index_dir, call))
    here = [call.path(p) for p in listed if call.path(p).exists()]
    if not here:
        raise NotIndexed("no repository to serve: name some with --repo, or build some into the index "
                         "(`codevouch index build --repo PATH`) for --all-repos.")
    server = create_server(here[0], index_dir, allow_build=allow_build, embedder=embedder)
    tools: Tools = server.tools  # type: ignore[attr-defined]  # create_server's
    across = AcrossTools(tools, [call.path(p) for p in listed] if repos is not None else None)
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    for fn, written in ((across.search, _written), (across.context, None), (across.show, _shown_written),
                        (across.references, None), (across.outline, None)):
        server.remove_tool(fn.__name__)
        server.add_tool(_encoding(fn, written), name=fn.__name__, annotations=read_only)
    return server
