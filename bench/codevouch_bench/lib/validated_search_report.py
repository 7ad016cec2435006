"""The "Validated search on a large real repository" section of docs/BENCHMARKS.md, from
bench/results/bench-validated-search.json (codevouch_bench.validated_search's results, one run per
version of codevouch measured; rendered by the runner (python -m codevouch_bench) with the other figures)."""
from __future__ import annotations

from pathlib import Path

from codevouch_bench.lib.common import RESULTS as RESULTS_DIR
from codevouch_bench.lib.common import read_json_if_exists

RESULTS = RESULTS_DIR / "bench-validated-search.json"


def section(path: Path = RESULTS) -> str:
    data = read_json_if_exists(path)
    if data is None:
        return ""
    runs = data["runs"]
    first = runs[0]
    out = ["\n## Validated search on a large real repository\n",
           "Rerun: `python -m codevouch_bench.validated_search --work DIR --out FILE` (each run is one entry of "
           "bench/results/bench-validated-search.json's `runs`).\n",
           f"`{data['command']}`: library `Index.search`, k=10, {first['queries']} queries (first docstring "
           f"sentences, fixed seed), each without and with validation, interleaved. Repository "
           f"{first['repo']} at {first['commit'][:10]} (929 files, 45,362 chunks). Vectors are fake "
           f"(`{first['embedder']}`): the real model would take 25+ minutes to build on this 2-core machine, and a "
           "branch is always queried with the model it was built with, so the query's embedding is fake too; the "
           "store, the lexical index, the records, the overlay, the validator and the usage record are real. "
           + ("The clone's files are made racily clean first (every file's mtime one whole second, the index's "
              "half a second later), as a fast fresh clone leaves them. " if first.get("racy") else "")
           + "git processes per call are codevouch's own count (gitio.PROCESSES).\n",
           "| code | load avg (start / end) | unvalidated p50 / p95 ms | validated p50 / p95 ms | git processes per "
           "validated call | per unvalidated call |",
           "|---|---|---|---|---|---|"]
    for r in runs:
        u, v = r["unvalidated"], r["validated"]
        out.append(f"| {r['label']} | {r['machine']['load_avg_1m_at_start']} / {r.get('load_avg_1m_at_end')} | "
                   f"{u['p50']} / {u['p95']} | {v['p50']} / {v['p95']} | {v['git_processes_per_call']} | "
                   f"{u['git_processes_per_call']} |")
    out.append("")
    out.extend(f"- {note}" for note in data.get("notes", []))
    return "\n".join(out) + "\n"
