#!/usr/bin/env python
"""Validated search on a large real repository: library `Index.search`, k=10.

The repository is a clone of `--url` at `--commit` (SQLAlchemy's main by default: 929 files,
~45k chunks), or an existing clone given with `--repo`. The index is built once into `--index`
(kept: a rerun reuses it) with the fake embedder (fake-bow-64): the real model would take 25+
minutes on a 2-core machine, and what this figure measures is the search and its validation,
not the ranking. So the vectors are fake and so is the query's embedding (a branch is always
searched with the model it was built with); the store, the lexical index, the records, the
overlay, the validator and the usage record are the real ones.

A fresh clone's files are "racily clean" (written in the same second as git's index), which
makes every `git status` hash them again; a clone on a busy machine may take longer than a
second and escape that. `--racy` (default) sets every tracked file's mtime to one whole second
and the index's mtime half a second later, as a fast clone leaves them (git's racy-git rule
compares seconds), so each run measures that case.

Queries: the first sentences of 40 docstrings of the repository's Python files (fixed seed).
Each query runs without validation and with it (the default), interleaved, after a warm-up;
reported: p50 / p95 of each and git processes per call (codevouch's own count, gitio.PROCESSES).

    python -m codevouch_bench.validated_search --work /tmp/sqla [--url URL --commit SHA] [--out PATH]
    python -m codevouch_bench.validated_search --repo PATH --index DIR
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import time
from pathlib import Path
from typing import Any

from codevouch_bench.lib import corpus
from codevouch_bench.lib.common import log, machine, summary, write_json
from codevouch_bench.lib.docstrings import strip_python

URL = "https://github.com/sqlalchemy/sqlalchemy"
COMMIT = "f35da7e2b9349a08b8de1f6bd3b07c8bf8616790"     # main, 2026-08-21
QUERIES = 40
SEED = 22
EMBEDDER = "fake-bow-64"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def clone(url: str, commit: str, dest: Path) -> Path:
    """A clone of `url` at `commit` in `dest`, from a local mirror when $CODEVOUCH_BENCH_GIT_MIRRORS
    holds one (`owner+name/repo`, as codevouch_bench.lib.corpus reads them)."""
    if not (dest / ".git").exists():
        mirrors = os.environ.get(corpus.GIT_MIRRORS_ENV)
        bare = Path(mirrors) / "+".join(url.rstrip("/").removesuffix(".git").split("/")[-2:]) / "repo" \
            if mirrors else None
        source = str(bare) if bare is not None and bare.exists() else url
        log(f"cloning {source} into {dest}")
        subprocess.run(["git", "clone", "-q", "--no-checkout", source, str(dest)], check=True)
        git(dest, "checkout", "-q", "-B", "main", commit)
    elif git(dest, "rev-parse", "HEAD").strip() != commit:
        git(dest, "checkout", "-q", "-B", "main", commit)
    return dest


def make_racy(repo: Path) -> None:
    """Every tracked file racily clean, as a fast fresh clone leaves it."""
    second = int(time.time()) - 60
    for rel in git(repo, "ls-files", "-z").split("\0"):
        path = repo / rel
        if rel and path.is_file() and not path.is_symlink():
            os.utime(path, ns=(second * 10**9, second * 10**9))
    git(repo, "update-index", "-q", "--refresh")       # the index records those stat data
    index = repo / ".git" / "index"
    os.utime(index, ns=(second * 10**9 + 5 * 10**8, second * 10**9 + 5 * 10**8))


def queries_of(repo: Path, n: int) -> list[str]:
    found = [t.query for p, data in sorted(corpus.tree_files(repo, suffixes=(".py",)).items())
             for t in strip_python(data.decode("utf-8", "replace"), p)[1]]
    return random.Random(SEED).sample(found, min(n, len(found)))


def measure(repo: Path, index_dir: Path, queries: list[str]) -> dict[str, Any]:
    from codevouch import Index
    from codevouch.worktree import gitio

    counted = getattr(gitio, "PROCESSES", None)
    if counted is None:       # an older codevouch, without its own count: count the Popens
        from collections import Counter
        counted = Counter()
        original = subprocess.Popen.__init__

        def counting(self: Any, args: Any, *a: Any, **kw: Any) -> None:
            if os.path.basename(str(list(args)[0])) == "git":
                counted["git"] += 1
            original(self, args, *a, **kw)
        subprocess.Popen.__init__ = counting  # type: ignore[method-assign]
    index = Index(repo, index_dir, embedder=EMBEDDER)
    # Built, or brought up to date when kept from an earlier run: a no-op build still rewrites a
    # lexical copy laid out by an older release, which search would otherwise bypass.
    log(f"building the index in {index_dir} (fake embedder; a no-op when it is up to date)")
    started = time.perf_counter()
    built = index.build()
    log(f"{sum(b.chunks for b in built)} chunks, {sum(b.embedded for b in built)} embedded, "
        f"in {time.perf_counter() - started:.0f} s")
    for q in queries[:2]:                   # warm-up: readers, lexical index, grammars
        index.search(q, validate=False)
        index.search(q)
    times: dict[bool, list[float]] = {False: [], True: []}
    procs: dict[bool, list[int]] = {False: [], True: []}
    for q in queries:
        for validate in (True, False):      # validated first: it pays for reading the hits' blobs
            before = sum(counted.values())
            t = time.perf_counter()
            index.search(q, k=10, validate=validate)
            times[validate].append(time.perf_counter() - t)
            procs[validate].append(sum(counted.values()) - before)
    return {name: {**summary(times[v]), "git_processes_per_call": round(sum(procs[v]) / len(procs[v]), 2),
                   "git_processes_max": max(procs[v])}
            for name, v in (("unvalidated", False), ("validated", True))}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repo", type=Path, help="an existing clone (else --url at --commit is cloned into --work)")
    ap.add_argument("--url", default=URL)
    ap.add_argument("--commit", default=COMMIT)
    ap.add_argument("--name", help="what to call an existing --repo in the results (default: its path)")
    ap.add_argument("--work", type=Path, help="where to clone (with --url) and keep the index")
    ap.add_argument("--index", type=Path, help="index directory (default: <work>/index); built when missing")
    ap.add_argument("--no-racy", dest="racy", action="store_false", help="leave the clone's stat data as they are")
    ap.add_argument("--queries", type=int, default=QUERIES)
    ap.add_argument("--out", type=Path, help="write the results as JSON here")
    args = ap.parse_args(argv)
    if args.repo is None and args.work is None:
        ap.error("give --repo PATH, or --work DIR to clone --url into")
    work = args.work or args.repo.parent
    repo = args.repo or clone(args.url, args.commit, work / "repo")
    index_dir = args.index or work / "index"
    report: dict[str, Any] = {"machine": machine(), "repo": args.url if args.repo is None else args.name or str(repo),
                              "commit": git(repo, "rev-parse", "HEAD").strip(), "embedder": EMBEDDER,
                              "racy": args.racy, "k": 10}
    if args.racy:
        make_racy(repo)
    queries = queries_of(repo, args.queries)
    report["queries"] = len(queries)
    report.update(measure(repo, index_dir, queries))
    report["load_avg_1m_at_end"] = round(os.getloadavg()[0], 2)
    for name in ("unvalidated", "validated"):
        r = report[name]
        print(f"{name:12} p50 {r['p50']:6.1f} ms  p95 {r['p95']:6.1f} ms  git processes/call "
              f"{r['git_processes_per_call']} (max {r['git_processes_max']})")
    if args.out:
        write_json(args.out, report)
    return report


if __name__ == "__main__":
    main()
