"""An index of any size for store-bound figures: real records, synthetic random vectors.

Records are real chunks of a real repository (so the CLI can read each hit's text from git
and the validator can check it), repeated under distinct ids until the store holds `size`
vectors. Vectors are random unit vectors: the ranking is meaningless, the cost is not.
"""
from __future__ import annotations

import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

from codevouch.embedding import CHUNK_TOKEN_BUDGET, MODEL_NAME, token_counter
from codevouch.indexer.build import text_hash
from codevouch.indexer.chunker import chunk_text
from codevouch.store import (
    BranchState,
    BuildChange,
    ChunkRecord,
    FileRow,
    Ledger,
    NewChunk,
    VectorStore,
    chunk_id,
    collection_base,
    lex_key,
    lexical,
    lexindex,
    space_name,
)
from codevouch.worktree import gitio
from codevouch.worktree.identity import identify
from codevouch_bench.lib.common import log

DIM = 384


def real_records(repo: Path, branch: str = "main") -> list[tuple[ChunkRecord, str]]:
    repo = gitio.repo_root(repo)
    commit = gitio.branch_commit(repo, branch)
    date = gitio.commit_dates(repo, [commit])[commit]
    tree = gitio.ls_tree(repo, commit)
    blobs = gitio.read_blobs(repo, [e.blob_sha for e in tree.values()])
    count = token_counter()
    out: list[tuple[ChunkRecord, str]] = []
    for path, entry in sorted(tree.items()):
        text = blobs[entry.blob_sha].decode("utf-8", "replace")
        chunks, lang = chunk_text(text, path, count, CHUNK_TOKEN_BUDGET)
        for n, ch in enumerate(chunks):
            out.append((ChunkRecord(chunk_id(path, entry.blob_sha, n), str(repo), path, branch, commit, date,
                                    ch.symbol, ch.start_line, ch.end_line, "2024-01-01T00:00:00Z",
                                    entry.blob_sha, text_hash(ch.text), "source", lang or "text", "live"),
                        ch.text))
    return out


def build_synthetic_index(repo: Path, index_dir: Path, size: int, seed: int, branch: str = "main",
                          embedder: str = MODEL_NAME, dim: int = DIM,
                          phases: dict[str, float] | None = None, cache: bool = False) -> int:
    """Fill a fresh index with `size` live records of `branch` (vectors, records and the lexical
    index, as a build writes them); returns the number written. `phases` gets the seconds of
    each part (records, vectors, lexical documents, the ledger's commit with the tantivy copy),
    and the vectors' progress is logged: at a million chunks the fill takes long. `cache`: the
    vectors also written to the ledger's embedding cache, as a build writes every vector it
    embeds (what a search holds a small space's vectors from: codevouch/retriever/held.py)."""
    import numpy as np

    phases = {} if phases is None else phases
    began = time.perf_counter()

    ident = identify(repo)
    repo = ident.root
    base = real_records(repo, branch)
    # Repeat r of a chunk: its own position in the file and its own text hash, so the space
    # holds one more vector, chunk row and lexical row for it (the hit text is still the file's).
    seen: Counter[tuple[str, str]] = Counter()
    first: list[int] = []   # each base chunk's position in its file
    for r, _ in base:
        first.append(seen[(r.path, r.blob_sha)])
        seen[(r.path, r.blob_sha)] += 1
    chunks = []
    for i in range(size):
        rec, rep = base[i % len(base)][0], i // len(base)
        ordinal = first[i % len(base)] + 100_000 * rep
        rec = replace(rec, id=chunk_id(rec.path, rec.blob_sha, ordinal),
                      text_hash=f"{rec.text_hash}-{rep}" if rep else rec.text_hash)
        chunks.append(NewChunk(ordinal, rec))
    pairs = [(c.record, base[i % len(base)][1]) for i, c in enumerate(chunks)]
    records = [r for r, _ in pairs]
    rng = np.random.default_rng(seed)
    space = space_name(ident.id, embedder)
    store = VectorStore(index_dir)
    step = 4000
    # One vector per distinct text, as a build writes them: chunks of equal text (two files
    # holding the same code) share one, and Chroma refuses an id twice in one upsert.
    hashes = list(dict.fromkeys(r.text_hash for r in records))
    phases["records"] = round(time.perf_counter() - began, 1)
    began = last = time.perf_counter()
    for start in range(0, len(hashes), step):
        vecs = rng.standard_normal((min(step, len(hashes) - start), dim)).astype("float32")
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        store.upsert(space, hashes[start:start + step], vecs.tolist())
        if cache:
            cached = Ledger(index_dir)
            try:
                cached.put_vectors(embedder, dict(zip(hashes[start:start + step], vecs.tolist())))
            finally:
                cached.close()
        if (start // step) % 25 == 24:
            now = time.perf_counter()
            log(f"synthetic fill: {start + step:,} vectors, the last {25 * step:,} in {now - last:.1f} s")
            last = now
    phases["vectors"] = round(time.perf_counter() - began, 1)
    began = time.perf_counter()
    per_file = Counter((r.path, r.blob_sha, r.language) for r in records)
    ledger = Ledger(index_dir)
    try:
        docs = list({lex_key(r.path, r.symbol, r.text_hash): lexical.document(t, r.path, r.symbol)
                     for r, t in pairs}.items())
        phases["lexical_documents"] = round(time.perf_counter() - began, 1)
        began = time.perf_counter()
        coll = collection_base(ident.id, branch)
        ledger.commit(BuildChange(
            state=BranchState(coll, str(repo), branch, records[0].commit,
                              records[0].commit_date, "2024-01-01T00:00:00Z", embedder, "{}", ident.id,
                              ident.remote, space),
            chunks=chunks, lexical=docs,
            files=[FileRow(path, blob, "source", None, lang, "live", None, n)
                   for (path, blob, lang), n in per_file.items()]),
            # As a build does inside its commit: the tantivy copy of the lexical index.
            before_commit=lambda _removed, stamp: lexindex.stage(
                index_dir, lexindex.Copy(space, coll, stamp), None, (), (),
                lambda keys: ledger.lexical_docs(space, coll, keys)))
    finally:
        ledger.close()
    phases["ledger_commit_and_tantivy"] = round(time.perf_counter() - began, 1)
    return size
