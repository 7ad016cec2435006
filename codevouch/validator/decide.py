"""The verdict for one snippet: a pure function over the gathered facts (no I/O here).

Order (see DESIGN.md): path inside the repository -> ignored by git -> exclusion rules -> file exists ->
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

from dataclasses import dataclass, replace

from codevouch.validator import moves, symbols, verbatim
from codevouch.validator.current import claimed, find_symbol, find_text, holds_its_definitions, named_range, pick
from codevouch.validator.facts import Facts, WorkFile, fast_path, identical_blob, same_oid
from codevouch.validator.model import KIND_REASON, Current, Decision, Snippet
from codevouch.validator.text import find_lines, line_count, slice_lines
from codevouch.vocabulary import Kind
from codevouch.worktree.paths import Located


def decide(s: Snippet, facts: Facts, strict: bool = False) -> Decision:
    loc = facts.located[s.path]
    if not loc.inside:
        return Decision("outside-repo", f"Not checked: {loc.problem}, so nothing was read.")
    assert loc.rel is not None and loc.real is not None
    ignored = facts.ignored.get(s.path) if facts.ignored else None
    if ignored is not None:
        # Before the exclusion rules, which would read the file's first lines for markers.
        return Decision("ignored", f"{loc.rel} is ignored by git ({ignored}); an ignored file (local "
                                   "settings, keys, build output) is never read, so nothing was checked or shown.")
    work = facts.files.get(loc.real) if loc.exists else None
    found = facts.classification(loc)
    if found.excluded:
        reason = KIND_REASON[found.kind]
        return Decision(reason,
                        f"{loc.rel} is {_kind_words(found.kind)} (rule {found.rule!r}); it is not indexed "
                        f"and must not be used as code context.")
    if work is None:
        big = facts.too_large.get(loc.real) if facts.too_large else None
        if big is not None:
            return Decision("too-large", f"{loc.rel} is {big.words()}: it is not indexed and was not "
                                         "read, so the snippet cannot be checked against it.")
        return _by_text(s, loc, facts, _missing(s, loc, facts))
    if not s.has_version:
        decision = _by_text(s, loc, facts, _unversioned(s, loc, work, facts))
        return _unversioned_out_of_range(s, loc, facts, decision) or decision
    decision = _by_text(s, loc, facts, _versioned(s, loc, work, facts, strict))
    decision = _out_of_range(s, loc, work, facts, strict, decision) or decision
    unrun = facts.unrun_filters.get(loc.rel)
    if unrun is not None and decision.reason not in ("same-commit", "same-worktree", "same-content"):
        # The working-tree hash was taken without the repository's filter, so "changed" may only
        # mean "not filtered": say so rather than run the repository's program.
        decision = replace(decision, detail=(
            f"{decision.detail} Cannot verify against the committed blob: the repository's filter "
            f"{unrun!r} is not run (set CODEVOUCH_RUN_GIT_FILTERS=1 to run it)."))
    return decision


def _out_of_range(s: Snippet, loc: Located, work: WorkFile, facts: Facts, strict: bool,
                  decided: Decision) -> Decision | None:
    """lines-out-of-range, in place of `decided`: the snippet's lines lie past the end of its own
    version of the file (the working-tree file when its blob is the snippet's, else the old blob
    when it was read), or, when that version is not at hand, past the end of the working-tree
    file while `decided` would vouch for them with nothing in range to point at. A range that is
    not in the file vouches for nothing, whatever else matches."""
    if s.start_line is None and s.end_line is None:
        return None
    assert loc.real is not None
    last = max(s.start_line or 0, s.end_line or 0)
    identical = identical_blob(s, facts, strict) is not None
    if identical and s.text is not None and _found_through(facts, s.text, loc.real, last):
        return None
    past = _past_end(s, loc, work, facts, identical, last, decided)
    if past is None:
        return None
    current = find_symbol(s, loc.real, work, facts) if loc.real else None
    first, end = s.start_line or s.end_line, s.end_line or s.start_line
    hint = f"; the current {current.symbol} is at lines {current.start_line}-{current.end_line}" if current else ""
    return Decision("lines-out-of-range",
                    f"Lines {first}-{end} are past the end of {past.where} file {loc.rel} "
                    f"({line_count(past.text)} lines): "
                    f"nothing there to vouch for{hint}.", current)


def _found_through(facts: Facts, text: str, real: str, last: int) -> bool:
    """Whether the text was found (already: no search here) as whole lines ending at or past line
    `last`: then the file has that many lines, no count needed. A text ending in "\n" ends in an
    empty line, which may be the empty string after the file's final newline (no line at all):
    its hits prove one line less."""
    found = facts.caches.hits.get((text, real))
    proven = text.endswith("\n")
    return found is not None and any(end - proven >= last for _, end in found[0])


def _unversioned_out_of_range(s: Snippet, loc: Located, facts: Facts, decided: Decision) -> Decision | None:
    """lines-out-of-range, in place of text-found or no-version-metadata: without a commit or blob
    id the working-tree file is the snippet's only version, so lines past its end are past the
    end of its version, even where its text is found elsewhere in the file (`current` then
    points there)."""
    if s.start_line is None and s.end_line is None or decided.reason not in ("text-found", "no-version-metadata"):
        return None
    assert loc.real is not None
    total = facts.line_total(loc.real)
    first, end = s.start_line or s.end_line, s.end_line or s.start_line
    if max(first or 0, end or 0) <= total:
        return None
    found = decided.current
    hint = "" if found is None else f"; its text is at lines {found.start_line}-{found.end_line}" \
        if decided.reason == "text-found" else f"; the current {found.symbol} is at lines {found.start_line}-{found.end_line}"
    return Decision("lines-out-of-range",
                    f"Lines {first}-{end} are past the end of the working-tree file {loc.rel} ({total} lines), "
                    f"the snippet's only version (it has no commit or blob id): nothing there to vouch "
                    f"for{hint}.", found)


@dataclass(frozen=True)
class _Past:
    """The version of a file a snippet's lines lie past the end of."""
    where: str     # how the message names it: "its version of the" | "the working-tree"
    text: str      # its text (the message counts its lines)


def _past_end(s: Snippet, loc: Located, work: WorkFile, facts: Facts, identical: bool, last: int,
              decided: Decision) -> _Past | None:
    """The version line `last` lies past the end of: the snippet's own version when at hand,
    else the working-tree file, but only while `decided` vouches for the lines and points at
    nothing in range; None when the lines are in range (or nothing would be vouched for)."""
    assert loc.real is not None
    now = facts.line_total(loc.real)
    old = facts.old_blob(s, loc.rel) if loc.rel else None
    version = work.text if identical else facts.blob_texts.get(old) if old else None
    if version is not None:
        if last <= (now if identical else facts.old_line_total(old or "")):
            return None
        return _Past("its version of the", version)
    vouched = decided.verdict in ("usable", "stale-but-ok")
    pointed = decided.current is not None and (decided.current.path != loc.real
                                                or decided.current.end_line <= now)
    if last <= now or not vouched or pointed:
        return None
    return _Past("the working-tree", work.text)


_KIND_WORDS: dict[str, str] = {Kind.GENERATED: "generated code", Kind.VENDOR: "vendored third-party code",
                               Kind.BACKUP: "a backup or editor copy", Kind.FIXTURE: "test fixture data"}


def _kind_words(kind: str) -> str:
    return _KIND_WORDS[kind]


def _missing(s: Snippet, loc: Located, facts: Facts) -> Decision:
    if loc.what is not None:
        return Decision("not-a-file", f"{loc.rel} exists but is {loc.what}, not a regular file; nothing was "
                                      "read, so the snippet cannot be checked against it.")
    if loc.exists:
        # A regular file that could not be read (mode 000, say): there, but unknown, never "deleted".
        return Decision("not-a-file", f"{loc.rel} exists but could not be read (permission denied, or it "
                                      "changed while being read); the snippet cannot be checked against it.")
    commit = facts.commit_of(s)
    new = _rename_target(s, loc, facts)
    work = facts.files.get(new) if new else None
    if new and work is not None:
        if same_oid(work.blob, facts.old_blob(s, loc.rel)):
            return _renamed_intact(s, loc, new, work, facts)
        current = find_text(s, _old_text(s, loc, facts), new, work, facts) or \
            find_symbol(s, new, work, facts) or \
            Current(new, 1, line_count(work.text), work.text, None)
        where = f"{current.symbol} in {new}" if current.symbol else new
        return Decision("renamed-and-changed",
                        f"{loc.rel} no longer exists: git detects it was renamed to {new}, and its content "
                        f"changed since; use the current code ({where}) instead.", current)
    moved = _moved_elsewhere(s, loc, facts)
    if moved is not None:
        return moved
    never = _never_existed(s, loc, commit, facts)
    if never is not None:
        return never
    if commit:
        why = ""
    elif s.commit:
        why = " (its commit is no longer in the repository, so a rename cannot be traced)"
    else:
        why = " (without a commit a rename cannot be traced)"
    return Decision("file-deleted",
                    f"{loc.rel} does not exist in the working tree{why}; the snippet is history only.")


def _rename_target(s: Snippet, loc: Located, facts: Facts) -> str | None:
    """The working-tree path a gone file was renamed to: by git's rename detection from the
    snippet's commit, else an untracked file with its old blob id (a plain `mv`)."""
    commit = facts.commit_of(s)
    new = facts.renames.get((commit, loc.rel or "")) if commit else None
    if new is None:
        old = facts.old_blob(s, loc.rel)
        new = facts.moved.get(old) if old else None
    return new


# Historical-only reasons that say only "the text is not where, or as, its metadata says": a
# window whose text is in the file verbatim (validator/verbatim.py) overturns them. Not a
# removed symbol, a deleted file, a wrong blob id or lines past the end.
_BY_TEXT = ("text-mismatch", "content-changed", "no-version-metadata", "renamed-and-changed")


def _by_text(s: Snippet, loc: Located, facts: Facts, decided: Decision) -> Decision:
    """`decided`, or stale-but-ok where the snippet's text is verbatim in its file (or its rename
    target) by the window rule: stripped ends, mid-line ends, CRLF or LF, at one place or at
    the place its own lines or offset point to."""
    if decided.reason not in _BY_TEXT or s.text is None or not s.text.strip():
        return decided
    target = loc.real if loc.real in facts.files else _rename_target(s, loc, facts)
    work = facts.files.get(target) if target else None
    if work is None or target is None:
        return decided
    place = facts.place(s, target, facts.old_blob(s, loc.rel))
    if place is None:
        return decided
    current = named_range(target, place.start_line, place.end_line, work, facts, s.symbol)
    names = symbols.symbol_names(s.symbol)
    if target == loc.real and _symbol_gone(s, loc, facts, current) or \
            target != loc.real and _gone_from_target(s, loc, facts, target, names):
        return decided
    return _verbatim_decision(s, loc, facts, decided, target, place, current)


def _gone_from_target(s: Snippet, loc: Located, facts: Facts, target: str, names: list[str]) -> bool:
    """Whether a definition the snippet names is not in its file's rename target `target`. As in
    _symbol_gone, a name its own version does not define either (a function of an anonymous
    object, say, that another tool names and no lookup here does) is a spelling nothing here
    understands, and the text decides; without its own version at hand, every name must resolve."""
    old = facts.old_defs(s, loc.rel)
    return any(not symbols.resolve(facts.defs(target), name, target)
               and (old is None or symbols.resolve(old, name, loc.rel or s.path) is not None) for name in names)


def _verbatim_decision(s: Snippet, loc: Located, facts: Facts, decided: Decision, target: str,
                       place: verbatim.Place, current: Current) -> Decision:
    """What `decided` becomes with the snippet's text verbatim at `place` in `target` (its file,
    or its rename target)."""
    where = _placed(s, place)
    if target != loc.real:
        reason = "file-renamed" if decided.reason == "text-mismatch" else "chunk-moved"
        return Decision(reason, f"{loc.rel} no longer exists: it was renamed to {target}, and the snippet's "
                                f"text is unchanged there, {where}.", current)
    if decided.reason == "no-version-metadata":
        return Decision("text-found", f"The snippet has no commit or blob id, but its text is in the "
                                      f"working-tree file verbatim, {where}.", current)
    if decided.reason == "text-mismatch" and place.own:
        commit = facts.commit_of(s)
        return Decision("same-commit" if commit is not None and commit == facts.head else "same-content",
                        f"The file is unchanged, and the snippet's text is in it verbatim, {where}.", current)
    return Decision("chunk-moved", f"The file changed since the snippet was cut, but its text is unchanged "
                                   f"there verbatim, {where}.", current)


def _placed(s: Snippet, place: verbatim.Place) -> str:
    """Where a window was placed, in words: at its own position, or where, and among how many."""
    if place.own:
        own = f"at its own {'lines' if place.start_line == s.start_line else 'offset'}"
        return own + (f" (the text occurs {place.count} times)" if place.count > 1 else "")
    if place.carried and place.count > 1:
        return (f"at lines {place.start_line}-{place.end_line}, where the lines around it in its own version "
                f"are now (the text occurs {place.count} times)")
    return f"at lines {place.start_line}-{place.end_line}" + (
        f", the nearest of the {place.count} places the text occurs" if place.count > 1 else "")


def _renamed_intact(s: Snippet, loc: Located, new: str, work: WorkFile, facts: Facts) -> Decision:
    """The snippet's file is gone from its path, and `new` has its exact content (the same blob
    id): the same code, renamed, so stale-but-ok at the new path. The snippet's own text must
    still be there (it is data, never trusted), and its lines inside the file."""
    how = f"git detects it was renamed to {new}" if new in facts.renames.values() else \
        f"{new} has its exact content (the same git blob id)"
    if s.text is not None:
        hits = facts.hits(s.text, new) if s.text.strip() else []
        if not hits:
            current = find_symbol(s, new, work, facts)
            return Decision("text-mismatch",
                            f"{loc.rel} was renamed to {new} with its content unchanged, but the snippet's text "
                            "is not in it: the text was altered after indexing and must not be trusted.", current)
        current = pick(s, hits, new, work, facts, identical=True, needle=s.text)
    else:
        last = max(s.start_line or 0, s.end_line or 0)
        if last > line_count(work.text):
            return Decision("lines-out-of-range",
                            f"{loc.rel} was renamed to {new} with its content unchanged, but lines "
                            f"{s.start_line or s.end_line}-{s.end_line or s.start_line} are past its end "
                            f"({line_count(work.text)} lines): nothing there to vouch for.",
                            find_symbol(s, new, work, facts))
        current = claimed(s, new, work, facts) or find_symbol(s, new, work, facts) or \
            Current(new, 1, line_count(work.text), work.text, None)
    at = f"lines {current.start_line}-{current.end_line}" + (f" ({current.symbol})" if current.symbol else "")
    return Decision("file-renamed",
                    f"{loc.rel} no longer exists, but {how}: the same code, now at {new} {at}.", current)


def _never_existed(s: Snippet, loc: Located, commit: str | None, facts: Facts) -> Decision | None:
    """path-never-existed, for a lost path its own version never had: not in the snippet's
    commit (looked up already, with its blob id), or, without a commit, in none of HEAD's
    history (facts.in_history: the test check-refs makes). None when it did exist, or when
    that cannot be known (a commit that is gone)."""
    rel = loc.rel or ""
    if commit:
        if "\n" in rel or f"{commit}:{rel}" in facts.objects:
            return None
        where = f", nor in its commit {commit[:7]}: the snippet's path and version do not match"
    elif not s.commit and facts.in_history.get(rel) is False:
        where = (", nor anywhere in HEAD's history" if facts.head else " (the repository has no commits)") + \
            ": no file by that name was ever this repository's"
    else:
        return None
    return Decision("path-never-existed",
                    f"{rel} is not in the working tree{where}, so nothing vouches for the snippet.")


def _unversioned(s: Snippet, loc: Located, work: WorkFile, facts: Facts) -> Decision:
    assert loc.real is not None
    if s.text is not None:
        current = find_text(s, s.text, loc.real, work, facts)
        if current is not None and _symbol_gone(s, loc, facts, current):
            return _renamed_around(s, loc, current)
        if current is not None:
            return Decision("text-found",
                            f"The snippet has no commit or blob id, but its text is in the working-tree "
                            f"file at lines {current.start_line}-{current.end_line}.", current)
    current = find_symbol(s, loc.real, work, facts)
    what = "its text is not in the current file" if s.text is not None else "it carries no text"
    hint = f"; the current {current.symbol} is given instead" if current else ""
    return Decision("no-version-metadata",
                    f"The snippet has no commit or blob id and {what}, so nothing ties it to this "
                    f"version{hint}.", current)


def _versioned(s: Snippet, loc: Located, work: WorkFile, facts: Facts, strict: bool) -> Decision:
    """The verdict for a snippet with a commit or a blob id, in this order: the working-tree file
    provably its version, a blob id its commit never had, its text found in the changed file,
    then what changed."""
    assert loc.real is not None
    commit = facts.commit_of(s)
    same = identical_blob(s, facts, strict)
    if same is not None:
        return _unchanged(s, loc, work, facts, strict, commit, same)
    wrong = _unknown_blob(s, loc, work, facts, commit)
    if wrong is not None:
        return wrong
    gone = bool(s.commit) and commit is None
    old_text = _old_text(s, loc, facts)
    if old_text is not None:
        current = find_text(s, old_text, loc.real, work, facts)
        if current is not None and not _window_cut_otherwise(s, loc, facts):
            return _text_kept(s, loc, facts, current)
    return _changed(s, loc, work, facts, gone and old_text is None)


def _window_cut_otherwise(s: Snippet, loc: Located, facts: Facts) -> bool:
    """Whether another tool's window (text, no symbol), found as whole lines in its changed file,
    is not there as its own version shows it: a splitter stripped the indentation of a docstring's
    closing quotes cut from an indented line, so bare quotes at a line's start elsewhere are other
    code. Its own version decides (facts.place); the window rule then judges it (_by_text)."""
    if s.text is None or symbols.symbol_names(s.symbol):
        return False
    old = facts.old_blob(s, loc.rel)
    return old is not None and old in facts.blob_texts and facts.place(s, loc.real or "", old) is None


def _unchanged(s: Snippet, loc: Located, work: WorkFile, facts: Facts, strict: bool, commit: str | None,
               same: str) -> Decision:
    """The working-tree file is provably the snippet's version (blob `same`): its text, where it
    has one, must still be in it (it is data, never trusted), and at the snippet's lines."""
    assert loc.real is not None
    at_head = commit is not None and commit == facts.head
    # Cut from the working tree at query time (the overlay): no older version to speak of.
    worktree = s.origin == "uncommitted" and not s.commit
    # Cut from the working tree: not "same-commit", which says the index holds it at HEAD.
    reason = "same-worktree" if worktree else "same-commit" if at_head else "same-content"
    basis = ("Indexed at HEAD and the file is unchanged in the working tree"
             if at_head and fast_path(s, facts, strict) else
             "Cut from the working tree, and the file is unchanged since" if worktree else
             "The working-tree file has the same git blob id as the indexed one")
    if s.text is None:
        current = claimed(s, loc.real, work, facts) or find_symbol(s, loc.real, work, facts)
        return Decision(reason, f"{basis}.", current)
    hits = facts.hits(s.text, loc.real)
    if not hits and same in facts.blob_texts and find_lines(s.text, facts.blob_texts[same]):
        # A clean filter changes the working-tree bytes but git sees the same content.
        current = claimed(s, loc.real, work, facts)
        return Decision(reason, f"{basis} (compared after git's filters).", current)
    if hits:
        current = pick(s, hits, loc.real, work, facts, identical=True, needle=s.text)
        if s.start_line is None or current.start_line == s.start_line:
            return Decision(reason, f"{basis}.", current)
        return Decision("chunk-moved",
                        f"The file is unchanged but the snippet's line numbers are not where its text "
                        f"is: use lines {current.start_line}-{current.end_line}.", current)
    current = find_symbol(s, loc.real, work, facts) or claimed(s, loc.real, work, facts)
    return Decision("text-mismatch",
                    "The version metadata says the file is unchanged, but the snippet's text is not "
                    "in it: the text was altered after indexing and must not be trusted.", current)


def _unknown_blob(s: Snippet, loc: Located, work: WorkFile, facts: Facts, commit: str | None) -> Decision | None:
    """unknown-blob, or None. Not "the file changed": the snippet names a blob its own commit
    never had, and that the repository has never seen. Its version metadata is wrong, whatever
    the text says."""
    assert loc.real is not None
    if s.blob_sha and commit is not None and s.blob_sha not in facts.objects \
            and facts.blob_at(commit, loc.rel) not in (None, s.blob_sha):
        current = find_symbol(s, loc.real, work, facts)
        return Decision("unknown-blob",
                        f"The snippet's blob id {s.blob_sha[:12]} is not {loc.rel} at its commit "
                        f"{commit[:7]}, and this repository has no such object: its version metadata "
                        "is wrong, so nothing ties it to a version.", current)
    return None


def _text_kept(s: Snippet, loc: Located, facts: Facts, current: Current) -> Decision:
    """The file changed, but the snippet's text was found in it (at `current`): the chunk moved,
    unless a definition it names is gone from around it."""
    if _symbol_gone(s, loc, facts, current):
        return _renamed_around(s, loc, current)
    same_place = s.start_line == current.start_line
    return Decision("chunk-moved",
                    f"The file changed since {_since(s)}, but the chunk's text is unchanged "
                    + ("at the same lines." if same_place else
                       f"and now at lines {current.start_line}-{current.end_line}."), current)


def _since(s: Snippet) -> str:
    """When the snippet's version was taken, in words: an overlay hit was never indexed."""
    return "the snippet was cut from the working tree" if s.origin == "uncommitted" and not s.commit \
        else "it was indexed"


def _changed(s: Snippet, loc: Located, work: WorkFile, facts: Facts, nothing_to_compare: bool) -> Decision:
    """The snippet's text is not in the changed file (or there was none to look for): where its
    symbol is now, or that it is gone (from this file, or moved to another)."""
    assert loc.real is not None
    current = find_symbol(s, loc.real, work, facts)
    if nothing_to_compare:
        # Nothing to compare: no blob id, no text, and the commit is gone (force-pushed).
        hint = f"; the current {current.symbol} is given instead" if current else ""
        return Decision("commit-gone",
                        f"Commit {s.commit[:12] if s.commit else ''} is no longer in the repository and the "
                        f"snippet has no blob id or text to check{hint}.", current)
    if current is not None:
        return Decision("content-changed",
                        f"The code changed since {_since(s)}; the current {current.symbol} is at lines "
                        f"{current.start_line}-{current.end_line}.", current)
    names = symbols.symbol_names(s.symbol)
    if not names:
        return Decision("content-changed",
                        "The chunk's text is no longer in the file, and it names no definition to look up.")
    moved = _moved_elsewhere(s, loc, facts)
    if moved is not None:
        return moved
    return Decision("symbol-removed",
                    f"{', '.join(names)} no longer exists in {loc.rel} (nor does the chunk's text).")


def _symbol_gone(s: Snippet, loc: Located, facts: Facts, found: Current) -> bool:
    """Whether a definition the snippet names is gone although its text was `found` in the file.

    Text found verbatim is not enough: a window of a function body can survive the function
    being renamed or replaced (real history: a test renamed with its body kept). Such a snippet
    describes code that is gone, so it must not pass as current.

    A name counts as gone only when it resolves in the snippet's own version of the file and
    not in the working tree. A name that resolves in neither is another tool's spelling that
    no lookup here understands: then the text decides. A method moved to another class keeps
    its text and its own name: `found` lies in a definition of that name, so it is not gone.
    """
    names = symbols.symbol_names(s.symbol)
    assert loc.real is not None and loc.rel is not None
    # Settled without parsing the whole file: the file unchanged from the top through the text
    # found at the snippet's own lines, the block around the found text (parsed already to name
    # it) defining them, or the found text holding those definitions itself.
    if not names or _stayed_put(s, found, facts):
        return False
    near = facts.parsed_near(loc.real, found.start_line, found.end_line)
    if near is not None and all(symbols.resolve(near, name, loc.rel) for name in names) \
            or holds_its_definitions(s.symbol, found.text, loc.rel, facts):
        return False
    now = facts.defs(loc.real)
    old = facts.old_defs(s, loc.rel)
    around = {symbols.own_name(n) for n in symbols.symbol_names(symbols.enclosing(now, found.start_line,
                                                                                  found.end_line))}
    for name in names:
        if symbols.resolve(now, name, loc.rel):
            continue
        was = symbols.resolve(old, name, loc.rel) if old is not None else None
        if was is not None and symbols.own_name(was) not in around:
            return True
    return False


LOST = ("symbol-removed", "file-deleted", "path-never-existed")   # reasons after which the code may be found elsewhere


def move_needle(s: Snippet, facts: Facts) -> str | None:
    """The definition line to look for in other files when the snippet's symbol left its file."""
    loc = facts.located[s.path]
    return moves.needle(s.symbol, _old_text(s, loc, facts), loc.rel or s.path)


def _moved_elsewhere(s: Snippet, loc: Located, facts: Facts) -> Decision | None:
    """The symbol now defined in another working-tree file (facts.elsewhere lists the files
    holding its definition line): the same text is stale-but-ok there, changed text is history
    with the new location as `current`."""
    line = move_needle(s, facts)
    paths = facts.elsewhere.get(line, ()) if line else ()
    candidates = {p: (facts.files[p].text, facts.defs(p)) for p in paths if p != loc.real and p in facts.files}
    text = _old_text(s, loc, facts)
    move = moves.best_move(s.symbol, text, loc.rel or s.path, candidates) if candidates else None
    if move is None:
        return None
    current = Current(move.path, move.start_line, move.end_line,
                      facts.lines(move.path, move.start_line, move.end_line), move.symbol)
    gone = "no longer exists" if not loc.exists else f"is no longer in {loc.rel}"
    if move.same_text:
        return Decision("moved-elsewhere",
                        f"{loc.rel if not loc.exists else s.symbol} {gone}, but the snippet's text is unchanged "
                        f"in {move.path} at lines {move.start_line}-{move.end_line} ({move.symbol}).", current)
    return Decision("moved-and-changed",
                    f"{s.symbol} is defined in {move.path} now ({move.symbol}, lines {move.start_line}-"
                    f"{move.end_line}), not with the snippet's text under its name; use the current code instead.",
                    current)


def _renamed_around(s: Snippet, loc: Located, current: Current) -> Decision:
    names = ", ".join(symbols.symbol_names(s.symbol))
    return Decision("symbol-removed",
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


def _stayed_put(s: Snippet, found: Current, facts: Facts) -> bool:
    """The found text is the snippet's own lines with what encloses them unchanged: at the same
    lines in a file unchanged from the top through them, or in an unchanged top-level block."""
    return (found.start_line, found.end_line) == (s.start_line, s.end_line) and \
        facts.unchanged_through(s, found.path, found.end_line) or \
        facts.intact_block(s, found.path, found.start_line, found.end_line)
