"""The exceptions codevouch raises; the CLI maps each to a message and an exit code.

    CodevouchError            anything the user can act on
    ├── GitError              a git command failed (command, return code, stderr attached)
    │   ├── NotARepository    the path is not inside a git work tree
    │   ├── NoCommits         the repository has no commits yet
    │   ├── DetachedHead      HEAD is detached and no --branch was given
    │   └── UnknownRevision   a branch or commit that does not exist
    ├── ConfigError           a bad .codevouch.toml / [tool.codevouch] section
    ├── IndexLocked           another build holds the index's writer lock
    ├── NotIndexed            search on a repository/branch that was never indexed
    └── InputError            malformed validator input (bad JSON, missing fields)
"""
from __future__ import annotations


class CodevouchError(Exception):
    """Base class: every subclass carries a message that says what to do next."""


class GitError(CodevouchError):
    def __init__(self, message: str, cmd: tuple[str, ...] = (), returncode: int | None = None,
                 stderr: str = "") -> None:
        super().__init__(message)
        self.cmd = cmd
        self.returncode = returncode
        self.stderr = stderr


class NotARepository(GitError):
    pass


class NoCommits(GitError):
    pass


class DetachedHead(GitError):
    pass


class UnknownRevision(GitError):
    pass


class ConfigError(CodevouchError):
    pass


class IndexLocked(CodevouchError):
    pass


class NotIndexed(CodevouchError):
    pass


class InputError(CodevouchError):
    pass
