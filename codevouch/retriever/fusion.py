"""Reciprocal rank fusion of a search's lists, and what comes of it (pure)."""
from __future__ import annotations

from collections.abc import Sequence

from codevouch.store import ChunkRecord


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
