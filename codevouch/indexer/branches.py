"""Which branches `index build --all-branches` takes: include/exclude glob patterns.

Patterns come from `--include-branch` / `--exclude-branch` or the repository's config
(`[branches]` with `include = [...]`, `exclude = [...]` in .codevouch.toml or
`[tool.codevouch.branches]`); flags given on the command line replace the config's list.
A branch is kept when it matches an include pattern (or none are given) and no exclude
pattern. Patterns are shell globs over the whole name (`fnmatchcase`: `*` also matches `/`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from codevouch.errors import ConfigError
from codevouch.worktree.config import RepoConfig


@dataclass(frozen=True)
class BranchFilter:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def keeps(self, name: str) -> bool:
        if self.include and not any(fnmatchcase(name, p) for p in self.include):
            return False
        return not any(fnmatchcase(name, p) for p in self.exclude)


def select_branches(names: Sequence[str], patterns: BranchFilter) -> list[str]:
    return [name for name in names if patterns.keeps(name)]


def branch_filter(config: RepoConfig, include: Sequence[str] | None = None,
                  exclude: Sequence[str] | None = None) -> BranchFilter:
    """The patterns in force: each flag list given replaces the config's list of that name."""
    table = config.section("branches")
    return BranchFilter(_patterns(config.source, table, "include", include),
                        _patterns(config.source, table, "exclude", exclude))


def _patterns(source: str, table: dict[str, object], key: str, given: Sequence[str] | None) -> tuple[str, ...]:
    if given:
        return tuple(given)
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{source}: `branches.{key}` must be a list of branch name patterns "
                          f'(e.g. {key} = ["release/*"]).')
    return tuple(value)
