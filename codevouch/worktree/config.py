"""The repository's codevouch settings as they are in the working tree.

One table, from `.codevouch.toml` (preferred) or the `[tool.codevouch]` table of
pyproject.toml. Each concern reads its own section of it: rules.py the exclusion rules,
models.py `[models]` and `[budget]`, usage.py `[usage]` and `[health]`. Only these two file
names at the repository root are read (read_setting_file, through safe_read), never a symlink
that leaves the repository, a FIFO, a device or a file over 1 MiB: each is an error naming it.
"""
from __future__ import annotations

import copy
import os
import sys
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from codevouch import environment
from codevouch.caches import clearable
from codevouch.errors import ConfigError
from codevouch.worktree.safe_read import NotRegular, TooLarge, read_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass(frozen=True)
class RepoConfig:
    table: dict[str, Any] = field(default_factory=dict)
    source: str = "defaults"       # ".codevouch.toml", "pyproject.toml [tool.codevouch]" or "defaults"

    def section(self, name: str) -> dict[str, Any]:
        """A sub-table (`[budget]`, `[models]`...), {} when absent; ConfigError when not a table."""
        value = self.table.get(name, {})
        if not isinstance(value, dict):
            raise ConfigError(f"{self.source}: `{name}` must be a table ([{name}]).")
        return value


# Loads of the repository's settings in this process, by loader ("config": load_repo_config,
# "rules": files.load_worktree_rules), for tests and benchmarks (as gitio.PROCESSES counts git):
# one call (a search, a context pack) loads each at most once (files.CallSettings).
LOADS: Counter[str] = Counter()


def load_repo_config(root: Path) -> RepoConfig:
    """The settings of the work tree at `root` (its top directory). One call loads them once and
    hands them down (files.CallSettings)."""
    LOADS["config"] += 1
    own = _read(root, ".codevouch.toml")
    if own is not None:
        return RepoConfig(loads(own, ".codevouch.toml"), ".codevouch.toml")
    pyproject = _read(root, "pyproject.toml")
    if pyproject is not None:
        table = codevouch_table(pyproject)
        if isinstance(table, dict):
            return RepoConfig(table, "pyproject.toml [tool.codevouch]")
    return RepoConfig()


def loads(text: str, name: str) -> dict[str, Any]:
    """The TOML document `text` (file `name`, for the message), parsed once per text in this
    process (a search read the repository's pyproject.toml twice, 30 ms of TOML on SQLAlchemy's):
    each caller gets its own copy."""
    return copy.deepcopy(_parsed(text, name))


def codevouch_table(pyproject: str) -> Any:
    """pyproject.toml's `[tool.codevouch]` (None when absent), a copy of it only."""
    return copy.deepcopy(_parsed(pyproject, "pyproject.toml").get("tool", {}).get("codevouch"))


MAX_TOML_DEPTH = 32     # tables and arrays inside one another; codevouch's own settings use 3


def toml_table(text: str) -> dict[str, Any]:
    """`text` parsed as TOML, at most MAX_TOML_DEPTH deep; ValueError (its words say what is
    wrong) for invalid TOML or deeper nesting. A file nested thousands deep made tomllib (and
    every walk over its result) raise RecursionError: a crash, exit 70."""
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"is not valid TOML ({exc})") from exc
    except RecursionError:
        raise ValueError("nests tables or arrays too deeply to read") from None
    level: list[tuple[Any, int]] = [(table, 1)]
    while level:            # a walk without recursion: its depth is what is checked
        value, depth = level.pop()
        if depth > MAX_TOML_DEPTH:
            raise ValueError(f"nests tables or arrays more than {MAX_TOML_DEPTH} deep")
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        level.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return table


@clearable
@lru_cache(maxsize=16)
def _parsed(text: str, name: str) -> dict[str, Any]:
    # Keyed by the text itself, so an edit is never missed; never handed out (see loads).
    try:
        return toml_table(text)
    except ValueError as exc:
        raise ConfigError(f"{name} {exc}; fix or remove it.") from exc


MAX_CONFIG_BYTES = 1 << 20


def _read(root: Path, name: str) -> str | None:
    data = read_setting_file(root, name)
    return None if data is None else data.decode("utf-8", errors="replace")


def read_setting_file(root: Path, name: str) -> bytes | None:
    """The bytes of the settings file `name` at the work tree's top `root`: None when there is
    none. A symlink that leaves the repository (never read: not the repository's to give), a
    FIFO, a device, a directory or a file over MAX_CONFIG_BYTES is a ConfigError that names it:
    read, it would block for ever or fill memory, and skipped, the repository's settings (its
    exclusion rules, `[usage] record = false`) would silently not apply."""
    path = root / name
    # The common case first: no file, or a regular one that is no link (O_NOFOLLOW), is inside the
    # repository by its name alone, and needs no resolving (two realpaths: most of reading the
    # settings, which a search across 100 repositories does for each). Anything else, as below.
    first = read_file(path, MAX_CONFIG_BYTES, follow=False)
    if isinstance(first, bytes):
        return first
    if isinstance(first, NotRegular) and first.missing:
        return None
    try:
        real = path.resolve()
        outside = not real.is_relative_to(root.resolve())
    except (OSError, RuntimeError):       # RuntimeError: a symlink loop, on older Pythons
        outside = False
        real = path
    if outside:
        if not os.path.lexists(path):
            return None
        raise ConfigError(f"{name} is a symlink out of the repository, and codevouch reads its settings only "
                          "from inside it; replace the link with a regular file (or remove it).")
    data = read_file(real, MAX_CONFIG_BYTES, follow=True)
    if isinstance(data, NotRegular):
        if data.missing:
            return None
        raise ConfigError(f"{name} is {data.what}, not a regular file, so its codevouch settings cannot be "
                          f"read; replace it with a regular file (or remove it).")
    if isinstance(data, TooLarge):
        raise ConfigError(f"{name} is {data.size} bytes, over the {MAX_CONFIG_BYTES}-byte cap for a settings "
                          "file; make it smaller (or remove it).")
    return data


# The reader of any one duration variable by name (tests/worktree/test_config_env.py); the
# CODEVOUCH_* variables themselves are declared, and read, in codevouch/environment.py.
seconds_from_env = environment.seconds_from_env


ENV_MODEL = environment.EMBEDDING_MODEL.name
ENV_DEVICE = environment.EMBEDDING_DEVICE.name
ENV_MATCH_THRESHOLD = environment.MATCH_THRESHOLD.name
_EMBEDDING_KEYS = frozenset({"model", "device", "match_threshold"})


@dataclass(frozen=True)
class EmbeddingChoice:
    """The embedding model, device and match threshold a repository's settings choose: the
    environment over `[embedding]` in the repository config over the defaults (as `[budget]`)."""
    model: str | None = None               # a model name or a directory as written; None: packaged
    base: Path | None = None               # what a relative directory is relative to
    device: str = "auto"
    match_threshold: float | None = None   # None: the model's measured one
    source: str = "defaults"               # where `model` came from


def embedding_choice(cfg: RepoConfig, root: Path | None,
                     env: Mapping[str, str] | environment.Environment) -> EmbeddingChoice:
    """`[embedding] model / device / match_threshold`, each overridden by its environment
    variable (CODEVOUCH_EMBEDDING_MODEL, CODEVOUCH_EMBEDDING_DEVICE, CODEVOUCH_MATCH_THRESHOLD).
    A relative model directory in the config is relative to the repository root, in the
    environment to the current directory. ConfigError for a bad key or value. env: the
    caller's variables (its Call's)."""
    vars_ = environment.of(env)
    section = cfg.section("embedding")
    where = f"{cfg.source} [embedding]"
    unknown = set(section) - _EMBEDDING_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; known: {sorted(_EMBEDDING_KEYS)}.")
    for key in ("model", "device"):
        if key in section and (not isinstance(section[key], str) or not section[key].strip()):
            raise ConfigError(f"{where} {key} must be a non-empty string.")
    model, base, source = None, None, "defaults"
    if vars_.embedding_model is not None:
        model, source = vars_.embedding_model, ENV_MODEL
    elif "model" in section:
        model, base, source = section["model"].strip(), root, where
    device = vars_.embedding_device or str(section.get("device", "auto")).strip()
    if vars_.is_set(environment.MATCH_THRESHOLD):     # the variable wins; its own error names it
        return EmbeddingChoice(model, base, device, vars_.match_threshold, source)
    given = section.get("match_threshold")
    threshold = None if given is None else environment.similarity(f"{where} match_threshold", given)
    return EmbeddingChoice(model, base, device, threshold, source)
