"""Many repositories in one build (`codevouch index build --repo A --repo B`, `--repos FILE`).

A repositories file is TOML, one `[[repo]]` table per repository:

    [[repo]]
    path = "~/src/shop"                  # required; `~` expands, a relative path is relative to the file
    branches = ["main", "release/2.1"]   # named branches (default: the current branch)

    [[repo]]
    path = "~/src/billing"
    all_branches = true                  # every local branch ...
    include_branches = ["main", "release/*"]   # ... that these globs keep (as --include-branch)
    exclude_branches = ["wip/*"]               # ... less these (as --exclude-branch)

Each repository is built in turn into the same index; one that fails (gone, not a git
repository, corrupt, its index or server lease held by another writer) is reported and the next
one is built. Only an interrupt (Ctrl-C) stops the loop.

The file is read only when it is a regular file of at most MAX_REPOS_FILE_BYTES (opened
non-blocking: a FIFO or a device such as /dev/zero is refused at once, never read). Each entry
keeps the line its `[[repo]]` table starts on, so a failure names the file and line to fix;
paths are made absolute and normalised (`conf/../shop` is `shop`).
"""
from __future__ import annotations

import hashlib
import os
import re
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codevouch.embedding import Embedder
from codevouch.errors import InputError, NotARepository, UnknownRevision
from codevouch.indexer.build import BranchSummary, BuildKnobs, build_index

if TYPE_CHECKING:
    # typing.Unpack is 3.11+: typing_extensions for the type checker only.
    from typing_extensions import Unpack

_ENTRY_KEYS = ("path", "branches", "all_branches", "include_branches", "exclude_branches")
MAX_REPOS_FILE_BYTES = 1 << 20     # a list of repositories; anything larger is not one
_TABLE = re.compile(r"^[ \t]*\[\[[ \t]*repo[ \t]*\]\]", re.M)


@dataclass(frozen=True)
class ListedAt:
    """Where a repository is listed: the repositories file and the line of its `[[repo]]` table."""
    file: str
    line: int | None    # None when the table's line cannot be told (an inline table)
    entry: int          # its number among the file's [[repo]] tables, from 1

    def __str__(self) -> str:
        return f"{self.file} line {self.line}" if self.line else f"{self.file}, [[repo]] #{self.entry}"

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "entry": self.entry}


@dataclass(frozen=True)
class RepoSpec:
    """One repository to build and its branch selection (as `index build`'s branch flags)."""
    path: Path
    branches: tuple[str, ...] = ()
    all_branches: bool = False
    include_branches: tuple[str, ...] = ()
    exclude_branches: tuple[str, ...] = ()
    listed_at: ListedAt | None = field(default=None, compare=False)   # None: given as --repo
    # The path as the file (or --repo) spells it, before `~` and the file's directory are applied:
    # what `--shard` hashes, so that every machine reading one file agrees. None: the full path.
    written: str | None = field(default=None, compare=False)

    @property
    def shard_key(self) -> str:
        """What decides the repository's shard: its path as written (see `shard_of`)."""
        return self.written if self.written is not None else normalised(self.path)


@dataclass
class RepoOutcome:
    """What building one repository did: its branches' summaries, or the error that stopped it."""
    spec: RepoSpec
    branches: list[BranchSummary] = field(default_factory=list)
    error: BaseException | None = None
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict[str, Any]:
        from dataclasses import asdict

        out: dict[str, Any] = {"repo": normalised(self.spec.path), "status": "ok" if self.ok else "failed",
                               "branches": [asdict(s) for s in self.branches], "seconds": round(self.seconds, 3)}
        if self.spec.listed_at is not None:
            out["listed_at"] = self.spec.listed_at.to_json()
        if self.error is not None:
            out["error"] = {"type": type(self.error).__name__, "message": str(self.error)}
        return out


def load_repos_file(path: Path | str) -> list[RepoSpec]:
    """The repositories listed in a TOML file (see the module's docstring); InputError when the
    file cannot be read or says something this loader does not understand (unknown keys too:
    a misspelt key must not silently build the wrong branches)."""
    source = Path(path).expanduser()
    try:
        text = _read_bounded(source).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the repositories file {source}: {exc}; pass a readable TOML file.") from exc
    return parse_repos(text, str(source), base=source.resolve().parent)


def normalised(path: Path | str) -> str:
    """`path` absolute and without `.` or `..` parts (links are not resolved: the path a person wrote)."""
    return os.path.normpath(os.path.abspath(os.fspath(path)))


def _read_bounded(source: Path) -> bytes:
    """The file's bytes; InputError when it is not a regular file or is over the cap, before
    reading any of it (a FIFO would block, /dev/zero never ends)."""
    fd = os.open(source, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"the repositories file {source} is not a regular file (a FIFO, a device or a "
                             "directory); pass a TOML file listing [[repo]] tables.")
        data = os.read(fd, MAX_REPOS_FILE_BYTES + 1)
        if info.st_size > MAX_REPOS_FILE_BYTES or len(data) > MAX_REPOS_FILE_BYTES:
            raise InputError(f"the repositories file {source} is {max(info.st_size, len(data))} bytes, over the "
                             f"{MAX_REPOS_FILE_BYTES}-byte cap for a list of repositories; pass the TOML file "
                             "that lists them.")
        while chunk := os.read(fd, MAX_REPOS_FILE_BYTES + 1 - len(data)):   # a short read before the end
            data += chunk
            if len(data) > MAX_REPOS_FILE_BYTES:
                raise InputError(f"the repositories file {source} grew past the {MAX_REPOS_FILE_BYTES}-byte cap "
                                 "while it was read; pass the TOML file that lists the repositories.")
        return data
    finally:
        os.close(fd)


def parse_repos(text: str, source: str = "<repos>", base: Path | None = None) -> list[RepoSpec]:
    """`load_repos_file` on text; relative paths are relative to `base` (default: the current directory)."""
    from codevouch.worktree.config import toml_table

    try:
        table = toml_table(text)
    except ValueError as exc:
        raise InputError(f"{source} {exc}; fix the file, then run again.") from exc
    extra = sorted(set(table) - {"repo"})
    if extra:
        raise InputError(f"{source}: unknown top-level key(s) {', '.join(extra)}; list repositories as [[repo]] tables.")
    entries = table.get("repo")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise InputError(f'{source}: no repositories; add one or more [[repo]] tables with path = "...".')
    lines = [text.count("\n", 0, m.start()) + 1 for m in _TABLE.finditer(text)]
    listed = [ListedAt(source, lines[n - 1] if len(lines) == len(entries) else None, n)
              for n in range(1, len(entries) + 1)]
    return [_spec(entry, f"{source}: [[repo]] #{n}", base or Path.cwd(), listed[n - 1])
            for n, entry in enumerate(entries, 1)]


def _spec(entry: dict[str, Any], where: str, base: Path, listed_at: ListedAt) -> RepoSpec:
    unknown = sorted(set(entry) - set(_ENTRY_KEYS))
    if unknown:
        raise InputError(f"{where}: unknown key(s) {', '.join(unknown)}; a repository takes "
                         f"{', '.join(_ENTRY_KEYS)}.")
    path = entry.get("path")
    if not isinstance(path, str) or not path.strip():
        raise InputError(f'{where}: `path` must be the repository\'s path (path = "~/src/shop").')
    all_branches = entry.get("all_branches", False)
    if not isinstance(all_branches, bool):
        raise InputError(f"{where}: `all_branches` must be true or false.")
    branches, include, exclude = (_names(entry, key, where)
                                  for key in ("branches", "include_branches", "exclude_branches"))
    if branches and all_branches:
        raise InputError(f"{where}: give `branches` or `all_branches = true`, not both.")
    if (include or exclude) and not all_branches:
        raise InputError(f"{where}: `include_branches` and `exclude_branches` choose among all branches; "
                         "add `all_branches = true`, or name the branches with `branches`.")
    where_to = Path(path).expanduser()
    full = Path(normalised(where_to if where_to.is_absolute() else base / where_to))
    return RepoSpec(full, branches, all_branches, include, exclude, listed_at, written=path)


@dataclass(frozen=True)
class Shard:
    """One of `count` disjoint parts of a repositories list (`index build --shard NUMBER/COUNT`), 1-based."""
    number: int
    count: int

    def __str__(self) -> str:
        return f"{self.number}/{self.count}"

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`I/N` with 1 <= I <= N; InputError, saying what to pass, for anything else."""
        match = re.fullmatch(r"\s*(\d{1,6})\s*/\s*(\d{1,6})\s*", text)
        number, count = (int(match.group(1)), int(match.group(2))) if match else (0, 0)
        if not match or count < 1 or not 1 <= number <= count:
            raise InputError(f"--shard {text!r} is not a part of the list: pass NUMBER/COUNT with 1 <= NUMBER <= COUNT "
                             "(--shard 1/3, --shard 2/3 and --shard 3/3 on three machines build every repository once).")
        return cls(number, count)

    def holds(self, spec: RepoSpec) -> bool:
        return shard_of(spec.shard_key, self.count) == self.number


def shard_of(key: str, count: int) -> int:
    """The shard (1..count) a repository belongs to, by rendezvous hashing of its key (its path as
    the list writes it): the same on every machine, whatever its place in the list, so adding or
    removing a repository moves no other; going from N to N+1 shards moves about 1/(N+1) of them."""
    def weight(number: int) -> bytes:
        return hashlib.sha256(f"{number}\0{key}".encode("utf-8", "surrogateescape")).digest()
    return max(range(1, count + 1), key=weight)


def _names(entry: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise InputError(f'{where}: `{key}` must be a list of branch names or globs ({key} = ["main", "release/*"]).')
    return tuple(value)


def build_repos(specs: Sequence[RepoSpec], index_dir: Path, embedder: Embedder,
                on_repo: Callable[[RepoOutcome], None] | None = None,
                **knobs: Unpack[BuildKnobs]) -> list[RepoOutcome]:
    """Build each repository in turn into `index_dir`, each as its knobs say (build.BuildKnobs:
    the writer lock's wait, progress, settings, the store's settings); a failure is recorded in
    its outcome and the next repository is built. `on_repo` sees each outcome as soon as it is
    known.

    Any exception a repository's build raises is caught, a bug included (the outcome carries it:
    the caller decides how to report it), so that one odd repository cannot cost the others
    their night; KeyboardInterrupt and SystemExit are not caught."""
    outcomes = []
    for spec in specs:
        started = time.monotonic()
        outcome = RepoOutcome(spec)
        try:
            # A named branch that is gone costs only itself: the others are built, then it is
            # reported as the entry's error.
            present, missing = _named_branches(spec)
            if present or not missing:
                outcome.branches = build_index(spec.path, index_dir, embedder, branches=present,
                                               all_branches=spec.all_branches,
                                               include_branches=spec.include_branches or None,
                                               exclude_branches=spec.exclude_branches or None, **knobs)
            if missing:
                outcome.error = _missing_branches(spec, missing, [s.branch for s in outcome.branches])
        except Exception as exc:  # a CodevouchError, or a bug: either way the next repository is built
            outcome.error = _where_listed(exc, spec)
        outcome.seconds = time.monotonic() - started
        outcomes.append(outcome)
        if on_repo is not None:
            on_repo(outcome)
    return outcomes


def _named_branches(spec: RepoSpec) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The entry's named branches that exist (as `index build --branch` takes them: a branch or
    a commit), and those that do not. Asked only when it names some."""
    if not spec.branches:
        return (), ()
    from codevouch.worktree import gitio, gitreads

    gitreads.guard(spec.path)             # before any git process runs in it, as build_index does
    root = gitio.repo_root(spec.path)     # not a repository: NotARepository, as a build would say
    present, missing = [], []
    for name in spec.branches:
        try:
            gitio.resolve_commit(root, name)
            present.append(name)
        except UnknownRevision:
            missing.append(name)
    return tuple(present), tuple(missing)


def _missing_branches(spec: RepoSpec, missing: Sequence[str], built: Sequence[str]) -> UnknownRevision:
    names = ", ".join(repr(m) for m in missing)
    listed = f"the [[repo]] entry at {spec.listed_at}" if spec.listed_at is not None else "the repository"
    done = f"built {', '.join(built)}" if built else "built nothing"
    return UnknownRevision(f"{names} {'is not a branch' if len(missing) == 1 else 'are not branches'} or "
                           f"commit{'' if len(missing) == 1 else 's'} in {normalised(spec.path)} ({done}); "
                           f"`git branch` lists the branches: fix or remove {'it' if len(missing) == 1 else 'them'} "
                           f"in {listed}.")


def _where_listed(exc: Exception, spec: RepoSpec) -> Exception:
    """A repository that is not one, said for a repositories file: the advice a single build
    gives ("pass --repo ...") points at the entry to fix instead."""
    if spec.listed_at is None or not isinstance(exc, NotARepository):
        return exc
    fact = str(exc).split("; ", 1)[0].rstrip(".")
    return NotARepository(f"{fact}: the [[repo]] entry at {spec.listed_at}; fix its path, or remove the entry, "
                          "then run again.", exc.cmd, exc.returncode, exc.stderr)
