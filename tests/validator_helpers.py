"""A tiny builder for real git repositories in temp dirs (git CLI, no hooks, no signing)."""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
    "LC_ALL": "C",
}


@dataclass
class Repo:
    root: Path

    @classmethod
    def create(cls, path: Path, branch: str = "main") -> Repo:
        path.mkdir(parents=True, exist_ok=True)
        repo = cls(path)
        repo.git("init", "-q", "-b", branch)
        return repo

    def git(self, *args: str, stdin: bytes | None = None) -> str:
        proc = subprocess.run(("git", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null",
                               "-C", str(self.root), *args), input=stdin, capture_output=True,
                              env=GIT_ENV, check=False)
        if proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.decode()}")
        try:
            return proc.stdout.decode("utf-8")
        except UnicodeDecodeError:      # the indexer's convention: latin-1 when not UTF-8
            return proc.stdout.decode("latin-1")

    def write(self, path: str, content: str | bytes) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            target.write_bytes(content.encode("utf-8"))   # no newline translation
        else:
            target.write_bytes(content)
        return target

    def read(self, path: str) -> str:
        return (self.root / path).read_bytes().decode("utf-8")

    def commit(self, message: str = "change", *paths: str) -> str:
        self.git("add", "-A", *paths)
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def blob(self, rev: str, path: str) -> str:
        return self.git("rev-parse", f"{rev}:{path}").strip()

    def show(self, rev: str, path: str) -> str:
        return self.git("show", f"{rev}:{path}")


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
