"""One builder for real git repositories in temp dirs (the git CLI; no hooks, no signing, no mocks)."""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
    "LC_ALL": "C",
}


class Repo:
    def __init__(self, root: Path, branch: str = "main") -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", branch)

    @classmethod
    def create(cls, path: Path, branch: str = "main") -> Repo:
        return cls(path, branch)

    def git(self, *args: str, stdin: bytes | None = None) -> str:
        """Run git in the repository; its stdout, unstripped (file contents keep their bytes)."""
        proc = subprocess.run(("git", "-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null",
                               "-C", str(self.root), *args), input=stdin, capture_output=True,
                              env={**os.environ, **GIT_ENV}, check=False)
        if proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.decode()}")
        try:
            return proc.stdout.decode("utf-8")
        except UnicodeDecodeError:      # the indexer's convention: latin-1 when not UTF-8
            return proc.stdout.decode("latin-1")

    def write(self, path: str, content: str | bytes) -> Path:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        # Bytes as given: no newline translation, so CRLF tests mean what they say.
        target.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        return target

    def read(self, path: str) -> str:
        return (self.root / path).read_bytes().decode("utf-8")

    def remove(self, path: str) -> None:
        (self.root / path).unlink()

    def commit(self, message: str = "change", *paths: str, **files: str | bytes) -> str:
        """Write `files` (path=content), stage everything (or `paths`), commit; the new HEAD."""
        return self.commit_files(files, message, *paths)

    def commit_files(self, files: dict[str, str | bytes], message: str = "change", *paths: str) -> str:
        for path, content in files.items():
            self.write(path, content)
        self.git("add", "-A", *paths)
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def settle(self, *paths: str, seconds_ago: int = 30) -> int:
        """Give `paths` an mtime in a whole second `seconds_ago`, and refresh the index (this
        git, with whatever filters the repository configures): their stat data in the index are
        then trusted, not racily clean, whichever second the test runs in. The second, to set
        other times relative to it."""
        second = int(time.time()) - seconds_ago
        for path in paths:
            os.utime(self.root / path, ns=(second * 10**9, second * 10**9))
        self.git("update-index", "-q", "--refresh")
        return second

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def blob(self, rev: str, path: str) -> str:
        return self.git("rev-parse", f"{rev}:{path}").strip()

    def show(self, rev: str, path: str) -> str:
        return self.git("show", f"{rev}:{path}")

    def checkout(self, *args: str) -> None:
        self.git("checkout", "-q", *args)


def plant_special(path: Path, kind: str, huge: int = 2 << 30) -> None:
    """Put a hostile file at `path`: a FIFO ("fifo"), a symlink to /dev/zero ("zero"), or a
    sparse file of `huge` bytes (any other kind), replacing what is there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if os.path.lexists(path):
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        os.symlink("/dev/zero", path)
    else:
        with open(path, "wb") as handle:
            handle.truncate(huge)
