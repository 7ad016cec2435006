"""Related code for the definitions a part changes: current callers, what it calls, and its
previous version. Callers and callees come from the index (lexical search by name, then a
lexical check of the hit's text) and are validated against the working tree like every
snippet; only current code is kept. The previous version is the old side's text, cited and
checked too (it is history, and its citation says so).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from codevouch.errors import CodevouchError

if TYPE_CHECKING:
    from codevouch.api import Hit, Index
    from codevouch.drift import DefinitionDrift
    from codevouch.validator.model import Validated

MAX_CALLERS = 3
MAX_CALLEES = 3
SEARCH_DEPTH = 20
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


def short_name(qualified: str) -> str:
    return qualified.rsplit(".", 1)[-1]


def calls_in(code: str, own: str) -> list[str]:
    """Names this code calls, in order of first use (lexical: `name(`)."""
    names = (m.group(1) for m in _CALL.finditer(code))
    return list(dict.fromkeys(n for n in names if n not in _NOT_CALLS and n != own))


def _calls(code: str, name: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\s*\(", code) is not None


def _defines(symbol: str, name: str) -> bool:
    return any(short_name(s.strip()) == name for s in symbol.split(", "))


@dataclass(frozen=True)
class Wanted:
    """A changed definition and what its related code is looked up from."""
    d: DefinitionDrift
    new_code: str | None        # its current text (None when removed)
    old_code: str | None        # its previous text (None when added)
    old_commit: str | None      # the commit the previous text is from


def _search(index: Index, name: str) -> list[Hit]:
    return index.search(name, k=SEARCH_DEPTH, mode="lexical", validate=False)


def lookup(index: Index, wanted: Sequence[Wanted]) -> tuple[
        dict[str, list[Related]], str | None]:
    """Related snippets per changed definition name, best first, and why the index could not
    be used (None when it could)."""
    from codevouch.api import Hit

    found: dict[str, list[tuple[str, Hit]]] = {}
    unavailable = None
    try:
        for w in wanted:
            name = short_name(w.d.name)
            hits = found.setdefault(w.d.name, [])
            callers = [h for h in _search(index, name)
                       if _calls(h.text, name) and not (_defines(h.symbol, name) and h.path in _paths(w.d))]
            hits += [("caller", h) for h in callers[:MAX_CALLERS * 2]]
            for callee in calls_in(w.new_code or "", name)[:MAX_CALLEES * 2]:
                defs = [h for h in _search(index, callee) if _defines(h.symbol, callee)]
                hits += [("callee", h) for h in defs[:1]]
    except CodevouchError as exc:     # not indexed, or an index that cannot be read
        found, unavailable = {}, str(exc)
    results: dict[str, list[Related]] = {w.d.name: [] for w in wanted}
    if found:
        flat = [(name, kind, h) for name, items in found.items() for kind, h in items]
        checks = index.validate([h for _, _, h in flat])
        counts: dict[tuple[str, str], int] = {}
        seen: set[tuple[str, str, int]] = set()
        for (name, kind, h), check in zip(flat, checks):
            code = Hit(h.record, h.score, h.text, check).code
            limit = MAX_CALLERS if kind == "caller" else MAX_CALLEES
            if code is None or check.verdict == "excluded":
                continue
            if kind == "caller" and not _calls(code, short_name(name)):
                continue        # the re-read current code no longer calls it
            where = check.current or h.record
            key = (name, where.path, where.start_line)
            if key in seen or counts.get((name, kind), 0) >= limit:
                continue
            seen.add(key)
            counts[(name, kind)] = counts.get((name, kind), 0) + 1
            results[name].append(Related(kind, name, _citation(check), code, _language(where.path),
                                         where.path, where.start_line, where.end_line))
    _add_previous(index, wanted, results)
    return results, unavailable


def _citation(check: Validated) -> str:
    """The check's citation; for a historical hit whose symbol still exists, the header of
    its re-read current code (as the context pack cites it), since that is what is shown."""
    from codevouch.validator.citation import clean, current_location

    if check.verdict != "historical-only" or check.current is None:
        return check.citation
    return (f"source: {current_location(check.current)}\nversion: working tree\n"
            f"check: current code, re-read from the working tree "
            f"(replaces a historical snippet of {clean(check.parsed.path)})")


def _language(path: str) -> str:
    from codevouch.syntax.languages import detect_language

    return detect_language(path) or ""


def _paths(d: DefinitionDrift) -> set[str]:
    return {p.path for p in (d.old, d.new) if p is not None}


def _add_previous(index: Index, wanted: Iterable[Wanted], results: dict[str, list[Related]]) -> None:
    """The previous version of each changed definition, validated (its citation says history)."""
    olds = [(w, w.d.old) for w in wanted if w.old_code is not None and w.d.old is not None
            and w.d.state in ("content_changed", "signature_changed", "moved")]
    if not olds:
        return
    checks = index.validate([{"path": old.path, "commit": w.old_commit, "symbol": w.d.name,
                              "start_line": old.start, "end_line": old.end, "text": w.old_code}
                             for w, old in olds])
    for (w, old), check in zip(olds, checks):
        results[w.d.name].append(Related("previous version", w.d.name, check.citation, w.old_code or "",
                                         _language(old.path), old.path, old.start, old.end))
