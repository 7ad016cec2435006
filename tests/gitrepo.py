"""A tiny builder for real git repositories in temp dirs (the git CLI, no mocks)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


class Repo:
    def __init__(self, root: Path, branch: str = "main") -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", branch)
        self.git("config", "commit.gpgsign", "false")
        self.git("config", "core.autocrlf", "false")

    def git(self, *args: str) -> str:
        env = {**os.environ, **GIT_ENV}
        out = subprocess.run(("git", "-C", str(self.root), *args), env=env, check=True,
                             capture_output=True)
        return out.stdout.decode("utf-8", "replace").strip()

    def write(self, path: str, content: str | bytes) -> Path:
        p = self.root / path
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_bytes(content.encode("utf-8"))
        return p

    def read(self, path: str) -> str:
        return (self.root / path).read_text(encoding="utf-8")

    def remove(self, path: str) -> None:
        (self.root / path).unlink()

    def commit(self, message: str = "change", **files: str | bytes) -> str:
        for path, content in files.items():
            self.write(path, content)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def commit_files(self, files: dict[str, str | bytes], message: str = "change") -> str:
        for path, content in files.items():
            self.write(path, content)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")

    def checkout(self, *args: str) -> None:
        self.git("checkout", "-q", *args)
