"""The MCP server's navigation tools (`show`, `references`, `outline`): a mixin of
`mcp_server.Tools`, whose `_call` runs each one on a fresh `Index` (one call at a time, errors
as tool errors). Kept here so that the server's module holds the rest."""
from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Protocol, TypeVar

from pydantic import Field

from codevouch.results import HIT_CHARS

T = TypeVar("T")

Name = Annotated[str, Field(min_length=1, max_length=1000, description=(
    "A definition's name: bare (`cancel_order`), qualified (`OrderService.cancel_order`, `router.register_method`), "
    "PATH#NAME, or PATH:START-END for the definition that holds those lines (paths from the repository's top)."))]
MaxChars = Annotated[int, Field(ge=0, le=10_000_000, description="Most characters of code per hit (0: no cap).")]

NAVIGATION_NOTE = (" To read a definition you know the name of, use show (not search); to find its callers and "
                   "importers, references; to see what a file defines, outline. All three read the working tree now.")


class _Caller(Protocol):
    def _call(self, fn: Callable[[Any], T]) -> T: ...


class NavigationTools:
    """show, references and outline, for agents: each answer is current at the moment of the call."""

    def show(self: _Caller, name: Name, branch: Annotated[str | None, Field(
                 max_length=250, description="Branch whose index proposes the files (default: the current one).")] = None,
             max_chars: MaxChars = HIT_CHARS) -> dict[str, Any]:
        """The current code of a definition you can name, with its citation and verdict: use it instead
        of search when you know the name. Each hit's `code` is read from the working tree now (found
        even when written since the last build; at its new place when moved or renamed). When the
        name is defined nowhere now, `hits` is empty and `gone` lists where the index last saw it,
        its old text as `reference_text` (reference only: never implement against it)."""
        shown = self._call(lambda idx: idx.show(name, branch=branch))
        return shown.to_json(max_chars or None)

    def references(self: _Caller, name: Annotated[str, Field(min_length=1, max_length=500, description=(
                       "The name whose uses to find (`cancel_order`, `OrderService.cancel_order`)."))],
                   limit: Annotated[int, Field(ge=1, le=10_000, description="Most references (a note says when "
                                                                              "there were more).")] = 200,
                   ) -> dict[str, Any]:
        """Where a name is used in the working tree now (uncommitted files included, deleted ones
        not): each call, import, inheritance and type use with path, line, enclosing definition and
        one line of context. `resolution`: `exact` where the syntax ties the use to the name (an
        import of it, a bare use in a file that defines or imports it), `by-name` where only the
        spelling does (`obj.name()`): no type inference."""
        return self._call(lambda idx: idx.references(name, limit=limit)).to_json()

    def outline(self: _Caller, path: Annotated[str, Field(min_length=1, max_length=1000, description=(
                    "A file, or a directory for its files' top-level definitions, from the repository's top."))],
                ) -> dict[str, Any]:
        """What a file defines now: each definition's kind, qualified name, signature and current
        lines, read from the working tree (a directory: each file's top-level definitions). Use the
        names with show."""
        return self._call(lambda idx: idx.outline(path)).to_json()
