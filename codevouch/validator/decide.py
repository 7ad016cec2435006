"""The verdict for one snippet: a pure function over the gathered facts (no I/O here).

Order (see DESIGN.md): path inside the repository -> exclusion rules -> file exists ->
version check (HEAD and clean) -> content check (blob ids) -> chunk text found in the
current file -> symbol found -> symbol gone. The path check comes before the exclusion
rules so that nothing about an outside path (not even its first lines, which generated-code
markers would need) is ever read.

Invariant: `usable` and `stale-but-ok` are only given when the snippet's text, where it has
one, is present as whole lines in the working-tree file (or, for an unchanged file, in the
blob git computes for it). Snippet text is data, never trusted: a snippet whose metadata
says "unchanged" but whose text is not in the file gets `text-mismatch`.
"""
from __future__ import annotations

from codevouch.rules import classify
from codevouch.validator import symbols
from codevouch.validator.facts import Facts, WorkFile, fast_path, identical_blob
from codevouch.validator.model import KIND_REASON, Current, Decision, Snippet
from codevouch.validator.paths import Located
from codevouch.validator.text import find_lines, line_count, nearest, slice_lines

HISTORICAL = "historical-only"
STALE_OK = "stale-but-ok"


def decide(s: Snippet, facts: Facts, strict: bool = False) -> Decision:
    loc = facts.located[s.path]
    if not loc.inside:
        return Decision("excluded", "outside-repo", f"Not checked: {loc.problem}, so nothing was read.")
    assert loc.rel is not None and loc.real is not None
    work = facts.files.get(loc.real) if loc.exists else None
    found = classify(loc.rel, work.text if work else "", facts.rules)
    if found.excluded:
        reason = KIND_REASON[found.kind]
        return Decision("excluded", reason,
                        f"{loc.rel} is {_kind_words(found.kind)} (rule {found.rule!r}); it is not indexed "
                        f"and must not be used as code context.")
    if work is None:
        return _missing(s, loc, facts)
    if not s.has_version:
        return _unversioned(s, loc, work, facts)
    return _versioned(s, loc, work, facts, strict)


def _kind_words(kind: str) -> str:
    return {"generated": "generated code", "vendor": "vendored third-party code",
            "backup": "a backup or editor copy", "fixture": "test fixture data"}[kind]


def _missing(s: Snippet, loc: Located, facts: Facts) -> Decision:
    commit = facts.commit_of(s)
    new = facts.renames.get((commit, loc.rel or "")) if commit else None
    if new is None:
        old = facts.old_blob(s, loc.rel)
        new = facts.moved.get(old) if old else None
    work = facts.files.get(new) if new else None
    if new and work is not None:
        current = _find_text(s, _old_text(s, loc, facts), new, work, facts) or \
            _find_symbol(s, new, work, facts) or \
            Current(new, 1, line_count(work.text), work.text, None)
        where = f"{current.symbol} in {new}" if current.symbol else new
        return Decision(HISTORICAL, "file-renamed",
                        f"{loc.rel} no longer exists: git detects it was renamed to {new}; "
                        f"use the current code ({where}) instead.", current)
    if commit:
        why = ""
    elif s.commit:
        why = " (its commit is no longer in the repository, so a rename cannot be traced)"
    else:
        why = " (without a commit a rename cannot be traced)"
    return Decision(HISTORICAL, "file-deleted",
                    f"{loc.rel} does not exist in the working tree{why}; the snippet is history only.")


def _unversioned(s: Snippet, loc: Located, work: WorkFile, facts: Facts) -> Decision:
    assert loc.real is not None
    if s.text is not None:
        current = _find_text(s, s.text, loc.real, work, facts)
        if current is not None and not _symbols_survive(s, loc.real, facts):
            return _renamed_around(s, loc, current)
        if current is not None:
            return Decision(STALE_OK, "text-found",
                            f"The snippet has no commit or blob id, but its text is in the working-tree "
                            f"file at lines {current.start_line}-{current.end_line}.", current)
    current = _find_symbol(s, loc.real, work, facts)
    what = "its text is not in the current file" if s.text is not None else "it carries no text"
    hint = f"; the current {current.symbol} is given instead" if current else ""
    return Decision(HISTORICAL, "no-version-metadata",
                    f"The snippet has no commit or blob id and {what}, so nothing ties it to this "
                    f"version{hint}.", current)


def _versioned(s: Snippet, loc: Located, work: WorkFile, facts: Facts, strict: bool) -> Decision:
    assert loc.real is not None
    commit = facts.commit_of(s)
    at_head = commit is not None and commit == facts.head
    same = identical_blob(s, facts, strict)
    if same is not None:
        verdict, reason = ("usable", "same-commit") if at_head else (STALE_OK, "same-content")
        basis = ("Indexed at HEAD and the file is unchanged in the working tree"
                 if at_head and fast_path(s, facts, strict) else
                 "The working-tree file has the same git blob id as the indexed one")
        if s.text is None:
            current = _claimed(s, loc.real, work, facts) or _find_symbol(s, loc.real, work, facts)
            return Decision(verdict, reason, f"{basis}.", current)
        hits = find_lines(s.text, work.text)
        if not hits and same in facts.blob_texts and find_lines(s.text, facts.blob_texts[same]):
            # A clean filter changes the working-tree bytes but git sees the same content.
            current = _claimed(s, loc.real, work, facts)
            return Decision(verdict, reason, f"{basis} (compared after git's filters).", current)
        if hits:
            current = _pick(s, hits, loc.real, work, facts, identical=True)
            if s.start_line is None or current.start_line == s.start_line:
                return Decision(verdict, reason, f"{basis}.", current)
            return Decision(STALE_OK, "chunk-moved",
                            f"The file is unchanged but the snippet's line numbers are not where its text "
                            f"is: use lines {current.start_line}-{current.end_line}.", current)
        current = _find_symbol(s, loc.real, work, facts) or _claimed(s, loc.real, work, facts)
        return Decision(HISTORICAL, "text-mismatch",
                        "The version metadata says the file is unchanged, but the snippet's text is not "
                        "in it: the text was altered after indexing and must not be trusted.", current)

    gone = bool(s.commit) and commit is None
    old_text = _old_text(s, loc, facts)
    if old_text is not None:
        current = _find_text(s, old_text, loc.real, work, facts)
        if current is not None and not _symbols_survive(s, loc.real, facts):
            return _renamed_around(s, loc, current)
        if current is not None:
            same_place = s.start_line == current.start_line
            return Decision(STALE_OK, "chunk-moved",
                            "The file changed since it was indexed, but the chunk's text is unchanged "
                            + ("at the same lines." if same_place else
                               f"and now at lines {current.start_line}-{current.end_line}."), current)
    current = _find_symbol(s, loc.real, work, facts)
    if old_text is None and gone:
        # Nothing to compare: no blob id, no text, and the commit is gone (force-pushed).
        hint = f"; the current {current.symbol} is given instead" if current else ""
        return Decision(HISTORICAL, "commit-gone",
                        f"Commit {s.commit[:12] if s.commit else ''} is no longer in the repository and the "
                        f"snippet has no blob id or text to check{hint}.", current)
    if current is not None:
        return Decision(HISTORICAL, "content-changed",
                        f"The code changed since it was indexed; the current {current.symbol} is at lines "
                        f"{current.start_line}-{current.end_line}.", current)
    names = symbols.symbol_names(s.symbol)
    if not names:
        return Decision(HISTORICAL, "content-changed",
                        "The chunk's text is no longer in the file, and it names no definition to look up.")
    return Decision(HISTORICAL, "symbol-removed",
                    f"{', '.join(names)} no longer exists in {loc.rel} (nor does the chunk's text).")


def _symbols_survive(s: Snippet, real: str, facts: Facts) -> bool:
    """Whether every definition the snippet names still exists in the file, by qualified name
    or, for a method moved to another class, by its own name.

    Text found verbatim is not enough: a window of a function body can survive the function
    being renamed or replaced (real history: a test renamed with its body kept). Such a snippet
    describes code that is gone, so it must not pass as current.
    """
    names = symbols.symbol_names(s.symbol)
    if not names:
        return True
    defs = facts.defs(real)
    if not defs:
        return True  # a language without definitions: the text check alone decides
    last = {name.rsplit(".", 1)[-1] for name in defs}
    return all(name in defs or name.rsplit(".", 1)[-1] in last for name in names)


def _renamed_around(s: Snippet, loc: Located, current: Current) -> Decision:
    names = ", ".join(symbols.symbol_names(s.symbol))
    return Decision(HISTORICAL, "symbol-removed",
                    f"{names} no longer exists in {loc.rel}; the snippet's lines survive at "
                    f"{current.start_line}-{current.end_line} inside {current.symbol or 'other code'}, "
                    "so use that code as it is now, not this snippet.", current)


def _old_text(s: Snippet, loc: Located, facts: Facts) -> str | None:
    """The snippet's text: as given, else its lines read back from git at its blob."""
    if s.text is not None:
        return s.text
    old = facts.old_blob(s, loc.rel)
    blob = facts.blob_texts.get(old) if old else None
    if blob is None:
        return None
    if s.start_line is None or s.end_line is None:
        return blob
    text = slice_lines(blob, s.start_line, s.end_line)
    return text if text.strip() else None


def _find_text(s: Snippet, text: str | None, real: str, work: WorkFile, facts: Facts) -> Current | None:
    if not text or not text.strip():
        return None      # blank text "occurs" everywhere and proves nothing
    hits = find_lines(text, work.text)
    return _pick(s, hits, real, work, facts) if hits else None


def _pick(s: Snippet, hits: list[tuple[int, int]], real: str, work: WorkFile, facts: Facts,
          identical: bool = False) -> Current:
    """Several occurrences: prefer one inside the snippet's symbol, then the nearest to its old lines.

    In a file identical to the indexed one, at the snippet's own lines, the snippet's symbol
    is kept without parsing the file: parsing every referenced file just to re-derive a name
    the indexer already gave was most of the validator's time. Wherever the code moved, the
    name is re-derived from the current file.
    """
    if len(hits) > 1 and symbols.symbol_names(s.symbol):
        defs = facts.defs(real)
        own = [h for h in hits if symbols.in_symbol(defs, s.symbol, *h)]
        hits = own or hits
    start, end = nearest(hits, s.start_line)
    if identical and s.symbol and (start, end) == (s.start_line, s.end_line):
        return Current(real, start, end, slice_lines(work.text, start, end), s.symbol)
    return _current(real, start, end, work, facts, s.symbol)


def _claimed(s: Snippet, real: str, work: WorkFile, facts: Facts) -> Current | None:
    """The snippet's own line range in the (unchanged) working-tree file."""
    if s.start_line is None or s.end_line is None or s.start_line > line_count(work.text):
        return None
    end = min(s.end_line, line_count(work.text))
    if s.symbol and end == s.end_line:
        return Current(real, s.start_line, end, slice_lines(work.text, s.start_line, end), s.symbol)
    return _current(real, s.start_line, end, work, facts, s.symbol)


def _find_symbol(s: Snippet, real: str, work: WorkFile, facts: Facts) -> Current | None:
    found = symbols.lookup(facts.defs(real), s.symbol, s.start_line) if symbols.symbol_names(s.symbol) else None
    if found is None:
        return None
    start, end, name = found
    return Current(real, start, end, slice_lines(work.text, start, end), name)


def _current(real: str, start: int, end: int, work: WorkFile, facts: Facts, fallback: str | None) -> Current:
    """A located range, named by the definition that encloses it now (which may differ from
    the snippet's symbol: a method moved to another class keeps its text, not its name)."""
    defs = facts.defs(real)
    name = symbols.enclosing(defs, start, end) if defs else None
    if name is None:
        name = symbols.MODULE_SYMBOL if defs else fallback
    return Current(real, start, end, slice_lines(work.text, start, end), name)
