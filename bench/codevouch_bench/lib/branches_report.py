"""The "Many branches" section of docs/BENCHMARKS.md, from bench/results/bench-branches.json
(rendered by the runner (python -m codevouch_bench) with the other figures).

The JSON holds the results of codevouch_bench.branches runs, each as that script wrote it
(its command, time, load and both sides), under `runs`: `storage` (both sides unseeded, the
fake embedder at the real model's width: the same bytes per vector, cache row and chunk),
`time` (the real model, both sides seeded with the same embedding cache, so builds compare
like for like), and optionally `cold` (the real model, nothing seeded: the after side's cold
build and its storage, as a check on the fake embedder's bytes). `earlier` keeps figures of
older layouts, as text.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists

RESULTS = RESULTS_DIR / "bench-branches.json"


def section(path: Path = RESULTS) -> str:
    data = read_json_if_exists(path)
    if data is None:
        return ""
    runs: dict[str, Any] = data.get("runs", {})
    first = next(iter(runs.values()), None)
    if first is None:
        return ""
    names = [n for n, _ in first["branches"]]
    out = ["\n## Many branches\n",
           "Rerun: `python -m codevouch_bench.branches SOURCE COMMIT --out FILE` (each run below with its own "
           "arguments; this repository's own branches: `python -m codevouch_bench --only branches`).\n",
           f"Source `{first['source_label']}` at `{first['commit'][:12]}`; {len(names)} branches: `main`, the "
           "repository's other branches, then its newest pull-request heads not newer than the commit and sharing "
           "history with it (" + ", ".join(f"`{n}`@{s[:8]}" for n, s in first["branches"][1:]) + "). Each side: a "
           "fresh index, `main` built first, then each other branch by itself, then 20 queries on 3 branches. "
           f"Before = codevouch `{first.get('before_rev', '')[:10]}` (one vector, chunk row and lexical row per "
           "chunk of the space); after = one vector per distinct text, one lexical row per (path, symbol, text), "
           "slim chunk rows (migration m004).\n"]
    for label, run in runs.items():
        out.append(f"- `{label}`: `{run['command']}` at {run['measured_at']}, load average {run['load_avg_1m_at_start']} "
                   f"at its start{'; ' + run['note'] if run.get('note') else ''}.")
    out.append("")
    storage, timing, cold = runs.get("storage"), runs.get("time"), runs.get("cold")
    if storage:
        out += _table(storage, [
            ("index on disk, 23 branches", lambda s: f"{s['mb_total']} MB"),
            ("Chroma / ledger / lexical copy", lambda s: f"{s['mb_chroma']} / {s['mb_ledger']} / {s.get('mb_lexical', '?')} MB"),
            ("index on disk after `main` alone", lambda s: f"{s['mb_first']} MB"),
            ("**storage, all branches / `main` alone**", lambda s: f"**x{s['storage_ratio']}**"),
        ], "Storage (`storage` run: the fake embedder at 384 dimensions, so every vector and cache row has the "
           "real model's size)")
    if cold and "after" in cold:
        a = cold["after"]
        out.append(f"Check with the real model (`cold` run, after side only, nothing seeded): {a['mb_total']} MB "
                   f"(Chroma {a['mb_chroma']} / ledger {a['mb_ledger']} / lexical {a.get('mb_lexical', '?')}), "
                   f"x{a['storage_ratio']} of `main` alone ({a['mb_first']} MB); its cold `main` build took "
                   f"{a['first_branch_s']} s, extra branches {a['extra_branch_s_median']} s median, "
                   f"{a['extra_branch_s_max']} s max (the branch with the most new texts, embedded cold).\n")
    if timing:
        out += _table(timing, [
            ("`main` build (vectors from the cache)",
             lambda s: f"{s['first_branch_s']} s ({s.get('first_branch_cpu_s', '?')} s CPU)"),
            ("each extra branch: median / max", lambda s: f"{s['extra_branch_s_median']} s / {s['extra_branch_s_max']} s"),
            ("extra branch median CPU", lambda s: f"{s.get('extra_branch_cpu_s_median', '?')} s"),
            ("all 22 extra branches",
             lambda s: f"{s['extra_branches_s_total']} s ({s.get('extra_branches_cpu_s_total', '?')} s CPU)"),
            ("search p50 / p95 (warm, hybrid, k=10; 3 branches x 20 queries)",
             lambda s: f"{s['query_ms']['p50']} ms / {s['query_ms']['p95']} ms"),
            ("search CPU, mean", lambda s: f"{s['query_ms'].get('cpu_mean', '?')} ms"),
        ], "Build and search (`time` run: the real model; both sides' indexes start from the same embedding "
           "cache, so no build embeds and builds compare like for like; the cache counts in their storage, so "
           "storage is the `storage` run's)")
    out.append("Storage counts every file in the index directory after a checkpoint of the ledger; the ledger "
               "holds the embedding cache (the same texts on both sides). CPU is the process's and its children's "
               "(git). The machine has 2 cores shared with other work: compare sides of one run.\n")
    for line in data.get("earlier", []):
        out.append(f"- {line}")
    return "\n".join(out) + "\n"


def _table(run: dict[str, Any], rows: list[tuple[str, Any]], title: str) -> list[str]:
    sides = [s for s in ("before", "after") if s in run]
    out = [f"{title}:\n", "| | " + " | ".join(sides) + " |", "|---|" + "---|" * len(sides)]
    out += [f"| {label} | " + " | ".join(fmt(run[s]) for s in sides) + " |" for label, fmt in rows]
    return out + [""]
