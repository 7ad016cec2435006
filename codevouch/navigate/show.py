"""`show NAME` (also `PATH#NAME`, `PATH:START-END`): a definition's code as the working tree has it now.

The index proposes: a name search (lexical, the working-tree overlay on, every hit validated)
gives the files that may define the name now (the name tier's first), found live when written since the build, and the
validator's verdict on each (moved, renamed, changed). The working tree decides: each such file
is read and parsed now, and each definition of the name in it becomes one hit, its lines and
code the current ones (`code`, the one hit form). A name the index held that the working tree no
longer defines is `gone`, with where the index last saw it.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from codevouch.errors import InputError
from codevouch.navigate import read_source
from codevouch.results import Hit, Hits, cut_entry, cut_lines, hits_text
from codevouch.syntax import registry
from codevouch.syntax.lines import cut_text, split_lines
from codevouch.syntax.outline import Definition, outline
from codevouch.validator.citation import location
from codevouch.validator.model import Current
from codevouch.worktree.files import read_text
from codevouch.worktree.paths import locate

MOST_HITS = 20
MOST_FILES = 20       # files parsed for one show beyond the name tier's
_RANGE = re.compile(r"^(?P<path>.+):(?P<start>\d+)-(?P<end>\d+)$")
_NAME = re.compile(r"^[\w$.:<>~-]{1,300}$")


@dataclass(frozen=True)
class Target:
    """What `show` was asked for: a name, and the one file to look in when given."""
    name: str
    path: str | None = None


@dataclass(frozen=True)
class Was:
    """Where the index last saw a definition that is gone from the working tree: its file, lines
    and commit there, and its text then (reference only: never current code)."""
    symbol: str
    path: str
    start_line: int
    end_line: int
    commit: str
    branch: str
    reference_text: str | None

    def to_json(self, max_chars: int | None = None) -> dict[str, Any]:
        """Its JSON form; a `reference_text` over `max_chars` is cut at a line's end with a `cut`
        entry, as a hit's code is (results.cut_entry)."""
        text = self.reference_text
        out: dict[str, Any] = {"symbol": self.symbol, "path": self.path, "start_line": self.start_line,
                               "end_line": self.end_line, "commit": self.commit, "branch": self.branch,
                               "reference_text": text}
        kept = cut_text(text, max_chars) if text is not None and max_chars else None
        if kept is not None and text is not None:
            out["reference_text"] = kept[0]
            out["cut"] = [cut_entry("reference_text", self.path, self.start_line, self.end_line, kept[1], len(text))]
        return out


@dataclass(frozen=True)
class Shown:
    """`Index.show`'s answer: the definitions (the one hit form, best first), and, when the name
    is defined nowhere in the working tree now, where the index last saw it (`was`)."""
    target: Target
    hits: tuple[Hit, ...]
    searched: Hits
    was: tuple[Was, ...] = ()

    @property
    def gone(self) -> bool:
        return not self.hits and bool(self.was)

    def note(self) -> str | None:
        if self.hits:
            return None
        if self.gone:
            where = "; ".join(f"{w.path}#L{w.start_line}-L{w.end_line} ({w.symbol}) at {w.branch}@{w.commit[:7]}"
                              for w in self.was[:3])
            return (f"gone: {self.target.name} was defined at the indexed commit ({where}) and is defined nowhere "
                    "in the working tree now; its last text is reference only")
        where = f" in {self.target.path}" if self.target.path else ""
        return f"not found: {self.target.name} is not defined{where} in the working tree, nor was it when indexed"

    def to_json(self, max_chars: int | None = None) -> dict[str, Any]:
        return {"name": self.target.name, "path": self.target.path, "hits": [h.to_json(None, max_chars) for h in self.hits],
                "gone": [w.to_json(max_chars) for w in self.was] if self.gone else None, "note": self.note(),
                "overlay": self.searched.overlay.summary() if self.searched.overlay is not None else None}


def shown_text(answer: dict[str, Any]) -> str:
    """A show answer (`Shown.to_json()`, the MCP show tool's) as a model reads it: the hits as a
    search's are written (results.hits_text: citation and fenced code, each once), then each gone
    definition's place and its old text under a reference-only label."""
    from codevouch.validator.render import code_block

    out = hits_text({**answer, "gone": None})
    for was in answer.get("gone") or ():
        out += (f"\ngone: {was.get('path')}#L{was.get('start_line')}-L{was.get('end_line')} ({was.get('symbol')}) at "
                f"{was.get('branch')}@{str(was.get('commit'))[:7]}: reference only, do not implement against it\n")
        if isinstance(was.get("reference_text"), str):
            out += code_block(str(was.get("path") or ""), was["reference_text"]) + "\n"
        out += "".join(line + "\n" for line in cut_lines(was))
    return out


def target_of(root: Path, asked: str, limit: int, given: Callable[[str], str] = lambda p: p) -> Target:
    """NAME, PATH#NAME or PATH:START-END read into a Target; a range becomes the innermost
    definition that holds it (InputError when none does, or the path is refused). `given`: a
    path as the caller meant it (the CLI's: from its directory)."""
    asked = asked.strip()
    ranged = _RANGE.match(asked)
    if ranged:
        start, end = int(ranged["start"]), int(ranged["end"])
        source = read_source(root, given(ranged["path"]), limit)
        found = [d for d in outline(source.text, source.path) or () if d.start <= start and end <= d.end]
        if start < 1 or end < start or not found:
            raise InputError(f"no definition holds lines {start}-{end} of {source.path}; `codevouch outline "
                             f"{source.path}` lists what it defines.")
        return Target(min(found, key=lambda d: d.end - d.start).name, source.path)
    path, hash_, name = asked.rpartition("#")
    if hash_:
        source = read_source(root, given(path), limit)
        return Target(_checked(name), source.path)
    return Target(_checked(asked))


def _checked(name: str) -> str:
    name = name.replace("::", ".")
    if not _NAME.match(name):
        raise InputError(f"{name[:80]!r} is not a name: give a definition's name (`cancel_order`, "
                         "`OrderService.cancel_order`), PATH#NAME or PATH:START-END.")
    return name


def matches(qualified: str, name: str, path: str) -> bool:
    """Whether the definition `qualified` in `path` is the one `name` spells: the same qualified
    name or a dotted tail of it (`cancel_order` for `OrderService.cancel_order`); or a module
    qualifier the path spells (`router.register_method` for register_method in router.py)."""
    if qualified == name or qualified.endswith("." + name):
        return True
    qualifier, _, last = name.rpartition(".")
    if not qualifier or not (qualified == last or qualified.endswith("." + last)):
        return False
    parts = set(re.split(r"[/.]", path.rsplit(".", 1)[0]))
    return all(p in parts for p in qualifier.split("."))


def show(root: Path, target: Target, search: Callable[[Target], Hits], limit: int) -> Shown:
    """The definitions of `target` in the working tree now, from the files `search` (the index's
    name search with the overlay, validated) says define it."""
    searched = search(target)
    texts: dict[str, list[str] | None] = {}
    out: list[Hit] = []
    seen: set[tuple[str, int]] = set()
    parsed: dict[str, list[Definition]] = {}
    # The name tier's hits; when none of their files defines the name now, the other hits' files
    # (a small Python class is one chunk whose name keys hold `get`, not `LookupDict.get`): each
    # file parsed now decides.
    for tier in (True, False):
        for hit in (h for h in searched if ("definition-name" in h.matched) == tier):
            if hit.code is None or hit.check is None:
                continue
            path = hit.current.path if hit.current is not None else hit.path
            if path not in texts and len(texts) >= MOST_FILES:
                continue
            lines = _lines(root, path, limit, texts)
            if path not in parsed:     # each file parsed once, however many hits it has
                parsed[path] = outline("\n".join(lines), path) or [] if lines is not None else []
            for d in (d for d in parsed[path] if matches(d.name, target.name, path)):
                if (path, d.start) not in seen:
                    seen.add((path, d.start))
                    out.append(_hit(hit, path, d, lines or ()))
        if out:
            break
    # The whole name spelled first, then a dotted tail of it (`get` before `Session.get`); an
    # implementation before its declaration.
    stubs = registry.declaration_suffixes()
    out.sort(key=lambda h: (h.symbol != target.name, not h.symbol.endswith("." + target.name), h.path.endswith(stubs)))
    return Shown(target, tuple(out[:MOST_HITS]), searched, () if out else _was(root, target.name, searched, limit))


def _was(root: Path, name: str, searched: Hits, limit: int) -> tuple[Was, ...]:
    """The definitions of `name` in the indexed files of the search's `gone` records, read from the
    indexed blobs (their exact lines and text then); a record whose blob cannot be read is given
    by its chunk's lines."""
    from codevouch.worktree import gitio

    records = [r for r in searched.gone if r.blob_sha]
    blobs = gitio.read_blobs(root, {r.blob_sha for r in records}) if records else {}
    out: list[Was] = []
    for r in searched.gone:
        data = blobs.get(r.blob_sha)
        text = data.decode("utf-8", "replace") if data is not None and len(data) <= limit else None
        lines = split_lines(text) if text is not None else []
        found = [d for d in _defined(lines, r.path, name) if r.start_line <= d.start <= r.end_line] if lines else []
        if not found:
            out.append(Was(r.symbol, r.path, r.start_line, r.end_line, r.commit, r.branch, None))
        out += [Was(d.name, r.path, d.start, d.end, r.commit, r.branch, "\n".join(lines[d.start - 1:d.end]))
                for d in found]
    return tuple(dict.fromkeys(out))


def _lines(root: Path, path: str, limit: int, texts: dict[str, list[str] | None]) -> list[str] | None:
    if path not in texts:
        loc = locate(root, path)
        text = read_text(root, loc.real, limit) if loc.inside and loc.exists and loc.real else None
        texts[path] = split_lines(text) if isinstance(text, str) else None
    return texts[path]


def _defined(lines: Sequence[str], path: str, name: str) -> list[Definition]:
    return [d for d in outline("\n".join(lines), path) or () if matches(d.name, name, path)]


def _hit(hit: Hit, path: str, d: Definition, lines: Sequence[str]) -> Hit:
    """The search hit narrowed to one definition as it is now: its current lines and code."""
    assert hit.check is not None
    code = "\n".join(lines[d.start - 1:d.end])
    current = Current(path, d.start, d.end, code, d.name)
    first, _, rest = hit.check.citation.partition("\n")
    citation = f"source: {location(path, d.start, d.end, d.name)}\n{rest}" if first.startswith("source:") else \
        hit.check.citation
    record = replace(hit.record, path=path, start_line=d.start, end_line=d.end, symbol=d.name)
    narrowed = replace(hit, record=record, text=code, check=None, outline=None, name_match=True, good_match=True)
    return replace(narrowed, check=replace(hit.check, snippet=narrowed.snippet(), current=current, citation=citation))
