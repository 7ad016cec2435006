#!/usr/bin/env python
"""How much of the exact nearest neighbours Chroma's HNSW search returns, by how many results are
asked for (its ef_search is max(100, n)): the recall of the dense list's first 30 against an exact
search (numpy, every vector of the space), on real queries, the docstring sentences of the quality
figure. Ground truth is the exact search, never codevouch's ranking.

Reads the indexes a `codevouch_bench.quality --whole` run left in .bench-cache (run it first for
the same split). codevouch asks for at least codevouch.store.vectors.ANN_LEAST.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from codevouch_bench.lib import cli, corpus
from codevouch_bench.lib.common import CACHE, log, machine, write_json
from codevouch_bench.lib.config import HELD_OUT, TUNING
from codevouch_bench.lib.doccomments import strip_docs
from codevouch_bench.lib.embcache import CachedEmbedder

ASKED = (36, 100, 150, 200, 300, 400)   # 36: what a default search of one branch asked (30 x 1.2)
TOP = 30                                # the fusion's depth


def measure(name: str, index_dir: Path, queries: list[str], embedder: Any) -> dict[str, Any]:
    import numpy as np

    from codevouch.store import Ledger, VectorStore

    ledger = Ledger(index_dir)
    try:
        space = next(b.space for b in ledger.branches() if b.space)
    finally:
        ledger.close()
    store = VectorStore(index_dir, readonly=True)
    col = store.collection(space, create=False)
    got = col.get(include=["embeddings"])
    ids, vectors = np.array(got["ids"]), np.array(got["embeddings"])
    asked = [np.array(embedder.embed_query(q)) for q in queries]
    exact = [set(ids[np.argsort(-(vectors @ v))[:TOP]]) for v in asked]
    col.query(query_embeddings=[asked[0].tolist()], n_results=10)   # loaded before timing
    out: dict[str, Any] = {"corpus": name, "vectors": len(ids), "queries": len(queries), "asked": {}}
    for n in ASKED:
        recall, started = [], time.perf_counter()
        for v, truth in zip(asked, exact):
            res = col.query(query_embeddings=[v.tolist()], n_results=n, include=["distances"])
            recall.append(len(truth & set(res["ids"][0][:TOP])) / TOP)
        out["asked"][str(n)] = {"recall@30": round(float(np.mean(recall)), 3), "worst": round(min(recall), 2),
                                "ms_per_query": round((time.perf_counter() - started) / len(asked) * 1000, 2)}
    store.close()
    log(f"ann recall {name}: " + "; ".join(f"n={n} {s['recall@30']} (worst {s['worst']}, {s['ms_per_query']} ms)"
                                           for n, s in out["asked"].items()))
    return out


def main() -> None:
    from codevouch.store.vectors import ANN_LEAST
    from codevouch_bench.quality import is_library_code, sample_files

    p = cli.parser(__doc__ or "")
    p.add_argument("--split", choices=("tuning", "held-out"), default="held-out")
    p.add_argument("--corpus", action="append", help="only these corpora (by name)")
    args = p.parse_args()
    prof = cli.profile(args)
    chosen = [c for c in (TUNING if args.split == "tuning" else HELD_OUT) if not args.corpus or c.name in args.corpus]
    work = CACHE / "work" / prof.name / f"quality-{args.split}-whole"
    embedder = CachedEmbedder(cli.embedder(args))
    per_corpus = []
    for c in chosen:
        index_dir = work / c.name / "index"
        if not index_dir.is_dir():
            raise SystemExit(f"no index at {index_dir}: run `python -m codevouch_bench.quality --split {args.split} "
                             f"--whole` first")
        queries = [t.query for path, data in sample_files(corpus.extract(c.spec), None, prof.seed).items()
                   if is_library_code(path) for t in strip_docs(path, data.decode("utf-8", "replace"))[1]]
        per_corpus.append(measure(c.name, index_dir, queries, embedder))
    result = {"figure": "ann-recall", "machine": machine(), "split": args.split, "top": TOP, "ann_least": ANN_LEAST,
              "embedder": embedder.name, "per_corpus": per_corpus}
    if args.out:
        write_json(args.out, result)


if __name__ == "__main__":
    main()
