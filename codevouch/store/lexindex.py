"""The fast path of lexical search: one tantivy index per branch, derived from the ledger.

SQLite FTS5 scores every chunk that shares a word with the query (bm25() per matching row):
87 ms at 100k chunks, 379 ms on a busy machine, against ~1-2 ms for tantivy's top-k search
over the same terms (measured with python -m codevouch_bench.search and docs/BENCHMARKS.md). So:

- The ledger's FTS5 table stays the truth, written in the build's one transaction.
- This index is a copy of the part of it a branch ranks: the documents of the chunks live at the
  branch's indexed commit, and nothing else. History (files deleted from the branch, kept for
  validation and `--include-history`) and other branches of the space are never lexical hits,
  and a copy holding them counted their terms in BM25's N, df and average length: an index built
  at A then B ranked unlike a clean build at B. Rankings depend on the indexed commit alone.
- One generation per branch state: `lexical/<space>/<generation>`, named after the branch (its
  entry's key) and its lexical stamp (the ledger's `lexical-branch:<coll>`, see
  Ledger.branch_stamp; a branch no build of this layout stamped takes its space's stamp) and
  stamped with it.
- A build writes the new generation *inside* the ledger's transaction, before COMMIT (see
  Ledger.commit's `before_commit`): when the commit makes a state visible, its copy is already
  complete. A build killed before COMMIT leaves a generation no state names (pruned later); one
  killed after it leaves the copy readers need.
- A new generation starts from a copy of the previous one plus the documents that became live
  when the build only adds to the branch's live set; otherwise (a document left it, or the
  previous copy is missing) it is written whole from the ledger's rows in key order. A deleted
  tantivy document still counts in BM25's statistics until a merge, which the bindings cannot
  ask for, so a copy never holds one: the same live set always ranks the same, whatever builds
  led to it.
- A search uses a generation only when its stamp equals the ledger's current state; otherwise
  (missing, locked, unreadable) it answers None and the caller writes it again (`ensure`, from
  the ledger's rows; in memory where the directory cannot be written). FTS5 never ranks. An
  index made before the copy is stamped and given its copies by its upgrade (migration m006).

Documents are the lexical terms (codevouch.store.lexical.document) under tantivy's English stemmer,
as FTS5 used Porter's; each under its lexical key (naming.lex_key), stored raw. Three fields the
ledger's FTS5 table lacks come from the chunk's symbol: `name`, the exact keys of what it defines
(lexical.definition_keys: `client.send`, `send`, `~send`), one raw token each, `namewords`, that
symbol's words under the stemmer, and `ownwords`, the words of each name it defines without its
container's (`Client.send` -> send). A copy made with another SCHEMA lives at another path: an
older copy is never read: the first search or build writes the new one from the ledger.
"""
from __future__ import annotations

import bisect
import hashlib
import json
import math
import os
import shutil
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

from codevouch import caches
from codevouch.kept import Kept, Seen
from codevouch.store import ledgerlook
from codevouch.store.indexdir import IndexDir

STAMP = "codevouch-stamp"
# The copy's fields and what it holds; a new schema means a new generation name, so old copies
# are rebuilt, not read ("5": one copy per branch, its live documents only; "6": the `order`
# fast field that cuts score ties without reading stored documents; "7": `ownwords`, the words
# of each defined name without its container's).
SCHEMA = "7-own-name-words"
EXACT = "cv_exact"   # the `exact` field's analyzer: whitespace, lower case; registered at every open
WRITER_HEAP = 50_000_000   # tantivy's minimum per thread is 15 MB; 50 MB keeps large builds in few segments
_open: dict[Path, Any] = {}  # path -> tantivy.Index, reused by warm searches in one process
caches.register("codevouch.store.lexindex.open", _open.clear, _open.__len__)


@dataclass(frozen=True)
class Copy:
    """One branch's copy at one state: the space its chunks are in, the branch's entry (`coll`)
    and the branch's lexical stamp (Ledger.branch_stamp)."""
    space: str
    coll: str
    stamp: str


def space_dir(index_dir: Path, space: str) -> Path:
    return IndexDir(index_dir).lexical_space(space)


def index_path(index_dir: Path, copy: Copy) -> Path:
    """The generation holding `copy`."""
    name = hashlib.sha256(f"{SCHEMA}\0{copy.coll}\0{copy.stamp}".encode()).hexdigest()[:20]
    return space_dir(index_dir, copy.space) / name


def read_stamp(path: Path) -> str | None:
    try:
        return (path / STAMP).read_text()
    except (OSError, ValueError):   # unreadable, or not text (a corrupt file): as if missing
        return None


def _schema() -> Any:
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field("terms", stored=False, tokenizer_name="en_stem")
    builder.add_text_field("name", stored=False, tokenizer_name="raw")
    builder.add_text_field("namewords", stored=False, tokenizer_name="en_stem")
    builder.add_text_field("ownwords", stored=False, tokenizer_name="en_stem")
    builder.add_text_field("exact", stored=False, tokenizer_name=EXACT)
    builder.add_unsigned_field("order", stored=False, fast=True, indexed=False)
    return builder.build()


def order_of(key: str) -> int:
    """A number that sorts as `key` does, up to its first 8 bytes: the first 8 bytes of its UTF-8
    form, big-endian, zero-padded (str order is code point order, which UTF-8's byte order keeps).
    Keys that share those bytes get equal numbers and are told apart by reading them (`_top`)."""
    return int.from_bytes(key.encode("utf-8", "surrogateescape")[:8].ljust(8, b"\0"), "big")


def _registered(index: Any) -> Any:
    """`index` with the `exact` field's analyzer (tantivy keeps custom analyzers out of the files)."""
    import tantivy

    index.register_tokenizer(EXACT, tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
                             .filter(tantivy.Filter.remove_long(80)).filter(tantivy.Filter.lowercase()).build())
    return index


# (chunk id or lexical key, terms, symbol): one document of the copy
Doc = tuple[str, str, str]


def _document(doc: Doc) -> Any:
    import tantivy

    from codevouch.store import lexical

    cid, text, symbol = doc
    terms, _ = lexical.split(text)
    out = tantivy.Document(id=cid, terms=terms, exact=terms, namewords=lexical.name_words(symbol),
                           ownwords=lexical.own_name_words(symbol))
    out.add_unsigned("order", order_of(cid))   # a plain int in the constructor is taken for i64
    for key in lexical.definition_keys(text, symbol):
        out.add_text("name", key)
    return out


# The ledger's documents of a branch: all of them (None), or those of the keys given, in key order.
Docs = Callable[[Sequence[str] | None], Iterable[Doc]]


def stage(index_dir: Path, copy: Copy, previous: str | None, removed: Collection[str], added: Sequence[str],
          docs: Docs, rewrite: bool = False) -> None:
    """Write the generation of `copy`, complete and stamped, before its state is visible.

    When the generation of `previous` (the branch's stamp the build started from) is whole and
    nothing left the branch's live set (`removed`, the keys that did), copy it and add the `added`
    keys' documents. Otherwise write it from `docs(None)`, every document live in the branch as
    the build's transaction sees it. `rewrite`: even when a generation stamped `copy.stamp` is
    there (it cannot be opened).
    """
    import tantivy

    target = index_path(index_dir, copy)
    if read_stamp(target) == copy.stamp and not rewrite:
        return
    source = index_path(index_dir, replace(copy, stamp=previous)) if previous is not None else None
    # Only a build that adds documents may extend the previous copy: a deleted tantivy document
    # still counts in BM25's N, df and average length until a merge drops it (the bindings cannot
    # ask for one), so a copy that had deletions would rank unlike a clean build of the same state.
    # An index must not depend on its history: one with removals is written whole, in key order.
    incremental = (source is not None and read_stamp(source) == previous and not removed
                   and not _replaces(source, added))
    work = target.with_name(f".tmp-{target.name}-{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    if incremental:
        assert source is not None
        shutil.copytree(source, work)
        (work / STAMP).unlink()
    else:
        work.mkdir(parents=True)
    index = _registered(tantivy.Index(_schema(), path=str(work)))
    writer = index.writer(heap_size=WRITER_HEAP, num_threads=1)
    todo: Iterable[Doc] = (docs(added) if added else ()) if incremental else docs(None)   # in key order
    for doc in todo:
        writer.add_document(_document(doc))
    writer.commit()
    writer.wait_merging_threads()
    del writer, index
    (work / STAMP).write_text(copy.stamp)
    shutil.rmtree(target, ignore_errors=True)
    _open.pop(target, None)
    os.replace(work, target)


def _replaces(source: Path, added: Sequence[str]) -> bool:
    """Whether the copy at `source` already holds one of the `added` keys (a stale copy: adding it
    again would need a delete, see `stage`)."""
    if not added:
        return False
    try:
        _index, searcher = _searcher(source)
        return any(searcher.doc_freq("id", key) for key in added)
    except (OSError, ValueError, RuntimeError):
        return True


_memory: dict[Path, Any] = {}   # generation path -> its copy in this process's memory (unwritable directory)
caches.register("codevouch.store.lexindex.memory", _memory.clear, _memory.__len__)


def ensure(index_dir: Path, copy: Copy, all_docs: Callable[[], Iterable[Doc]]) -> bool:
    """Give `copy` its generation when it has none that opens (an index an older codevouch made,
    a copy of an older SCHEMA, a lost or damaged one, a team snapshot's space): written from
    `all_docs()` (the branch's live documents in the ledger, the truth) beside the others, or,
    where the index directory cannot be written, held in this process's memory. False when
    neither can be made. Readers rank with the copy only: FTS5 is the store of the terms, never a
    ranking."""
    target = index_path(index_dir, copy)
    if target in _memory or _opens(target, copy.stamp):
        return True     # an upgrade of an index that had its copy: nothing to write again
    try:
        stage(index_dir, copy, None, (), (), lambda _keys: all_docs(), rewrite=True)
        return True
    except OSError:
        pass
    try:
        import tantivy

        index = _registered(tantivy.Index(_schema()))
        writer = index.writer(heap_size=WRITER_HEAP, num_threads=1)
        for doc in all_docs():
            writer.add_document(_document(doc))
        writer.commit()
        writer.wait_merging_threads()
        if len(_memory) >= 4:
            _memory.clear()
        _memory[target] = index
        return True
    except (OSError, ValueError, RuntimeError):
        return False


def _opens(path: Path, current: str) -> bool:
    """The copy at `path` is state `current`'s and tantivy opens it."""
    if read_stamp(path) != current:
        return False
    try:
        _searcher(path)
        return True
    except (OSError, ValueError, RuntimeError):
        return False


def _answers(path: Path, current: str) -> bool:
    """The copy at `path` is state `current`'s (stamped so, or made in memory for it)."""
    return path in _memory or _stamp_of(path) == current


# What a warm reader read of each copy, by the stat data it was read under: the stamp (a query
# over 100 repositories read 100 stamp files, ~15 us each) and the tantivy commit it reloaded at
# (`_searcher`; a reload costs ~100 us even when nothing changed). A generation is replaced whole
# (`stage`: a new directory moved into place), so new files, new stat data; one written within
# ledgerlook.RACY_NS of the look is read again each time (codevouch/kept.py).
_STAMPS: Kept[Path, tuple[str | None]] = Kept("codevouch.store.lexindex.stamps", 4096)
_RELOADED: Kept[Path, bool] = Kept("codevouch.store.lexindex.reloaded", 4096)
_META = "meta.json"     # tantivy's: rewritten by each commit


def _look(file: Path) -> Seen | None:
    """The file's stat data as a look (ledgerlook.file_key, racy by ledgerlook.racy); None when missing."""
    key = ledgerlook.file_key(file)
    return None if key is None else Seen((key,), ledgerlook.racy(key, time.time_ns()))


def _stamp_of(path: Path) -> str | None:
    """read_stamp, kept while the stamp file's stat data are unchanged."""
    seen = _look(path / STAMP)
    held = _STAMPS.get(path, seen)
    if held is not None:
        return held[0]
    stamp = read_stamp(path)
    _STAMPS.put(path, seen, (stamp,))
    return stamp


def prune(index_dir: Path, space: str, keep: Collection[Copy]) -> None:
    """Remove every generation of the space but those of `keep` (each branch's current copy, and
    the previous one of the branch just built: a reader that read the ledger just before the
    last commit may still be opening it), and leftovers of killed builds, of branches gone from
    the space and of older layouts (a copy per space)."""
    root = space_dir(index_dir, space)
    wanted = {index_path(index_dir, c).name for c in keep if c.space == space}
    try:
        entries = list(root.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.name in wanted:
            continue
        _open.pop(entry, None)
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _searcher(path: Path) -> tuple[Any, Any]:
    """(index, searcher) of the copy at `path`, the index opened once per process and reloaded
    (a build may have replaced it since)."""
    index = _memory.get(path) or _open.get(path)
    if index is None:
        import tantivy

        _RELOADED.drop(path)
        index = _open[path] = _registered(tantivy.Index.open(str(path)))
    seen = _look(path / _META) if path not in _memory else None
    if _RELOADED.get(path, seen) is None:
        index.reload()
        _RELOADED.put(path, seen, True)
    return index, index.searcher()


TIE_MARGIN = 16   # hits asked for beyond n, to see whether the n-th one ties with those below it
# How much deeper each new ask goes while the n-th hit still ties. Every ask scores the query again
# (~5 ms at 1M chunks, nearly whatever the depth up to a few thousand): few deep asks beat many
# shallow ones where a large store repeats texts (a run of ~1,400 ties took 4 asks at x4, 2 at x32).
TIE_DEEPEN = 32

Hit = tuple[float, Any]   # (score, tantivy.DocAddress)


def _top(searcher: Any, query: Any, n: int) -> list[tuple[str, float]]:
    """The best `n` (key, score), equal scores by key. tantivy keeps, of the documents that tie
    at the n-th place, those it meets first, which depends on the order builds added them: it is
    asked deeper until the hits below the n-th score less, and the ties are cut by key.

    The cut reads each tied document's `order` fast field (a column, one batch call), not its
    stored key: a long run of equal scores (texts repeated across a large store) cost ~1,800
    stored-document reads a query. Keys are read for the hits returned, and for those whose
    `order` ties at the cut (keys that share their first 8 bytes)."""
    if n <= 0:
        return []
    ask = n + TIE_MARGIN
    while True:
        hits = searcher.search(query, ask, count=False).hits
        if len(hits) < ask or hits[-1][0] < hits[n - 1][0]:
            break
        ask *= TIE_DEEPEN
    floor = hits[min(n, len(hits)) - 1][0] if hits else 0.0
    found: list[Hit] = [(float(score), addr) for score, addr in hits if score >= floor]
    orders = searcher.fast_field_values("order", [addr for _score, addr in found])
    if any(order is None for order in orders):   # a copy without the column (cannot happen in a SCHEMA 6 copy)
        return _keyed(searcher, found)[:n]
    ranked = sorted(zip(found, orders), key=lambda pair: (-pair[0][0], pair[1]))
    if len(ranked) <= n:
        return _keyed(searcher, [hit for hit, _order in ranked])
    edge = (ranked[n - 1][0][0], ranked[n - 1][1])
    sure = [hit for hit, order in ranked[:n] if (hit[0], order) != edge]
    tied = [hit for hit, order in ranked if (hit[0], order) == edge]
    # each key read once: the sure hits', and the tied run's, cut after sorting by key
    return _ordered(_keyed(searcher, sure) + _keyed(searcher, tied)[:n - len(sure)])


def _keyed(searcher: Any, hits: list[Hit]) -> list[tuple[str, float]]:
    """(key, score) of `hits`, best first, equal scores by key."""
    return _ordered([(searcher.doc(addr)["id"][0], score) for score, addr in hits])


def _ordered(found: list[tuple[str, float]]) -> list[tuple[str, float]]:
    return sorted(found, key=lambda hit: (-hit[1], hit[0]))


def search(index_dir: Path, copy: Copy, terms: Sequence[str], n: int,
           name_boost: float = 0.0, exact_boost: float = 0.0,
           only: str | None = None) -> list[tuple[str, float]] | None:
    """(lexical key, score) best first, or None when the index cannot answer for `copy`.
    `name_boost` > 0: the terms also meet the words of what a chunk defines, at that weight;
    `exact_boost` > 0: and the chunk's terms unstemmed, whole identifiers kept (`raise_for_status`).
    `only`: the terms meet this one field alone (`namewords`: the words of what a chunk defines;
    `ownwords`: of each defined name without its container's)."""
    path = index_path(index_dir, copy)
    if not terms or not _answers(path, copy.stamp):
        return None
    try:
        index, searcher = _searcher(path)
        # Terms are lower-case words and digits (codevouch.store.lexical.terms): no query syntax in them.
        if only is not None:
            return _top(searcher, index.parse_query(" ".join(terms), [only]), n)
        boosts = {f: b for f, b in (("namewords", name_boost), ("exact", exact_boost)) if b > 0}
        return _top(searcher, index.parse_query(" ".join(terms), ["terms", *boosts], field_boosts=boosts), n)
    except (OSError, ValueError, RuntimeError):
        return None


def names_any(index_dir: Path, copy: Copy, keys: Sequence[str], words: Sequence[str]) -> bool | None:
    """Whether some document of `copy` defines one of `keys` (as `search_names` finds them) or
    holds every one of `words` in the words of what it defines (`search` with only="namewords"),
    asked in one search; None when the index cannot answer for `copy`."""
    path = index_path(index_dir, copy)
    if not _answers(path, copy.stamp):
        return None
    try:
        import tantivy

        index, searcher = _searcher(path)
        either = [(tantivy.Occur.Should, tantivy.Query.term_query(index.schema, "name", key))
                  for key in dict.fromkeys(keys)]
        if words:
            # Terms are lower-case words and digits (codevouch.store.lexical.terms): no query syntax in them.
            either.append((tantivy.Occur.Should, index.parse_query(" ".join(f"+{w}" for w in words), ["namewords"])))
        return bool(either) and bool(searcher.search(tantivy.Query.boolean_query(either), 1, count=False).hits)
    except (OSError, ValueError, RuntimeError):
        return None


def search_names(index_dir: Path, copy: Copy, keys: Sequence[str], n: int,
                 terms: Sequence[str] = ()) -> list[tuple[str, float]] | None:
    """(lexical key, score) of the chunks that define one of `keys` (lexical.query_name_keys), ranked
    by the query's `terms` (so several definitions of one name rank by the rest of the query), or
    None when the index cannot answer for `copy` (as `search`)."""
    path = index_path(index_dir, copy)
    if not keys or not _answers(path, copy.stamp):
        return None
    try:
        import tantivy

        index, searcher = _searcher(path)
        schema = index.schema
        named = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "name", key)) for key in dict.fromkeys(keys)])
        parts = [(tantivy.Occur.Must, tantivy.Query.const_score_query(named, 1.0))]
        if terms:
            parts.append((tantivy.Occur.Should, index.parse_query(" ".join(terms), ["terms"])))
        return _top(searcher, tantivy.Query.boolean_query(parts), n)
    except (OSError, ValueError, RuntimeError):
        return None


_ANALYZER: list[Callable[[str], Any]] = []   # [analyze, pre-tokenize]
caches.register("codevouch.store.lexindex.analyzer", _ANALYZER.clear, _ANALYZER.__len__)


def analyzer() -> Callable[[str], list[str]]:
    """Text to the tokens this index holds for it: tantivy's `en_stem` (the simple tokenizer,
    long tokens dropped, lower case, the English stemmer), for scoring text outside the index
    (the working-tree overlay, retriever/overlay.py) on the index's terms."""
    if not _ANALYZER:
        import tantivy

        built = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.remove_long(40))
                 .filter(tantivy.Filter.lowercase()).filter(tantivy.Filter.stemmer("english")).build())
        _ANALYZER.append(built.analyze)
    return _ANALYZER[0]


# -- BM25 as this index scores, for text outside it (the working-tree overlay) --------------------
# tantivy's Bm25Weight: idf = ln(1 + (N - df + 0.5) / (df + 0.5)); a clause scores
# idf * (K1 + 1) * tf / (tf + K1 * (1 - B + B * dl / avgdl)), where dl is the field's length as its
# one-byte field norm decodes it (FIELD_NORMS below), N and df count the copy's documents (the
# branch's live ones: a copy holds no deleted ones, see `stage`), and avgdl is the
# field's tokens over N. A query term of several tokens
# (`raise_for_status`, a quoted pair) is a phrase: its idf is the sum of its tokens', its tf the
# phrase's occurrences. A boolean query's clauses add up.
BM25_K1, BM25_B = 1.2, 0.75


def _field_norms() -> tuple[int, ...]:
    """tantivy's FIELD_NORMS_TABLE (Lucene's SmallFloat.byte4ToInt): the 256 lengths a field norm
    byte decodes to; a length is stored as the largest of them not above it."""
    out = []
    for i in range(256):
        j = i - 24
        out.append(i if j < 0 else 24 + ((j & 7) if j < 8 else ((j & 7) | 8) << ((j >> 3) - 1)))
    return tuple(out)


FIELD_NORMS = _field_norms()


def field_norm(length: int) -> int:
    """A field's length as tantivy's BM25 sees it (FIELD_NORMS)."""
    return FIELD_NORMS[bisect.bisect_right(FIELD_NORMS, length) - 1]


def idf(df: int, docs: int) -> float:
    return math.log(1 + (docs - df + 0.5) / (df + 0.5))


def bm25(idf_sum: float, tf: int, length: int, avgdl: float) -> float:
    """One clause's score in a document of `length` tokens holding it `tf` times."""
    norm = BM25_K1 * (1 - BM25_B + BM25_B * field_norm(length) / avgdl)
    return idf_sum * (BM25_K1 + 1) * tf / (tf + norm)


def clauses(terms: Sequence[str]) -> list[tuple[tuple[str, int], ...]]:
    """The query's clauses as `search` parses `terms` on the `terms` field: per term its tokens
    under en_stem with their offsets, one (a term) or several (a phrase); none when it has none."""
    analyse = _pretokenizer()
    out = []
    for term in terms:
        tokens = analyse(term)
        if tokens:
            first = tokens[0][1]
            out.append(tuple((text, at - first) for text, at in tokens))
    return out


def positions(text: str) -> dict[str, list[int]]:
    """Token -> its positions in `text` under en_stem (a phrase's tf is read from them)."""
    out: dict[str, list[int]] = {}
    for token, at in _pretokenizer()(text):
        out.setdefault(token, []).append(at)
    return out


def _pretokenizer() -> Callable[[str], list[tuple[str, int]]]:
    if len(_ANALYZER) < 2:
        analyzer()
        import tantivy

        built = (tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.remove_long(40))
                 .filter(tantivy.Filter.lowercase()).filter(tantivy.Filter.stemmer("english")).build())
        _ANALYZER.append(lambda text: [(t.text, t.position) for t in built.pre_tokenize(text).tokens])
    return _ANALYZER[1]


class Stats(NamedTuple):
    """What BM25 counts in the copy for one field: documents (N), that field's tokens (None:
    unknown), and documents whose field holds each token (df)."""
    docs: int
    tokens: float | None
    df: dict[str, int]


# (generation, field) -> (N, tokens); a stamped copy never changes
_CORPUS: dict[tuple[Path, str], tuple[int, float | None]] = {}
caches.register("codevouch.store.lexindex.corpus", _CORPUS.clear, _CORPUS.__len__)


def stats(index_dir: Path, copy: Copy, tokens: Sequence[str], field: str = "terms") -> Stats | None:
    """BM25's counts in `copy` for `field` (`terms`, or `namewords` / `ownwords`: the words of what
    a chunk defines), or None when it cannot answer (as `search`)."""
    path = index_path(index_dir, copy)
    if not _answers(path, copy.stamp):
        return None
    try:
        index, searcher = _searcher(path)
        df = {t: int(searcher.doc_freq(field, t)) for t in dict.fromkeys(tokens)}
        corpus = _CORPUS.get((path, field))
        if corpus is None:
            corpus = _CORPUS[(path, field)] = _corpus(index, searcher, [t for t, n in df.items() if n], field)
        return Stats(corpus[0], corpus[1], df)
    except (OSError, ValueError, RuntimeError):
        return None


def _corpus(index: Any, searcher: Any, present: list[str], field: str) -> tuple[int, float | None]:
    """(N, tokens of `field`) as tantivy's BM25 counts them, which the bindings do not expose: read
    from the explanation of one hit of a term (a query's, else one of the commonest)."""
    import tantivy

    if not searcher.num_docs:
        return 0, 0.0
    for term in [*present[:4], *(t for t, _ in searcher.terms_with_prefix(field, "", limit=8))]:
        query = tantivy.Query.term_query(index.schema, field, term)
        hits = searcher.search(query, 1).hits
        if hits:
            found = _explained(json.loads(query.explain(searcher, hits[0][1]).to_json()))
            if "N" in found and "avgdl" in found:
                return int(found["N"]), found["avgdl"] * found["N"]
    return searcher.num_docs, None


def _explained(node: dict[str, Any], found: dict[str, float] | None = None) -> dict[str, float]:
    """N and avgdl from a BM25 explanation (tantivy's descriptions: "N, total number of docs", "avgdl, ...")."""
    found = {} if found is None else found
    key = str(node.get("description", "")).split(",", 1)[0]
    if key in ("N", "avgdl"):
        found[key] = float(node["value"])
    for child in node.get("details", ()):
        _explained(child, found)
    return found
