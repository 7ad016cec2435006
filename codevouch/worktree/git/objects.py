"""Reading git's object store: object names resolved by `cat-file --batch-check`, commits (with
their dates) and blobs read by `cat-file --batch`, trees listed by `ls-tree`.

One process per call, never one per object: a git process costs ~4 ms here, so per-object calls
would dominate anything else we do. What cannot change (a full object id, `<full commit id>:<path>`,
a commit's whole tree) is kept for the process, keyed by the repository's object store.
"""
from __future__ import annotations

import math
import os
import re
import select
import subprocess
import threading
import time
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codevouch import caches
from codevouch.errors import GitError
from codevouch.worktree.git._process import (
    NO_PROGRAMS,
    _anonymous_file,
    _checked,
    _read_all,
    _spawn,
    over_time,
    remaining,
    wait_exit,
    zsplit,
)
from codevouch.worktree.git.runner import Pending, git_command, run

_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_OBJECT_TYPES = ("commit", "tree", "blob", "tag")


def commit_dates(repo: Path, commits: Iterable[str]) -> dict[str, str]:
    """Committer date (strict ISO 8601) of each commit, in one process."""
    wanted = list(dict.fromkeys(commits))
    if not wanted:
        return {}
    out = run(repo, "show", "-s", *NO_PROGRAMS, "--no-walk=unsorted", "--format=%H %cI", *wanted, "--")
    dates: dict[str, str] = {}
    for line in out.decode().splitlines():
        sha, _, date = line.partition(" ")
        dates[sha] = date
    return dates


def batch_check(root: Path, exprs: Iterable[str]) -> dict[str, tuple[str, str]]:
    """Resolve object names (`HEAD`, abbreviated commits, `<commit>:<path>`) in one process.

    One process answers HEAD, the snippets' commits and each `<commit>:<path>` blob together.
    `%(rest)` is not used, so a path with spaces is read whole; answers come back one line
    per question, in order.
    """
    wanted = [e for e in dict.fromkeys(exprs) if e and "\n" not in e and not e.startswith("-")]
    found: dict[str, tuple[str, str]] = {}
    git_dir = _object_store(root)
    for e in wanted:
        known = _OBJECTS.get((git_dir, e)) if git_dir and _immutable(e) else None
        if known is not None:
            found[e] = known
    wanted = [e for e in wanted if e not in found]
    if not wanted:
        return found
    out = run(root, "cat-file", "--batch-check=%(objectname) %(objecttype)",
                    stdin="".join(f"{e}\n" for e in wanted).encode("utf-8", "surrogateescape"))
    for expr, line in zip(wanted, out.decode("utf-8", "surrogateescape").split("\n")):
        parts = line.split(" ")
        if len(parts) == 2 and _OID.fullmatch(parts[0]) and parts[1] in _OBJECT_TYPES:
            found[expr] = (parts[0], parts[1])
            if git_dir and _immutable(expr):
                _remember(_OBJECTS, (git_dir, expr), found[expr])
    return found


# Answers about objects that cannot change, kept for the process: a full object id, or
# `<full commit id>:<path>` (a commit's tree is part of its id). Only what was found: a missing
# object may arrive with the next fetch. Keyed by the repository's object store, so two clones
# never share an answer.
_OBJECTS: dict[tuple[str, str], tuple[str, str]] = {}
_COMMITS: dict[tuple[str, str], tuple[str, str, str | None]] = {}
_FILE_COUNTS: dict[tuple[str, str], int] = {}     # (store, full commit id) -> file_count's answer
_OBJECTS_MAX = 100_000
_STORES: dict[str, str | None] = {}


def _immutable(name: str) -> bool:
    head, sep, _ = name.partition(":")
    return bool(_OID.fullmatch(head)) and (bool(sep) or ":" not in name)


def _remember(memo: dict[Any, Any], key: tuple[str, str], value: object) -> None:
    if len(memo) >= _OBJECTS_MAX:
        memo.clear()
    memo[key] = value


def _object_store(root: Path | str) -> str | None:
    """A key for the repository `root` is in (its real path), None when it is not a work tree's
    top we can tell (then nothing is kept)."""
    key = os.path.abspath(str(root))
    if key not in _STORES:
        _STORES[key] = os.path.realpath(key) if os.path.exists(os.path.join(key, ".git")) else None
    return _STORES[key]


def _clear_objects() -> None:
    _TREES.clear()
    _OBJECTS.clear()
    _COMMITS.clear()
    _FILE_COUNTS.clear()
    _STORES.clear()


caches.register("codevouch.worktree.gitio.objects", _clear_objects,
                lambda: len(_OBJECTS) + len(_COMMITS) + len(_TREES) + len(_FILE_COUNTS))


def read_commits(root: Path, names: Iterable[str]) -> dict[str, tuple[str, str, str | None]]:
    """name -> (object id, type, committer date) for object names (`HEAD`, abbreviated ids)
    in one `cat-file --batch`: what `batch_check` and `commit_dates` give in two processes.
    The date is strict ISO 8601 as `%cI` gives it, None for objects that are not commits.
    Names that resolve to nothing are left out."""
    return PendingCommits(root, names).result()


class PendingCommits:
    """read_commits started in the background (`result()` gives what it returns)."""

    def __init__(self, root: Path, names: Iterable[str], known: Mapping[str, str] | None = None) -> None:
        """known: names already resolved to a full commit id in this call (`HEAD` from the
        search's rev-parse): read as that id, from memory once read."""
        wanted = [n for n in dict.fromkeys(names) if n and "\n" not in n and " " not in n and not n.startswith("-")]
        self._store = _object_store(root)
        self._aliases = {n: (known or {}).get(n, n) for n in wanted}
        self._found: dict[str, tuple[str, str, str | None]] = {}
        for name, oid in self._aliases.items():
            cached = _COMMITS.get((self._store, oid)) if self._store and _OID.fullmatch(oid) else None
            if cached is not None:
                self._found[name] = cached
        self._names = list(dict.fromkeys(oid for n, oid in self._aliases.items() if n not in self._found))
        self._pending = Pending(root, "cat-file", "--batch", stdin=_batch_input(self._names)) if self._names else None

    def result(self) -> dict[str, tuple[str, str, str | None]]:
        found = dict(self._found)
        if self._pending is not None:
            read = {name: (oid, kind, _committer_date(body) if kind == "commit" else None)
                    for name, (oid, kind, body) in _parse_batch(self._pending.result(), self._names).items()}
            for answer in read.values():
                if self._store and answer[1] == "commit":
                    _remember(_COMMITS, (self._store, answer[0]), answer)
            for name, oid in self._aliases.items():
                if name not in found and oid in read:
                    found[name] = read[oid]
        return found


def _batch_input(names: list[str]) -> bytes:
    return "".join(f"{n}\n" for n in names).encode("utf-8", "surrogateescape")


def _parse_batch(out: bytes, names: list[str]) -> dict[str, tuple[str, str, bytes]]:
    """`cat-file --batch` output for `names` (one answer each, in order) -> name -> (object id,
    type, content); names git could not resolve are left out."""
    found: dict[str, tuple[str, str, bytes]] = {}
    pos = 0
    for name in names:
        eol = out.find(b"\n", pos)
        if eol < 0:
            break
        parts = out[pos:eol].decode("utf-8", "surrogateescape").split(" ")
        pos = eol + 1
        if len(parts) != 3 or not _OID.fullmatch(parts[0]) or parts[1] not in _OBJECT_TYPES:
            continue    # "<name> missing" or "<name> ambiguous": no content follows
        size = int(parts[2])
        found[name] = (parts[0], parts[1], out[pos:pos + size])
        pos += size + 1                      # the content, then a newline
    return found


def _committer_date(body: bytes) -> str | None:
    """`%cI` of a raw commit object: its committer line's epoch seconds in its own zone."""
    from datetime import datetime, timedelta, timezone
    headers = body.split(b"\n\n", 1)[0]
    for line in headers.split(b"\n"):
        if line.startswith(b"committer "):
            try:
                stamp, zone = line.rsplit(b" ", 2)[1:]
                minutes = int(zone[1:3]) * 60 + int(zone[3:5])
                tz = timezone(timedelta(minutes=-minutes if zone[:1] == b"-" else minutes))
                return datetime.fromtimestamp(int(stamp), tz).isoformat()
            except (ValueError, OverflowError, OSError):
                return None
    return None


@dataclass(frozen=True)
class TreeEntry:
    path: str
    mode: str
    blob_sha: str
    size: int


def tree_blobs(repo: Path, commit: str) -> dict[str, str]:
    """path -> blob id of every blob in a commit (symlinks included, as `<commit>:<path>` would
    give them). No sizes: `ls-tree -l` opens every blob for its size, ~10x slower."""
    return parse_tree_blobs(run(repo, "ls-tree", "-r", "-z", "--full-tree", commit))


def start_tree_blobs(repo: Path, commit: str) -> Pending:
    """tree_blobs started in the background: `parse_tree_blobs(pending.result())`."""
    return Pending(repo, "ls-tree", "-r", "-z", "--full-tree", commit)


# Whole trees of commits (full ids), kept for the process: a long-lived searcher (the MCP server,
# an agent's Index) looks up each hit's `<commit>:<path>` in memory, not in a git process per call.
# Bounded by the paths they hold, not by their number: a query over 100 small repositories keeps
# each one's tree (a count of 4 listed 8 trees again per query), a few huge ones stay within it.
_TREES: dict[tuple[str, str], dict[str, str]] = {}
# A search across repositories keeps trees from up to 8 threads at once: the eviction below walks
# the dict, which another thread's insert would change under it (RuntimeError, or a KeyError).
_TREES_LOCK = threading.Lock()
KEPT_TREE_MAX = 200_000        # files: a larger tree is not kept
KEPT_TREES_PATHS = 400_000     # files in all the kept trees


def kept_tree(root: Path, commit: str) -> dict[str, str] | None:
    """path -> blob id of `commit` (a full id) when this process listed it already."""
    store = _object_store(root)
    return _TREES.get((store, commit)) if store else None


def keep_tree(root: Path, commit: str, blobs: dict[str, str]) -> None:
    """Keep a commit's whole tree (tree_blobs' answer) for kept_tree."""
    store = _object_store(root)
    if store and _OID.fullmatch(commit) and len(blobs) <= KEPT_TREE_MAX:
        with _TREES_LOCK:
            _TREES.pop((store, commit), None)
            held = sum(map(len, _TREES.values()))
            while _TREES and held + len(blobs) > KEPT_TREES_PATHS:
                held -= len(_TREES.pop(next(iter(_TREES))))
            _TREES[(store, commit)] = blobs


def parse_tree_blobs(out: bytes, only: Collection[str] | None = None) -> dict[str, str]:
    """`ls-tree -r -z` output -> path -> blob id; only the paths in `only` when given."""
    blobs: dict[str, str] = {}
    for rec in zsplit(out):
        meta, _, path = rec.partition("\t")
        if only is not None and path not in only:
            continue
        _, otype, sha = meta.split()
        if otype == "blob":
            blobs[path] = sha
    return blobs


def file_count(repo: Path, commit: str) -> int:
    """How many regular files `commit` holds (ls_tree's count: symlinks and submodules left out),
    kept for the process by full commit id, whose tree never changes: `index status` asked git for
    it once per repository per call, with sizes (`-l` opens every blob), to count them."""
    store = _object_store(repo) if _OID.fullmatch(commit) else None
    if store is not None and (known := _FILE_COUNTS.get((store, commit))) is not None:
        return known
    count = 0
    for rec in zsplit(run(repo, "ls-tree", "-r", "-z", "--full-tree", commit)):
        mode, otype, _ = rec.partition("\t")[0].split()
        count += otype == "blob" and mode != "120000"
    if store is not None:
        _remember(_FILE_COUNTS, (store, commit), count)
    return count


def ls_tree(repo: Path, commit: str) -> dict[str, TreeEntry]:
    """Every regular file (blob) of a commit; symlinks and submodules are left out."""
    return tree_entries(repo, commit)[0]


def tree_entries(repo: Path, commit: str) -> tuple[dict[str, TreeEntry], list[TreeEntry]]:
    """A commit's regular files, and its other entries (symlinks: mode 120000, submodules:
    160000, size 0), from one `ls-tree`: a build lists the others with a reason."""
    out = run(repo, "ls-tree", "-r", "-z", "-l", "--full-tree", commit)
    entries: dict[str, TreeEntry] = {}
    others: list[TreeEntry] = []
    for rec in zsplit(out):
        meta, _, path = rec.partition("\t")
        mode, otype, sha, size = meta.split()
        if otype != "blob" or mode == "120000":
            others.append(TreeEntry(path, mode, sha, 0))
            continue
        entries[path] = TreeEntry(path, mode, sha, int(size))
    return entries, others


class BlobReader:
    """One `git cat-file --batch` process serving any number of blob reads.

    Each answer must come within the git time limit (`_process.Limits`: a loose object that is a
    FIFO blocks git in open() for ever), so git's output is read here, through poll(), not
    through a buffered file object that would block; a git that ends early (over its memory
    limit) raises as `run` would."""

    def __init__(self, repo: Path) -> None:
        self._cmd = git_command(repo, ("cat-file", "--batch"))
        self._err = _anonymous_file()
        self._proc, self._bound = _spawn(self._cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self._err)
        assert self._proc.stdout is not None
        self._fd = self._proc.stdout.fileno()
        self._buf = bytearray()
        self._poll = select.poll()
        self._poll.register(self._fd, select.POLLIN)

    def read(self, sha: str) -> bytes | None:
        assert self._proc.stdin
        self._proc.stdin.write(sha.encode() + b"\n")
        self._proc.stdin.flush()
        deadline = self._bound.deadline(time.monotonic())
        header = self._line(deadline).decode().split()
        if len(header) < 3 or header[1] == "missing":
            return None
        size = int(header[2])
        data = self._take(size + 1, deadline)[:size]   # and the newline after each object
        return data if header[1] == "blob" else None

    def _more(self, deadline: float | None) -> None:
        """Append what git wrote next; GitLimit past `deadline`, GitError when git ended."""
        left = remaining(deadline)
        if not self._poll.poll(None if left is None else math.ceil(left * 1000)):
            self._proc.kill()
            self._proc.wait()
            raise over_time(self._cmd, self._bound)
        chunk = os.read(self._fd, 1 << 16)
        if not chunk:
            code = self._proc.wait()
            _checked(self._cmd, code, b"", _read_all(self._err), (0,), self._bound)
            raise GitError(f"git cat-file --batch ended before its answer (exit {code}).", self._cmd, code)
        self._buf += chunk

    def _line(self, deadline: float | None) -> bytes:
        while (end := self._buf.find(b"\n")) == -1:
            self._more(deadline)
        line = bytes(self._buf[:end])
        del self._buf[:end + 1]
        return line

    def _take(self, size: int, deadline: float | None) -> bytes:
        while len(self._buf) < size:
            self._more(deadline)
        data = bytes(self._buf[:size])
        del self._buf[:size]
        return data

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin
            self._proc.stdin.close()
            try:
                wait_exit(self._proc, self._bound.deadline(time.monotonic()))
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        if self._err >= 0:
            os.close(self._err)
            self._err = -1

    def __enter__(self) -> BlobReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def blob_reader(repo: Path) -> Iterator[BlobReader]:
    reader = BlobReader(repo)
    try:
        yield reader
    finally:
        reader.close()


def read_blobs(repo: Path, shas: Iterable[str]) -> dict[str, bytes]:
    """name -> content of each blob (ids or `<rev>:<path>`); names that are missing or not
    blobs are left out."""
    return start_read_blobs(repo, shas).result()


class PendingBlobs:
    """read_blobs started in the background: all names are written at once and the answers
    read by a thread (no round trip per blob), while the caller goes on."""

    def __init__(self, repo: Path, shas: Iterable[str]) -> None:
        self.names = [s for s in dict.fromkeys(shas) if s and "\n" not in s]
        self._pending = Pending(repo, "cat-file", "--batch", stdin=_batch_input(self.names)) if self.names else None

    def result(self) -> dict[str, bytes]:
        if self._pending is None:
            return {}
        found = _parse_batch(self._pending.result(), self.names)
        return {name: body for name, (_, kind, body) in found.items() if kind == "blob"}


def start_read_blobs(repo: Path, shas: Iterable[str]) -> PendingBlobs:
    return PendingBlobs(repo, shas)
