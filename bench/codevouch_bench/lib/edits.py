"""Small, realistic edits to a temp repo: one spot in one file, committed."""
from __future__ import annotations

from pathlib import Path

from codevouch_bench.lib.corpus import commit_all, git


def python_files(repo: Path) -> list[str]:
    return sorted(p for p in git(repo, "ls-files").splitlines() if p.endswith(".py"))


def edit_one_spot(repo: Path, path: str, tag: str) -> None:
    """Insert a comment line after the blank line nearest the middle of the file.

    A comment after a blank line attaches to the next definition, so one chunk's text
    changes and every line below shifts: what a one-line edit does to an index.
    """
    file = repo / path
    lines = file.read_text().split("\n")
    mid = len(lines) // 2
    blanks = [i for i, line in enumerate(lines) if not line.strip()] or [mid]
    at = min(blanks, key=lambda i: abs(i - mid))
    lines.insert(at + 1, f"# bench edit {tag}")
    file.write_text("\n".join(lines))


def commit_edits(repo: Path, paths: list[str], tag: str) -> str:
    for path in paths:
        edit_one_spot(repo, path, tag)
    return commit_all(repo, f"bench edit {tag}")
