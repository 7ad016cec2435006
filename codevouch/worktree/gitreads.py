"""The files git reads on its own before it answers, checked before any git process starts.

git opens a repository's `.gitignore` and `.gitattributes` files (in every directory it walks),
`.git/config` and the files it includes (`include.path`, `includeIf.<cond>.path`),
`info/exclude`, `info/attributes`, `core.excludesFile` and `core.attributesFile` with a blocking
open() and reads each whole. A hostile repository makes one of them a FIFO (git waits for a
writer for ever: `search`, `validate`, `check-refs`, `index build` and every MCP tool hung), a
link to /dev/zero (git reads without end), or a 2 GB sparse file (git holds all of it in
memory). codevouch cannot change how git opens them, so `guard(path)` looks at each (one stat,
nothing opened but the config files themselves, read through safe_read) and refuses the
repository with a ConfigError that names the file before git is started at all.

No git here: the work tree's top and its git directory are found as git finds them (the first
directory upwards holding `.git`; a `.git` file's `gitdir:`; `commondir`), and the config files
are scanned for the few keys that name files (a scan, not a full config parser: a key it cannot
read is one git would refuse too, or one that names no file).
"""
from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from codevouch.caches import register
from codevouch.errors import ConfigError
from codevouch.worktree.gitio import Kept, caller_env, unlinked_state
from codevouch.worktree.safe_read import NotRegular, TooLarge, check_file, read_file

# The most bytes any one of these files may hold: far over any real .gitignore or config, far
# under what would hurt git to hold in memory.
GIT_FILE_CAP = 16 << 20
_POINTER_CAP = 64 << 10          # a `.git` file or `commondir`: one path
_MAX_INCLUDE_DEPTH = 10          # as git's own limit on nested includes

_TREE_FILES = frozenset({".gitignore", ".gitattributes"})
_GIT_DIR_FILES = ("config", "config.worktree", "info/exclude", "info/attributes")
# Files git opens in its git directory on most commands, read in parts (no size cap), and the ref
# HEAD names: a FIFO or a link to a device among them hung build, search, validate and review.
_GIT_STATE_FILES = ("HEAD", "index", "packed-refs", "shallow", "info/grafts", "objects/info/alternates")


@dataclass(frozen=True)
class Refused:
    """A file git would read that is unsafe to: where it is, what git reads it as, what it is."""
    path: Path
    role: str                         # "a .gitignore", "a file .git/config includes" ...
    problem: NotRegular | TooLarge

    def message(self, top: Path) -> str:
        shown = _shown(self.path, top)
        if isinstance(self.problem, TooLarge):
            return (f"{shown} ({self.role}) is {self.problem.size} bytes, over the {self.problem.limit}-byte cap "
                    "for a file git reads whole; nothing was run. Make it smaller or remove it.")
        return (f"{shown} ({self.role}) is {self.problem.what}, not a regular file: git reads it before it "
                "answers and would block (or read without end), so nothing was run. Replace it with a regular "
                "file or remove it.")


def guard(path: Path | str) -> None:
    """ConfigError naming the first file git would read that is a FIFO, a device, or over the cap,
    in the repository holding `path`, or the pointer that puts its git data in another directory
    (worktree/gitowner.py; unless the caller's CODEVOUCH_ALLOW_OUTSIDE_GIT_DIR); nothing when
    there is none (or no repository: git says so)."""
    top = worktree_top(Path(path))
    if top is None:
        return
    allow = caller_env().allow_outside_git_dir
    key = (str(top), allow)
    seen = unlinked_state(top, _FOLLOWED, _RESOLVED)
    if _PASSED.get(key, seen):
        return
    refused = first_refused(top)
    if refused is not None:
        raise ConfigError(refused.message(top))
    if not allow:
        from codevouch.worktree.gitowner import outside_git_dir

        elsewhere = outside_git_dir(top)
        if elsewhere is not None:
            raise ConfigError(elsewhere)
    _PASSED.put(key, seen, True)


# A work tree that passed, kept while a look at its stat data (unchanged.py: every entry of the
# work tree, the git directory's files, the configuration's and the user's files through their
# links) sees what it saw before the guard read: the same inode, type and size of each file the
# guard looks at, so the same answer. Not kept when the look cannot stand for the guard's reads:
# a .gitignore, .gitattributes or .mailmap that is a link (the guard follows it to its target,
# which may change while the link does not), or an alternates file (its paths are resolved
# through links outside the repository). Only inside a one-look scope (a search over many
# repositories, which looks at each work tree anyway): a warm search over 100 repositories
# guarded each one at every call, a fifth of the time its bounds took.
_FOLLOWED = frozenset({".gitignore", ".gitattributes", ".mailmap"})
_RESOLVED = ("objects/info/alternates",)
_PASSED: Kept[tuple[str, bool], bool] = Kept("codevouch.worktree.gitreads.passed")


def worktree_top(path: Path) -> Path | None:
    """The nearest directory at or above `path` that holds a `.git` entry, as git looks for it."""
    try:
        here = path.absolute()
        if not here.is_dir():
            here = here.parent
    except OSError:
        return None
    for candidate in (here, *here.parents):
        if os.path.lexists(candidate / ".git"):
            return candidate
    return None


def first_refused(top: Path) -> Refused | None:
    """The first file git would read in the work tree at `top` that it must not."""
    for found in _git_dir_files(top):
        if found is not None:
            return found
    return _tree_refused(top)


def _git_dir_files(top: Path) -> Iterator[Refused | None]:
    dot_git = top / ".git"
    git_dirs: list[Path] = []
    if not dot_git.is_dir():            # a `gitdir:` file (a linked worktree, a submodule)
        target = _pointer(dot_git, "gitdir:")
        if isinstance(target, Refused):
            yield target
            return
        if target is None:
            return
        git_dirs.append(target)
    else:
        git_dirs.append(dot_git)
    common = _pointer(git_dirs[0] / "commondir", "")
    if isinstance(common, Refused):
        yield common
        return
    if common is not None:
        git_dirs.append(common)
    for git_dir in git_dirs:
        for name in _GIT_DIR_FILES:
            problem = _problem(git_dir / name)
            if problem is not None:
                yield Refused(git_dir / name, f"the repository's {name}", problem)
                return
        for name in (*_GIT_STATE_FILES, *_head_ref(git_dirs[0])):
            problem = _irregular(git_dir / name)
            if problem is not None:
                yield Refused(git_dir / name, f"the repository's {name}", problem)
                return
        yield from _config_files(top, git_dir / "config", 0, set())
        yield from _config_files(top, git_dir / "config.worktree", 0, set())
    mailmap = _irregular(top / ".mailmap")
    if mailmap is not None:
        yield Refused(top / ".mailmap", "the .mailmap git reads for commit authors", mailmap)


def _head_ref(git_dir: Path) -> tuple[str, ...]:
    """The ref HEAD names (`refs/heads/main`), as a path in a git directory; () for a detached
    HEAD, or one that is not a small regular file (refused by its own check)."""
    data = read_file(git_dir / "HEAD", _POINTER_CAP, follow=False)
    if not isinstance(data, bytes):
        return ()
    text = data.decode("utf-8", "surrogateescape").strip()
    ref = text[len("ref:"):].strip() if text.startswith("ref:") else ""
    parts = ref.split("/")
    return (ref,) if ref.startswith("refs/") and ".." not in parts and "" not in parts else ()


def _irregular(path: Path) -> NotRegular | None:
    """What makes `path` unsafe for git to open, size aside (an index or packed-refs may be large
    and is read in parts): a FIFO (git blocks on it), a device (`/dev/zero`: git reads without
    end), or unreadable. A directory fails git at once, which is no hang."""
    problem = check_file(path, 1 << 62)
    return problem if isinstance(problem, NotRegular) and problem != NotRegular("a directory") else None


def _problem(path: Path | str) -> NotRegular | TooLarge | None:
    """What makes `path` unsafe for git to read; a directory is not: git's read of one fails at
    once (and it goes on without it), which is no hang."""
    problem = check_file(path, GIT_FILE_CAP)
    return None if problem == NotRegular("a directory") else problem


def _pointer(file: Path, prefix: str) -> Path | Refused | None:
    """The directory a `.git` file (`gitdir: X`) or a `commondir` file names, relative to the
    file's own directory; None when there is no such file or it names nothing."""
    data = read_file(file, _POINTER_CAP, follow=True)
    if isinstance(data, NotRegular) and data.missing:
        return None
    if isinstance(data, (NotRegular, TooLarge)):
        return Refused(file, "the pointer to the git directory", data)
    text = data.decode("utf-8", errors="surrogateescape").strip()
    if prefix:
        if not text.startswith(prefix):
            return None
        text = text[len(prefix):].strip()
    return (file.parent / text) if text else None


# `[section]`, `[section "sub"]`, `[section.sub]`, then perhaps a key on the same line.
_HEADER = re.compile(r'\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)')
_KEY = re.compile(r"\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$")
# The keys whose values are files git opens: (section, key), lower case.
_INCLUDES = {("include", "path"), ("includeif", "path")}
_FILES = {("core", "excludesfile"), ("core", "attributesfile")}


def _config_files(top: Path, config: Path, depth: int, seen: set[Path]) -> Iterator[Refused | None]:
    """Refused for each file the config file `config` (checked already) names and git would read,
    its includes followed (checked, then scanned in turn)."""
    if depth > _MAX_INCLUDE_DEPTH or config in seen:
        return
    seen.add(config)
    data = read_file(config, GIT_FILE_CAP, follow=True)
    if not isinstance(data, bytes):
        return                          # missing; anything else was refused before it was scanned
    for section, key, value in config_entries(data.decode("utf-8", errors="surrogateescape")):
        if (section, key) not in _INCLUDES and (section, key) not in _FILES or not value:
            continue
        include = (section, key) in _INCLUDES
        target = _path_value(value, config.parent if include else top)
        if target is None:
            continue
        role = f"a file {_shown(config, top)} includes" if include else f"{section}.{key} of {_shown(config, top)}"
        problem = _problem(target)
        if problem is not None:
            yield Refused(target, role, problem)
            return
        if include:
            yield from _config_files(top, target, depth + 1, seen)


def _shown(path: Path, top: Path) -> str:
    """`path` for a message: relative to the work tree when inside it, `..` folded (for words only:
    the checks stat the path as git will open it)."""
    folded = Path(os.path.normpath(path))
    try:
        return str(folded.relative_to(os.path.normpath(top)))
    except ValueError:
        return str(folded)


def _path_value(value: str, base: Path) -> Path | None:
    if value.startswith("%(prefix)/"):
        return None                     # relative to git's install prefix: not the repository's
    expanded = caller_env().expanduser(value)
    if expanded.startswith("~"):
        return None                     # ~user that does not exist: git skips it too
    return base / expanded


def config_entries(text: str) -> Iterator[tuple[str, str, str]]:
    """(section, key, value) of each `key = value` line of a git config text; section and key
    lower case (as git compares them), the subsection dropped, the value unquoted."""
    section = ""
    for line in text.splitlines():
        header = _HEADER.match(line)
        if header is not None:
            section = header.group(1).lower().split(".", 1)[0]
            line = header.group(3)
        entry = _KEY.match(line)
        if entry is not None and section:
            yield section, entry.group(1).lower(), _unquote(entry.group(2) or "")


_ESCAPES = {"n": "\n", "t": "\t", "b": "\b"}


def _unquote(raw: str) -> str:
    out: list[str] = []
    quoted = False
    chars = iter(raw)
    for ch in chars:
        if ch == '"':
            quoted = not quoted
        elif ch == "\\":
            nxt = next(chars, "")
            out.append(_ESCAPES.get(nxt, nxt))
        elif ch in "#;" and not quoted:
            break
        else:
            out.append(ch)
    return "".join(out).strip()


def _tree_refused(top: Path) -> Refused | None:
    """The first .gitignore or .gitattributes in the work tree that git would block on or read
    without end: every directory git may walk (not `.git`, not a nested repository's, not through
    a symlink)."""
    root = os.fspath(top)
    ignored = _root_ignores(root)
    stack = [(root, "", False)]          # (directory, its path from the top, a .gitignore above it negates)
    while stack:
        directory, rel, negated = stack.pop()
        listing = _listing(directory)
        if listing is None or listing.nested and directory != root:
            continue                    # unreadable (git cannot read in it either), or a nested repository
        for name in listing.metadata:
            path = f"{directory}/{name}"
            problem = _problem(path)
            if problem is not None:
                return Refused(Path(path), f"a {name} git reads", problem)
        negated = negated or (directory != root and ".gitignore" in listing.metadata
                              and _negates(f"{directory}/.gitignore"))
        for sub in listing.subdirs:
            path = f"{rel}{sub}/"
            # git never walks into a directory the top .gitignore ignores (`.venv/`, `node_modules/`:
            # thousands of directories, 0.6 s of a cold call), unless a deeper .gitignore could
            # re-include it: then it is walked, as before.
            if not negated and ignored is not None and ignored(path):
                continue
            stack.append((f"{directory}/{sub}", path, negated))
    return None


def _root_ignores(root: str) -> Callable[[str], bool] | None:
    """A test of directory paths (`a/b/`) against the top .gitignore, None when there is none to
    read (a FIFO or a device was refused above, before any walk reaches it)."""
    data = read_file(f"{root}/.gitignore", GIT_FILE_CAP)
    if not isinstance(data, bytes):
        return None
    return _ignores_of(data)


# The top .gitignore's test by the file's bytes (read whole on every walk, above): a warm process
# compiles it once and answers a directory it asked about before from memory (matching every
# directory against every pattern was 3-5 ms of a 20 ms warm search on a 900-file repository).
# Keyed by content, so an edit of the file is a new entry, never a stale answer.
_IGNORES: dict[bytes, Callable[[str], bool]] = {}
_MAX_IGNORES = 16
_MAX_ANSWERS = 200_000
register("codevouch.worktree.gitreads._IGNORES", _IGNORES.clear, lambda: len(_IGNORES))


def _ignores_of(data: bytes) -> Callable[[str], bool]:
    known = _IGNORES.get(data)
    if known is not None:
        return known
    from codevouch.worktree.globs import matcher

    match = matcher(data.decode("utf-8", "replace").splitlines())
    answers: dict[str, bool] = {}

    def ignored(path: str) -> bool:
        found = answers.get(path)
        if found is None:
            if len(answers) >= _MAX_ANSWERS:
                answers.clear()
            found = answers[path] = bool(match(path))
        return found
    if len(_IGNORES) >= _MAX_IGNORES:
        _IGNORES.clear()
    _IGNORES[data] = ignored
    return ignored


def _negates(path: str) -> bool:
    """Whether the .gitignore at `path` holds a negation (`!pattern`), which may re-include what
    the top one ignores (or cannot be read: then assume it does)."""
    data = read_file(path, GIT_FILE_CAP)
    if not isinstance(data, bytes):
        return True
    return any(line.lstrip().startswith("!") for line in data.decode("utf-8", "replace").splitlines())


@dataclass(frozen=True)
class _Listing:
    """What the walk needs of one directory, and the stat data it was read under."""
    key: tuple[int, int, int]             # st_dev, st_ino, st_mtime_ns of the directory
    subdirs: tuple[str, ...]              # not symlinks, not `.git`
    metadata: tuple[str, ...]             # the .gitignore / .gitattributes entries it holds
    nested: bool                          # it holds `.git`: a repository of its own


# Listings by directory, kept while the directory's mtime is unchanged (an entry added, removed
# or replaced, a FIFO for a .gitignore among them, changes it): a search in a long-lived process
# (the MCP server, an agent's Index) then costs one stat per directory, not one listing. The
# files found are stat'ed on every walk (a .gitignore that grows changes no directory). A
# directory changed in the last seconds is not kept, as git treats racily clean files: a second
# change within one tick of the file system's clock would not move its mtime.
_LISTINGS: dict[str, _Listing] = {}
_MAX_LISTINGS = 500_000
_RACY_NS = 3 * 10**9
register("codevouch.worktree.gitreads._LISTINGS", _LISTINGS.clear, lambda: len(_LISTINGS))


def _listing(directory: str) -> _Listing | None:
    try:
        info = os.stat(directory)
        key = (info.st_dev, info.st_ino, info.st_mtime_ns)
        known = _LISTINGS.get(directory)
        if known is not None and known.key == key:
            return known
        with os.scandir(directory) as entries:
            listed = list(entries)
    except OSError:
        return None
    listing = _Listing(key,
                       tuple(e.name for e in listed if e.name != ".git" and _is_dir(e)),
                       tuple(e.name for e in listed if e.name in _TREE_FILES),
                       any(e.name == ".git" for e in listed))
    if time.time_ns() - info.st_mtime_ns > _RACY_NS:
        if len(_LISTINGS) >= _MAX_LISTINGS:
            _LISTINGS.clear()
        _LISTINGS[directory] = listing
    return listing


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False
