"""Retrieval: query embedding, dense search on a branch's collection, text read back from git."""
from codevouch.retriever.search import Candidate, search

__all__ = ["Candidate", "search"]
