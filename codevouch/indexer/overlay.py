"""The working-tree overlay's git side: the files that differ between a branch's indexed commit
and the working tree, classified and chunked as a build would, at query time.

What differs: commits since the build, staged and unstaged edits, untracked files git does not
ignore, and deletions. A first call starts up to four git processes (status, hash-object of
the files it names, the diff against the indexed commit with rename detection, and a count of
the commits between), a warm one at most the status: the blob ids are kept by stat data
(gitio.PendingHashes), and the diff and the count by what decides them. A tree clean at the
indexed commit costs the status alone, and a warm process takes the last status while a look at
stat data finds nothing it depends on changed (worktree/git/unchanged.py: no process at all).
Each changed file is read safely (never through a symlink), skipped or excluded by the working
tree's rules (worktree/rules.py, filetext.skip_reason: the build's), and chunked by the
build's chunker with the build's embedded text, so its chunks carry the ids and text hashes the
next build will give them (their vectors are then found in a cache, not embedded again).

Warm: a file's chunks are kept per (path, blob id, rules) in this process, so a long-lived
caller (the MCP server) re-derives only files whose content changed since its last call.
Nothing is written: not the repository, not the index.
"""
from __future__ import annotations

import json
import os
import stat as stat_module
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from codevouch import caches
from codevouch.embedding import CHUNK_TOKEN_BUDGET, token_counter
from codevouch.errors import CommitGone, GitError
from codevouch.indexer import embedtext
from codevouch.indexer.build import text_hash
from codevouch.indexer.chunker import chunk_text
from codevouch.indexer.filetext import decode, skip_reason
from codevouch.retriever.overlay import FILE_LIMIT, Overlay, OverlayChunk, OverlayFile
from codevouch.retriever.settings import DEFAULT, Settings
from codevouch.store import BranchState, ChunkRecord, chunk_id, lexical
from codevouch.store.writer import utc_now
from codevouch.worktree import gitio
from codevouch.worktree.files import TooLarge, load_worktree_rules, over_cap, read_bytes
from codevouch.worktree.paths import Locator
from codevouch.worktree.rules import Rules, classify


@dataclass(frozen=True)
class _Cut:
    """One file version as the overlay chunked it (kept across calls in this process)."""
    data: bytes | None
    chunks: tuple[OverlayChunk, ...]
    note: str | None
    cut_at: str = ""     # when it was read and chunked: its records' indexed_at
    # its chunks as cited, per (branch, commit, commit date, origin): made once, not per call
    cited: dict[tuple[str, str, str, str], list[OverlayChunk]] = field(default_factory=dict)


_CUTS: dict[tuple[str, str, str, str], _Cut] = {}   # (root, path, blob, rules and attributes) -> cut
_CUTS_MAX = 20_000


def clear() -> None:
    """Forget every file this process chunked (a cold process, for tests and benchmarks)."""
    _CUTS.clear()
    _DATES.clear()
    _BEHIND.clear()
    _DIFFS.clear()
    _MADE.clear()


caches.register("codevouch.indexer.overlay.cuts", _CUTS.clear, _CUTS.__len__)


def derive(root: Path, state: BranchState, file_limit: int = FILE_LIMIT, head: str | None = None,
           settings: Settings = DEFAULT, rules_of: Callable[[Path], Rules] = load_worktree_rules) -> Overlay:
    """The overlay of branch `state` in the working tree at `root` (its HEAD: `head`, when the
    caller has it), chunked with the build knobs of `settings` (the index's). Vectors are not
    made here (retriever/overlay.vectors_for). rules_of: the working tree's exclusion rules
    (the call's CallSettings.rules, loaded once per call), asked only when something changed."""
    started = time.monotonic()
    head = head or gitio.head_commit(root)
    pending_status = gitio.start_worktree_status(root, untracked=True, toplevel=True)
    moved = head != state.commit
    pending_count = _start_count(root, state.commit, head) if moved and head else None
    raw_status = pending_status.result()
    status = gitio.parse_status(raw_status)
    behind = _count(root, state.commit, head, pending_count) if moved else 0
    overlay = Overlay(state.branch, state.commit, head, behind, status=status)
    if not moved and not status.changed and not status.untracked:
        overlay.seconds = time.monotonic() - started
        return overlay
    rules = rules_of(root)
    # The same status, the same stat data of every file it names and the same rules make the same
    # overlay: a warm call over unchanged edits takes the last one whole (see _Made).
    made_key = _made_key(root, state, _Observed(head, behind, raw_status, status), rules, file_limit, settings)
    made = _made_before(made_key)
    if made is not None:
        return replace(made, status=status, embedded=0, cached=0, unembedded=0, stand_ins=0, seconds=time.monotonic() - started)
    # Every file the status names is hashed first (the hashes are kept by stat: a warm call
    # starts no process for them); with HEAD they decide the diff, which is then kept too.
    listed, huge = _regular_files(root, sorted(status.changed | status.untracked), rules.max_file_bytes)
    hashing = gitio.start_hash_worktree_files(root, [p for p in listed if p not in huge], rules.max_file_bytes)
    blobs = hashing.result() if listed else {}
    skipped = dict(hashing.skipped)
    try:
        diff = _diff(root, state.commit, head, status, blobs, huge & status.changed)
    except CommitGone:
        overlay.base_gone = True
        overlay.seconds = time.monotonic() - started
        return overlay
    changes = _changes(diff, status.untracked)
    scope = _scope(root, changes, file_limit, blobs, huge, rules.max_file_bytes, skipped)
    overlay.hashes = dict(scope.blobs)
    rules_key = _rules_key(root, rules, settings)
    marks = _new_marks(root, scope, rules_key)
    dates = _dates(root, head) if head and any(status.is_clean(p) for p in scope.searched) else {}
    chunking = _Chunking(root, state.branch, rules, rules_key, marks, settings)
    for path in scope.searched:
        _add_file(overlay, chunking, path, changes.new_paths[path], scope, _provenance(path, head, status, dates),
                  path in status.untracked)
    for path in sorted(changes.deleted):
        overlay.files.append(OverlayFile(path, "removed", "removed"))
    overlay.replaced = frozenset(changes.replaced - scope.unchanged - set(scope.over))
    overlay.deleted = changes.deleted
    overlay.renamed_from = changes.renamed_from
    overlay.not_searched = len(scope.over)
    overlay.seconds = time.monotonic() - started
    _keep_made(made_key, overlay)
    return overlay


@dataclass(frozen=True)
class _Changes:
    """What differs from the indexed commit, by path, as the diff and the status say."""
    new_paths: dict[str, str]        # path -> added | modified | renamed
    replaced: frozenset[str]         # the paths whose indexed chunks the overlay stands for
    deleted: frozenset[str]          # the indexed paths gone from the working tree
    # path -> its indexed blob id, for a file the diff says was modified (or changed type)
    same_as_indexed: dict[str, str]
    # new path -> indexed path, for a file renamed since the build (its definitions' stand-ins)
    renamed_from: dict[str, str] = field(default_factory=dict)


def _changes(diff: list[gitio.Change], untracked: Iterable[str]) -> _Changes:
    """The diff and the untracked files, classified (no I/O)."""
    new_paths: dict[str, str] = {}
    replaced: set[str] = set()
    deleted: set[str] = set()
    # A file git lists only because its stat data changed (touched, rewritten as it was) is not a
    # change: its working-tree blob id is the indexed one (hashed with the others: _scope).
    same_as_indexed = {c.new_path: c.old_blob for c in diff if c.status in ("M", "T") and c.new_path and c.old_blob}
    for c in diff:
        if c.old_path and c.status not in ("A", "C"):
            replaced.add(c.old_path)
            if c.status in ("D", "R"):
                deleted.add(c.old_path)
        if c.new_path and c.status != "D":
            new_paths[c.new_path] = {"A": "added", "C": "added", "R": "renamed"}.get(c.status, "modified")
    for path in sorted(untracked):
        new_paths.setdefault(path, "added")
    replaced.update(new_paths)
    deleted.difference_update(new_paths)
    renamed_from = {c.new_path: c.old_path for c in diff if c.status == "R" and c.new_path and c.old_path}
    return _Changes(new_paths, frozenset(replaced), frozenset(deleted), same_as_indexed, renamed_from)


@dataclass(frozen=True)
class _Scope:
    """The files one overlay reads, and their blob ids."""
    searched: list[str]        # in path order, at most file_limit of them, less those unchanged
    over: list[str]            # the new paths past file_limit: counted, neither hashed nor read
    blobs: dict[str, str]      # path -> working-tree blob id, for the new paths within file_limit
    huge: frozenset[str]       # paths over the size cap: neither hashed nor read
    unchanged: frozenset[str]  # listed by git, yet their blob id is the indexed one
    # path -> why it was not hashed: not a regular file or a symlink (a FIFO, a device, a nested
    # repository: gitio.skip_reason), never opened
    skipped: dict[str, str] = field(default_factory=dict)


def _scope(root: Path, changes: _Changes, file_limit: int, blobs: dict[str, str], huge: frozenset[str],
           cap: int, skipped: dict[str, str]) -> _Scope:
    """The new paths within `file_limit`, hashed: those the status named are in `blobs` already,
    those committed since the build are hashed here (one process, none when there are none)."""
    order = sorted(changes.new_paths)
    searched, over = order[:max(file_limit, 0)], order[max(file_limit, 0):]
    # Files over the size cap are neither hashed nor read (git would read all of a 2 GB file).
    huge = huge | over_cap(root, [p for p in searched if p not in blobs], cap)
    rest = [p for p in searched if p not in huge and p not in blobs and p not in skipped]   # committed since the build
    if rest:
        # Committed since the build: a committed symlink (`zero.py -> /dev/zero`) reaches every
        # clone by a pull, so these are never handed to git unchecked either (hash_worktree_files).
        hashing = gitio.start_hash_worktree_files(root, rest, cap)
        blobs = {**blobs, **hashing.result()}
        skipped = {**skipped, **hashing.skipped}
    blobs = {p: blobs[p] for p in searched if p in blobs}
    same = changes.same_as_indexed
    unchanged = frozenset(p for p in searched if p in same and blobs.get(p) == same[p])
    if unchanged:
        searched = [p for p in searched if p not in unchanged]
    return _Scope(searched, over, blobs, huge, unchanged, skipped)


def _rules_key(root: Path, rules: Rules, settings: Settings) -> str:
    """What a file's chunks depend on besides its content: the rules, the build knobs and the top
    .gitattributes (it marks files generated or vendored: a change to it re-derives every file)."""
    attributes = read_bytes(root, ".gitattributes")
    return json.dumps([rules.to_json(), (attributes if isinstance(attributes, bytes) else b"").decode("latin-1"),
                       repr(settings.build_key())], sort_keys=True)


def _new_marks(root: Path, scope: _Scope, rules_key: str) -> dict[str, str]:
    """The linguist marks of the files to cut (one `check-attr`; none when every one is kept)."""
    missing = [p for p in scope.searched if p in scope.blobs and (str(root), p, scope.blobs[p], rules_key) not in _CUTS]
    return gitio.linguist_marks(root, missing) if missing else {}


@dataclass(frozen=True)
class _Provenance:
    """Where a file's chunks say they come from."""
    origin: str      # committed (since the build) | uncommitted
    commit: str      # HEAD, for a committed file
    date: str        # HEAD's committer date, for a committed file


def _provenance(path: str, head: str | None, status: gitio.WorktreeStatus, dates: dict[str, str]) -> _Provenance:
    """A file the status does not name is HEAD's: committed since the build."""
    if head is not None and status.is_clean(path):
        return _Provenance("committed", head, dates.get(head, ""))
    return _Provenance("uncommitted", "", "")


class _Chunking:
    """What every file of one derive is cut with; a file's cut is kept in _CUTS."""

    def __init__(self, root: Path, branch: str, rules: Rules, rules_key: str, marks: dict[str, str],
                 settings: Settings) -> None:
        self.root = root
        self.branch = branch
        self.rules = rules
        self.rules_key = rules_key
        self.marks = marks
        self.settings = settings
        self.locator = Locator(root)
        self._count_tokens: Callable[[str], int] | None = None   # loaded at the first file cut

    def cut(self, path: str, blob: str) -> _Cut:
        """The file's cut as kept, or read and chunked now (and kept)."""
        key = (str(self.root), path, blob, self.rules_key)
        cut = _CUTS.get(key)
        if cut is None:
            if self._count_tokens is None:
                self._count_tokens = token_counter()
            cut = replace(self._read_and_chunk(path, blob, self._count_tokens), cut_at=utc_now())
            if len(_CUTS) >= _CUTS_MAX:
                _CUTS.clear()
            _CUTS[key] = cut
        return cut

    def _read_and_chunk(self, path: str, blob: str, count_tokens: Callable[[str], int]) -> _Cut:
        """A working-tree file's chunks, or why it has none (the build's reasons and rules)."""
        loc = self.locator.locate(path)
        if not loc.inside or not loc.exists or loc.real != loc.rel:
            return _Cut(None, (), "not a regular file (symlinks are not followed)")
        data = read_bytes(self.root, loc.real or path, self.rules.max_file_bytes)
        if isinstance(data, TooLarge):
            return _Cut(None, (), f"skipped: huge (>{self.rules.max_file_bytes} bytes)")
        if data is None:
            return _Cut(None, (), "unreadable")
        reason = skip_reason(data, self.rules)
        text = decode(data) if reason is None else decode(data[:2048])
        found = classify(path, text, self.rules, self.marks.get(path))
        if found.excluded:
            return _Cut(None, (), f"excluded: {found.rule or found.kind}")
        if reason is not None:
            return _Cut(None, (), f"skipped: {reason}")
        pieces, language = chunk_text(text, path, count_tokens, CHUNK_TOKEN_BUDGET,
                                      merge_target=self.settings.merge_target)
        if not pieces:
            return _Cut(None, (), "skipped: no content to index")
        out = []
        for ordinal, ch in enumerate(pieces):
            embedded = embedtext.embedded_text(path, ch.symbol, ch.text, self.settings.embed_context)
            record = ChunkRecord(
                id=chunk_id(path, blob, ordinal), repo=str(self.root), path=path, branch=self.branch, commit="",
                commit_date="", symbol=ch.symbol, start_line=ch.start_line, end_line=ch.end_line, indexed_at="",
                blob_sha=blob, text_hash=text_hash(embedded), kind=found.kind, language=language or "text",
                status="live", origin="uncommitted", declaration=ch.declaration)
            out.append(OverlayChunk(record, ch.text, embedded,
                                    lexical.document(ch.text, path, ch.symbol, ch.defines)))
        return _Cut(data, tuple(out), None)

    def cited(self, cut: _Cut, where: _Provenance) -> list[OverlayChunk]:
        """The cut's chunks as cited from this branch and `where` (made once per variant)."""
        variant = (self.branch, where.commit, where.date, where.origin)
        chunks = cut.cited.get(variant)
        if chunks is None:
            if len(cut.cited) > 8:
                cut.cited.clear()
            chunks = cut.cited[variant] = [
                OverlayChunk(replace(c.record, repo=str(self.root), branch=self.branch, commit=where.commit,
                                     commit_date=where.date, indexed_at=cut.cut_at, origin=where.origin),
                             c.text, c.embedded, c.doc)
                for c in cut.chunks]
        return chunks


def _add_file(overlay: Overlay, chunking: _Chunking, path: str, change: str, scope: _Scope, where: _Provenance,
              untracked: bool) -> None:
    """One new or changed file into `overlay`: its chunks, or why it has none."""
    if path in scope.huge:
        overlay.files.append(OverlayFile(path, change, where.origin, 0,
                                         f"skipped: huge (>{chunking.rules.max_file_bytes} bytes)"))
        return
    blob = scope.blobs.get(path)
    if blob is None:
        overlay.files.append(OverlayFile(path, change, where.origin, 0, _unhashed_note(scope.skipped.get(path), untracked)))
        return
    cut = chunking.cut(path, blob)
    chunks = chunking.cited(cut, where)
    overlay.chunks.extend(chunks)
    if cut.data is not None and chunks:
        overlay.texts[blob] = cut.data
    overlay.files.append(OverlayFile(path, change, where.origin, len(chunks), cut.note))


def _unhashed_note(reason: str | None, untracked: bool) -> str:
    """What an overlay file that was not hashed is reported with. A folder git names as one path
    is a repository of its own: a submodule when tracked (an uninitialised one is an empty
    folder), a nested repository when not."""
    if reason is None:
        return "unreadable (git could not hash it)"
    if not untracked and reason in (gitio.NESTED_REPOSITORY, gitio.FOLDER):
        return f"skipped: {gitio.SUBMODULE}"
    return f"skipped: {reason}"


@dataclass(frozen=True)
class _Made:
    """An overlay as derived, and what it was derived from (_made_key)."""
    key: tuple[object, ...]
    overlay: Overlay


_MADE: dict[tuple[str, str], _Made] = {}    # (root, branch) -> the last overlay made there
caches.register("codevouch.indexer.overlay.made", _MADE.clear, _MADE.__len__)


def _made_before(made_key: tuple[tuple[str, str], tuple[object, ...], bool] | None) -> Overlay | None:
    """The overlay made last from what `made_key` says, if it was kept."""
    made = _MADE.get(made_key[0]) if made_key is not None else None
    if made is not None and made_key is not None and made.key == made_key[1]:
        return made.overlay
    return None


def _keep_made(made_key: tuple[tuple[str, str], tuple[object, ...], bool] | None, overlay: Overlay) -> None:
    """Keep `overlay` for the next call, when what it was made from may be kept (_made_key)."""
    if made_key is not None and made_key[2]:
        if len(_MADE) >= 16:
            _MADE.clear()
        _MADE[made_key[0]] = _Made(made_key[1], overlay)


@dataclass(frozen=True)
class _Observed:
    """What git said of the working tree at the start of one derive: HEAD, the commits from the
    indexed commit to it, and the status (as git wrote it, and parsed). Together they decide
    whether the last overlay made is still this one (_made_key)."""
    head: str | None
    behind: int | None
    raw_status: bytes
    status: gitio.WorktreeStatus


def _made_key(root: Path, state: BranchState, seen: _Observed, rules: Rules, file_limit: int, settings: Settings
              ) -> tuple[tuple[str, str], tuple[object, ...], bool] | None:
    """(where, what an overlay is derived from, whether it may be kept), or None when that cannot
    be told from stat data (gitio.hash_context).

    What differs from HEAD is what the status names; HEAD's files are HEAD's. So the overlay is
    decided by the two commits, the status, the content of the files it names (their stat data,
    and everything that decides their blob ids: configuration, index, attributes files), the
    rules and the build knobs. It may be kept only when every named file was last written
    git.hashing.RACY_NS before now: a later write then always shows in its stat data."""
    context = gitio.hash_context(root)
    if context is None:
        return None
    top = str(root)
    now = time.time_ns()
    folders: dict[str, tuple[object, ...]] = {}
    stats: list[tuple[object, ...]] = []
    settled = True
    for path in sorted(seen.status.changed | seen.status.untracked):
        try:
            st = os.lstat(f"{top}/{path}")
        except (OSError, ValueError):
            stats.append((path, None))
            continue
        stats.append((path, gitio.stat_key(st), gitio.folder_attributes(top, path, folders)))
        settled = settled and gitio.settled(st, now)
    key = (state.commit, state.space, seen.head, seen.behind, seen.raw_status, tuple(stats), context,
           json.dumps(rules.to_json(), sort_keys=True), repr(settings.build_key()), file_limit)
    return (top, state.branch), key, settled


_DATES: dict[tuple[str, str], dict[str, str]] = {}


caches.register("codevouch.indexer.overlay.dates", _DATES.clear, _DATES.__len__)


def _dates(root: Path, head: str) -> dict[str, str]:
    key = (str(root), head)
    if key not in _DATES:
        if len(_DATES) > 64:
            _DATES.clear()
        _DATES[key] = gitio.commit_dates(root, [head])
    return _DATES[key]


_BEHIND: dict[tuple[str, str, str], int | None] = {}   # (root, indexed commit, HEAD) -> commits between
_DIFFS: dict[tuple[object, ...], list[gitio.Change]] = {}
_DIFFS_MAX = 64

caches.register("codevouch.indexer.overlay.behind", _BEHIND.clear, _BEHIND.__len__)
caches.register("codevouch.indexer.overlay.diffs", _DIFFS.clear, _DIFFS.__len__)


def _start_count(root: Path, base: str, head: str) -> gitio.Pending | None:
    if (str(root), base, head) in _BEHIND:
        return None
    return gitio.Pending(root, "rev-list", "--count", f"{base}..{head}", ok_codes=(0, 128))


def _count(root: Path, base: str, head: str | None, pending: gitio.Pending | None) -> int | None:
    """Commits from the indexed commit to HEAD (None when git cannot say: the commit is gone).
    Two commits always have the same count between them: kept."""
    key = (str(root), base, head or "")
    if key in _BEHIND:
        return _BEHIND[key]
    if pending is None:
        return None
    try:
        out = pending.result().strip()
    except GitError:
        return None
    found = int(out) if out.isdigit() else None
    if found is not None:
        if len(_BEHIND) > 256:
            _BEHIND.clear()
        _BEHIND[key] = found
    return found


def _regular_files(root: Path, paths: list[str], cap: int) -> tuple[list[str], frozenset[str]]:
    """(the paths that are in the working tree, those of them that are regular files over `cap`
    bytes): one lstat each. A path gone is left out; a file over the cap is neither hashed nor
    read (git would read all of it); anything else, FIFOs and nested repositories too, goes to
    hash_worktree_files, which hashes a symlink as git does (never following it) and says why
    it does not hash the rest."""
    out, huge = [], set()
    top = str(root)
    for path in paths:
        try:
            st = os.lstat(f"{top}/{path}")
        except (OSError, ValueError):
            continue
        out.append(path)
        if stat_module.S_ISREG(st.st_mode) and st.st_size > cap:
            huge.add(path)
    return out, frozenset(huge)


def _diff(root: Path, base: str, head: str | None, status: gitio.WorktreeStatus, blobs: dict[str, str],
          huge: frozenset[str]) -> list[gitio.Change]:
    """`git diff <indexed commit>` against the working tree, with rename detection.

    Its answer is decided by the two commits and the content of the files that differ from HEAD
    (every other file is HEAD's): the status names those, and their blob ids are the content.
    So it is kept under that key and asked again only when one of them changed. A file git could
    not hash, or one too large to hash, leaves the answer unkept."""
    changed = sorted(status.changed)
    key = (str(root), base, head, tuple(changed), tuple((p, blobs.get(p)) for p in changed))
    keep = not huge and all(p in blobs or not os.path.lexists(os.path.join(root, p)) for p in changed)
    if keep and key in _DIFFS:
        return _DIFFS[key]
    found = gitio.PendingDiff(root, base, None).result()
    if keep:
        if len(_DIFFS) >= _DIFFS_MAX:
            _DIFFS.clear()
        _DIFFS[key] = found
    return found
