"""How a search ranks (`SearchMode`): the one spelling of the modes that the API, the CLI, the
MCP server and the retriever check and compare. A leaf, cheap to import."""
from __future__ import annotations

from enum import Enum


class SearchMode(str, Enum):
    """hybrid: dense and lexical rankings fused by rank (the default); dense: embeddings only;
    lexical: terms only. Members equal their strings: `SearchMode.HYBRID == "hybrid"`."""
    HYBRID = "hybrid"
    DENSE = "dense"
    LEXICAL = "lexical"

    def __str__(self) -> str:
        return self.value


SEARCH_MODES: tuple[str, ...] = tuple(m.value for m in SearchMode)   # hybrid, dense, lexical
