#!/usr/bin/env python
"""Figure 3: docstring -> function retrieval on real code with its docstrings removed.

Methods, all in this one process, same model, same Chroma store:
  codevouch      build_index + search (syntax-aware chunks with symbols)
  window-40      fixed 40-line windows
  langchain      RecursiveCharacterTextSplitter.from_language, defaults
  bm25           BM25 alone over codevouch's chunks (bm25s)
"""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import cli, corpus
from benchlib.common import log, machine, write_json
from benchlib.config import QUALITY_SUFFIXES, Profile
from benchlib.docstrings import Target, strip_file
from benchlib.index import branch_records, with_texts
from benchlib.retrieval import (BM25Index, DenseSpans, Span, langchain_chunks, line_windows, rank_of,
                                scores, symbol_hit, window_hit)

# codevouch's search modes: the default (hybrid: dense + its FTS5 lexical index, fused by rank)
# and each half alone. They share one index, so the extra rows cost no embedding.
CODEVOUCH_MODES = {"codevouch": "hybrid", "codevouch-dense": "dense", "codevouch-lexical": "lexical"}
METHODS = (*CODEVOUCH_MODES, "window-40", "langchain", "bm25")


def search_modes() -> dict[str, str | None]:
    """Modes this codevouch offers (older versions had dense search only, without `mode`)."""
    import inspect

    from codevouch.retriever.search import search

    if "mode" in inspect.signature(search).parameters:
        return dict(CODEVOUCH_MODES)
    return {"codevouch": None}


def stripped_repo(source: corpus.Source, repo: Path) -> tuple[dict[str, str], list[Target]]:
    """Commit the docstring-free copy of a source to a temp repo; return its files and targets."""
    root = corpus.extract(source.spec)
    files: dict[str, str] = {}
    targets: list[Target] = []
    for path, data in corpus.tree_files(root, source.subdirs, QUALITY_SUFFIXES).items():
        text, found = strip_file(data.decode("utf-8", "replace"), path)
        files[path] = text
        targets += found
    corpus.repo_from_files(repo, {p: t.encode() for p, t in files.items()}, f"{source.spec} without docs")
    return files, targets


def sample(targets: list[Target], limit: int, seed: int) -> list[Target]:
    if len(targets) <= limit:
        return targets
    picked = sorted(random.Random(seed).sample(range(len(targets)), limit))
    return [targets[i] for i in picked]


def evaluate_source(source: corpus.Source, prof: Profile, work: Path, embedder: Any) -> dict[str, Any]:
    from codevouch.indexer.build import build_index
    from codevouch.retriever.search import search
    from codevouch.store import VectorStore

    pkg_dir = work / cli.safe_name(source.spec)
    repo, index_dir = pkg_dir / "repo", pkg_dir / "index"
    files, all_targets = stripped_repo(source, repo)
    targets = sample(all_targets, prof.max_queries, prof.seed)
    log(f"quality {source.spec}: {len(files)} files, {len(all_targets)} documented functions, "
        f"{len(targets)} queries")
    out: dict[str, Any] = {"source": source.spec, "subdirs": list(source.subdirs), "files": len(files),
                           "documented_functions": len(all_targets), "chunks": {}, "embed_seconds": {}}
    modes = search_modes()
    ranks: dict[str, list[int | None]] = {m: [] for m in METHODS if m in modes or m not in CODEVOUCH_MODES}

    start = time.perf_counter()
    (summary,) = build_index(repo, index_dir, embedder)
    out["embed_seconds"]["codevouch"] = round(time.perf_counter() - start, 1)
    out["chunks"]["codevouch"] = summary.chunks
    for method, mode in modes.items():
        extra = {} if mode is None else {"mode": mode}
        for t in targets:
            hits = search(repo, t.query, index_dir, k=10, embedder=embedder, **extra)
            spans = [Span(h.record.path, h.record.start_line, h.record.end_line, h.text, h.record.symbol)
                     for h in hits]
            ranks[method].append(rank_of(spans, t, symbol_hit))

    cv_spans = [Span(r.path, r.start_line, r.end_line, text, r.symbol)
                for r, text in with_texts(repo, branch_records(index_dir, repo, "main"))]
    bm25 = BM25Index(cv_spans)
    out["chunks"]["bm25"] = len(cv_spans)
    for t in targets:
        ranks["bm25"].append(rank_of(bm25.search(t.query), t, symbol_hit))

    store = VectorStore(index_dir)
    # Queries go through the same path as codevouch's own (embed_query) where there is one.
    embed_query = getattr(embedder, "embed_query", None)
    qvecs = [embed_query(t.query) for t in targets] if embed_query else embedder.embed([t.query for t in targets])
    for method, make in (("window-40", line_windows), ("langchain", langchain_chunks)):
        spans = [s for path, text in files.items() for s in make(path, text)]
        start = time.perf_counter()
        dense = DenseSpans(store, f"bench-{method}", spans, embedder.embed)
        out["embed_seconds"][method] = round(time.perf_counter() - start, 1)
        out["chunks"][method] = len(spans)
        for t, qv in zip(targets, qvecs):
            ranks[method].append(rank_of(dense.search(qv), t, window_hit))
    out["scores"] = {m: scores(r) for m, r in ranks.items()}
    out["ranks"] = ranks  # kept so the overall figure is a true micro-average
    return out


def main() -> None:
    args = cli.parser(__doc__ or "").parse_args()
    prof = cli.profile(args)
    corpus.fetch(s.spec for s in prof.quality_sources)
    work = cli.workdir(prof, "quality")
    embedder = cli.embedder(args)
    per_source = [evaluate_source(s, prof, work, embedder) for s in prof.quality_sources]
    overall = {m: scores([r for p in per_source for r in p["ranks"][m]]) for m in per_source[0]["ranks"]}
    for p in per_source:
        del p["ranks"]
    result = {"figure": "quality", "profile": prof.name, "machine": machine(), "seed": prof.seed,
              "max_queries_per_source": prof.max_queries,
              "embedder": embedder.name, "per_source": per_source, "overall": overall}
    if args.out:
        write_json(args.out, result)
    log(f"quality overall: {overall}")


if __name__ == "__main__":
    main()
