"""The "One query across many repositories" section of docs/BENCHMARKS.md, from
bench/results/bench-across-scale.json (what codevouch_bench.across_scale writes)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists

RESULTS = RESULTS_DIR / "bench-across-scale.json"


def _row(label: str, r: dict[str, Any], repos: int, build: str) -> str:
    cli = ", ".join(f"{s:.2f}" for s in r["cold_cli_s"])
    return (f"| {repos} | {label} | {build} | {r['first_ms']:.0f} | {r['warm_p50_ms']:.0f} | {r['warm_p95_ms']:.0f} | "
            f"{r.get('git_per_query', '-')} | {cli} |")


def section(path: Path = RESULTS) -> str:
    data = read_json_if_exists(path)
    if data is None:
        return ""
    m = data["machine"]
    rows = []
    for r in data["rows"]:
        rows.append(_row("this code", r, r["repos"], "earlier run" if r["build_s"] is None else f"{r['build_s']:.0f}"))
        if "before" in r:
            rows.append(_row(f"before ({r['before']['code']})", r["before"], r["repos"], "same index"))
    return "\n".join([
        "\n## One query across many repositories\n",
        f"Rerun: `{data['command']} --work DIR [--before CHECKOUT]` (writes bench/results/bench-across-scale.json).\n",
        f"At {m.get('date')} (load average {m.get('load_avg_1m_at_start')} at its start, {m.get('cores')} cores, shared: "
        "absolute times are inflated by the other work on the machine; compare the rows of one size, measured in "
        f"the same run). The {data['files']} Python files of six pinned sdists (requests, urllib3, werkzeug, flask, "
        "click, httpx) dealt round-robin into N repositories, each committed and built into one index directory "
        f"with the fake embedder; {data['queries']} queries, the first doc-comment sentence of sampled functions. "
        "`Indexes.search(k=10)`, every returned hit validated against its own working tree: the first call (a "
        "fresh `Indexes`, codevouch's caches emptied), then the warm calls on the same `Indexes` (p50, p95), the "
        "git processes a warm call starts, and three cold CLI processes (`codevouch search --all-repos --json`, "
        "no engine). A `before` row: the same timings by an older checkout's codevouch, in its own process, on "
        "the same repositories and index.\n",
        "| repositories | code | build s | first call ms | warm p50 ms | warm p95 ms | git processes per warm query | "
        "cold CLI s |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "A warm search keeps each repository's `Index` and remote label (the label re-read when .git/config "
        "changes), searches the repositories on up to 8 threads, and checks only the hits that make the fused top "
        "k. What is left per repository and query: one `git rev-parse` (HEAD and branch), one `git status` (the "
        "working-tree overlay's check: an edit is never missed), a `git cat-file` batch for the hits whose text no "
        "earlier call read (each repository's k hits are read before the fusion), and the repository's own "
        "ranking: about 3 git processes a repository, so 100 repositories are still a second or more on this "
        "machine, not the 150 ms aimed at. Getting there needs no git process per unchanged repository: HEAD and "
        "the working tree's state in one `git status --porcelain=v2 --branch`, the hit texts read for the fused "
        "top k only, and a watcher (the resident engine's) that says which working trees changed since the last "
        "call.",
    ]) + "\n"
