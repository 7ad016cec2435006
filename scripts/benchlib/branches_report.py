"""The "Many branches" section of docs/BENCHMARKS.md, from docs/bench-branches.json
(written by scripts/bench_branches.py; rendered by scripts/bench.py with the other figures)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "bench-branches.json"


def section(path: Path = RESULTS) -> str:
    if not path.exists():
        return ""
    r: dict[str, Any] = json.loads(path.read_text())
    sides = [s for s in ("before", "after") if s in r]
    names = [n for n, _ in r["branches"]]
    out = ["\n## Many branches\n",
           f"Source `{r['source_label']}` at `{r['commit'][:12]}`; {len(names)} branches: `main`, the repository's "
           "other branches, then its newest pull-request heads not newer than the commit and sharing history "
           "with it (" + ", ".join(f"`{n}`@{s[:8]}" for n, s in r["branches"][1:]) + "). Each side: a fresh "
           "index, the real model (loaded before the clock), `main` built first, then each other branch by "
           f"itself. Before = codevouch `{r.get('before_rev', '')[:10]}` (a Chroma collection per branch); "
           "after = one shared collection per repository.\n",
           f"After: `{r['command']}` at {r['measured_at']}"
           + (f"; {r['after_load_note']}" if r.get("after_load_note") else "") + ".\n"]
    if r.get("before_command"):
        out.append(f"Before: `{r['before_command']}`, {r.get('before_measured_at', '')}.\n")
    if r.get("after_seeded_with"):
        out.append("The after side's index started with `main`'s vectors from the before run "
                   f"(`--seed-embeddings`), to fit the session: its `main` build is a warm one; every other "
                   "branch embedded its own new texts cold, as on the before side. The cold first-branch "
                   "build is the before side's.\n")
    out += ["| | " + " | ".join(sides) + " |", "|---|" + "---|" * len(sides)]

    def row(label: str, fmt: Any) -> None:
        out.append(f"| {label} | " + " | ".join(fmt(r[s]) for s in sides) + " |")

    row("index on disk, 23 branches (Chroma / ledger)", lambda s: f"{s['mb_total']} MB ({s['mb_chroma']} / {s['mb_ledger']})")
    row("index on disk after `main` alone", lambda s: f"{s['mb_first']} MB")
    row("storage, all branches / `main` alone", lambda s: f"x{s['storage_ratio']}")
    row("first branch (`main`) build", lambda s: f"{s['first_branch_s']} s ({s['raw']['chunks']['main']} chunks)")
    row("each extra branch: median / max", lambda s: f"{s['extra_branch_s_median']} s / {s['extra_branch_s_max']} s")
    cold = r["before"]["first_branch_s"] if "before" in r else r[sides[-1]]["first_branch_s"]
    row("extra branch median, of the cold first build", lambda s: f"{100 * s['extra_branch_s_median'] / cold:.1f}%")
    row("all 22 extra branches", lambda s: f"{s['extra_branches_s_total']} s")
    row("search p50 / p95 (warm, hybrid, k=10; 3 branches x 20 queries)",
        lambda s: f"{s['query_ms']['p50']} ms / {s['query_ms']['p95']} ms")
    out.append("\nStorage counts every file in the index directory, SQLite write-ahead logs included; the ledger "
               "holds the embedding cache (the same texts on both sides). Extra-branch times include embedding "
               "the branch's new texts (cold on both sides) and reading and classifying every file of the "
               "branch. Timings come from two runs on 2 cores shared with other work (load averages above): "
               "compare storage and ratios, not absolute times across the two sides.\n")
    return "\n".join(out)
