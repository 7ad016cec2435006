"""Fusion of a search's lists (by rank, or by score), and what comes of it (pure)."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from codevouch.retriever.settings import Settings
from codevouch.store import ChunkRecord


def fused(lists: Sequence[tuple[float, Sequence[str]]], scores: Sequence[Mapping[str, float] | None],
          settings: Settings, depth: int | None = None, floors: Sequence[float] = ()) -> dict[str, float]:
    """The lists fused as `settings.fusion` says: by score (fuse_scores), or by rank (fuse)."""
    if settings.fusion == "scores":
        return fuse_scores(lists, scores, depth, floors)
    return fuse(lists, settings.rrf_k, depth)


def fuse(lists: Sequence[tuple[float, Sequence[str]]], rrf_k: int, depth: int | None = None) -> dict[str, float]:
    """Weighted reciprocal rank fusion of (weight, ids best first) lists, scaled so a chunk ranked
    first by every list scores 1.0; `depth`: of each list's first `depth` only (a kind filter's
    order is the default's: retriever/search.py)."""
    scores: dict[str, float] = {}
    for weight, ranking in lists:
        for rank, key in enumerate(ranking[:depth]):
            scores[key] = scores.get(key, 0.0) + weight / (rrf_k + rank + 1)
    total = sum(w for w, r in lists if r) or 1.0
    return {key: s * (rrf_k + 1) / total for key, s in scores.items()}


def fuse_scores(lists: Sequence[tuple[float, Sequence[str]]], scores: Sequence[Mapping[str, float] | None],
                depth: int | None = None, floors: Sequence[float] = ()) -> dict[str, float]:
    """Weighted sum of each list's scores, each divided by the list's best (of its first
    `depth`; a negative score counts 0.0), scaled so a chunk first in every list scores 1.0: a
    convex combination, which keeps the size of the gaps that rank fusion throws away. The low
    end is 0.0 (no similarity, no shared word), not the list's last entry: in a small repository
    the second of two chunks keeps what it measured instead of scoring 0.0; a list whose best is
    0.0 or below measured nothing and adds 0.0 to each. A list with no scores (None) is scored by
    rank, 1.0 first to 0.0 last. `floors`: per list, the share of its best that scores 0.0 (0.0:
    none; a list's scores are then stretched from there to its best, and below it count 0.0)."""
    out: dict[str, float] = {}
    for at, ((weight, ranking), given) in enumerate(zip(lists, scores)):
        floor = floors[at] if at < len(floors) else 0.0
        cut = list(ranking[:depth])
        if given is None:
            norm = {key: 1.0 - rank / len(cut) for rank, key in enumerate(cut)}
        else:
            vals = [max(given.get(key, 0.0), 0.0) for key in cut]
            high = max(vals, default=0.0)
            norm = {key: max(v / high - floor, 0.0) / (1.0 - floor) if high > 0 else 0.0 for key, v in zip(cut, vals)}
        for key, value in norm.items():
            out[key] = out.get(key, 0.0) + weight * value
    total = sum(w for w, r in lists if r) or 1.0
    return {key: s / total for key, s in out.items()}


def settled(found: list[tuple[ChunkRecord, float]], tier: Callable[[ChunkRecord], Any],
            evidence: Callable[[ChunkRecord], tuple[float, ...]], band: float = 0.0) -> list[tuple[ChunkRecord, float]]:
    """`found` (best first by tier, then score) with each run of a tier's hits whose scores are
    within `band` of the run's first (0.0: equal) ordered by `evidence` instead, best first (the
    dense similarity, then the lexical score): a tie is broken by what the lists measured, not by
    the order the lists came in."""
    out: list[tuple[ChunkRecord, float]] = []
    i = 0
    while i < len(found):
        head, j = found[i], i + 1
        while j < len(found) and tier(found[j][0]) == tier(head[0]) and head[1] - found[j][1] <= band:
            j += 1
        out.extend(sorted(found[i:j], key=lambda item: evidence(item[0]), reverse=True))
        i = j
    return out


def ranks(ids: Sequence[str]) -> dict[str, int]:
    """Each id's first place in a ranking."""
    out: dict[str, int] = {}
    for rank, cid in enumerate(ids):
        out.setdefault(cid, rank)
    return out


def dedupe(items: list[tuple[ChunkRecord, float]]) -> list[tuple[ChunkRecord, float]]:
    """Best first in and out; a chunk of the same lines of the same blob only once (branches and
    history may hold it under several ids)."""
    seen: set[tuple[str, str, int, int]] = set()
    out = []
    for rec, score in items:
        key = (rec.path, rec.blob_sha, rec.start_line, rec.end_line)
        if key not in seen:
            seen.add(key)
            out.append((rec, score))
    return out
