"""The facts one validate call gathered (gather.py gathers them), and the answers worked out from
them, each once per call: everything decide.py reads, with no I/O (parsing is CPU work only).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from codevouch.syntax.lines import split_lines
from codevouch.syntax.region import region_context, top_level_region
from codevouch.validator import symbols, verbatim
from codevouch.validator.model import Snippet
from codevouch.validator.text import find_lines_verbatim, line_count
from codevouch.worktree import gitio
from codevouch.worktree.files import TooLarge
from codevouch.worktree.paths import Located
from codevouch.worktree.rules import Classification, Rules, classifier


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
    # verbatim.locate's answers, by (snippet, file, its own version's blob): asked twice for a window.
    places: dict[tuple[Snippet, str, str | None], verbatim.Place | None] = field(default_factory=dict)
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
    # (SECURITY.md): its working-tree hash may differ from what `git add` would store.
    unrun_filters: Mapping[str, str] = field(default_factory=dict)
    # Definition lines of snippets that lost their symbol -> working-tree files holding that
    # line (gathered in a second pass, only for those: see `elsewhere`).
    elsewhere: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # real path -> the working-tree file's size, over the rules' max_file_bytes: not read (too-large)
    too_large: Mapping[str, TooLarge] = field(default_factory=dict)
    # Lost paths of snippets without a commit -> whether HEAD's history ever had them (one git
    # log for all, only for those: decide tells file-deleted from path-never-existed by it).
    in_history: Mapping[str, bool] = field(default_factory=dict)
    # given path -> the git ignore rule that matches the file (or why git could not tell): never
    # read, hashed or shown (decide: excluded, `ignored`).
    ignored: Mapping[str, str] = field(default_factory=dict)
    # Answers worked out from these facts, once each per call (see FactCaches): not facts,
    # never compared, shared by the Facts that replace() derives from one another.
    caches: FactCaches = field(default_factory=FactCaches, compare=False, repr=False)

    def place(self, s: Snippet, real: str, old: str | None) -> verbatim.Place | None:
        """Where the snippet's text sits in the working-tree file `real` by the window rule
        (verbatim.locate), judged with its own version (blob `old`) when that was read; worked out
        once per call: deciding whether a window moved and the window rule ask the same."""
        key = (s, real, old)
        if key not in self.caches.places:
            assert s.text is not None
            self.caches.places[key] = verbatim.locate(verbatim.Window.of(s.text, s.start_line, s.start_char),
                                                      self.files[real].text, self.blob_texts.get(old) if old else None)
        return self.caches.places[key]

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
