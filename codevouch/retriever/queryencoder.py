"""Which model embeds a search's query: the one the caller holds, when a branch was built with it,
else the branch's own (loaded by name)."""
from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from codevouch.embedding import Embedder, embedder_by_name
from codevouch.errors import InputError
from codevouch.retriever.mode import SearchMode
from codevouch.store import models_in_use


def held(embedder: Embedder | str | None, index_dir: Path) -> Embedder | None:
    """The model the caller holds for the query: the one given, or the one named when some branch
    of the local index was built with it. A name is a guess (the CLI names the default model
    whatever a branch was built with), and a guess must not load a model no branch uses."""
    if not isinstance(embedder, str):
        return embedder
    if embedder not in models_in_use(index_dir):
        return None
    try:
        return embedder_by_name(embedder)
    except InputError:
        return None


def for_query(given: Embedder | None, built_with: str, mode: str) -> Embedder | None:
    """The model that embeds the query: the branch's own, reusing `given` when it is that model."""
    if mode == SearchMode.LEXICAL:
        return None
    return given if given is not None and given.name == built_with else embedder_by_name(built_with)


class QueryVectors:
    """One call's query vectors, by model and text: a search of several repositories (across.py)
    hands one to each repository's search, so the query is embedded once per model however many
    repositories are searched. A model is known by its name (its identity: another name, another
    vector space). Lives as long as the call; a one-repository search has none."""

    def __init__(self) -> None:
        self._made: dict[tuple[str, str], Future[list[float]]] = {}
        self._held: dict[tuple[str, Path], Embedder | None] = {}
        self._lock = threading.Lock()

    def held(self, embedder: Embedder | str | None, index_dir: Path) -> Embedder | None:
        """`held(embedder, index_dir)`, asked once per model name and index directory in the call
        (it opens the ledger: once per repository of a search across 100 was 70 ms of a query).
        A hint either way: each search opens the ledger properly right after (see held)."""
        if not isinstance(embedder, str):
            return embedder
        key = (embedder, index_dir)
        with self._lock:
            if key in self._held:
                return self._held[key]
        found = held(embedder, index_dir)
        with self._lock:
            return self._held.setdefault(key, found)

    def vector(self, embedder: Embedder, text: str, start: Callable[[], Future[list[float]]]) -> Future[list[float]]:
        """The vector of `text` by `embedder`'s model: the one made already, else `start()`'s."""
        key = (embedder.name, text)
        with self._lock:
            made = self._made.get(key)
            if made is None:
                made = self._made[key] = start()
            return made


def held_in(queries: QueryVectors | None, embedder: Embedder | str | None, index_dir: Path) -> Embedder | None:
    """`held(embedder, index_dir)`, through the call's `queries` when it has them (a search of
    several repositories: asked once per model and index directory)."""
    return held(embedder, index_dir) if queries is None else queries.held(embedder, index_dir)


def shared(queries: QueryVectors | None, embedder: Embedder, text: str,
           start: Callable[[], Future[list[float]]]) -> Future[list[float]]:
    """The query's vector: `start()`'s, or with `queries` (a search of several repositories) the one
    that model made already for another repository's search."""
    return start() if queries is None else queries.vector(embedder, text, start)
