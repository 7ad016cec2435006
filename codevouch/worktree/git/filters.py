"""The filter drivers git's configuration defines in a repository, and the settings that stop
every one of them from running.

A filter (`filter.<name>.clean` / `smudge` / `process`) is a program the repository's
configuration chose, which git runs from hash-object, status and diffs of the working tree.
The names are read with one `git config --list` (which runs nothing), started by `_process`
below the runner that adds these settings to every other command, and kept while the files
that configuration came from are unchanged.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from codevouch.errors import GitError
from codevouch.worktree.git._process import EMPTY_VAR, FALSE_VAR, _run_raw, caller_env, run_filters


@dataclass(frozen=True)
class _Filters:
    names: tuple[str, ...]                       # filter drivers the configuration defines
    files: tuple[tuple[str, tuple[int, int, int]], ...]   # the config files read, and their stat
    env: tuple[str, ...]                         # the config-bearing environment when read
    attributes: tuple[str, ...] = ()             # core.attributesFile, where the configuration names one
    excludes: tuple[str, ...] = ()               # core.excludesFile, where the configuration names one


_FILTERS: dict[str, _Filters] = {}
_CONFIG_ENV = ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
               "GIT_CONFIG_NOSYSTEM", "HOME", "XDG_CONFIG_HOME")


def _stat_key(path: str) -> tuple[int, int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (0, 0, 0)
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _config_env() -> tuple[str, ...]:
    """The environment that decides git's configuration: the variables above and the
    GIT_CONFIG_KEY_<n> / GIT_CONFIG_VALUE_<n> pairs that GIT_CONFIG_COUNT says git reads (only
    those: walking all of os.environ cost a millisecond per git call)."""
    env = caller_env()         # the running call's (codevouch/call.py)
    named = tuple(env.get(k, "\0") for k in _CONFIG_ENV)
    count = env.get("GIT_CONFIG_COUNT", "").strip()
    if not count.isdigit():
        return named
    return named + tuple(env.get(f"GIT_CONFIG_{part}_{n}", "\0")
                         for n in range(min(int(count), 10_000)) for part in ("KEY", "VALUE"))


def kept_config(repo: Path | str) -> _Filters | None:
    """What filter_names kept of `repo`'s configuration, while it holds for the running call:
    read under the call's environment, and none of the files it was read from changed since."""
    cached = _FILTERS.get(os.path.abspath(str(repo)))
    if cached is None or cached.env != _config_env() or any(_stat_key(f) != st for f, st in cached.files):
        return None
    return cached


def filter_names(repo: Path | str) -> tuple[str, ...]:
    """The filter drivers (`filter.<name>.*`) that git's configuration defines in `repo`.

    Read with `git config --list` (which runs nothing) and kept while none of the files it read
    changes; a configuration with include directives (an `includeIf` can depend on the branch),
    or whose files cannot all be found again, is read again each time."""
    key = os.path.abspath(str(repo))
    cached = kept_config(key)
    if cached is not None:
        return cached.names
    env = _config_env()
    try:
        out = _run_raw(repo, ("config", "--list", "--show-origin", "-z"), extra=())
    except GitError:
        _WORKTREE[key] = False
        return ()
    config = _parse_config_list(out, key)
    files = config.files
    for extra_file in _config_places(key):
        files.setdefault(extra_file, _stat_key(extra_file))
    result = tuple(sorted(config.names))
    _WORKTREE[key] = config.worktree
    if not config.includes:
        _FILTERS[key] = _Filters(result, tuple(files.items()), env, tuple(config.attributes), tuple(config.excludes))
    else:
        _FILTERS.pop(key, None)   # a list kept before the includes came is no one's to trust
    return result


def _config_places(key: str) -> list[str]:
    """Where git looks for the user's and the system's configuration, whether or not a file is
    there now: one created later must be seen (filter names, and unchanged.py's kept answers)."""
    env = caller_env()
    home = env.get("HOME")
    places = ([os.path.join(home, ".gitconfig")] if home else []) + [user_git_file("config")]
    for var, default in (("GIT_CONFIG_GLOBAL", None), ("GIT_CONFIG_SYSTEM", "/etc/gitconfig")):
        named = env.get(var) or default
        if named:
            places.append(os.path.join(key, named))     # as git reads it, from the repository (-C)
    return places


@dataclass
class _ConfigList:
    """What filter_names keeps of one `git config --list --show-origin -z`."""
    names: set[str] = field(default_factory=set)            # filter drivers defined
    attributes: list[str] = field(default_factory=list)     # core.attributesFile values, in order
    excludes: list[str] = field(default_factory=list)       # core.excludesFile values, in order
    files: dict[str, tuple[int, int, int]] = field(default_factory=dict)   # origin files, and their stat
    includes: bool = False       # include directives, or an origin file that cannot be found again
    worktree: bool = False       # core.worktree is set


def _parse_config_list(out: bytes, key: str) -> _ConfigList:
    """Read the output of `git config --list --show-origin -z` in the repository at `key` (an
    absolute path), stat-ing each origin file once, in the order git lists them."""
    config = _ConfigList()
    names, attributes, excludes, files = config.names, config.attributes, config.excludes, config.files
    worktree = False
    includes = False
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    for origin, entry in zip(fields[0::2], fields[1::2]):
        name = entry.split("\n", 1)[0]
        section, _, rest = name.partition(".")
        if section.lower() == "filter" and "." in rest:
            names.add(rest.rsplit(".", 1)[0])
        if section.lower() in ("include", "includeif"):
            includes = True
        worktree = worktree or name.lower() == "core.worktree"
        if name.lower() == "core.attributesfile" and "\n" in entry:
            attributes.append(caller_env().expanduser(entry.split("\n", 1)[1]))
        if name.lower() == "core.excludesfile" and "\n" in entry:
            excludes.append(caller_env().expanduser(entry.split("\n", 1)[1]))
        if origin.startswith("file:"):
            path = origin[len("file:"):]
            full = path if os.path.isabs(path) else os.path.join(key, path)
            files.setdefault(full, _stat_key(full))
            # Relative origins are relative to the top of the work tree, which `repo` may not
            # be: a file that cannot be found is a file whose changes we could not see.
            includes = includes or files[full] == (0, 0, 0)
    config.worktree = worktree
    config.includes = includes
    return config


# repository path -> whether its configuration, when last read, set core.worktree (confine).
_WORKTREE: dict[str, bool] = {}


def sets_worktree(repo: Path | str) -> bool:
    """Whether git's configuration in `repo` sets core.worktree (read as filter_names reads it)."""
    filter_names(repo)
    return _WORKTREE.get(os.path.abspath(str(repo)), False)


def filter_overrides(repo: Path | str) -> tuple[str, ...]:
    """Options that stop every configured filter driver from running (an empty command is no
    command, and an empty `process` also keeps git from falling back to `clean`/`smudge`;
    `required=false` keeps git from failing the path for it). Empty when the user opted in
    with CODEVOUCH_RUN_GIT_FILTERS=1.

    Each is `--config-env=filter.<name>.<key>=VAR`, never `-c filter.<name>.<key>=`: `-c`
    splits its argument at the first `=`, so a driver named `x=y` (or `x.clean=touch ...#`)
    would set some other key (`filter.x`, or `filter.x.clean` to the text after the `=`), and
    the driver would run. `--config-env` splits at the last `=`, and the variable's name is
    ours; git then takes every byte of the name (quotes, spaces, dots, `=`, non-UTF-8) as the
    subsection. `_process._env` sets the variables in every git process's environment."""
    if run_filters():
        return ()
    args: list[str] = []
    for name in filter_names(repo):
        for key, var in (("clean", EMPTY_VAR), ("smudge", EMPTY_VAR), ("process", EMPTY_VAR),
                         ("required", FALSE_VAR)):
            args.append(f"--config-env=filter.{name}.{key}={var}")
    return tuple(args)


def excludes_file(repo: Path | str) -> str | None:
    """The global ignore file git reads in `repo`: core.excludesFile (the last value wins, as in
    git), else `$XDG_CONFIG_HOME/git/ignore`; None when the configuration could not be kept
    (includes: see filter_names), so it is not known without asking git."""
    filter_names(repo)
    config = _FILTERS.get(os.path.abspath(str(repo)))
    if config is None:
        return None
    if config.excludes:
        return config.excludes[-1]
    return user_git_file("ignore")


def user_git_file(name: str) -> str:
    """`$XDG_CONFIG_HOME/git/<name>` (else `~/.config/git/<name>`) of the running call's
    environment: where git reads the user's config, ignore and attributes files."""
    env = caller_env()
    return os.path.join(env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or "/", ".config"), "git", name)
