"""How a search ranks (`SearchMode`, `SEARCH_MODES`): re-exported from codevouch/vocabulary.py,
where they live since a SearchRequest (a layer below the retriever) checks them; the retriever's
modules, and any code that imported them from here, keep this name. A leaf, cheap to import."""
from __future__ import annotations

from codevouch.vocabulary import SEARCH_MODES as SEARCH_MODES
from codevouch.vocabulary import SearchMode as SearchMode

__all__ = ["SEARCH_MODES", "SearchMode"]
