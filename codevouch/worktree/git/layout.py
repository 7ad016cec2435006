"""Where a repository keeps its git data, and which configuration file set a value: the git
directory and common directory git resolves (through a `.git` file and `commondir`), and a
key's values with the scope of the file each came from (includes followed).

Every git process codevouch starts carries `-c` settings of its own (`_process`); a value read
here never counts those: only the values the configuration files give (scope `command` is
dropped), so a caller learns what git sees when the user runs it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from codevouch.worktree.git.runner import run


@dataclass(frozen=True)
class GitDirs:
    git_dir: Path      # this work tree's git directory (`.git`, or `.git/worktrees/NAME` of a linked one)
    common_dir: Path   # the directory its refs, objects and hooks are shared in (the same for a plain clone)


def git_dirs(repo: Path | str) -> GitDirs:
    """The git directory and common directory git uses for `repo`, absolute and resolved."""
    out = run(repo, "rev-parse", "--path-format=absolute", "--absolute-git-dir", "--git-common-dir")
    git_dir, common = out.decode("utf-8", "surrogateescape").rstrip("\n").rsplit("\n", 1)
    return GitDirs(Path(git_dir).resolve(), Path(common).resolve())


@dataclass(frozen=True)
class ConfigValue:
    scope: str   # system, global, local, worktree (the file that set it, or the one that included it)
    value: str


def config_values(repo: Path | str, key: str) -> list[ConfigValue]:
    """Every value of `key` in the configuration files git reads for `repo`, included files too,
    in git's order (the last one is the one git uses); command-line `-c` settings are not among
    them."""
    out = run(repo, "config", "--includes", "--show-scope", "-z", "--get-all", "--end-of-options", key,
              ok_codes=(0, 1))
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    pairs = zip(fields[0::2], fields[1::2])
    return [ConfigValue(scope, value) for scope, value in pairs if scope != "command"]
