"""Snippet builders for the validator tests (the repository builder is tests/gitrepo.py)."""
from __future__ import annotations

from typing import Any

from tests.gitrepo import Repo


def lines_of(text: str, start: int, end: int) -> str:
    return "\n".join(text.split("\n")[start - 1:end])


def find_line(text: str, needle: str) -> int:
    """1-based number of the first line containing `needle`."""
    for n, line in enumerate(text.split("\n"), 1):
        if needle in line:
            return n
    raise AssertionError(f"{needle!r} not in text")


def snippet(repo: Repo, path: str, start: int, end: int, *, rev: str = "HEAD", symbol: str | None = None,
            branch: str | None = "main", text: bool = True, **extra: Any) -> dict[str, Any]:
    """A snippet as `codevouch search --json` would emit it, taken from `path` at `rev`."""
    commit = repo.git("rev-parse", rev).strip()
    content = repo.show(commit, path)
    item: dict[str, Any] = {
        "repo": str(repo.root), "path": path, "branch": branch, "commit": commit,
        "commit_date": "2026-09-29T10:00:00+00:00", "symbol": symbol, "start_line": start,
        "end_line": end, "indexed_at": "2026-09-30T02:00:00Z", "blob_sha": repo.blob(commit, path),
        "kind": "source", "language": "python", "status": "live", "score": 0.5,
    }
    if text:
        item["text"] = lines_of(content, start, end)
    item.update(extra)
    return item
