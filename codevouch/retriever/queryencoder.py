"""Which model embeds a search's query: the one the caller holds, when a branch was built with it,
else the branch's own (loaded by name)."""
from __future__ import annotations

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
