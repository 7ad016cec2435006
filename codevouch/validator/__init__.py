"""Check retrieved snippets against the git working tree before an agent uses them.

    results = validate(repo, parse_snippets(text))   # one Validated per snippet, in order
    to_json(results[0]); render_text(results)

Facts are gathered once per call (gather.py, a handful of git processes whatever the
number of snippets); each verdict is a pure function of them (decide.py).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from codevouch.errors import InputError
from codevouch.validator import shapes
from codevouch.validator.citation import header, version_line
from codevouch.validator.decide import LOST, decide, move_needle
from codevouch.validator.facts import Facts
from codevouch.validator.gather import Known, Started, find_elsewhere, gather, start
from codevouch.validator.model import KIND_REASON, NOT_HERE, REASONS, VERDICTS, Checked, Current, Decision, Snippet, Validated
from codevouch.validator.parse import check_snippet, no_lone_surrogates, parse_items, parse_snippets
from codevouch.validator.parsecache import CACHE as PARSES
from codevouch.validator.render import brief_line, render_brief, render_text, summary, to_json

__all__ = ["REASONS", "VERDICTS", "Checked", "Current", "Decision", "Facts", "Known", "Snippet", "Validated", "clear_caches",
           "brief_line", "decide", "gather", "not_on_this_machine", "parse_items", "parse_snippets", "render_brief",
           "render_text", "summary", "to_json", "validate", "validate_items"]


def clear_caches() -> None:
    """Forget the definitions kept across calls (validator/parsecache.py): the next call parses
    as a fresh process would (benchmarks use it for a first-call figure). The validator's parse
    cache only: `codevouch.clear_caches()` (codevouch/caches.py) clears every cache."""
    PARSES.clear()


def validate(repo: Path | str, snippets: Sequence[Mapping[str, Any] | Checked],
             strict: bool = False, known: Known | None = None) -> list[Validated]:
    """A verdict for each snippet (dicts as from parse_snippets or `search --json`), in input order.
    An item may come parsed already (a `Checked` pair: a search hit's JSON and its
    `Snippet.of_record`); it is not parsed again.

    strict=True hashes every referenced file, even those the HEAD-and-clean fast path would pass.
    Raises InputError for a malformed snippet, GitError subclasses for repository problems.
    known: what the caller learned from git in this call (facts.Known: the root, HEAD, the
    status), not asked again.
    """
    # git starts on the status and the root while the snippets are checked; a malformed
    # snippet still fails first (the processes are left to finish on their own).
    started = start(repo, known)
    given: list[Mapping[str, Any]] = []
    parsed: list[Snippet] = []
    for number, item in enumerate(snippets, 1):
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], Snippet):
            given.append(item[0])
            parsed.append(item[1])
        else:
            parsed.append(check_snippet(item, f"snippet {number}"))    # InputError unless a mapping
            given.append(dict(item))
    return _judged(repo, given, parsed, strict, started)


def _judged(repo: Path | str, given: Sequence[Mapping[str, Any]], parsed: Sequence[Snippet], strict: bool,
            started: Started, where: Sequence[tuple[int, str | None]] | None = None) -> list[Validated]:
    """The verdicts of parsed snippets (`given`: each as the caller gave it); `where`: each
    one's position in its call and the id it carried (validate_items)."""
    facts = gather(repo, parsed, strict, started)
    decisions = [decide(s, facts, strict) for s in parsed]
    # Symbols that left their file may live on in another one: one search for all of them.
    lost = [i for i, d in enumerate(decisions) if d.reason in LOST]
    needles = {n for i in lost if (n := move_needle(parsed[i], facts))}
    if needles:
        facts = find_elsewhere(facts, sorted(needles))
        for i in lost:
            decisions[i] = decide(parsed[i], facts, strict)
    results = []
    versions: dict[tuple[str | None, ...], str] = {}   # most snippets share a commit: one version line
    for number, (item, s, d) in enumerate(zip(given, parsed, decisions)):
        loc = facts.located[s.path]
        commit = facts.commit_of(s)
        date = facts.commit_dates.get(commit or "")
        key = (s.commit, None if s.commit else s.blob_sha, s.branch, s.commit_date, s.indexed_at, date,
               "" if commit is not None else None, s.origin)
        version = versions.get(key)
        if version is None:
            version = versions[key] = version_line(s, date, commit is not None, facts.head)
        cite = header(s, d, loc.rel or s.path, date, commit is not None, version)
        if loc.rel and s.path.startswith("/"):
            s = replace(s, path=loc.rel)    # an absolute path inside: relative from here on (packs, records)
        position, item_id = where[number] if where is not None else (None, None)
        results.append(Validated(item, s, d.verdict, d.reason, d.detail, d.current, cite, position, item_id))
    return results


def validate_items(repo: Path | str, items: Sequence[Any], input_format: str = "auto", strict: bool = False,
                   known: Known | None = None) -> list[Validated]:
    """A verdict for each item, in input order, each item read by its shape (shapes.py: a
    codevouch snippet, a LangChain Document, a LlamaIndex node, told apart per item unless
    `input_format` names one). An item that cannot be read is `excluded`, `malformed-input`, its
    `detail` the error; the other items are still judged. Every result carries its `position`
    and the id its item carried. InputError only for an unknown input_format."""
    if input_format not in shapes.INPUT_FORMATS:
        raise InputError(f"unknown input format {str(input_format)[:40]!r}; use one of "
                         f"{', '.join(shapes.INPUT_FORMATS)}.")
    started = start(repo, known)         # git starts while the items are read, as in validate
    given: list[Mapping[str, Any]] = []
    parsed: list[Snippet] = []
    where: list[tuple[int, str | None]] = []
    bad: dict[int, Validated] = {}
    for n, item in enumerate(items):
        if isinstance(item, tuple):         # parsed already (a search hit)
            given.append(item[0])
            parsed.append(item[1])
            where.append((n, shapes.item_id(item[0])))
            continue
        label = f"input item {n + 1}"
        try:
            snippet = shapes.read(item, label, input_format)
            read = check_snippet(snippet, label)
            no_lone_surrogates(snippet, label)
        except InputError as exc:
            bad[n] = _malformed(item, n, str(exc))
            continue
        given.append(item)
        parsed.append(read)
        where.append((n, shapes.item_id(item)))
    judged = iter(_judged(repo, given, parsed, strict, started, where))
    return [bad[n] if n in bad else next(judged) for n in range(len(items))]


def not_on_this_machine(checked: Checked, objects: bool, kind: str | None = None) -> Validated:
    """The verdict of a search hit whose repository has no working tree on this machine (across.py):
    never usable, nor stale-but-ok (both say what the working tree holds, and there is none):
    historical-only, `not-on-this-machine` when its text was read at the indexed commit (`objects`:
    a clone here holds it), else `not-on-this-machine-nor-commit`; excluded when the index's own
    classification of its file (`kind`) is an excluded kind."""
    item, s = checked
    if kind in KIND_REASON:
        d = Decision(KIND_REASON[kind], f"classified {kind} when it was indexed (its repository is not on this machine)")
    elif objects:
        d = Decision(NOT_HERE[0], "its repository is not on this machine: checked against the indexed "
                                            "commit only (its text as indexed there), never against a working tree")
    else:
        d = Decision(NOT_HERE[1], "its repository is not on this machine, nor are its indexed "
                                                       "commit's objects: its text could not be read or checked")
    return Validated(item, s, d.verdict, d.reason, d.detail, None, header(s, d, s.path, s.commit_date, True))


def _malformed(item: Any, position: int, error: str) -> Validated:
    """The verdict of an item that could not be read: excluded, nothing read, the error said."""
    given = item if isinstance(item, Mapping) else {"input": item}
    path = given.get("path")
    s = Snippet(path=path if isinstance(path, str) and path.strip() else f"input item {position + 1}")
    d = Decision("malformed-input", error)
    return Validated(given, s, d.verdict, d.reason, d.detail, None, header(s, d, s.path, None, False),
                     position, shapes.item_id(given))
