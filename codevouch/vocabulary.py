"""The words every layer shares: a hit's verdict, a file's kind and a search's mode.

All are `str` enums (not `StrEnum`: Python 3.10 has none), so a member equals its string
(`Verdict.USABLE == "usable"`, `Kind.TEST == "test"`), hashes like it, and is written as it
in JSON, SQLite and f-strings: data read back from disk or given as JSON compares equal to
the members. A leaf: it imports nothing of codevouch, so the store, the rules and the
validator all use it. The verdicts' reasons are in validator/model.py; the rules that give
a file its kind are in worktree/rules.py. The search modes live here, not in the retriever, so
that a SearchRequest (request.py, a layer below the retriever, which takes it) can check them.
"""
from __future__ import annotations

from enum import Enum


class _Word(str, Enum):
    """A member that is its string (Python 3.10 has no enum.StrEnum): equal to it, and printed as it."""

    def __str__(self) -> str:
        return self.value


class Verdict(_Word):
    """The four verdicts. Members equal their strings: `Verdict.USABLE == "usable"`."""
    USABLE = "usable"
    STALE_BUT_OK = "stale-but-ok"
    HISTORICAL_ONLY = "historical-only"
    EXCLUDED = "excluded"


# The verdicts whose text is current code an agent may use.
CURRENT_VERDICTS = (Verdict.USABLE, Verdict.STALE_BUT_OK)


class Kind(_Word):
    """A file's kind by the repository's rules. Members equal their strings: `Kind.TEST == "test"`."""
    SOURCE = "source"
    TEST = "test"
    DOCS = "docs"
    CONFIG = "config"
    GENERATED = "generated"
    VENDOR = "vendor"
    BACKUP = "backup"
    FIXTURE = "fixture"


# Kinds whose files are indexed, and so the kinds a search can keep (`--kind`).
INDEXED_KINDS = (Kind.SOURCE, Kind.TEST, Kind.DOCS, Kind.CONFIG)
# Kinds whose files are counted but never embedded (each gives the validator an excluded reason).
EXCLUDED_KINDS = (Kind.GENERATED, Kind.VENDOR, Kind.BACKUP, Kind.FIXTURE)


class SearchMode(_Word):
    """How a search ranks: the one spelling of the modes that the API, the CLI, the MCP server
    and the retriever check and compare. hybrid: dense and lexical rankings fused by rank (the
    default); dense: embeddings only; lexical: terms only. Members equal their strings:
    `SearchMode.HYBRID == "hybrid"`."""
    HYBRID = "hybrid"
    DENSE = "dense"
    LEXICAL = "lexical"


SEARCH_MODES: tuple[str, ...] = tuple(m.value for m in SearchMode)   # hybrid, dense, lexical
