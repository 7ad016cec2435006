"""codevouch: a code retrieval index that checks retrieved code against the working tree.

    from codevouch import Index
    hits = Index("path/to/repo").search("where do we cancel orders")

The names below are the public API; everything else is internal and may move.
"""
from codevouch.api import ContextPack, Hit, Index
from codevouch.caches import clear_caches
from codevouch.errors import (
                              CodevouchError,
                              ConfigError,
                              DetachedHead,
                              GitError,
                              IndexLocked,
                              InputError,
                              NoCommits,
                              NotARepository,
                              NotIndexed,
                              UnknownRevision,
)
from codevouch.retriever.mode import SearchMode
from codevouch.validator.model import Current, Validated
from codevouch.vocabulary import Kind, Verdict

__version__ = "0.1.0"

__all__ = [
    "CodevouchError", "ConfigError", "ContextPack", "Current", "DetachedHead", "GitError", "Hit", "Index",
    "IndexLocked", "InputError", "Kind", "NoCommits", "NotARepository", "NotIndexed", "SearchMode",
    "UnknownRevision", "Validated", "Verdict", "__version__", "clear_caches",
]
