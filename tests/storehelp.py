"""Reading the vector store from tests, each time through a fresh, closed client (a client
left open keeps serving what it saw when it opened)."""
from __future__ import annotations

from pathlib import Path

from codevouch.store import VectorStore


def vector_count(index_dir: Path, name: str) -> int:
    with VectorStore(index_dir) as store:
        return store.count(name)


def collection_names(index_dir: Path) -> set[str]:
    with VectorStore(index_dir) as store:
        return set(store.collections())
