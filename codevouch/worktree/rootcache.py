"""The root commit reached from a HEAD, kept on disk between processes.

Finding the root walks HEAD's first-parent history (70 ms of CPU and 170 ms of wall on
SQLAlchemy's 18,224 commits), and every CLI call that runs in-process asks once. A commit id
fixes the commit's parents, so for the same HEAD only these change the answer:

- a shallow clone's boundary (`shallow`: deepening or unshallowing moves the root), and grafts
  (`info/grafts`): their bytes are part of the key;
- replace refs (`refs/replace/`, loose or packed, or whatever base `GIT_REPLACE_REF_BASE` names),
  a ref store this module does not read (reftable), and the variables that move the graft or
  shallow file (`GIT_GRAFT_FILE`, `GIT_SHALLOW_FILE`): no key then, and nothing is cached, not
  even in memory. Replace refs are rare, and what decides whether they count
  (`core.useReplaceRefs` in any config file, `GIT_NO_REPLACE_OBJECTS`) lives where a key
  would have to follow it.

The key is a SHA-256 of the git common directory, HEAD and those bytes (two clones keep two
entries). Entries live in the index directory, in `root-commits` (the newest last, at most
MAX_ENTRIES). They are written only beside a ledger (a read never creates an index, nor leaves
a file where no index is), atomically (a temporary file renamed over it), and never read
through a symbolic link or from anything but a regular file; a directory that cannot be written
keeps nothing. What is read besides is the repository's own git directory, found from `.git` as
git finds it (a directory, or a `gitdir:` file and its `commondir`); nothing runs but git,
through the git door.

A hit is checked before it is used: the line must have the right form, and git must see the
root as a commit of this repository with no parents (`rev-list --no-walk --max-parents=0`: one
process, a few ms, whatever the history's length). A corrupt or planted line is then a miss, and
cannot name a commit this repository lacks. That it is the root of this HEAD rests on the key:
proving ancestry costs the walk again, and a line naming another root of this repository
needs a writer of the index directory, who could equally rewrite the ledger.
"""
from __future__ import annotations

import hashlib
import os
import re
import stat
import tempfile
from pathlib import Path

from codevouch.worktree.gitio import caller_env

FILE = "root-commits"
LEDGER = "state.sqlite"          # store/indexdir.py's LEDGER (the store is a layer above): an index is there
MAX_ENTRIES = 256
_MAX_READ = 1 << 20              # the cache file (256 short lines); more is not ours
_MAX_PACKED_REFS = 64 << 20      # a packed-refs, shallow or grafts file larger than this: no key
_LINE = re.compile(rb"([0-9a-f]{64}) ([0-9a-f]{40}|[0-9a-f]{64})")
_UNKEYED_VARS = ("GIT_REPLACE_REF_BASE", "GIT_GRAFT_FILE", "GIT_SHALLOW_FILE")


def history_key(root: Path, head: str) -> str | None:
    """What the first-parent walk from `head` in the work tree `root` depends on, as a hex digest;
    None when that cannot be told from files alone (see the module's docstring)."""
    if any(caller_env().get(var) is not None for var in _UNKEYED_VARS):
        return None
    common = _common_dir(root)
    if common is None or os.path.exists(os.path.join(common, "reftable")):
        return None
    if _has_replace_refs(common):
        return None
    shallow = _read(os.path.join(common, "shallow"), _MAX_PACKED_REFS)
    grafts = _read(os.path.join(common, "info", "grafts"), _MAX_PACKED_REFS)
    if shallow is None or grafts is None:
        return None
    digest = hashlib.sha256()
    for part in (b"v1", os.fsencode(common), head.encode(), shallow, grafts):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def lookup(index_dir: Path, key: str) -> str | None:
    """The root kept for `key`, unchecked (the caller asks git); None when none is."""
    for k, root in _entries(index_dir):
        if k == key:
            return root
    return None


def remember(index_dir: Path, key: str, root: str) -> None:
    """Keep `root` for `key` (the newest entry last); nothing when the directory holds no ledger
    or cannot be written."""
    if not (index_dir / LEDGER).is_file() or not _LINE.fullmatch(f"{key} {root}".encode()):
        return
    kept = [(k, r) for k, r in _entries(index_dir) if k != key][-(MAX_ENTRIES - 1):]
    text = "".join(f"{k} {r}\n" for k, r in [*kept, (key, root)])
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{FILE}-", dir=index_dir)     # mode 0600
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(text)
        os.replace(tmp, index_dir / FILE)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _entries(index_dir: Path) -> list[tuple[str, str]]:
    data = _read(os.path.join(index_dir, FILE), _MAX_READ) or b""
    found = []
    for line in data.split(b"\n"):
        m = _LINE.fullmatch(line)
        if m is not None:
            found.append((m.group(1).decode(), m.group(2).decode()))
    return found


def _common_dir(root: Path) -> str | None:
    """The git common directory of the work tree at `root`, as git finds it from `.git`."""
    dot_git = os.path.join(root, ".git")
    if os.path.isdir(dot_git):
        git_dir = dot_git
    else:
        first = (_read(dot_git, 4096) or b"").split(b"\n", 1)[0].decode("utf-8", "surrogateescape").strip()
        if not first.startswith("gitdir: "):
            return None
        git_dir = os.path.join(root, first[len("gitdir: "):])
    pointer = _read(os.path.join(git_dir, "commondir"), 4096)
    if pointer is None:
        return None
    common = os.path.join(git_dir, pointer.decode("utf-8", "surrogateescape").strip()) if pointer else git_dir
    return os.path.realpath(common)


def _has_replace_refs(common: str) -> bool:
    """Whether any replace ref exists, loose or packed (an unreadable ref store counts as yes)."""
    try:
        with os.scandir(os.path.join(common, "refs", "replace")) as entries:
            if any(True for _ in entries):
                return True
    except FileNotFoundError:
        pass
    except OSError:
        return True
    data = _read(os.path.join(common, "packed-refs"), _MAX_PACKED_REFS)
    return data is None or b" refs/replace/" in data


def _read(path: str, limit: int = _MAX_READ) -> bytes | None:
    """A regular file's bytes; b"" when there is no such file; None when it cannot be read, is
    not a regular file (a FIFO would block), is a symbolic link, or holds more than `limit`."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except (FileNotFoundError, NotADirectoryError):
        return b""
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            data = handle.read(limit + 1)
    except OSError:
        return None
    return data if len(data) <= limit else None
