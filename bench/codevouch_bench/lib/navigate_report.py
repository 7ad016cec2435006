"""The "Navigation" section of docs/BENCHMARKS.md, from bench/results/bench-navigate.json (what
codevouch_bench.navigate writes; rendered by the runner with the other figures)."""
from __future__ import annotations

from pathlib import Path

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists

RESULTS = RESULTS_DIR / "bench-navigate.json"


def section(path: Path = RESULTS) -> str:
    data = read_json_if_exists(path)
    if data is None:
        return ""
    rows = []
    for c in data["corpora"]:
        s, r = c["show"], c["references"]
        rows.append(f"| {c['corpus']} | {s['show_rank1']}/{s['names']} | {s['grep_rank1']}/{s['names']} | "
                    f"{s['warm_ms']['p50']} / {s['warm_ms']['p95']} ms ({s['first_call_ms']} first) | "
                    f"{r['functions']}: {r['recall']} / {r['precision']} ({r['correct']} of {r['truth']} uses, "
                    f"{r['listed']} listed) | {r['warm_ms']['p50']} / {r['warm_ms']['p95']} ms |")
    edits = next((c["after_edits"] for c in data["corpora"] if "after_edits" in c), None)
    load = data.get("machine", {}).get("load_avg_1m_at_start")
    out = [
        "\n## Navigation: show and references\n",
        "Rerun: `python -m codevouch_bench.navigate` (writes bench/results/bench-navigate.json); "
        "how they work: [NAVIGATE.md](NAVIGATE.md).\n",
        f"`{data['command']}`: each corpus is a pinned source distribution (every file) committed into a fresh "
        "repository and built with the fake embedder (show reads the name tier, lexical). Nothing was tuned on "
        "these corpora. show: names sampled (seeded) from the package's definitions by Python's `ast` "
        "(functions, classes, `Class.method`; dunders left out), rank 1 when the first answer holds a "
        "definition of the name; grep: `git grep -n -E '^\\s*(async\\s+)?(def|class)\\s+NAME\\b'` for the last "
        "part, rank 1 when its first line is one. references: top-level functions, against every line where "
        "`ast` sees the name used in a .py file (a Name, an attribute, an imported name); both sides by name. "
        "Latency: in-process, one warm `Index` (the engine's case), p50 / p95"
        + (f", machine load {load}" if load is not None else "") + ".\n",
        "| corpus | show rank 1 | grep rank 1 | show p50 / p95 | references: functions, recall / precision | "
        "references p50 / p95 |",
        "|---|---|---|---|---|---|", *rows]
    engine = next((c for c in data["corpora"] if "engine" in c), None)
    if engine is not None:
        e = engine["engine"]
        out.append(f"\nThrough the resident engine ({engine['corpus']}), whole `codevouch` processes: the first call "
                   f"{e['first_call_s']} s (no engine running: it answers in-process and starts one); then warm, "
                   f"`show` p50 {e['show_warm']['p50']} ms, p95 {e['show_warm']['p95']} ms; `references` p50 "
                   f"{e['references_warm']['p50']} ms, p95 {e['references_warm']['p95']} ms ({e['calls']} calls).\n")
    if edits is not None:
        checks = ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in edits["current"].items())
        out.append(f"\nAfter four edits to {data['corpora'][0]['corpus']} that no build has seen (uncommitted): "
                   f"{checks}; {edits['stale_or_wrong']} stale or wrong answers.\n")
    return "\n".join(out)
