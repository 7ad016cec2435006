"""What a search or a context call asks for, built and checked once: `SearchRequest` and
`ContextRequest`. The CLI builds one from its options, the MCP server from its tool's arguments,
and `Index.search` / `Index.context` take it (their keyword form builds one) and hand the search
to the retriever whole (retriever/search.py); so every door refuses a bad value with the same
InputError, in the same words, before anything runs.

    from codevouch.request import ContextRequest, SearchRequest
    hits = Index(".").search(SearchRequest.of("cancel order", k=5, kinds=["source"], paths=["src/"]))

Checked here: the query (words or code, valid text), k, the kinds, the search mode and the
--path patterns. Left to where they are decided: the budget, model and reserve of a context
pack (the budget's precedence, from --budget down to the configured default, names where a bad
value came from: context.windows.resolve_budget), and how each door renders the answer.

Through the resident engine, the socket carries the CLI's argv, not a request: the engine runs
the CLI's own command, which builds the request from it as in-process, so the answer is the same
bytes (engine/execute.py). A second encoding of the request would be a second path to keep equal.

A leaf over the vocabulary (which spells the search modes), in the store's layer, below the
retriever that takes it: cheap to import (the patterns' parser loads only when paths are given).
"""
from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, TypedDict, TypeVar

from codevouch.errors import InputError
from codevouch.vocabulary import INDEXED_KINDS, SEARCH_MODES, SearchMode

R = TypeVar("R", bound="SearchRequest")
KINDS: tuple[str, ...] = tuple(k.value for k in INDEXED_KINDS)   # the kinds a search can keep


@dataclass(frozen=True)
class SearchRequest:
    """A search, checked when it is made (InputError, naming what to pass instead).

    query: what to look for, in words or code. k: how many hits (at least 1). branch: the
    branch (None: the checked-out one). kinds: keep only these file kinds (source, test, docs,
    config; None or empty: every kind). include_history: also chunks of files deleted from the
    branch. mode: hybrid, dense or lexical. overlay: also search the working tree's changes since
    the build, live. paths: only files these gitignore-style patterns match (one string is one
    pattern). validate: check every hit against the working tree (False: hits carry no verdict).
    """
    query: str
    k: int = 10
    branch: str | None = None
    kinds: frozenset[str] | None = None
    include_history: bool = False
    mode: str = SearchMode.HYBRID
    overlay: bool = True
    paths: tuple[str, ...] | None = None
    validate: bool = True

    def __post_init__(self) -> None:
        # In the order the checks ran before there was a request: the first bad value is named.
        if self.mode not in SEARCH_MODES:
            raise InputError(f"unknown search mode {self.mode!r}; use one of {', '.join(SEARCH_MODES)}.")
        object.__setattr__(self, "mode", str(SearchMode(self.mode)))
        object.__setattr__(self, "kinds", check_kinds(self.kinds))
        check_query(self.query)
        try:
            k = operator.index(self.k)      # an int, or an integer type of numpy's
        except TypeError:
            raise InputError(f"k must be a whole number of hits (got {self.k!r}).") from None
        if k < 1:
            raise InputError(f"k must be at least 1 (got {k}).")
        object.__setattr__(self, "k", k)
        object.__setattr__(self, "paths", check_paths(self.paths))

    @classmethod
    def of(cls: type[R], query: str, **options: Any) -> R:
        """A request from the values a door has: kinds and paths as any list (or one string);
        the same checks as the constructor's."""
        return cls(query, **options)


# The most tokens a pack's budget may name, at every door (MCP's schema says it too). The least is
# what the pack needs, which only the pack knows: below it, errors.BudgetTooSmall says how many.
MOST_BUDGET = 10_000_000


@dataclass(frozen=True)
class ContextRequest(SearchRequest):
    """A context pack: a validated search (every SearchRequest field but `validate`, which is
    always true) and the pack's budget: `budget` tokens, else the safe input size of `model` (a
    registry name) keeping `reserve` of its window free; None: the configured default (checked
    with the configuration, by context.windows.resolve_budget)."""
    budget: int | None = None
    model: str | None = None
    reserve: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.validate:
            raise InputError("a context pack is made of validated hits; it cannot skip validation.")
        if self.budget is not None and self.budget > MOST_BUDGET:
            raise InputError(f"a budget of {self.budget} tokens is more than any model's window; "
                             f"give at most {MOST_BUDGET}, or leave --budget out for the default.")

    def search(self) -> SearchRequest:
        """The search this pack is made from."""
        return SearchRequest(**{f.name: getattr(self, f.name) for f in fields(SearchRequest)})


class SearchOptions(TypedDict, total=False):
    """`Index.search`'s keyword form: a SearchRequest's fields but the query (each one's meaning
    and default are the request's). Keyword arguments, so a new option is one line here."""
    k: int
    branch: str | None
    kinds: Iterable[str] | None
    include_history: bool
    validate: bool
    mode: str
    overlay: bool
    paths: Sequence[str] | str | None


class ContextOptions(TypedDict, total=False):
    """`Index.context`'s keyword form: a ContextRequest's fields but the query."""
    k: int
    branch: str | None
    kinds: Iterable[str] | None
    include_history: bool
    mode: str
    overlay: bool
    paths: Sequence[str] | str | None
    budget: int | None
    model: str | None
    reserve: float | None


def request_from(kind: type[R], query: str | SearchRequest, options: Mapping[str, Any]) -> R:
    """`query` when it is a request already (no option may be given beside it), else the request
    the keyword form spells: checked once, in its constructor. For `Index.search` and
    `Index.context`, which take either."""
    if isinstance(query, SearchRequest):
        given = [name for name, value in options.items() if value != _DEFAULTS[name]]
        if given:
            raise TypeError(f"pass {', '.join(given)} in the request, not beside it")
        if not isinstance(query, kind):
            raise TypeError(f"expected a {kind.__name__}, got a {type(query).__name__}")
        return query
    return kind.of(query, **options)


# The keyword form's defaults: an option beside a request must be left at its default.
_DEFAULTS: dict[str, Any] = {"k": 10, "branch": None, "kinds": None, "include_history": False, "validate": True,
                             "mode": SearchMode.HYBRID, "overlay": True, "paths": None, "budget": None, "model": None,
                             "reserve": None}


def check_query(query: object) -> None:
    if not isinstance(query, str) or not query.strip():
        raise InputError("the query is empty; say what you are looking for, in words or code.")
    if not any(ch.isalnum() for ch in query):
        # Only spaces, punctuation or invisible characters (\u200b, \x01): nothing to look for,
        # and every neighbour would come back with a high score.
        raise InputError("the query is empty: it has no letters or digits; say what you are looking for, "
                         "in words or code.")
    if any("\ud800" <= ch <= "\udfff" for ch in query):
        # Python decodes argv bytes that are not UTF-8 to lone surrogates.
        raise InputError("the query is not valid UTF-8 text; pass it in UTF-8.")


def check_kinds(kinds: Iterable[str] | None) -> frozenset[str] | None:
    """The kinds to keep (None: every kind); InputError naming an unknown one."""
    if kinds is None:
        return None
    wanted = frozenset([kinds] if isinstance(kinds, str) else kinds)
    unknown = sorted(wanted - set(KINDS))
    if unknown:
        raise InputError(f"unknown kind(s) {', '.join(unknown)}; use {', '.join(KINDS)}.")
    return wanted or None


def check_paths(paths: Sequence[str] | str | None) -> tuple[str, ...] | None:
    """The --path patterns as a tuple (one string is one pattern, not its characters; None or
    empty: no filter), refused as the search would refuse them (worktree.rules.path_filter)."""
    if paths is None:
        return None
    patterns = (paths,) if isinstance(paths, str) else tuple(paths)
    if not patterns:
        return None
    if not all(isinstance(p, str) for p in patterns):
        raise InputError("a --path pattern is not a string; pass gitignore-style globs such as 'src/' or '*.py'.")
    from codevouch.worktree.rules import path_filter  # pathspec: only when there are patterns

    path_filter(patterns)
    return patterns
