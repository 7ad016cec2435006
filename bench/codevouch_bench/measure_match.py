#!/usr/bin/env python
"""Where "no good match" starts: the similarity (query . chunk cosine, the packaged MiniLM) of the
best hit, for queries that have an answer in the repository and for queries that do not.

Answerable: the figure-3 queries of the quality benchmark's Python corpora (the first sentence of
a removed docstring; bench_quality.prepare, quick-profile sampling), each with its function's
name and its words (`raise_for_status`, `raise for status`) as two more queries. Unanswerable:
UNRELATED below, asked of the same indexes. For each candidate threshold the table says what
share of each kind's best hit reaches it; the threshold codevouch ships
(codevouch.retriever.settings.MATCH_THRESHOLDS) is chosen from this table.

    python -m codevouch_bench.measure_match [--corpus NAME]... [--json OUT]   (not a figure: the runner does not run it)
"""
from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import CACHE, log
from codevouch_bench.lib.config import HELD_OUT, PROFILES, TUNING
from codevouch_bench.lib.embcache import CachedEmbedder
from codevouch_bench.quality import pick_queries, prepare

# Questions a user of some other project would ask: code-shaped, but about nothing these
# libraries do (and a few about nothing code at all).
UNRELATED = [
    "render a triangle mesh with opengl shaders", "train a convolutional neural network on images",
    "parse a jpeg file header", "compute the shortest path in a weighted graph with dijkstra",
    "connect to a postgres database and run a migration", "kubernetes pod autoscaling policy",
    "resize an image and keep the aspect ratio", "play an mp3 audio file", "sort a linked list in place",
    "bluetooth low energy device pairing", "compile a regular expression to a finite automaton",
    "matrix multiplication on the gpu", "the physics step of a rigid body simulation",
    "schedule a cron job every night", "read sensor values from an i2c bus", "balance a red black tree",
    "encrypt a file with aes gcm", "generate a pdf invoice", "detect faces in a webcam stream",
    "tokenize chinese text into words", "a recipe for sourdough bread", "the weather forecast for tomorrow",
    "who won the football world cup", "how to tie a bowline knot", "translate english to french",
    "count the vowels in a poem", "draw a histogram of ages with matplotlib", "mine a bitcoin block",
    "send an sms through twilio", "the boot sequence of an arm microcontroller",
]
THRESHOLDS = [round(0.20 + 0.02 * i, 2) for i in range(21)]


def words(name: str) -> str:
    parts = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ").split()
    return " ".join(p.lower() for p in parts)


def run_corpus(c: Any, embedder: Any, work: Path, queries: int) -> dict[str, list[dict[str, Any]]]:
    from codevouch import Index

    prof = PROFILES["quick"]
    repo, index_dir = work / c.name / "repo", work / c.name / "index"
    targets = prepare(c, prof, repo).targets
    targets = pick_queries(targets, queries, prof.seed)
    idx = Index(repo, index_dir, embedder=embedder, record=False)
    idx.build()
    out: dict[str, list[dict[str, Any]]] = {"docstring": [], "name": [], "words": [], "unrelated": []}

    def ask(kind: str, query: str, target: Any | None) -> None:
        hits = idx.search(query, k=10, validate=False, overlay=False)
        best = max((h.similarity for h in hits if h.similarity is not None), default=None)
        right = None
        if target is not None:
            right = next((i + 1 for i, h in enumerate(hits) if h.path == target.path
                          and h.record.start_line <= target.def_line <= h.record.end_line), None)
        out[kind].append({"corpus": c.name, "query": query, "best": best, "top": hits[0].similarity if hits else None,
                          "rank": right, "no_good_match": hits.no_good_match})
    for t in targets:
        ask("docstring", t.query, t)
        ask("name", t.name, t)
        ask("words", words(t.name), t)
    for q in UNRELATED:
        ask("unrelated", q, None)
    return out


def table(found: dict[str, list[dict[str, Any]]]) -> list[str]:
    lines = ["| best-hit similarity >= | " + " | ".join(found) + " |", "|---" * (len(found) + 1) + "|"]
    for t in THRESHOLDS:
        row = []
        for kind, rows in found.items():
            # answerable queries: of those whose answer is in the top 10; unrelated: all
            pool = [r for r in rows if kind == "unrelated" or r["rank"] is not None]
            above = sum(1 for r in pool if r["best"] is not None and r["best"] >= t)
            row.append(f"{above / len(pool):.0%}" if pool else "-")
        lines.append(f"| {t:.2f} | " + " | ".join(row) + " |")
    return lines


def main() -> None:
    from codevouch.embedding import MiniLMEmbedder

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", action="append", help="only these corpora (default: the Python ones)")
    p.add_argument("--queries", type=int, default=40, help="docstring targets per corpus")
    p.add_argument("--json", type=Path, help="write every query's best similarity here")
    args = p.parse_args()
    corpora = [c for c in (*TUNING, *HELD_OUT) if c.language == "python" and (not args.corpus or c.name in args.corpus)]
    embedder = CachedEmbedder(MiniLMEmbedder())
    work = CACHE / "work" / "match"
    found: dict[str, list[dict[str, Any]]] = {"docstring": [], "name": [], "words": [], "unrelated": []}
    started = time.perf_counter()
    for c in corpora:
        log(f"match threshold: {c.name}")
        for kind, rows in run_corpus(c, embedder, work, args.queries).items():
            found[kind] += rows
    print(f"corpora: {', '.join(c.name for c in corpora)}; {time.perf_counter() - started:.0f} s")
    print("\n".join(table(found)))
    # What search says with the shipped threshold and the name match together.
    for kind, rows in found.items():
        pool = [r for r in rows if kind == "unrelated" or r["rank"] is not None]
        said = sum(1 for r in pool if r["no_good_match"])
        print(f"{kind}: 'no good match' for {said} of {len(pool)} queries ({said / max(len(pool), 1):.0%})")
    if args.json:
        args.json.write_text(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
