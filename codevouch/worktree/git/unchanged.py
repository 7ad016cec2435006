"""Whether a work tree and its git directory are as they were when git last answered about them,
told from stat data alone: a warm process then takes git's last answer instead of starting git.

A query across 100 repositories asked each one's HEAD (`rev-parse`) and its `git status` on every
call: 200 processes, most of a warm call's time, for repositories nobody had touched. What those
answers depend on, and what is looked at here instead:

- the git directory's files that HEAD, the index and the configuration are read from (`HEAD`,
  the ref it names, `packed-refs`, `index`, `info/exclude`, `info/attributes`, `shallow`,
  `info/grafts`, `objects/info/alternates`, the replace refs' folder), the configuration files git
  itself listed (filters.filter_names: the system's, the user's, the repository's), the user's
  ignore and attributes files (these outside the git directory through any link, as git reads
  them), and the variables that steer git (every GIT_*, HOME, XDG_CONFIG_HOME, the opt-in to
  filters): `git_state`;
- for a status, the work tree too: every folder and every entry in it (a new, removed or renamed
  entry changes its folder; a write changes the file's own), walked without following links and
  never into a `.git` (a nested repository's files are walked: more than git reads, never less):
  `tree_state`.

Each is the inode, mode, size, mtime and ctime of each (ctime cannot be set back by a user, and
a file git rewrites is renamed over: a new inode). An answer is kept only when nothing looked at
was written within kept.RACY_NS of the look (a write in the same clock tick would leave the
stat data as they were: git's racy-git problem, solved as git and hashing.py solve it), and the
look is taken before git starts, so a write while git runs shows at the next look.

Nothing is kept (git is asked every time) for a work tree whose `.git` is not a directory (a
linked work tree, a submodule), a reftable or split index, a branch that is itself a symbolic
ref (`git symbolic-ref refs/heads/main refs/heads/other`), a file of the git directory above that
is a symbolic link (`info/exclude` linked to a shared file), a configuration with include directives
(filters.py cannot list its files), or a work tree of more than MAX_ENTRIES entries (a walk would
cost what git costs: such a tree is not walked again in this process; one whose index lists more
is not walked at all: a first call over 100 repositories of 2,000 files walked 1,000 entries of each
to learn it, ~0.5 s of a 6 s cold search).
"""
from __future__ import annotations

import contextvars
import os
import stat as stat_module
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import TypeVar, cast

from codevouch import caches
from codevouch.kept import RACY_NS, Seen  # RACY_NS: a write this close to the look may not show
from codevouch.worktree.git._process import caller_env, run_filters
from codevouch.worktree.git.filters import filter_names, kept_config, user_git_file
from codevouch.worktree.safe_read import NotRegular, read_file, read_head

# The most entries (files, links and folders) a work tree may hold to be walked instead of asking
# git. The walk is Python's lstat of each entry; git status does the same in C after starting a
# process. Medians of 9 on 2 loaded cores (load 6), walk against `git status`: 100 entries 1.0
# against 19.8 ms, 500 2.5 / 19.3, 1,000 16.8 / 26.0, 2,000 30.8 / 38.2, 4,000 115 / 59 ms; on
# git.git (4,847 files) 61 / 46 ms. Past about a thousand entries the walk gains little, or loses.
MAX_ENTRIES = 1_000

_GIT_FILES = ("HEAD", "index", "packed-refs", "config", "config.worktree", "commondir", "info/exclude",
              "info/attributes", "info/sparse-checkout", "info/grafts", "shallow", "objects/info/alternates",
              "refs/replace", "reftable")
_ENV = ("HOME", "XDG_CONFIG_HOME")

StatKey = tuple[int, int, int, int, int] | None


def _key(st: os.stat_result) -> tuple[int, int, int, int, int]:
    return (st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _stat(path: str, follow: bool = False) -> StatKey:
    try:
        return _key(os.stat(path) if follow else os.lstat(path))
    except (OSError, ValueError):
        return None


# The looks taken in the running `one_look()` scope, by (kind, work tree): one call over many
# repositories looks at each once (its bound, its search and its checks took the same look two to
# four times). None outside a scope: each look is taken afresh.
_LOOKS: contextvars.ContextVar[dict[tuple[str, str], object] | None] = \
    contextvars.ContextVar("codevouch_looks", default=None)


@contextmanager
def one_look() -> Iterator[None]:
    """Inside, each work tree's git_state and tree_state are taken once, at their first use, and
    that look answers every later one (threads carried into the scope share it). What git answers
    after the look is still kept under it (Kept.put): a write after it shows at the next scope's
    look, as a write while git runs shows at the next look."""
    token = _LOOKS.set({})
    try:
        yield
    finally:
        _LOOKS.reset(token)


# Set while unlinked_state takes a look for gitreads.guard, which must start no git process before
# its checks: a configuration whose list is not kept already (filter_names would run `git config`)
# makes the look None instead.
_NO_GIT: contextvars.ContextVar[bool] = contextvars.ContextVar("codevouch_look_no_git", default=False)


def in_look_scope() -> bool:
    """Whether a `one_look()` scope is running (its looks, and what is taken in it, shared)."""
    return _LOOKS.get() is not None


def _scoped(kind: str, root: str, look: Callable[[str], Seen | None]) -> Seen | None:
    return in_scope(kind, root, lambda: look(root))


T = TypeVar("T")


def in_scope(kind: str, key: str, take: Callable[[], T]) -> T:
    """`take()`, taken once in the running `one_look()` scope for (kind, key) and given again to
    each later asker in it (a look, or git's answer taken as part of the call's look: status.py);
    outside a scope, taken each time."""
    held = _LOOKS.get()
    if held is None:
        return take()
    if (kind, key) not in held:
        held[(kind, key)] = take()
    return cast("T", held[(kind, key)])


def git_state(top: Path | str) -> Seen | None:
    """What HEAD, the index and git's configuration of the work tree at `top` (the folder that
    holds `.git`) are read from; None when that cannot be told from stat data (see the module)."""
    return _scoped("git", os.path.abspath(str(top)), _git_state)


def _git_state(root: str) -> Seen | None:
    dot_git = os.path.join(root, ".git")
    own = _stat(dot_git)
    if run_filters() or own is None or not stat_module.S_ISDIR(own[1]):
        return None
    if not _NO_GIT.get():
        filter_names(root)               # lists the configuration's files, kept while they are unchanged
    config = kept_config(root)
    if config is None:
        # includes (never kept), a list filter_names did not renew, or one another thread's caller
        # (another HOME, other GIT_CONFIG_*) put there between the two lines above
        return None
    now = time.time_ns()
    seen = _git_files(dot_git, own)
    if seen is None:
        return None
    for extra in (*config.attributes, *config.excludes, user_git_file("attributes"), user_git_file("ignore"),
                  *(path for path, _ in config.files)):
        # The user's files, often links to dotfiles: git reads through. A relative one (a
        # core.excludesFile of `../shared-ignore`) git reads from the top of the work tree.
        seen[extra] = _stat(os.path.join(root, extra), follow=True)
    steering = _steering(caller_env().raw)
    racy = any(s is not None and max(s[3], s[4]) >= now - RACY_NS for s in seen.values())
    return Seen((root, tuple(sorted(seen.items())), config.files, config.env, steering), racy)


def _git_files(dot_git: str, own: StatKey) -> dict[str, StatKey] | None:
    """The stat keys of the git directory's files that git_state looks at, HEAD's ref among them;
    None when they cannot tell (see the module)."""
    seen = {name: _stat(os.path.join(dot_git, name)) for name in _GIT_FILES}
    seen[""] = own
    if seen["reftable"] is not None or seen["commondir"] is not None or _split_index(dot_git, own):
        return None
    head_ref = _head_ref(os.path.join(dot_git, "HEAD"))
    if head_ref is None:
        return None
    seen[head_ref] = _stat(os.path.join(dot_git, head_ref)) if head_ref else None
    if head_ref and _names_a_ref(dot_git, head_ref):
        return None                      # a ref naming another: where the chain ends moves unseen
    if any(s is not None and stat_module.S_ISLNK(s[1]) for s in seen.values()):
        return None                      # git reads through a link: an edit at its end moves nothing here
    return seen


def _steering(raw: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """The variables that steer git (every GIT_*, HOME, XDG_CONFIG_HOME), sorted. A call's own
    environment is a snapshot made at the door (call.py), read once; the process's, each time."""
    held = _STEERING.get(id(raw))
    if held is not None and held[0] is raw:
        return held[1]
    found = tuple(sorted((k, v) for k, v in raw.items() if k.startswith("GIT_") or k in _ENV))
    if type(raw) is dict:       # a Call's snapshot (the process's own variables are no dict: read each time)
        if len(_STEERING) >= 64:
            _STEERING.clear()
        _STEERING[id(raw)] = (raw, found)
    return found


_STEERING: dict[int, tuple[Mapping[str, str], tuple[tuple[str, str], ...]]] = {}
caches.register("codevouch.worktree.gitio.unchanged_steering", _STEERING.clear, _STEERING.__len__)


def _split_index(dot_git: str, own: StatKey) -> bool:
    """Whether the git directory holds a split index's shared part (listed again only when the
    directory's own stat data changed: a new file in it changes them)."""
    held = _SPLIT.get(dot_git)
    if held is not None and held[0] == own:
        return held[1]
    try:
        split = any(name.startswith("sharedindex.") for name in os.listdir(dot_git))
    except OSError:
        return True
    if len(_SPLIT) >= 4096:
        _SPLIT.clear()
    _SPLIT[dot_git] = (own, split)
    return split


_SPLIT: dict[str, tuple[StatKey, bool]] = {}
caches.register("codevouch.worktree.gitio.unchanged_split", _SPLIT.clear, _SPLIT.__len__)


def _head_ref(head: str) -> str | None:
    """The ref HEAD names as a path in the git directory (`refs/heads/main`), "" for a detached
    HEAD; None when HEAD cannot be read as a small file naming a plain ref."""
    data = read_file(head, 4096, follow=False)      # never blocks on a FIFO, never reads a device
    if not isinstance(data, bytes):
        return None
    text = data.decode("utf-8", "surrogateescape").strip()
    if not text.startswith("ref:"):
        return ""
    ref = text[len("ref:"):].strip()
    parts = ref.split("/")
    return ref if ref.startswith("refs/") and ".." not in parts and "" not in parts else None


def _names_a_ref(dot_git: str, ref: str) -> bool:
    """Whether the loose ref `ref` is itself symbolic (`ref: refs/heads/other`), or cannot be read
    as a small regular file inside the git directory; False when it is missing (packed-refs holds
    it: watched)."""
    path = os.path.join(dot_git, ref)
    parts = ref.split("/")
    for depth in range(1, len(parts)):
        # `refs` (or `refs/heads`) a link: never read through it, outside the repository or in. An
        # lstat a folder, not two realpaths (~5% of a warm search across 100 repositories).
        folder = _stat(os.path.join(dot_git, *parts[:depth]))
        if folder is not None and not stat_module.S_ISDIR(folder[1]):
            return True
    data = read_file(path, 4096, follow=False)
    if isinstance(data, bytes):
        return data.startswith(b"ref:")
    return not (isinstance(data, NotRegular) and data.missing)


_TOO_BIG: set[str] = set()          # work trees found over MAX_ENTRIES: not walked again
caches.register("codevouch.worktree.gitio.unchanged_too_big", _TOO_BIG.clear, _TOO_BIG.__len__)


def tree_state(top: Path | str) -> Seen | None:
    """`git_state` and every folder and entry of the work tree at `top`; None when either cannot
    be told (see the module)."""
    return _scoped("tree", os.path.abspath(str(top)), _tree_state)


def _tree_state(root: str) -> Seen | None:
    gits = git_state(root)
    if gits is None or root in _TOO_BIG:
        return None
    if _over_max(root, _git_files_of(gits.state).get("index")):
        _TOO_BIG.add(root)      # its tracked files alone are more: not walked (~1,000 stats) to learn it
        return None
    now = time.time_ns()
    entries = _walk(root)
    if entries is None:
        _TOO_BIG.add(root)
        return None
    racy = gits.racy or any(s is not None and max(s[3], s[4]) >= now - RACY_NS for _, s in entries)
    return Seen((gits.state, tuple(entries)), racy)


def _git_files_of(state: tuple[object, ...]) -> dict[str, StatKey]:
    """The stat keys of the git directory's files in a git_state look's state (_git_state's)."""
    return dict(cast("tuple[tuple[str, StatKey], ...]", state[1]))


# An index entry takes at least 62 bytes (its stat data, object id and flags) besides its path: an
# index file this small cannot list more than MAX_ENTRIES, and its header is not read.
_ENTRY_BYTES = 62


def _over_max(root: str, index: StatKey) -> bool:
    """Whether the index (its stat key from the look) lists more than MAX_ENTRIES entries."""
    if index is None or index[2] <= 12 + _ENTRY_BYTES * MAX_ENTRIES:
        return False
    return _indexed(os.path.join(root, ".git", "index")) > MAX_ENTRIES


def _indexed(index: str) -> int:
    """The number of entries the index file's header declares (`DIRC`, its version, its count); 0
    when it cannot be read as one (no index yet: then the walk decides)."""
    head = read_head(index, 12)
    if not isinstance(head, bytes) or len(head) < 12 or head[:4] != b"DIRC":
        return 0
    return int.from_bytes(head[8:12], "big")


def unlinked_state(top: Path | str, followed: frozenset[str], absent: tuple[str, ...]) -> Seen | None:
    """tree_state of `top` when it can stand for a reader of the work tree that follows links named
    `followed` (in any folder) and resolves paths the git directory's files `absent` name: None
    when it cannot (None already; a link so named, whose target may change while the link's stat
    data do not; one of `absent` present), and outside a `one_look()` scope (a walk of the work
    tree taken for this alone would cost more than it could save). Runs no git: a look not taken yet
    in this scope is taken from stat data alone, and is None when the configuration's list would
    have to be read again (then not kept in the scope: the call's own looks, after the guard, read it)."""
    held = _LOOKS.get()
    if held is None:
        return None
    root = os.path.abspath(str(top))
    fresh = [look for look in (("git", root), ("tree", root)) if look not in held]
    quiet = _NO_GIT.set(True)
    try:
        seen = tree_state(root)
    finally:
        _NO_GIT.reset(quiet)
    if seen is None:
        for look in fresh:      # taken without git only for the guard: the call's own looks may read the list
            held.pop(look, None)
        return None
    gits, entries = cast("tuple[tuple[object, ...], tuple[tuple[str, StatKey], ...]]", seen.state)  # _tree_state's
    git_files = _git_files_of(gits)
    if any(git_files.get(name) is not None for name in absent):
        return None
    for path, key in entries:
        if key is not None and stat_module.S_ISLNK(key[1]) and path.rpartition("/")[2] in followed:
            return None
    return seen


def _walk(root: str) -> list[tuple[str, StatKey]] | None:
    """(path from the top, stat key) of the top, every folder below it and every entry in each,
    in walk order; None past MAX_ENTRIES."""
    out: list[tuple[str, StatKey]] = [("", _stat(root))]
    stack = [("", root)]
    while stack:
        rel, folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                # no more of a folder than the bound can take (one folder of a million entries
                # is not listed and sorted whole to learn that it is too many); +1: the top's .git
                found = sorted(islice(listing, MAX_ENTRIES + 2 - len(out)), key=lambda e: e.name)
        except OSError:
            out.append((rel + "/?", None))      # unreadable: git cannot read in it either; a change
            continue                            # of its mode shows in its own stat key above
        if len(out) + len(found) > MAX_ENTRIES + 1:
            return None
        for entry in found:
            if not rel and entry.name == ".git":
                continue                        # git_state's
            path = f"{rel}/{entry.name}" if rel else entry.name
            try:
                key: StatKey = _key(entry.stat(follow_symlinks=False))
            except OSError:
                key = None
            out.append((path, key))
            if key is not None and stat_module.S_ISDIR(key[1]) and entry.name != ".git":
                stack.append((path, entry.path))
        if len(out) > MAX_ENTRIES:
            return None
    return out
