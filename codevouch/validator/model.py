"""The validator's data: a normalized snippet, the verdict vocabulary, and the results."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any


class Verdict(str, Enum):
    """The four verdicts. Members equal their strings: `Verdict.USABLE == "usable"`."""
    USABLE = "usable"
    STALE_BUT_OK = "stale-but-ok"
    HISTORICAL_ONLY = "historical-only"
    EXCLUDED = "excluded"

    def __str__(self) -> str:
        return self.value


VERDICTS: tuple[str, ...] = tuple(v.value for v in Verdict)

# Stable machine codes (the README table is generated from this mapping, keep it in sync).
REASONS: dict[str, str] = {
    "same-commit": "usable: indexed at HEAD and the file is identical in the working tree",
    "same-content": "stale-but-ok: indexed at another commit or branch, but the working-tree file "
                    "is byte-identical (same git blob id) to the indexed one",
    "chunk-moved": "stale-but-ok: the file changed, but the chunk's exact text is still in it as "
                   "whole lines; `current` gives its line range now",
    "text-found": "stale-but-ok: the snippet has no version metadata, but its text is in the "
                  "current file as whole lines; `current` gives where",
    "content-changed": "historical-only: the chunk's text is no longer in the file, but its symbol "
                       "still is; `current` is the symbol's code now",
    "symbol-removed": "historical-only: neither the chunk's text nor its symbol is in the file any more",
    "text-mismatch": "historical-only: the version metadata says the file is unchanged, but the "
                     "snippet's text is not in it: the text was altered after indexing; do not trust it",
    "commit-gone": "historical-only: the snippet's commit is no longer in the repository "
                   "(force-pushed away) and it has neither blob id nor text to check; `current` "
                   "is the symbol's code now when it exists",
    "file-deleted": "historical-only: the file no longer exists in the working tree",
    "file-renamed": "historical-only: the file was renamed (git rename detection); `current` "
                    "points at the new file, at the symbol when found",
    "no-version-metadata": "historical-only: no commit and no blob id, and the text is not in the "
                           "current file, so nothing ties the snippet to this version",
    "generated": "excluded: generated code (a path pattern or a marker like @generated)",
    "vendored": "excluded: vendored third-party code",
    "backup": "excluded: a backup or editor copy",
    "fixture": "excluded: test fixture or snapshot data",
    "outside-repo": "excluded: the path leaves the repository (.., absolute, a symlink out, "
                    "inside .git, NUL byte); nothing was read",
}

# rules.py kind -> reason code
KIND_REASON: dict[str, str] = {"generated": "generated", "vendor": "vendored",
                               "backup": "backup", "fixture": "fixture"}


@dataclass(frozen=True)
class Snippet:
    """The fields the validator reads from one input item (others are passed through)."""
    path: str
    commit: str | None = None
    blob_sha: str | None = None
    text: str | None = None
    symbol: str | None = None
    start_line: int | None = None
    end_line: int | None = None
    branch: str | None = None
    commit_date: str | None = None
    indexed_at: str | None = None

    @property
    def has_version(self) -> bool:
        return bool(self.commit or self.blob_sha)


@dataclass(frozen=True)
class Current:
    """Where the up-to-date code is in the working tree (text read from the working tree)."""
    path: str
    start_line: int
    end_line: int
    text: str
    symbol: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "start_line": self.start_line, "end_line": self.end_line,
                "text": self.text, "symbol": self.symbol}


@dataclass(frozen=True)
class Decision:
    verdict: str
    reason: str
    detail: str
    current: Current | None = None


@dataclass(frozen=True)
class Validated:
    """One input snippet (as given, untouched) with its decision and citation header."""
    snippet: Mapping[str, Any]
    parsed: Snippet
    verdict: str
    reason: str
    detail: str
    current: Current | None
    citation: str
