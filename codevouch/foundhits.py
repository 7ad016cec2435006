"""The answer of a search across repositories (across.Indexes.search): where each hit lives
(`Repository`), the hits (`Found`, `FoundHits`), the repositories that gave none (`Skipped`); and
how a reader sees them: each citation opened by its repository (`labelled`), packed within one
budget (`pack_across`, `Indexes.context`'s)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codevouch.call import Call
from codevouch.printable import one_line
from codevouch.results import Hit, Hits

if TYPE_CHECKING:
    from codevouch.context.enclosing import Enclosing
    from codevouch.request import ContextRequest
    from codevouch.results import ContextPack
    from codevouch.validator.model import Validated


# How the hits of several repositories were put in one ranking (docs/SEARCH.md).
BY_SIMILARITY = "similarity"     # the one model's cosine similarity: comparable across repositories
BY_RANK = "rank"                 # no common measure (lexical mode, or different models): by rank


@dataclass(frozen=True)
class Repository:
    """Where a hit lives: its repository's path on this machine and its remote (a label for people,
    credentials removed; None without one)."""
    path: Path
    remote: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "remote": self.remote}


@dataclass(frozen=True)
class Found:
    """One hit of a search across repositories: the repository it lives in, and the hit as that
    repository's `Index.search` made and checked it (its working tree, its overlay)."""
    repository: Repository
    hit: Hit

    def to_json(self, fields: Sequence[str] | None = None, max_chars: int | None = None) -> dict[str, Any]:
        """The hit's one JSON form (`Hit.to_json`) and `repository`: {path, remote}."""
        out = self.hit.to_json(fields, max_chars)
        if not fields or "repository" in fields:
            out["repository"] = self.repository.to_json()
        return out


@dataclass(frozen=True)
class Skipped:
    """A repository the query could not search, and why (one line for people, and the error's kind)."""
    path: str
    reason: str
    error: str
    not_indexed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "reason": self.reason, "error": self.error}


class FoundHits(list[Found]):
    """`Indexes.search`'s answer: the fused hits, best first; `skipped`, the repositories that gave
    none because they could not be searched; `fusion`, how the ranking was made (BY_SIMILARITY,
    BY_RANK); `answers`, each searched repository's own `Hits` (its overlay, its notes; of its hits,
    only those in the fused answer were checked)."""

    def __init__(self, hits: Sequence[Found], skipped: Sequence[Skipped] = (), fusion: str = BY_SIMILARITY,
                 answers: Sequence[tuple[Repository, Hits]] = ()) -> None:
        super().__init__(hits)
        self.skipped = tuple(skipped)
        self.fusion = fusion
        self.answers = tuple(answers)

    def overlays(self) -> list[dict[str, Any]]:
        """Each repository's overlay summary where its index is behind its working tree."""
        return [{"repository": r.to_json(), "overlay": h.overlay.summary()} for r, h in self.answers
                if h.overlay is not None and h.overlay.note()]

    def to_json(self, fields: Sequence[str] | None = None, max_chars: int | None = None) -> dict[str, Any]:
        return {"hits": [f.to_json(fields, max_chars) for f in self], "fusion": self.fusion,
                "repositories": [r.to_json() for r, _ in self.answers],
                "skipped": [s.to_json() for s in self.skipped], "overlays": self.overlays()}


def labelled(found: Sequence[Found], lead: bool = False) -> list[Validated]:
    """Each checked hit's validation, its citation opened by a `repository:` line; `lead`: its paths
    also led by the repository's name (`library/lib/fees.py`; a name two repositories share gets
    its position), as the pack's report and code fences show them."""
    names = _short_names([f.repository for f in found])
    out = []
    for f in found:
        v = f.hit.check
        if v is None:
            continue
        where = f.repository.path if f.repository.remote is None else f"{f.repository.path} ({f.repository.remote})"
        v = replace(v, citation=one_line(f"repository: {where}") + "\n" + v.citation)
        if lead:
            name = names[f.repository]
            v = replace(v, parsed=replace(v.parsed, path=f"{name}/{v.parsed.path}"),
                        current=replace(v.current, path=f"{name}/{v.current.path}") if v.current is not None else None)
        out.append(v)
    return out


def _short_names(repos: Sequence[Repository]) -> dict[Repository, str]:
    """Each repository's directory name, with its place among them where two share one."""
    unique = list(dict.fromkeys(repos))
    counts = Counter(r.path.name for r in unique)
    return {r: r.path.name if counts[r.path.name] == 1 else f"{r.path.name}~{n}" for n, r in enumerate(unique, 1)}


def pack_across(found: FoundHits, request: ContextRequest, call: Call) -> ContextPack:
    """The fused hits packed within one budget (see `Indexes.context`)."""
    from codevouch.context import enclosing  # heavy: tree-sitter
    from codevouch.context.pack import pack
    from codevouch.context.windows import budget_counter, resolve_budget
    from codevouch.results import ContextPack

    checked = [(f, f.hit.check) for f in found if f.hit.check is not None]
    # The definition each slice lies in, read in its own repository's working tree (1-based ranks).
    around: dict[int, Enclosing] = {}
    for repo in dict.fromkeys(f.repository for f, _ in checked if f.repository.path.exists()):
        ranks = [n for n, (f, _) in enumerate(checked, 1) if f.repository == repo]
        got = enclosing.enclosing(repo.path, [checked[n - 1][1] for n in ranks])
        around.update({ranks[r - 1]: e for r, e in got.items()})
    results = labelled([f for f, _ in checked], lead=True)
    chosen = resolve_budget(request.budget, request.model, None, reserve=request.reserve, env=call.env)
    live = "; ".join(f"{r.path.name}: {h.overlay.note()}" for r, h in found.answers
                     if h.overlay is not None and h.overlay.note())
    weak = Hits(f.hit for f in found)
    packed = pack(results, budget_counter(chosen), chosen.tokens, include_history=request.include_history,
                  enclosing=around, index=f"{len(found.answers)} repositories", budget_note=chosen.describe(),
                  live_note=live, match_note=weak.note() or "")
    return ContextPack(packed.markdown, tuple(results), packed, chosen, no_good_match=weak.no_good_match)
