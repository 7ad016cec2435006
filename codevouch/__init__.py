"""codevouch: a code retrieval index that checks retrieved code against the working tree.

    from codevouch import Index
    hits = Index("path/to/repo").search("where do we cancel orders")

The names below are the public API; everything else is internal and may move.

They are loaded on first use (PEP 562): the `codevouch` command's path to a running engine
(codevouch/engine/client.py) imports this package and must not pay for the api's imports
(the validator, git, tree-sitter's wrappers: about 100 ms) to forward one call.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from codevouch.across import Indexes
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
    from codevouch.request import ContextRequest, SearchRequest
    from codevouch.validator.model import Current, Validated
    from codevouch.vocabulary import Kind, SearchMode, Verdict

__version__ = "0.1.0"

# Each public name and the module it lives in.
_HOMES: dict[str, str] = {
    "Indexes": "codevouch.across", "ContextPack": "codevouch.api", "Hit": "codevouch.api", "Index": "codevouch.api",
    "clear_caches": "codevouch.caches",
    **{name: "codevouch.errors" for name in (
        "CodevouchError", "ConfigError", "DetachedHead", "GitError", "IndexLocked", "InputError", "NoCommits",
        "NotARepository", "NotIndexed", "UnknownRevision")},
    "ContextRequest": "codevouch.request", "SearchRequest": "codevouch.request",
    "Current": "codevouch.validator.model", "Validated": "codevouch.validator.model",
    "Kind": "codevouch.vocabulary", "SearchMode": "codevouch.vocabulary", "Verdict": "codevouch.vocabulary",
}

__all__ = [
    "CodevouchError", "ConfigError", "ContextPack", "ContextRequest", "Current", "DetachedHead", "GitError", "Hit", "Index",
    "Indexes", "IndexLocked", "InputError", "Kind", "NoCommits", "NotARepository", "NotIndexed", "SearchMode", "SearchRequest",
    "UnknownRevision", "Validated", "Verdict", "__version__", "clear_caches",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'codevouch' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value        # once: the next read is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
