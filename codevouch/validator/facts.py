"""Everything the validator needs to know about the repository, gathered once per call.

Each kind of fact costs one git process for all snippets together: HEAD and the snippets'
commits, with their dates, come from one `cat-file --batch`, the status from one `git status`
(without the untracked walk: `ls-files --others` runs only when a file is lost), blob ids from
one `ls-tree` per much-referenced commit or one `cat-file --batch-check`, blob ids of changed
working-tree files from one `hash-object --stdin-paths`, old blob texts from one
`cat-file --batch`; rename detection costs one `diff` per distinct commit, and only for
snippets whose file is gone. The slow ones run in the background (gitio.Pending) while the
files are located, read and searched. Decisions are made afterwards, without I/O, in
decide.py; `find_elsewhere` adds one `git grep` when symbols left their file.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from codevouch.syntax.lines import decode, split_lines
from codevouch.syntax.region import region_context, top_level_region
from codevouch.validator import symbols
from codevouch.validator.model import Snippet
from codevouch.validator.text import find_lines_verbatim, line_count
from codevouch.worktree import gitio
from codevouch.worktree.files import TooLarge, load_worktree_rules, over_cap, read_text
from codevouch.worktree.paths import Located, Locator, locate
from codevouch.worktree.rules import Classification, Rules, classifier

# Untracked files hashed to find a file that was moved without `git mv` (exact content only).
MAX_UNTRACKED_HASHED = 5000
# Files read per definition line when looking for code moved to another file: a line found in
# more files than this is too common to say where the code went.
MAX_MOVE_CANDIDATES = 20


@dataclass(frozen=True)
class WorkFile:
    text: str                 # decoded working-tree content (utf-8, else latin-1)
    blob: str | None = None   # its blob id as git computes it; None when not hashed


Defs = dict[str, list[tuple[int, int]]]
# What an answer about a snippet depends on (hashing a whole Snippet, its text and all, cost
# more than the check itself): path, commit, blob_sha, strict.
SnippetKey = tuple[str, str | None, str | None, bool]


@dataclass
class FactCaches:
    """The answers of one validate() call, each worked out once from its Facts: gathering and
    deciding ask the same questions. Mutable on purpose, and kept apart from the facts they
    are worked out from (which are frozen). The Facts a call derives by `replace` only add
    files and blob texts, so they share one FactCaches; `after_hashing` starts `same` afresh
    when the files get their blob ids. Per call, never process-wide (see codevouch/caches.py)."""
    # Parse results, filled on first use: tree-sitter is pure CPU work, and most calls never
    # need it, so it is not done up front. Keyed by working-tree path, by blob id, and by
    # (path, text) for a snippet's own text; `pieces` by (path, first, last) of a top-level block.
    defs: dict[str, Defs] = field(default_factory=dict)
    old_defs: dict[str, Defs] = field(default_factory=dict)
    text_defs: dict[tuple[str, str], Defs] = field(default_factory=dict)
    pieces: dict[tuple[str, int, int], Defs | None] = field(default_factory=dict)
    split: dict[str, list[str]] = field(default_factory=dict)        # working-tree path -> its lines
    old_split: dict[str, list[str]] = field(default_factory=dict)    # blob id -> its lines
    kinds: dict[str, Classification] = field(default_factory=dict)   # rel path -> the rules' verdict
    hits: dict[tuple[str, str], tuple[list[tuple[int, int]], bool]] = field(default_factory=dict)
    line_totals: dict[str, int] = field(default_factory=dict)       # working-tree path -> its lines
    old_line_totals: dict[str, int] = field(default_factory=dict)   # blob id -> its lines
    fast: dict[SnippetKey, bool] = field(default_factory=dict)       # fast_path's answers
    # identical_blob's answers, by the same key; only once the files are hashed.
    same: dict[SnippetKey, str | None] = field(default_factory=dict)
    classifier: Callable[[str, str, str | None], Classification] | None = None

    def after_hashing(self) -> FactCaches:
        """The same caches, but for identical_blob's answers: those change with the blob ids."""
        return replace(self, same={})


@dataclass(frozen=True)
class Facts:
    root: Path
    head: str | None                               # HEAD's commit; None without commits
    status: gitio.WorktreeStatus
    rules: Rules
    located: Mapping[str, Located]                 # given path -> where it lies
    files: Mapping[str, WorkFile]                  # real repo-relative path -> content
    objects: Mapping[str, tuple[str, str]]         # "<commit>" / "<commit>:<path>" -> (id, type)
    renames: Mapping[tuple[str, str], str] = field(default_factory=dict)  # (commit, old) -> new
    moved: Mapping[str, str] = field(default_factory=dict)   # old blob -> untracked path with it
    blob_texts: Mapping[str, str] = field(default_factory=dict)           # blob id -> text
    commit_dates: Mapping[str, str] = field(default_factory=dict)
    marks: Mapping[str, str] = field(default_factory=dict)   # rel path -> .gitattributes linguist mark
    # rel path -> the filter driver its `filter` attribute names, which codevouch does not run
    # (README, "Security"): its working-tree hash may differ from what `git add` would store.
    unrun_filters: Mapping[str, str] = field(default_factory=dict)
    # Definition lines of snippets that lost their symbol -> working-tree files holding that
    # line (gathered in a second pass, only for those: see `elsewhere`).
    elsewhere: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # real path -> the working-tree file's size, over the rules' max_file_bytes: not read (too-large)
    too_large: Mapping[str, TooLarge] = field(default_factory=dict)
    # Lost paths of snippets without a commit -> whether HEAD's history ever had them (one git
    # log for all, only for those: decide tells file-deleted from path-never-existed by it).
    in_history: Mapping[str, bool] = field(default_factory=dict)
    # Answers worked out from these facts, once each per call (see FactCaches): not facts,
    # never compared, shared by the Facts that replace() derives from one another.
    caches: FactCaches = field(default_factory=FactCaches, compare=False, repr=False)

    def hits(self, text: str, real: str) -> list[tuple[int, int]]:
        """Where `text` occurs as whole lines in a working-tree file (text.find_lines), each
        search done once per call: gathering and deciding ask the same questions."""
        key = (text, real)
        found = self.caches.hits.get(key)
        if found is None:
            found = self.caches.hits[key] = find_lines_verbatim(text, self.files[real].text)
        return found[0]

    def verbatim(self, text: str, real: str) -> bool:
        """Whether `hits(text, real)` found the text verbatim (not only with CRLF taken as LF)."""
        found = self.caches.hits.get((text, real))
        if found is None:
            self.hits(text, real)
            found = self.caches.hits[(text, real)]
        return found[1]

    def line_total(self, real: str) -> int:
        """text.line_count of a working-tree file, counted once per call (a file many snippets
        share was counted once per snippet, twice: 30 ms of a 1,000-snippet call)."""
        found = self.caches.line_totals.get(real)
        if found is None:
            found = self.caches.line_totals[real] = line_count(self.files[real].text)
        return found

    def old_line_total(self, blob: str) -> int:
        """text.line_count of an old blob's text (in blob_texts), counted once per call."""
        found = self.caches.old_line_totals.get(blob)
        if found is None:
            found = self.caches.old_line_totals[blob] = line_count(self.blob_texts[blob])
        return found

    def commit_of(self, s: Snippet) -> str | None:
        """The snippet's commit as a full id, if it names a commit that exists here."""
        found = self.objects.get(s.commit) if s.commit else None
        return found[0] if found and found[1] == "commit" else None

    def blob_at(self, commit: str | None, rel: str | None) -> str | None:
        if not commit or rel is None:
            return None
        found = self.objects.get(f"{commit}:{rel}")
        return found[0] if found and found[1] == "blob" else None

    def old_blob(self, s: Snippet, rel: str | None) -> str | None:
        """The blob the snippet was taken from: its blob_sha, else its path at its commit."""
        return s.blob_sha or self.blob_at(self.commit_of(s), rel)

    def defs(self, real: str) -> dict[str, list[tuple[int, int]]]:
        """Definitions in the working-tree file."""
        defs = self.caches.defs
        if real not in defs:
            work = self.files.get(real)
            defs[real] = symbols.definitions(work.text, real) if work else {}
        return defs[real]

    def lines(self, real: str, start: int, end: int) -> str:
        """Lines start..end of a working-tree file (each file split once per call)."""
        return "\n".join(self._lines(real)[start - 1:end])

    def classification(self, loc: Located) -> Classification:
        """The exclusion rules' verdict on a path inside the repository (and on its first
        lines, for generated-code markers); once per path and call."""
        assert loc.rel is not None
        found = self.caches.kinds.get(loc.rel)
        if found is None:
            if self.caches.classifier is None:
                self.caches.classifier = classifier(self.rules)
            work = self.files.get(loc.real) if loc.exists and loc.real else None
            found = self.caches.kinds[loc.rel] = self.caches.classifier(loc.rel, work.text if work else "",
                                                                        self.marks.get(loc.rel))
        return found

    def defs_near(self, real: str, start: int, end: int) -> dict[str, list[tuple[int, int]]]:
        """Definitions of the top-level block around lines start..end of a working-tree file,
        with the file's line numbers: enough to name the code there, at a fraction of a
        whole-file parse (syntax.region); the whole file when the block does not parse alone."""
        pieces = self.caches.pieces
        if real in self.caches.defs or real not in self.files:
            return self.defs(real)
        lines = self._lines(real)
        first, last = top_level_region(lines, start - 1, end - 1)
        key = (real, first, last)
        if key not in pieces:
            if last - first + 1 >= len(lines):
                return self.defs(real)     # the whole file anyway
            pieces[key] = symbols.piece_definitions("\n".join(lines[first:last + 1]), real)
        piece = pieces[key]
        if piece is None:
            return self.defs(real)
        return {name: [(a + first, b + first) for a, b in ranges] for name, ranges in piece.items()}

    def parsed_near(self, real: str, start: int, end: int) -> dict[str, list[tuple[int, int]]] | None:
        """defs_near, if what it needs is parsed already (else None: no parse here)."""
        if real in self.caches.defs:
            return self.caches.defs[real]
        lines = self.caches.split.get(real)
        if lines is None:
            return None
        first, last = top_level_region(lines, start - 1, end - 1)
        if self.caches.pieces.get((real, first, last)) is None:
            return None
        return self.defs_near(real, start, end)

    def intact_block(self, s: Snippet, real: str, start: int, end: int) -> bool:
        """Whether lines start..end of a working-tree file are the snippet's own lines of its
        version, moved or not, with the whole top-level block around them (syntax.region)
        unchanged: then the definitions that enclose those lines, and their names, are as they
        were, with no parse (a block names its definitions by itself: see syntax.region)."""
        if s.start_line is None or s.end_line is None or end - start != s.end_line - s.start_line:
            return False
        old = self.old_blob(s, self.located[s.path].rel)
        before = self.blob_texts.get(old) if old else None
        if before is None or old is None or real not in self.files:
            return False
        if old not in self.caches.old_split:
            self.caches.old_split[old] = split_lines(before)
        was, now = self.caches.old_split[old], self._lines(real)
        if s.end_line > len(was) or end > len(now):
            return False
        # The block around the lines now and the rows that decided its bounds, equal to the
        # same rows shifted back in the old version (ends of file included): there the old
        # version has the same block.
        _, _, lo, hi = region_context(now, start - 1, end - 1)
        shift = start - s.start_line
        if lo - shift < 0 or hi - shift > len(was) or (lo == 0) != (lo - shift == 0) \
                or (hi == len(now)) != (hi - shift == len(was)):
            return False
        return now[lo:hi] == was[lo - shift:hi - shift]

    def _lines(self, real: str) -> list[str]:
        split = self.caches.split
        if real not in split:
            split[real] = split_lines(self.files[real].text)
        return split[real]

    def unchanged_through(self, s: Snippet, real: str, end: int) -> bool:
        """Whether the working-tree file equals the snippet's own version of it from the top
        through line `end`: then everything that encloses those lines, and the names they have,
        is as it was (what follows cannot change what came before), with no parse at all."""
        loc = self.located[s.path]
        old = self.old_blob(s, loc.rel)
        before = self.blob_texts.get(old) if old else None
        if before is None or real not in self.files:
            return False
        lines = self._lines(real)
        if end > len(lines):
            return False
        head = "\n".join(lines[:end])
        return before.startswith(head) and (len(before) == len(head) or before[len(head)] == "\n")

    def old_defs(self, s: Snippet, rel: str | None) -> dict[str, list[tuple[int, int]]] | None:
        """Definitions in the snippet's own version of its file; None when git no longer has it
        (or it was not read: see gather)."""
        old = self.old_blob(s, rel)
        text = self.blob_texts.get(old) if old else None
        if old is None or text is None or rel is None:
            return None
        if old not in self.caches.old_defs:
            self.caches.old_defs[old] = symbols.definitions(text, rel)
        return self.caches.old_defs[old]

    def text_defs(self, text: str, path: str) -> dict[str, list[tuple[int, int]]]:
        """Definitions in a snippet's own text (lines relative to the text)."""
        key = (path, text)
        if key not in self.caches.text_defs:
            self.caches.text_defs[key] = symbols.text_definitions(text, path)
        return self.caches.text_defs[key]


def fast_path(s: Snippet, facts: Facts, strict: bool) -> bool:
    """Rule 4: the snippet is from HEAD and git says its file is unchanged: no hashing needed.
    (Tracked at HEAD is checked too: an ignored file is 'clean' to `git status` as well.)"""
    key = (s.path, s.commit, s.blob_sha, strict)
    found = facts.caches.fast.get(key)
    if found is None:
        found = facts.caches.fast[key] = _fast_path(s, facts, strict)
    return found


def _fast_path(s: Snippet, facts: Facts, strict: bool) -> bool:
    loc = facts.located[s.path]
    commit = facts.commit_of(s)
    at_head = facts.blob_at(commit, loc.rel)
    # A blob_sha that disagrees with HEAD's blob makes the snippet inconsistent: no shortcut,
    # let the hash decide.
    return (not strict and loc.exists and commit is not None and commit == facts.head
            and facts.status.is_clean(loc.real or "") and at_head is not None
            and (s.blob_sha is None or same_oid(s.blob_sha, at_head)))


def same_oid(a: str | None, b: str | None) -> bool:
    """Equal object ids; a snippet may give an abbreviated one (7+ hex digits, checked by parse)."""
    if not a or not b:
        return False
    return a.startswith(b) or b.startswith(a)


def identical_blob(s: Snippet, facts: Facts, strict: bool) -> str | None:
    """The blob id the working-tree file provably equals (fast path or same hash), else None."""
    key = (s.path, s.commit, s.blob_sha, strict)
    if key in facts.caches.same:
        return facts.caches.same[key]
    found = facts.caches.same[key] = _identical_blob(s, facts, strict)
    return found


def _identical_blob(s: Snippet, facts: Facts, strict: bool) -> str | None:
    loc = facts.located[s.path]
    if fast_path(s, facts, strict):
        return facts.blob_at(facts.head, loc.rel)
    work = facts.files.get(loc.real or "") if loc.exists else None
    old = facts.old_blob(s, loc.rel)
    return old if work is not None and same_oid(work.blob, old) else None


@dataclass(frozen=True)
class Known:
    """What the caller learned from git in this call already, so the validator does not ask
    again: a search has the work tree's top and HEAD (one rev-parse) and, with the working-tree
    overlay, the status. `status` may list untracked files (they are left out here, as the
    validator's own status leaves them out); None: the validator runs its own."""
    root: Path                              # the top of the work tree, as repo_root gives it
    head: str | None                        # HEAD's commit; None without commits
    status: gitio.WorktreeStatus | None = None
    # Blob ids of working-tree files the caller hashed in this call (the overlay hashes the
    # files that differ from the index): repo-relative path -> id, not hashed again.
    hashes: Mapping[str, str] = field(default_factory=dict)
    # The working tree's exclusion rules as the call loads them (its CallSettings.rules, once
    # per call); None: loaded here.
    rules_of: Callable[[Path], Rules] | None = None


@dataclass(frozen=True)
class Started:
    """The first git processes of a call, started before the snippets are even checked."""
    status: gitio.Pending | None
    root: gitio.PendingRoot | None
    known: Known | None = None


def start(repo: Path | str, known: Known | None = None) -> Started:
    """Start the work tree's status and its root. Started before the root is known: porcelain
    status paths are relative to the root whatever the directory. What `known` holds is not asked."""
    if known is None:
        return Started(gitio.start_worktree_status(Path(repo), untracked=False), gitio.PendingRoot(repo))
    status = None if known.status is not None else \
        gitio.start_worktree_status(known.root, untracked=False, toplevel=True)
    return Started(status, None, known)


def gather(repo: Path | str, snippets: Sequence[Snippet], strict: bool = False,
           started: Started | None = None) -> Facts:
    """Everything decide() needs for these snippets, in a handful of git processes.

    The slow git processes (`status`, `ls-tree`) are started first and collected last: they
    run on another core while this process locates and reads the files. `started`: from
    start(repo), when the caller began before it had the snippets.
    """
    started = started or start(repo)
    status = started.status
    known = started.known
    # Commit names need no root either.
    reading = gitio.PendingCommits(known.root if known else Path(repo), ["HEAD", *(s.commit for s in snippets if s.commit)],
                                   known={"HEAD": known.head} if known and known.head else None)
    root = known.root if known else started.root.result() if started.root else gitio.repo_root(repo)
    locator = Locator(root)
    located = {s.path: locator.locate(s.path) for s in snippets}
    inside = [s for s in snippets if located[s.path].inside]
    commits = reading.result()
    trees = _start_blob_lookups(root, commits, located, inside, keep=known.head if known else None)
    rules = (known.rules_of if known and known.rules_of else load_worktree_rules)(root)
    texts, too_large = _read_files(root, located, rules.max_file_bytes)
    # Where each snippet's text is in its file: needed for nearly every verdict, and done
    # while git works: while it still lists the status (a clean tree), else while it hashes
    # the changed files and reads their old versions (started as soon as the status is in).
    wanted = [(s.text, real) for s in inside if s.text and (real := located[s.path].real) in texts]
    hits = {} if status is None or status.done() else \
        {key: find_lines_verbatim(key[0], texts[key[1]]) for key in wanted}
    if status is not None:
        worktree = gitio.parse_status(status.result())
    else:
        assert known is not None and known.status is not None
        worktree = gitio.WorktreeStatus(known.status.changed, frozenset())
    facts = _objects(root, commits, trees, located, inside, worktree, texts, rules)
    if too_large:
        facts = replace(facts, too_large=too_large)
    facts.caches.hits.update(hits)
    facts = _trace_renames(facts, inside, locator)
    hashing = _start_hashing(facts, inside, locator, strict, known.hashes if known else {})
    for text, real in wanted:
        facts.hits(text, real)
    facts, early = _finish_hashing(facts, hashing)
    return _read_old_blobs(facts, inside, strict, early)


# Commits referenced by at least this many snippets get their whole tree listed (one `ls-tree`,
# ~20 ms for 3,000 files) instead of one `<commit>:<path>` lookup each (~0.1-0.4 ms apiece).
TREE_LISTING_FROM = 50


@dataclass(frozen=True)
class _Lookups:
    """Blob ids being looked up: whole trees of much-referenced commits, and single paths."""
    trees: Mapping[str, tuple[frozenset[str], gitio.Pending]]   # commit -> (paths wanted, ls-tree)
    single: Sequence[str]                                          # "<commit>:<path>"
    kept: Mapping[str, tuple[frozenset[str], Mapping[str, str]]] = field(default_factory=dict)  # listed before
    keep: str | None = None            # the commit whose listing is kept for the next calls


def _start_blob_lookups(root: Path, commits: Mapping[str, tuple[str, str, str | None]],
                        located: Mapping[str, Located], inside: Sequence[Snippet],
                        keep: str | None = None) -> _Lookups:
    """keep: a commit (HEAD, for a search) whose whole tree is listed once and kept by gitio for
    the process, so the next calls look its paths up in memory (gitio.kept_tree)."""
    by_commit: dict[str, set[str]] = {}
    for s in inside:
        found = commits.get(s.commit) if s.commit else None
        rel = located[s.path].rel
        if found and found[1] == "commit" and rel and "\n" not in rel:
            by_commit.setdefault(found[0], set()).add(rel)
    kept = {commit: (frozenset(rels), tree) for commit, rels in by_commit.items()
            if (tree := gitio.kept_tree(root, commit)) is not None}
    trees = {commit: (frozenset(rels), gitio.start_tree_blobs(root, commit))
             for commit, rels in by_commit.items()
             if commit not in kept and (len(rels) >= TREE_LISTING_FROM or commit == keep)}
    single = [f"{commit}:{rel}" for commit, rels in by_commit.items() if commit not in trees and commit not in kept
              for rel in sorted(rels)]
    return _Lookups(trees, single, kept, keep)


def _objects(root: Path, commits: Mapping[str, tuple[str, str, str | None]], lookups: _Lookups,
             located: Mapping[str, Located], inside: Sequence[Snippet], status: gitio.WorktreeStatus,
             texts: Mapping[str, str], rules: Rules) -> Facts:
    """The facts so far: HEAD, the working tree's status and files, the rules, and the
    snippets' commits and blob ids."""
    objects: dict[str, tuple[str, str]] = {name: (oid, kind) for name, (oid, kind, _) in commits.items()}
    dates = {oid: date for oid, kind, date in commits.values() if date}
    objects.update(gitio.batch_check(root, lookups.single))
    for commit, (rels, pending) in lookups.trees.items():
        blobs = gitio.parse_tree_blobs(pending.result(), None if commit == lookups.keep else rels)
        if commit == lookups.keep:
            gitio.keep_tree(root, commit, blobs)
        objects.update({f"{commit}:{rel}": (blobs[rel], "blob") for rel in rels if rel in blobs})
    for commit, (rels, tree) in lookups.kept.items():
        objects.update({f"{commit}:{rel}": (tree[rel], "blob") for rel in rels if rel in tree})
    # Does the repository have a snippet's blob at all? Asked only where the answer matters:
    # when the blob is not its file's at its commit (decide: unknown-blob).
    doubtful = []
    for s in inside:
        found = objects.get(s.commit) if s.commit and s.blob_sha else None
        if found and found[1] == "commit":
            at = objects.get(f"{found[0]}:{located[s.path].rel}")
            if at is not None and s.blob_sha and at[0] != s.blob_sha:
                doubtful.append(s.blob_sha)
    objects.update(gitio.batch_check(root, doubtful))
    head_obj = objects.get("HEAD")
    head = head_obj[0] if head_obj and head_obj[1] == "commit" else None
    inside_rels = [loc.rel for loc in located.values() if loc.inside and loc.rel]
    attributes = gitio.path_attributes(root, inside_rels, (*gitio.LINGUIST_ATTRIBUTES, "filter")) \
        if _has_gitattributes(root, inside_rels) else {}
    return Facts(root, head, status, rules, located,
                 {real: WorkFile(text) for real, text in texts.items()}, objects, commit_dates=dates,
                 marks=gitio.marks_of(attributes), unrun_filters=gitio.unrun_filters(root, attributes))


def _has_gitattributes(root: Path, rels: Sequence[str]) -> bool:
    """Whether a .gitattributes file sits in the root or a directory of these paths (one
    stat each), so repositories without any cost no git process."""
    dirs = {""} | {rel.rsplit("/", 1)[0] for rel in rels if "/" in rel}
    parents = {"/".join(d.split("/")[:n]) for d in dirs for n in range(d.count("/") + 2)}
    return any(os.path.isfile(os.path.join(root, d, ".gitattributes")) for d in parents)


def _read_files(root: Path, located: Mapping[str, Located],
                limit: int) -> tuple[dict[str, str], dict[str, TooLarge]]:
    """Every referenced file that lies inside the repository, read once; and those over the
    size cap, not read."""
    wanted = sorted({loc.real for loc in located.values() if loc.inside and loc.exists and loc.real})
    texts: dict[str, str] = {}
    too_large: dict[str, TooLarge] = {}
    for real in wanted:
        text = read_text(root, real, limit)
        if isinstance(text, str):
            texts[real] = text
        elif text is not None:
            too_large[real] = text
    return texts, too_large


def _trace_renames(facts: Facts, inside: Sequence[Snippet], locator: Locator) -> Facts:
    """Rule 3: where did missing files go? One diff per distinct commit, commit vs working tree
    (so renames that are staged but not committed count too)."""
    wanted: dict[str, set[str]] = {}
    for s in inside:
        loc = facts.located[s.path]
        commit = facts.commit_of(s)
        if not loc.exists and commit and loc.rel:
            wanted.setdefault(commit, set()).add(loc.rel)
    # Without a commit, was the path ever this repository's? (check-refs asks git the same way.)
    unversioned = sorted({rel for s in inside if not s.commit and not (loc := facts.located[s.path]).exists
                          and (rel := loc.rel) and "\n" not in rel})
    in_history = dict.fromkeys(unversioned, False)
    if unversioned and facts.head:
        in_history.update(dict.fromkeys(gitio.paths_in_history(facts.root, unversioned), True))
    renames: dict[tuple[str, str], str] = {}
    for commit, rels in wanted.items():
        for old, new in gitio.renames_between(facts.root, commit, None).items():
            if old in rels:
                renames[(commit, old)] = new
    targets = {new: locator.locate(new) for new in renames.values()}
    return replace(facts, renames={k: targets[v].real or v for k, v in renames.items()
                                   if targets[v].inside and targets[v].exists}, in_history=in_history)


@dataclass(frozen=True)
class _Hashing:
    """Working-tree files being hashed and old blobs being read (see _start_hashing)."""
    hashing: gitio.PendingHashes
    early: gitio.PendingBlobs
    texts: Mapping[str, str]             # files read beyond facts.files (rename targets)
    untracked: Mapping[str, Located]     # candidates for files moved without git
    lost_blobs: frozenset[str]
    reused: Mapping[str, str] = field(default_factory=dict)    # blob ids the caller had (Known.hashes)


def _start_hashing(facts: Facts, inside: Sequence[Snippet], locator: Locator, strict: bool,
                   known: Mapping[str, str]) -> _Hashing:
    """Blob ids computed (one `hash-object`) for the files the HEAD-and-clean fast path cannot
    vouch for, renamed files read, and untracked files hashed to find files moved without git.

    While git hashes, the old versions of the files it says changed are already being read
    (their snippets will need them: see _read_old_blobs)."""
    root, located = facts.root, facts.located
    # Files moved without git (plain `mv`): an untracked file with the old blob's exact content.
    lost_blobs = {facts.old_blob(s, located[s.path].rel) for s in inside
                  if not located[s.path].exists
                  and (facts.commit_of(s), located[s.path].rel) not in facts.renames}
    lost_blobs.discard(None)
    untracked: dict[str, Located] = {}
    if lost_blobs:
        # Listed only now: most calls lose no file, and listing costs a walk of the tree.
        listed = sorted(gitio.untracked_files(root))[:MAX_UNTRACKED_HASHED]
        huge = over_cap(root, listed, facts.rules.max_file_bytes)
        for path in listed:
            if path in huge:
                continue        # never hashed: git would read all of it
            loc = locator.locate(path)
            if loc.inside and loc.exists and loc.real:
                untracked[loc.real] = loc

    texts: dict[str, str] = {}     # files read now, beyond facts.files
    for real in sorted(set(facts.renames.values()) - set(facts.files)):
        if isinstance(text := read_text(root, real, facts.rules.max_file_bytes), str):
            texts[real] = text
    to_hash = {target for s in inside
               if s.has_version and (loc := located[s.path]).exists
               and ((target := loc.real) in facts.files or target in texts) and not fast_path(s, facts, strict)}
    # Rename targets too: the same blob id there is the same code (decide: file-renamed).
    to_hash |= set(facts.renames.values()) & (set(facts.files) | set(texts))
    if strict:
        to_hash |= set(facts.files) | set(texts)
    reused = {p: known[p] for p in to_hash if p is not None and p in known}
    hashing = gitio.start_hash_worktree_files(root, sorted(p for p in to_hash if p and p not in reused)
                                              + sorted(p for p in untracked if p not in reused))
    reused.update((p, known[p]) for p in untracked if p in known)
    # A file the caller already hashed to the snippet's own blob is that blob (an overlay hit, cut
    # from the working tree): its old version is not needed.
    early = gitio.start_read_blobs(root, sorted({
        old for s in inside if (target := located[s.path].real) is not None and target in to_hash
        and not facts.status.is_clean(target)
        and (s.text is None or symbols.symbol_names(s.symbol)) and (old := facts.old_blob(s, located[s.path].rel))
        and not (target in reused and same_oid(reused[target], old))}))
    return _Hashing(hashing, early, texts, untracked, frozenset(b for b in lost_blobs if b), reused)


def _finish_hashing(facts: Facts, started: _Hashing) -> tuple[Facts, gitio.PendingBlobs]:
    """The files with their blob ids, and the files moved without git found by content; the
    paths are classified while git still hashes."""
    root, texts = facts.root, dict(started.texts)
    for loc in facts.located.values():     # the rules' verdict on each path
        if loc.inside:
            facts.classification(loc)
    hashed = {**started.reused, **started.hashing.result()}
    moved: dict[str, str] = {}
    for path in sorted(started.untracked):
        blob = hashed.get(path)
        lost = next((b for b in started.lost_blobs if same_oid(b, blob)), None)
        if lost is not None and lost not in moved:
            moved[lost] = path
            if path not in facts.files and path not in texts \
                    and isinstance(text := read_text(root, path, facts.rules.max_file_bytes), str):
                texts[path] = text
    files = dict(facts.files)
    files.update((real, WorkFile(text, hashed.get(real))) for real, text in texts.items())
    for real, blob in hashed.items():
        if real in facts.files:
            files[real] = WorkFile(facts.files[real].text, blob)
    return replace(facts, files=files, moved=moved, caches=facts.caches.after_hashing()), started.early


def _read_old_blobs(facts: Facts, inside: Sequence[Snippet], strict: bool, early: gitio.PendingBlobs) -> Facts:
    """Old texts, read from git (`cat-file --batch`) only where a decision needs them: those
    read early, and the rest in one more process if any is missing."""
    want: set[str] = set()
    for s in inside:
        loc = facts.located[s.path]
        same = identical_blob(s, facts, strict)
        old = facts.old_blob(s, loc.rel)
        work = facts.files.get(loc.real or "")
        if s.text is None and old and same is None:
            want.add(old)       # the snippet's lines, to look for in the changed file
        elif old and same is None and loc.exists and symbols.symbol_names(s.symbol):
            want.add(old)       # is the symbol gone, or spelled by another tool? (decide._symbol_gone)
        elif s.text is not None and same and work and not facts.hits(s.text, loc.real or ""):
            want.add(same)      # a clean filter may explain the difference: compare with the blob
    blobs = early.result()
    blobs.update(gitio.read_blobs(facts.root, sorted(want - set(early.names))))
    # Exactly the wanted ones: an old text where none was wanted would change what decide does.
    texts = {sha: decode(blobs[sha]) for sha in want if sha in blobs}
    return replace(facts, blob_texts=texts)


def find_elsewhere(facts: Facts, needles: Sequence[str]) -> Facts:
    """Facts plus the working-tree files that hold each needle (a definition line), read for
    the decisions: one `git grep` for every snippet whose symbol left its file."""
    found = gitio.grep_lines(facts.root, needles)
    files = dict(facts.files)
    elsewhere: dict[str, tuple[str, ...]] = {}
    for line, paths in found.items():
        kept = []
        for path in paths[:MAX_MOVE_CANDIDATES]:
            loc = locate(facts.root, path)
            real = loc.real
            if not (loc.inside and loc.exists and real):
                continue
            if real not in files and isinstance(text := read_text(facts.root, real, facts.rules.max_file_bytes), str):
                files[real] = WorkFile(text)
            if real in files:
                kept.append(real)
        elsewhere[line] = tuple(kept)
    return replace(facts, files=files, elsewhere=elsewhere)
