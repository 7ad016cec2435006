"""One hit per definition: windows of one function found together come back as one hit.

A definition longer than the model's window is indexed as several windows that carry its
symbol. When more than one of them ranks, they would spend several of the k slots on one
function and push other candidates out; the caller gets one hit instead, at the best
window's rank and score, whose lines span every window found (the windows of one
definition lie inside it, so the span does too). Pure: records in, records out.
"""
from __future__ import annotations

from dataclasses import replace

from codevouch.store import ChunkRecord
from codevouch.syntax.lines import MODULE_SYMBOL


def collapse(items: list[tuple[ChunkRecord, float]]) -> list[tuple[ChunkRecord, float]]:
    """Best first in, best first out; hits of one symbol in one blob merged into the first."""
    first: dict[tuple[str, str, str, str], int] = {}
    out: list[tuple[ChunkRecord, float]] = []
    for rec, score in items:
        if rec.symbol == MODULE_SYMBOL:
            out.append((rec, score))
            continue
        key = (rec.path, rec.blob_sha, rec.status, rec.symbol)
        at = first.get(key)
        if at is None:
            first[key] = len(out)
            out.append((rec, score))
            continue
        kept, best = out[at]
        out[at] = (replace(kept, start_line=min(kept.start_line, rec.start_line),
                           end_line=max(kept.end_line, rec.end_line)), best)
    return out
