"""Stand-in vectors: a changed definition ranks with its indexed version's vector until its own
new text is embedded.

After a large change a search cannot embed every changed chunk (the overlay's time budget,
retriever/overlay.py), and a chunk without a vector is found by words only: after a 100-commit
change the changed functions ranked lower than a rebuild would put them. Most edits keep what
a function is about, so its vector at the indexed commit is a good guess of the new one. The
hit still carries, cites and validates the chunk's current text; only its dense score (and the
similarity shown) is borrowed, and its match signals say STAND_IN.

Which indexed chunk stands in: the one with the same qualified symbol in the same file, or in
the file it was renamed from. A file may hold several chunks of one symbol (a long function cut
into windows): the n-th new one borrows the n-th old one (the last, when there are fewer).
Top-level code (MODULE_SYMBOL) is no definition and borrows nothing. Pure: no I/O.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from codevouch.store import ChunkRecord
from codevouch.syntax.lines import MODULE_SYMBOL

STAND_IN = "stand-in"   # the match signal of a hit ranked with a stand-in vector


def old_paths(records: Iterable[ChunkRecord], renamed_from: Mapping[str, str]) -> set[str]:
    """The indexed paths whose chunks may stand in for `records`' (their paths, or renamed from)."""
    return {renamed_from.get(r.path, r.path) for r in records if _defines(r.symbol)}


def stand_ins(records: Sequence[ChunkRecord], renamed_from: Mapping[str, str],
              indexed: Mapping[str, Sequence[tuple[str, str]]]) -> dict[str, str]:
    """chunk id -> the text hash of its indexed version, for each of `records` that has one
    (and whose text is not that version's: an unchanged chunk needs none). `indexed`: path ->
    its (symbol, text hash) at the indexed commit, in order (store.overlaycache.indexed_versions)."""
    seen: dict[tuple[str, str], int] = {}
    out: dict[str, str] = {}
    for rec in records:
        if not _defines(rec.symbol):
            continue
        old = renamed_from.get(rec.path, rec.path)
        nth = seen[(rec.path, rec.symbol)] = seen.get((rec.path, rec.symbol), -1) + 1
        same = [text_hash for symbol, text_hash in indexed.get(old, ()) if symbol == rec.symbol]
        if same:
            text_hash = same[min(nth, len(same) - 1)]
            if text_hash != rec.text_hash:
                out[rec.id] = text_hash
    return out


def _defines(symbol: str | None) -> bool:
    return bool(symbol) and symbol != MODULE_SYMBOL
