"""The fast path of lexical search: one tantivy index per live collection, derived from the ledger.

SQLite FTS5 scores every chunk that shares a word with the query (bm25() per matching row):
87 ms at 100k chunks, 379 ms on a busy machine, against ~1-2 ms for tantivy's top-k search
over the same terms (measured with scripts/bench_search.py and docs/BENCHMARKS.md). So:

- The ledger's FTS5 table stays the truth, written in the build's one transaction.
- This index is a copy of it, stamped with the branch state (commit and build time) that it
  reflects. After each build it takes that build's changes (or is rebuilt from the ledger
  when its stamp is not the one the build started from: a killed build, an older codevouch).
- A search uses it only when its stamp equals the ledger's current state; otherwise (missing,
  stale, locked, unreadable) it answers None and the caller falls back to FTS5.

Documents are the lexical terms (codevouch.lexical.document) under tantivy's English stemmer,
as FTS5 used Porter's; chunk ids are stored raw, so a chunk can be deleted by id.
"""
from __future__ import annotations

import shutil
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

STAMP = "codevouch-stamp"
WRITER_HEAP = 50_000_000   # tantivy's minimum per thread is 15 MB; 50 MB keeps large builds in few segments
_open: dict[Path, Any] = {}  # path -> tantivy.Index, reused by warm searches in one process


def index_path(index_dir: Path, coll: str) -> Path:
    return index_dir / "lexical" / coll


def stamp_of(commit: str, built_at: str) -> str:
    return f"{commit} {built_at}"


def read_stamp(path: Path) -> str | None:
    try:
        return (path / STAMP).read_text()
    except OSError:
        return None


def _schema() -> Any:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field("terms", stored=False, tokenizer_name="en_stem")
    return builder.build()


def sync(index_dir: Path, coll: str, previous: str | None, current: str, removed: Iterable[str],
         added: Sequence[tuple[str, str]], all_docs: Any) -> None:
    """Bring the collection's index to the state stamped `current`.

    When it holds `previous` (the state the build started from), apply the build's changes:
    delete `removed` ids and (re)add `added` (id, terms). Otherwise rebuild it from
    `all_docs()`, every (id, terms) of the collection in the ledger.
    """
    import tantivy

    path = index_path(index_dir, coll)
    _open.pop(path, None)
    incremental = previous is not None and read_stamp(path) == previous
    if not incremental:
        shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    (path / STAMP).unlink(missing_ok=True)  # unstamped while it changes: searches fall back to FTS5
    index = tantivy.Index(_schema(), path=str(path))
    writer = index.writer(heap_size=WRITER_HEAP, num_threads=1)
    docs: Iterable[tuple[str, str]] = added if incremental else all_docs()
    if incremental:
        for cid in {*removed, *(cid for cid, _ in added)}:
            writer.delete_documents_by_term("id", cid)
    for cid, terms in docs:
        writer.add_document(tantivy.Document(id=cid, terms=terms))
    writer.commit()
    writer.wait_merging_threads()
    (path / STAMP).write_text(current)


def search(index_dir: Path, coll: str, current: str, terms: Sequence[str], n: int) -> list[tuple[str, float]] | None:
    """(chunk id, score) best first, or None when the index cannot answer for state `current`."""
    path = index_path(index_dir, coll)
    if not terms or read_stamp(path) != current:
        return None
    try:
        index = _open.get(path)
        if index is None:
            import tantivy

            index = _open[path] = tantivy.Index.open(str(path))
        index.reload()
        searcher = index.searcher()
        # Terms are lower-case words and digits (codevouch.lexical.terms): no query syntax in them.
        query = index.parse_query(" ".join(terms), ["terms"])
        hits = searcher.search(query, n).hits
        return [(searcher.doc(addr)["id"][0], float(score)) for score, addr in hits]
    except (OSError, ValueError, RuntimeError):
        return None
