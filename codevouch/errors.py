"""The exceptions codevouch raises; the CLI maps each to a message and an exit code.

    CodevouchError            anything the user can act on
    ├── GitError              a git command failed (command, return code, stderr attached)
    │   ├── NotARepository    the path is not inside a git work tree
    │   ├── NoCommits         the repository has no commits yet
    │   ├── DetachedHead      HEAD is detached and no --branch was given
    │   ├── UnknownRevision   a branch or commit that does not exist
    │   ├── CommitGone        a commit no longer in the repository (rewritten, then gc'd)
    │   ├── FilterFailed      a required filter driver, let run, is missing or failed
    │   └── GitLimit          a git process ran past its time or memory limit and was stopped
    ├── ConfigError           a bad .codevouch.toml / [tool.codevouch] section
    │   └── SettingError      a CODEVOUCH_* variable out of its range (an InputError too: exit 2)
    ├── IndexLocked           another build holds the index's writer lock
    │   └── BuilderConflict   another index directory builds this repository on the Chroma server
    ├── IndexBusy             a read waited too long for a build's write to the vector store
    ├── NotIndexed            search on a repository/branch that was never indexed
    ├── BadIndex              the index directory is unusable (not a directory, read-only,
    │                         corrupt ledger, written by a newer release)
    ├── StoreUnavailable      the vector store (a Chroma server) cannot be reached
    ├── DiskFull              the disk under the index filled up during a write; nothing changed
    ├── InputError            malformed input (bad JSON, missing fields, unknown mode/kind/embedder)
    │   └── BudgetTooSmall    a token budget that cannot hold even an empty context pack
    └── EmptyScope            a review scope with no changes in it
"""
from __future__ import annotations


class CodevouchError(Exception):
    """Base class: every subclass carries a message that says what to do next."""


class GitError(CodevouchError):
    """A git command failed; `cmd`, `returncode` and `stderr` say how."""

    def __init__(self, message: str, cmd: tuple[str, ...] = (), returncode: int | None = None,
                 stderr: str = "") -> None:
        super().__init__(message)
        self.cmd = cmd
        self.returncode = returncode
        self.stderr = stderr


class NotARepository(GitError):
    """The path is not inside a git work tree."""


class NoCommits(GitError):
    """The repository has no commits yet: commit something first."""


class DetachedHead(GitError):
    """HEAD is detached and no branch was named: pass a branch."""


class UnknownRevision(GitError):
    """A branch or commit that does not exist in the repository."""


class CommitGone(GitError):
    """A commit codevouch was given or recorded (an index's commit, a snippet's) is no longer in the
    repository: history rewritten (a force-push, an amend) and the old objects garbage-collected.
    `commit` names it."""

    def __init__(self, message: str, commit: str = "", **kw: object) -> None:
        super().__init__(message, **kw)  # type: ignore[arg-type]
        self.commit = commit


class FilterFailed(GitError):
    """A `filter.<name>` driver git was let run (CODEVOUCH_RUN_GIT_FILTERS=1) is missing or failed,
    and the repository's configuration makes it required."""


class GitLimit(GitError):
    """A git process ran past the time (CODEVOUCH_GIT_TIMEOUT) or memory (CODEVOUCH_GIT_MEMORY_MB)
    it may use and was stopped; `limit` is "time" or "memory"."""

    def __init__(self, message: str, cmd: tuple[str, ...] = (), returncode: int | None = None,
                 stderr: str = "", limit: str = "") -> None:
        super().__init__(message, cmd, returncode, stderr)
        self.limit = limit


class DiskFull(CodevouchError):
    """The disk holding the index filled up while writing: the write's transaction rolled back,
    so the index is as the last complete write left it (see disk_full)."""


_FULL_WORDS = ("database or disk is full", "cannot rollback", "no space left on device", "disk quota exceeded")


def is_disk_full(exc: BaseException) -> bool:
    """Whether `exc`, or what it came from, says the disk is full: SQLite's `database or disk is
    full` (and the `cannot rollback - no transaction is active` that follows it), Chroma's copy of
    it, or an OSError ENOSPC / EDQUOT."""
    import errno

    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            return False
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if any(words in str(seen).lower() for words in _FULL_WORDS):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def disk_full(where: object, exc: BaseException) -> DiskFull:
    """The DiskFull to raise for `exc` while writing under `where` (the index directory)."""
    import shutil

    try:
        free = f"{shutil.disk_usage(str(where)).free // 1024} KiB free"
    except OSError:
        free = "free space unknown"
    return DiskFull(f"disk full at {where} ({free}): nothing changed, the index is as its last complete "
                    "build left it; free space there (or set CODEVOUCH_INDEX to a directory on another disk) "
                    "and run the command again.")


class ConfigError(CodevouchError):
    """A bad `.codevouch.toml` or `[tool.codevouch]` section."""


class IndexLocked(CodevouchError):
    """Another build holds the index's writer lock: wait, or retry later."""


class BuilderConflict(IndexLocked):
    """Another index directory holds the repository's builder lease on the Chroma server."""


class IndexBusy(CodevouchError):
    """A read timed out behind a build that is writing the vector store: retry, or search lexically."""


class BadIndex(CodevouchError):
    """The index directory cannot be used as it is; the message says how to recover."""


class StoreUnavailable(CodevouchError):
    """The vector store cannot be reached (CODEVOUCH_CHROMA_URL names a server that does not answer)."""


class NotIndexed(CodevouchError):
    """The repository or branch was never indexed: run a build first."""


class InputError(CodevouchError):
    """Malformed input: bad arguments, bad snippet JSON, unknown mode, kind or embedder."""


class BudgetTooSmall(InputError):
    """A token budget too small for even an empty context pack. `budget` and `needed` (tokens)
    let each client say what to pass instead in its own terms (the CLI's --budget, MCP's
    `budget` argument)."""

    def __init__(self, budget: int, needed: int) -> None:
        super().__init__(f"a budget of {budget} tokens cannot hold even an empty context pack "
                         f"({needed} tokens); raise --budget or use a larger model.")
        self.budget = budget
        self.needed = needed


class EmptyScope(CodevouchError):
    """A review scope with no changes: nothing to review (pick another scope)."""


class SettingError(ConfigError, InputError):
    """A CODEVOUCH_* environment variable whose value is not one it takes (not a number, or out of
    its range): a usage error (exit 2) that names the variable and what it takes."""
