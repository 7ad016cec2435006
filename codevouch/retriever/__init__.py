"""Retrieval: query embedding, dense search on a branch's collection, text read back from git."""
from codevouch.retriever.search import Hit, search

__all__ = ["Hit", "search"]
