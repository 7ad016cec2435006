"""Related code for the definitions a part changes: current callers, what it calls, and its
previous version. Callers and callees come from the index (lexical search by name, then a
lexical check of the hit's text) and are validated against the working tree like every
snippet; only current code is kept. A branch not indexed yet borrows its base branch's index
(the manifest says so): validation against the working tree makes that safe. The previous
version is the old side's text, cited and checked too (it is history, and its citation says so).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from codevouch.errors import CodevouchError
from codevouch.results import Hit
from codevouch.retriever.mode import SearchMode
from codevouch.vocabulary import Verdict

if TYPE_CHECKING:
    from codevouch.api import Index
    from codevouch.drift import DefinitionDrift
    from codevouch.validator.model import Validated

_PREVIOUS_STATES = ("content_changed", "signature_changed", "moved")
_MAX_CALLERS = 3
_MAX_CALLEES = 3
_SEARCH_DEPTH = 20
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
# Words followed by "(" that are syntax, not calls, in the indexed languages.
_NOT_CALLS = frozenset("""if elif for while switch catch return function def class new sizeof typeof
    await yield print super this self match loop fn func lambda assert with except not and or in is
    else try throw throws synchronized import from async static public private protected const let var
    int long float double char bool boolean void string str list dict set tuple len range""".split())


@dataclass(frozen=True)
class Related:
    kind: str          # caller | callee | previous version
    target: str        # the changed definition it relates to
    citation: str
    code: str
    language: str      # for the code fence
    path: str
    start_line: int
    end_line: int

    def markdown(self, fence: str) -> str:
        return f"{self.citation}\n{fence}{self.language}\n{self.code}\n{fence}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "for": self.target, "path": self.path, "start_line": self.start_line,
                "end_line": self.end_line, "citation": self.citation}


def _short_name(qualified: str) -> str:
    return qualified.rsplit(".", 1)[-1]


def _calls_in(code: str, own: str) -> list[str]:
    """Names this code calls, in order of first use (lexical: `name(`)."""
    names = (m.group(1) for m in _CALL.finditer(code))
    return list(dict.fromkeys(n for n in names if n not in _NOT_CALLS and n != own))


def _calls(code: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\s*\(", code) is not None


def _defines(symbol: str, name: str) -> bool:
    return any(_short_name(s.strip()) == name for s in symbol.split(", "))


@dataclass(frozen=True)
class Wanted:
    """A changed definition and what its related code is looked up from."""
    d: DefinitionDrift
    new_code: str | None        # its current text (None when removed)
    old_code: str | None        # its previous text (None when added)
    old_commit: str | None      # the commit the previous text is from


class Finder:
    """Related code per changed definition, looked up on demand (each name searched once).

    `unavailable` says why the index could not be searched (never indexed, unreadable); the
    previous versions, which need no index, are still given then.
    """

    def __init__(self, index: Index, branch: str | None = None, instead_of: str | None = None) -> None:
        self.index = index
        self.branch = branch
        self.instead_of = instead_of      # the checked-out branch, when it is not indexed and `branch` is
        self.unavailable: str | None = None
        self._searches: dict[str, list[Hit]] = {}

    def instead_note(self) -> str | None:
        """What the manifest says when the index of another branch stood in."""
        if self.instead_of is None:
            return None
        return (f"{self.instead_of} is not indexed: callers and callees come from the index of {self.branch}, "
                "validated against the working tree")

    def _search(self, name: str) -> list[Hit]:
        if self.unavailable is not None:
            return []
        if name not in self._searches:
            try:
                self._searches[name] = self.index.search(name, k=_SEARCH_DEPTH, branch=self.branch,
                                                         mode=SearchMode.LEXICAL, validate=False)
            except CodevouchError as exc:     # not indexed, or an index that cannot be read
                self.unavailable = str(exc)
                return []
        return self._searches[name]

    def related(self, w: Wanted) -> list[Related]:
        """Callers, callees and the previous version of one changed definition, checked
        against the working tree in one validation call."""
        name = _short_name(w.d.name)
        found = self._found(w, name)
        old = w.d.old if w.old_code is not None and w.d.state in _PREVIOUS_STATES else None
        snippets: list[Any] = [h for _, h in found]
        if old is not None:
            snippets.append({"path": old.path, "commit": w.old_commit, "symbol": w.d.name,
                             "start_line": old.start, "end_line": old.end, "text": w.old_code})
        if not snippets:
            return []
        checks = self.index.validate(snippets)
        out = _current(found, checks, name, w.d.name)
        if old is not None:
            out.append(Related("previous version", w.d.name, checks[-1].citation, w.old_code or "",
                               _language(old.path), old.path, old.start, old.end))
        return out

    def _found(self, w: Wanted, name: str) -> list[tuple[str, Hit]]:
        """The index's candidates, as (kind, hit): the chunks that call `name` (not its own
        definition), then the definition of each name its current code calls."""
        found: list[tuple[str, Hit]] = []
        callers = [h for h in self._search(name)
                   if _calls(h.text, name) and not (_defines(h.symbol, name) and h.path in _paths(w.d))]
        found += [("caller", h) for h in callers[:_MAX_CALLERS * 2]]
        for callee in _calls_in(w.new_code or "", name)[:_MAX_CALLEES]:
            found += [("callee", h) for h in self._search(callee) if _defines(h.symbol, callee)][:1]
        return found


def _current(found: list[tuple[str, Hit]], checks: list[Validated], name: str, target: str) -> list[Related]:
    """The candidates whose checks give current code (a caller's re-read code must still call
    `name`), each place once, at most _MAX_CALLERS callers and _MAX_CALLEES callees."""
    out: list[Related] = []
    counts: dict[str, int] = {}
    seen: set[tuple[str, int]] = set()
    for (kind, h), check in zip(found, checks):
        code = Hit(h.record, h.score, h.text, check).code
        if code is None or check.verdict == Verdict.EXCLUDED:
            continue
        if kind == "caller" and not _calls(code, name):
            continue        # the re-read current code no longer calls it
        where = check.current or h.record
        if (where.path, where.start_line) in seen or counts.get(kind, 0) >= (
                _MAX_CALLERS if kind == "caller" else _MAX_CALLEES):
            continue
        seen.add((where.path, where.start_line))
        counts[kind] = counts.get(kind, 0) + 1
        out.append(Related(kind, target, _citation(check), code, _language(where.path),
                           where.path, where.start_line, where.end_line))
    return out


def _citation(check: Validated) -> str:
    """The check's citation; for a historical hit whose symbol still exists, the header of
    its re-read current code (as the context pack cites it), since that is what is shown."""
    from codevouch.validator.citation import reread_header

    if check.verdict != Verdict.HISTORICAL_ONLY or check.current is None:
        return check.citation
    return reread_header(check.current, check.parsed.path)


def _language(path: str) -> str:
    from codevouch.syntax.languages import detect_language

    return detect_language(path) or ""


def _paths(d: DefinitionDrift) -> set[str]:
    return {p.path for p in (d.old, d.new) if p is not None}
