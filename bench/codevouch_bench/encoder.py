#!/usr/bin/env python
"""The search's encoder figure: the NumPy MiniLM pass that embeds queries and the working-tree
overlay's new chunks, against sentence-transformers (torch), which builds use.

1,000 real chunks, 250 from each of four repositories of four languages (the overlay figure's
pinned commits: httpx Python, cobra Go, rxjs TypeScript, serde_json Rust), chunked by the
build's chunker and embedded as a build embeds them (path and symbol above the code). Per
chunk: the cosine between the two encoders' vectors (the target: >= 0.9999 each). And each
encoder's speed on this machine, chunks per second, one process: the NumPy pass one text at a
time on one BLAS thread (as a search runs it, so a time budget can stop between two texts), torch
in the build's batches. The overlay's per-call time budget (CODEVOUCH_OVERLAY_SECONDS) is set
from the NumPy figure (docs/OVERLAY.md).

    python -m codevouch_bench.encoder        # writes bench/results/bench-encoder.json
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from codevouch_bench.lib import corpus
from codevouch_bench.lib.common import RESULTS, log, machine, write_json

OUT = RESULTS / "bench-encoder.json"
# (language, GitHub owner/name, commit, source directory, suffix): the overlay figure's NEW commits.
SOURCES = [
    ("python", "encode/httpx", "16f41a2baa6339748c86390b3223302a4a3ff033", "httpx", ".py"),
    ("go", "spf13/cobra", "6c3c1163c6df19860515103199e880122ba49e80", "", ".go"),
    ("typescript", "ReactiveX/rxjs", "72bc92191ab959e27a969dc4476e14d95416573f", "src", ".ts"),
    ("rust", "serde-rs/json", "4aa05b9143ea7ca9c690e874f4c0f4f43cae9716", "src", ".rs"),
]
PER_LANGUAGE = 250


def chunks(slug: str, commit: str, subdir: str, suffix: str, n: int) -> list[str]:
    """The first `n` chunks of the source's files, in path order, as a build embeds them."""
    from codevouch.embedding import CHUNK_TOKEN_BUDGET, token_counter
    from codevouch.indexer.chunker import chunk_text
    from codevouch.indexer.embedtext import embedded_text

    root = corpus.git_checkout(f"git:https://github.com/{slug}@{commit}")
    base = root / subdir if subdir else root
    count = token_counter()
    out: list[str] = []
    for path in sorted(base.rglob(f"*{suffix}")):
        if not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        pieces, _ = chunk_text(path.read_bytes().decode("utf-8", "replace"), rel, count, CHUNK_TOKEN_BUDGET)
        out += [embedded_text(rel, p.symbol, p.text) for p in pieces]
        if len(out) >= n:
            break
    return out[:n]


def measure(per_language: int) -> dict[str, Any]:
    import numpy as np

    from codevouch.embedding import MiniLMEmbedder, token_counter
    from codevouch.indexer.build import EMBED_BATCH

    texts: dict[str, list[str]] = {lang: chunks(slug, commit, sub, suffix, per_language)
                                   for lang, slug, commit, sub, suffix in SOURCES}
    every = [t for ts in texts.values() for t in ts]
    embedder = MiniLMEmbedder(batch_size=EMBED_BATCH)
    embedder.embed_one("warm up")                      # the weights' load, timed apart
    started = time.perf_counter()
    ours = np.array([embedder.embed_one(t) for t in every], dtype=np.float32)
    numpy_s = time.perf_counter() - started
    embedder.embed(["warm up"])                        # torch's import and load, timed apart
    started = time.perf_counter()
    theirs = np.array(embedder.embed(every), dtype=np.float32)
    torch_s = time.perf_counter() - started
    cosines = (ours * theirs).sum(axis=1)
    count = token_counter()
    tokens = [min(count(t), 256) for t in every]
    by_language = {}
    at = 0
    for lang, ts in texts.items():
        part = cosines[at:at + len(ts)]
        at += len(ts)
        by_language[lang] = {"chunks": len(ts), "min_cosine": round(float(part.min()), 6)}
    return {"chunks": len(every), "mean_tokens": round(sum(tokens) / len(tokens), 1),
            "min_cosine": round(float(cosines.min()), 6), "p01_cosine": round(float(np.quantile(cosines, 0.01)), 6),
            "median_cosine": round(float(np.median(cosines)), 6),
            "below_target": int((cosines < 0.9999).sum()), "by_language": by_language,
            "numpy_chunks_per_s": round(len(every) / numpy_s, 1), "torch_chunks_per_s": round(len(every) / torch_s, 1),
            "numpy_ms_per_chunk": round(numpy_s / len(every) * 1000, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--per-language", type=int, default=PER_LANGUAGE)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    started = machine()
    result = {"command": " ".join(["python", "-m", "codevouch_bench.encoder", *sys.argv[1:]]), "machine": started,
              **measure(args.per_language)}
    write_json(args.out, result)
    log(f"wrote {args.out}: {result}")


if __name__ == "__main__":
    main()
